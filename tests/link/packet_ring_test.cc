// The pure parts of link/packet_ring.h: ring geometry as packet_set_ring
// checks it, and walking TPACKET_V3 blocks built in memory the way the
// kernel lays them out (Documentation/networking/packet_mmap.rst).
#include "link/packet_ring.h"

#include <gtest/gtest.h>

#include <linux/if_packet.h>

#include <cstring>
#include <vector>

namespace weir::link {
namespace {

constexpr size_t kPage = 4096;

TEST(PacketRingGeometry, DefaultsFitAnMtu1500Frame) {
  auto rx = rx_v3_geometry(PacketRingConfig{}, kPage, 1514);
  ASSERT_TRUE(rx) << rx.error();
  EXPECT_EQ(rx->block_size, 1u << 17);
  EXPECT_EQ(rx->block_count, 64u);
  EXPECT_EQ(rx->frame_size, 1584u);  // TPACKET_ALIGN(TPACKET3_HDRLEN 68 + 1514)
  EXPECT_EQ(rx->frame_count, (131072u / 1584u) * 64u);
  auto tx = tx_geometry(PacketRingConfig{}, kPage, 1514);
  ASSERT_TRUE(tx) << tx.error();
  EXPECT_EQ(tx->frame_size, 2048u);  // 48 + 1514, to a power of two
  EXPECT_EQ(tx->block_size, kPage);
  EXPECT_EQ(tx->block_count, 512u);
  EXPECT_EQ(tx->frame_count, 1024u);
  EXPECT_EQ(tx_data_offset(), 48u);
}

TEST(PacketRingGeometry, JumboFramesGetLargerTxSlots) {
  auto tx = tx_geometry(PacketRingConfig{}, kPage, 9014);
  ASSERT_TRUE(tx) << tx.error();
  EXPECT_EQ(tx->frame_size, 16384u);
  EXPECT_EQ(tx->block_size, 16384u);  // one slot per block: none straddles two
  EXPECT_EQ(tx->frame_count, 1024u);
}

TEST(PacketRingGeometry, RefusesWhatTheKernelWouldRefuse) {
  PacketRingConfig c;
  c.rx_ring = RxRing::kV3;
  c.rx_block_size = 5000;  // not a page multiple
  EXPECT_FALSE(rx_geometry(c, kPage, 1514));
  c.rx_block_size = 4096;  // a page, but a 9014-byte frame does not fit
  EXPECT_FALSE(rx_geometry(c, kPage, 9014));
  c.rx_block_size = PacketRingConfig{}.rx_block_size;
  c.rx_block_count = 0;
  EXPECT_FALSE(rx_geometry(c, kPage, 1514));
  c.rx_block_count = 1u << 14;  // 2 GiB: over our bound
  EXPECT_FALSE(rx_geometry(c, kPage, 1514));
  c = {};
  c.tx_frame_size = 1000;  // too small for a 1514-byte frame
  EXPECT_FALSE(tx_geometry(c, kPage, 1514));
  c.tx_frame_size = 2056;  // large enough but the block (one page) cannot hold it
  EXPECT_FALSE(tx_geometry(c, kPage, 1514));
  c = {};
  c.tx_frame_count = 0;
  EXPECT_FALSE(tx_geometry(c, kPage, 1514));
}

// A block as tpacket_rcv fills it: descriptor, then frames, each a
// tpacket3_hdr, its sockaddr_ll, and the frame at tp_mac.
struct BlockBuilder {
  std::vector<uint8_t> b = std::vector<uint8_t>(8192);
  size_t at = 48;   // offset_to_first_pkt (BLK_PLUS_PRIV(0), aligned)
  size_t last = 0;  // the previous frame's header, to link it
  uint32_t n = 0;
  void add(size_t len, uint32_t status = 0, uint8_t pkttype = PACKET_HOST, size_t snaplen = SIZE_MAX) {
    if (snaplen == SIZE_MAX) snaplen = len;
    tpacket3_hdr h{};
    h.tp_status = status;
    h.tp_len = static_cast<uint32_t>(len);
    h.tp_snaplen = static_cast<uint32_t>(snaplen);
    h.tp_mac = 80;  // after the header and sockaddr_ll, aligned (tpacket_rcv's macoff)
    sockaddr_ll ll{};
    ll.sll_pkttype = pkttype;
    if (n) {
      uint32_t next = static_cast<uint32_t>(at - last);
      std::memcpy(b.data() + last + offsetof(tpacket3_hdr, tp_next_offset), &next, 4);
    }
    std::memcpy(b.data() + at, &h, sizeof h);
    std::memcpy(b.data() + at + 48, &ll, sizeof ll);
    for (size_t i = 0; i < snaplen; ++i) b[at + 80 + i] = static_cast<uint8_t>(n + i);
    last = at;
    at = TPACKET_ALIGN(at + 80 + snaplen);
    ++n;
    tpacket_block_desc d{};
    d.version = TPACKET_V3;
    d.hdr.bh1.block_status = TP_STATUS_USER;
    d.hdr.bh1.num_pkts = n;
    d.hdr.bh1.offset_to_first_pkt = 48;
    d.hdr.bh1.blk_len = static_cast<uint32_t>(at);
    std::memcpy(b.data(), &d, sizeof d);
  }
  void set_next(size_t frame_at, uint32_t next) {
    std::memcpy(b.data() + frame_at + offsetof(tpacket3_hdr, tp_next_offset), &next, 4);
  }
};

std::vector<RxFrame> walk(const BlockBuilder& bb, uint32_t max_frame = 1514, bool* malformed = nullptr) {
  BlockReader r(bb.b, max_frame);
  std::vector<RxFrame> out;
  for (RxFrame f; r.next(f);) out.push_back(f);
  if (malformed) *malformed = r.malformed();
  return out;
}

TEST(PacketRingBlock, WalksEveryFrameWithItsVerdict) {
  BlockBuilder bb;
  bb.add(60);
  bb.add(1514, TP_STATUS_CSUMNOTREADY);
  bb.add(74, TP_STATUS_CSUM_VALID);
  bb.add(54, 0, PACKET_OUTGOING);
  bb.add(1000, TP_STATUS_VLAN_VALID);
  bb.add(100, TP_STATUS_LOSING);
  bool malformed = true;
  auto f = walk(bb, 1514, &malformed);
  ASSERT_EQ(f.size(), 6u);
  EXPECT_FALSE(malformed);
  EXPECT_EQ(f[0].verdict, RxVerdict::kDeliver);
  EXPECT_EQ(f[0].bytes.size(), 60u);
  EXPECT_EQ(f[0].bytes[5], 5);  // the frame starts at tp_mac
  EXPECT_EQ(f[1].verdict, RxVerdict::kDeliverChecksumValid);
  EXPECT_EQ(f[1].bytes.size(), 1514u);
  EXPECT_EQ(f[1].bytes[0], 1);
  EXPECT_EQ(f[2].verdict, RxVerdict::kDeliverChecksumValid);
  EXPECT_EQ(f[3].verdict, RxVerdict::kOutgoing);
  EXPECT_EQ(f[4].verdict, RxVerdict::kVlan);
  EXPECT_EQ(f[5].verdict, RxVerdict::kDeliver);
  EXPECT_TRUE(f[5].losing);
  EXPECT_FALSE(f[0].losing);
}

TEST(PacketRingBlock, OversizeAndTruncatedFramesAreDropped) {
  BlockBuilder bb;
  bb.add(1515);                  // over max_frame
  bb.add(3000, 0, PACKET_HOST, 1514);  // cut to the snap length
  bb.add(600, TP_STATUS_COPY);   // the kernel copied a truncated frame
  bb.add(1514);
  auto f = walk(bb);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].verdict, RxVerdict::kOversize);
  EXPECT_EQ(f[1].verdict, RxVerdict::kOversize);
  EXPECT_EQ(f[2].verdict, RxVerdict::kOversize);
  EXPECT_EQ(f[3].verdict, RxVerdict::kDeliver);
}

