// The TPACKET_V2 RX ring (link/packet_rx.h FrameRing) on slots built in
// memory the way tpacket_rcv fills them (Documentation/networking/
// packet_mmap.rst): a struct tpacket2_hdr, its struct sockaddr_ll, the
// frame at tp_mac; TP_STATUS_USER once the kernel is done with a slot,
// TP_STATUS_KERNEL once the reader is. And the ring's geometry.
#include <gtest/gtest.h>

#include <linux/if_packet.h>

#include <cstring>
#include <vector>

#include "link/packet_ring.h"
#include "link/packet_rx.h"

namespace weir::link {
namespace {

constexpr size_t kPage = 4096;
constexpr uint32_t kMac = 66;  // tpacket_rcv's macoff for Ethernet: TPACKET_ALIGN(52 + 16) - 14

// `count` slots of 2 KiB, two per 4 KiB block, as packet_set_ring lays
// them out for rx_v2_geometry's defaults.
struct Ring {
  RingGeometry g;
  std::vector<uint8_t> mem;
  explicit Ring(uint32_t count) : g{4096, count / 2, 2048, count}, mem(g.bytes()) {}
  uint8_t* slot(uint32_t i) { return mem.data() + i / 2 * 4096 + i % 2 * 2048; }
  uint32_t status(uint32_t i) {
    uint32_t s;
    std::memcpy(&s, slot(i), 4);
    return s;
  }
  // What tpacket_rcv leaves in slot i: a frame of `len` bytes (the first
  // byte `tag`), `snaplen` of them copied, the status with TP_STATUS_USER.
  void fill(uint32_t i, uint8_t tag, uint32_t len = 60, uint32_t extra = 0, uint8_t pkttype = PACKET_HOST,
            uint32_t snaplen = UINT32_MAX) {
    tpacket2_hdr h{};
    h.tp_status = TP_STATUS_USER | extra;
    h.tp_len = len;
    h.tp_snaplen = snaplen == UINT32_MAX ? len : snaplen;
    h.tp_mac = kMac;
    h.tp_net = kMac + 14;
    sockaddr_ll ll{};
    ll.sll_pkttype = pkttype;
    std::memcpy(slot(i), &h, sizeof h);
    std::memcpy(slot(i) + TPACKET_ALIGN(sizeof h), &ll, sizeof ll);
    std::memset(slot(i) + kMac, tag, std::min<uint32_t>(h.tp_snaplen, 2048 - kMac));
  }
};

struct Got {
  std::vector<uint8_t> tags;
  std::vector<bool> csum;
};

size_t drain(FrameRing& r, PacketRingStats& st, Got& got) {
  return r.drain(st, [&](std::span<const uint8_t> f, bool csum_valid) {
    got.tags.push_back(f[0]);
    got.csum.push_back(csum_valid);
  });
}

TEST(PacketRingFrames, DeliversReadySlotsInOrderAndHandsThemBack) {
  Ring ring(8);
  FrameRing r(ring.mem.data(), ring.g, 1514);
  EXPECT_FALSE(r.ready());
  ring.fill(0, 10);
  ring.fill(1, 11, 1514, TP_STATUS_CSUMNOTREADY);
  ring.fill(2, 12, 74, TP_STATUS_CSUM_VALID);
  ring.fill(4, 14);  // not reached: slot 3 is still the kernel's
  PacketRingStats st;
  Got got;
  EXPECT_EQ(drain(r, st, got), 3u);
  EXPECT_EQ(got.tags, (std::vector<uint8_t>{10, 11, 12}));
  EXPECT_EQ(got.csum, (std::vector<bool>{false, true, true}));
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(ring.status(i), uint32_t{TP_STATUS_KERNEL}) << i;
  EXPECT_NE(ring.status(4) & TP_STATUS_USER, 0u);
  EXPECT_EQ(r.cursor(), 3u);
  EXPECT_EQ(st.rx_frames, 3u);
  EXPECT_EQ(st.rx_bytes, 60u + 1514 + 74);
  EXPECT_EQ(st.rx_csum_ok, 2u);
  EXPECT_EQ(st.rx_wakeups, 1u);
  // Nothing new: no frame, no wake-up counted.
  EXPECT_EQ(drain(r, st, got), 0u);
  EXPECT_EQ(st.rx_wakeups, 1u);
}

TEST(PacketRingFrames, WrapsFromTheLastSlotToTheFirst) {
  Ring ring(4);
  FrameRing r(ring.mem.data(), ring.g, 1514);
  PacketRingStats st;
  Got got;
  for (uint32_t i = 0; i < 3; ++i) ring.fill(i, static_cast<uint8_t>(i));
  EXPECT_EQ(drain(r, st, got), 3u);
  // The kernel goes on at slot 3, then 0 and 1 again.
  ring.fill(3, 3);
  ring.fill(0, 4);
  ring.fill(1, 5);
  EXPECT_EQ(drain(r, st, got), 3u);
  EXPECT_EQ(got.tags, (std::vector<uint8_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(r.cursor(), 2u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(ring.status(i), uint32_t{TP_STATUS_KERNEL}) << i;
}

// However many the kernel fills meanwhile, one drain reads at most the
// whole ring: a wake-up is bounded.
TEST(PacketRingFrames, OneDrainReadsAtMostTheRing) {
  Ring ring(4);
  FrameRing r(ring.mem.data(), ring.g, 1514);
  for (uint32_t i = 0; i < 4; ++i) ring.fill(i, static_cast<uint8_t>(i));
  PacketRingStats st;
  uint32_t n = 0;
  // The "kernel" refills each slot as soon as it is handed back.
  r.drain(st, [&](std::span<const uint8_t>, bool) {
    ++n;
    ring.fill((r.cursor() + 3) % 4, 99);
  });
  EXPECT_EQ(n, 4u);
  EXPECT_TRUE(r.ready());
}

// A drain given a `max` (the driver's --batch) stops there and leaves the
// rest ready, so the app reads between batches of one wake-up.
TEST(PacketRingFrames, ADrainStopsAtItsMaxAndTheRestWaits) {
  Ring ring(8);
  FrameRing r(ring.mem.data(), ring.g, 1514);
  for (uint32_t i = 0; i < 7; ++i) ring.fill(i, static_cast<uint8_t>(i));
  PacketRingStats st;
  Got got;
  auto take = [&](uint32_t max) {
    return r.drain(st, [&](std::span<const uint8_t> f, bool) { got.tags.push_back(f[0]); }, max);
  };
  EXPECT_EQ(take(3), 3u);
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(ring.status(3) & TP_STATUS_USER, uint32_t{TP_STATUS_USER});  // not handed back yet
  EXPECT_EQ(take(3), 3u);
  EXPECT_EQ(take(3), 1u);
  EXPECT_FALSE(r.ready());
  EXPECT_EQ(got.tags, (std::vector<uint8_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(st.rx_wakeups, 3u);
}

TEST(PacketRingFrames, OversizeTruncatedAndOwnFramesAreCountedAndHandedBack) {
  Ring ring(8);
  FrameRing r(ring.mem.data(), ring.g, 1514);
  ring.fill(0, 1, 1515);                            // over max_frame
  ring.fill(1, 2, 9000, 0, PACKET_HOST, 1982);      // cut at the slot's end (tp_snaplen < tp_len)
  ring.fill(2, 3, 600, TP_STATUS_COPY);             // truncated, the whole frame queued elsewhere
  ring.fill(3, 4, 60, 0, PACKET_OUTGOING);          // our own
  ring.fill(4, 5, 60, TP_STATUS_VLAN_VALID);        // another VLAN's
  ring.fill(5, 6, 60, TP_STATUS_LOSING);            // delivered; the kernel dropped some before
  PacketRingStats st;
  Got got;
  EXPECT_EQ(drain(r, st, got), 1u);
  EXPECT_EQ(got.tags, (std::vector<uint8_t>{6}));
  EXPECT_EQ(st.rx_oversize, 3u);
  EXPECT_EQ(st.rx_outgoing, 1u);
  EXPECT_EQ(st.rx_vlan, 1u);
  EXPECT_EQ(st.rx_losing, 1u);
  EXPECT_EQ(st.rx_frames, 1u);
  for (uint32_t i = 0; i < 6; ++i) EXPECT_EQ(ring.status(i), uint32_t{TP_STATUS_KERNEL}) << i;
  EXPECT_EQ(r.cursor(), 6u);
}

TEST(PacketRingFrames, SlotReachingPastItsEndIsMalformed) {
  Ring ring(4);
  FrameRing r(ring.mem.data(), ring.g, 16000);
  ring.fill(0, 1, 60);
  uint32_t big = 2048;  // tp_mac + tp_snaplen past the 2 KiB slot
  std::memcpy(ring.slot(0) + offsetof(tpacket2_hdr, tp_snaplen), &big, 4);
  ring.fill(1, 2, 60);
  uint16_t mac = 8;  // tp_mac inside the header
  std::memcpy(ring.slot(1) + offsetof(tpacket2_hdr, tp_mac), &mac, 2);
  ring.fill(2, 3, 60);
  PacketRingStats st;
  Got got;
  EXPECT_EQ(drain(r, st, got), 1u);
  EXPECT_EQ(got.tags, (std::vector<uint8_t>{3}));
  EXPECT_EQ(st.rx_malformed, 2u);
  EXPECT_EQ(ring.status(0), uint32_t{TP_STATUS_KERNEL});
}

TEST(PacketRingFrames, GeometryFitsAFrameAfterTpacketRcvsHeaders) {
  PacketRingConfig c;  // the default ring is V2
  auto g = rx_geometry(c, kPage, 1514);
  ASSERT_TRUE(g) << g.error();
  EXPECT_EQ(g->frame_size, 2048u);  // 66 + 1514, to a power of two
  EXPECT_EQ(g->block_size, kPage);
  EXPECT_EQ(g->block_count, 2048u);
  EXPECT_EQ(g->frame_count, 4096u);
  g = rx_geometry(c, kPage, 9014);
  ASSERT_TRUE(g) << g.error();
  EXPECT_EQ(g->frame_size, 16384u);
  EXPECT_EQ(g->block_size, 16384u);
  c.rx_frame_size = 1536;  // 66 + 1514 does not fit
  EXPECT_FALSE(rx_geometry(c, kPage, 1514));
  c.rx_frame_size = 1600;  // fits, a multiple of 16
  EXPECT_TRUE(rx_geometry(c, kPage, 1514));
  c = {};
  c.rx_frame_count = 0;
  EXPECT_FALSE(rx_geometry(c, kPage, 1514));
  c.rx_frame_count = kMaxRingFrames + 1;
  auto e = rx_geometry(c, kPage, 1514);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().find("expected 1 .. "), std::string::npos) << e.error();
}

}  // namespace
}  // namespace weir::link