TEST(PacketRingBlock, EmptyBlockHasNoFrames) {
  BlockBuilder bb;
  bb.add(60);
  uint32_t zero = 0;
  std::memcpy(bb.b.data() + offsetof(tpacket_block_desc, hdr.bh1.num_pkts), &zero, 4);
  bool malformed = true;
  EXPECT_TRUE(walk(bb, 1514, &malformed).empty());
  EXPECT_FALSE(malformed);
}

TEST(PacketRingBlock, ChainLeavingTheBlockEndsTheWalk) {
  BlockBuilder bb;
  bb.add(60);
  bb.add(60);
  bb.add(60);
  BlockBuilder far = bb;
  // The first frame's link points past the end of the block.
  far.set_next(48, 100000);
  bool malformed = false;
  auto f = walk(far, 1514, &malformed);
  EXPECT_EQ(f.size(), 1u);
  EXPECT_TRUE(malformed);
  // A zero link before the last frame: the walk stops after that frame.
  BlockBuilder zero = bb;
  zero.set_next(48, 0);
  f = walk(zero, 1514, &malformed);
  EXPECT_EQ(f.size(), 1u);
  EXPECT_TRUE(malformed);
}

TEST(PacketRingBlock, FrameReachingPastTheBlockIsMalformed) {
  BlockBuilder bb;
  bb.add(60);
  uint32_t big = 9000;
  std::memcpy(bb.b.data() + 48 + offsetof(tpacket3_hdr, tp_snaplen), &big, 4);
  bool malformed = false;
  EXPECT_TRUE(walk(bb, 16000, &malformed).empty());
  EXPECT_TRUE(malformed);
  // A descriptor shorter than its struct.
  BlockReader r(std::span<const uint8_t>(bb.b.data(), 10), 1514);
  RxFrame f;
  EXPECT_FALSE(r.next(f));
  EXPECT_TRUE(r.malformed());
}

}  // namespace
}  // namespace weir::link
