// PacketRing on a real veth pair: frames through one end's TX ring arrive
// in the other end's RX ring, counted and intact; a full TX ring refuses,
// an oversize frame is dropped and counted, a full RX ring is counted by the
// kernel; each for both RX rings (TPACKET_V2 slots, TPACKET_V3 blocks) and
// both TX paths (the TPACKET_V3 ring, sendmmsg copies). The
// TX socket never receives and the RX socket never sees weir's own frames.
// Needs root: the test moves its thread into a network namespace of
// its own (unshare), which disappears with the thread's last reference, so
// nothing outlives the test. Without root it is skipped.
//
// Waiting: a V3 block the kernel has not filled is handed over when its
// retire timer fires (rx_retire_ms); the test polls the fd for it, bounded.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "driver/netns.h"
#include "link/packet_ring.h"
#include "link/private_netns.h"
#include "wire/packet.h"

namespace weir::link {
namespace {

constexpr uint16_t kType = 0x88b5;  // IEEE 802 local experimental EtherType: nothing else sends it

// The calling thread in a fresh network namespace holding veth pair pa/pb
// (up, IPv6 off so the kernel sends nothing of its own); restored after.
class VethNs {
 public:
  VethNs() {
    if (!ns_.entered()) return;
    for (const char* f : {"/proc/sys/net/ipv6/conf/all/disable_ipv6", "/proc/sys/net/ipv6/conf/default/disable_ipv6"})
      test::write_sysctl(f, "1");
    using driver::run_program;
    ok_ = run_program({"ip", "link", "add", "pa", "type", "veth", "peer", "name", "pb"}) == 0 &&
          run_program({"ip", "link", "set", "pa", "up"}) == 0 && run_program({"ip", "link", "set", "pb", "up"}) == 0;
  }
  bool ok() const { return ok_; }

 private:
  test::PrivateNetns ns_;
  bool ok_ = false;
};

std::vector<uint8_t> frame(uint32_t seq, size_t len) {
  std::vector<uint8_t> f(len, 0);
  for (int i = 0; i < 6; ++i) f[i] = 0xff, f[6 + i] = static_cast<uint8_t>(0x02 + i);
  f[12] = kType >> 8, f[13] = kType & 0xff;
  std::memcpy(&f[14], &seq, 4);
  for (size_t i = 18; i < len; ++i) f[i] = static_cast<uint8_t>(seq + i);
  return f;
}

struct Received {
  std::vector<uint32_t> seqs;
  uint64_t bytes = 0;
  bool intact = true;
};

// Takes the test frames of every ready block.
void drain(PacketRing& r, Received& got) {
  r.drain([&](std::span<const uint8_t> f, bool) {
    if (f.size() < 18 || f[12] != kType >> 8 || f[13] != (kType & 0xff)) return;
    uint32_t seq;
    std::memcpy(&seq, &f[14], 4);
    got.intact = got.intact && f.size() == 1514 && std::equal(f.begin(), f.end(), frame(seq, f.size()).begin());
    got.seqs.push_back(seq);
    got.bytes += f.size();
  });
}

// Drains `r` until `want` test frames arrived in all or 2 s of silence.
Received receive(PacketRing& r, size_t want, Received got = {}) {
  while (got.seqs.size() < want) {
    pollfd p{r.fd(), POLLIN, 0};
    if (::poll(&p, 1, 2000) <= 0) break;
    drain(r, got);
  }
  return got;
}

#define NEED_VETH(ns)                                                            \
  VethNs ns;                                                                     \
  if (!ns.ok()) GTEST_SKIP() << "needs root and iproute2 (a veth pair in a private namespace)"

class PacketRingVeth : public ::testing::TestWithParam<std::tuple<RxRing, TxMode>> {
 protected:
  // The defaults with this test's RX ring and TX path.
  PacketRingConfig cfg() const {
    PacketRingConfig c;
    c.rx_ring = std::get<0>(GetParam());
    c.tx_mode = std::get<1>(GetParam());
    return c;
  }
};

TEST_P(PacketRingVeth, FramesCrossInOrderAndIntact) {
  NEED_VETH(ns);
  PacketRingConfig small = cfg();
  small.rx_block_count = 8;   // V3: 656 frames: blocks must come back to hold 3000
  small.rx_frame_count = 512;  // V2: slots must come back
  auto a = PacketRing::open("pa", cfg());
  auto b = PacketRing::open("pb", small);
  ASSERT_TRUE(a) << a.error();
  ASSERT_TRUE(b) << b.error();
  constexpr uint32_t kN = 3000;  // more than either ring: slots and blocks are reused
  Received got;
  for (uint32_t i = 0; i < kN; ++i) {
    auto f = frame(i, 1514);
    ASSERT_EQ((*a)->send_frame(f), XmitResult::kSent) << i;
    if (i % 64 == 63) (*a)->flush(), drain(**b, got);  // a burst, and what is ready of it
  }
  (*a)->flush();
  got = receive(**b, kN, std::move(got));
  ASSERT_EQ(got.seqs.size(), kN);
  for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(got.seqs[i], i);
  EXPECT_TRUE(got.intact);
  EXPECT_EQ(got.bytes, uint64_t{kN} * 1514);
  EXPECT_EQ((*a)->stats().tx_frames, kN);
  EXPECT_EQ((*a)->stats().tx_bytes, uint64_t{kN} * 1514);
  EXPECT_EQ((*a)->stats().tx_sends, kN / 64 + 1);
  EXPECT_EQ((*b)->stats().rx_oversize, 0u);
  (*b)->read_kernel_stats();
  EXPECT_EQ((*b)->stats().rx_kernel_drops, 0u);
}

TEST_P(PacketRingVeth, FullTxRingRefusesUntilFlushed) {
  NEED_VETH(ns);
  PacketRingConfig c = cfg();
  c.tx_frame_count = 4;
  auto a = PacketRing::open("pa", c);
  auto b = PacketRing::open("pb", cfg());
  ASSERT_TRUE(a) << a.error();
  ASSERT_TRUE(b) << b.error();
  ASSERT_EQ((*a)->tx().frame_count, 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ((*a)->send_frame(frame(i, 1514)), XmitResult::kSent);
  EXPECT_EQ((*a)->send_frame(frame(4, 1514)), XmitResult::kDropped);
  EXPECT_EQ((*a)->stats().tx_ring_full, 1u);
  (*a)->flush();
  Received got = receive(**b, 4);
  EXPECT_EQ(got.seqs.size(), 4u);
  // The slots came back once the peer consumed the frames.
  EXPECT_EQ((*a)->send_frame(frame(5, 1514)), XmitResult::kSent);
}

TEST_P(PacketRingVeth, OversizeFramesAreCountedAndDropped) {
  NEED_VETH(ns);
  PacketRingConfig small = cfg();
  small.max_frame = 600;
  auto a = PacketRing::open("pa", cfg());
  auto b = PacketRing::open("pb", small);
  ASSERT_TRUE(a) << a.error();
  ASSERT_TRUE(b) << b.error();
  // Over the sender's own limit (MTU + 14): not queued, counted.
  EXPECT_EQ((*a)->send_frame(frame(0, 1515)), XmitResult::kSent);
  EXPECT_EQ((*a)->stats().tx_oversize, 1u);
  EXPECT_EQ((*a)->stats().tx_frames, 0u);
  // Over the receiver's: the kernel delivers it, the ring drops it.
  for (uint32_t i = 0; i < 10; ++i) (*a)->send_frame(frame(i, 1000));
  (*a)->flush();
  for (int i = 0; i < 20 && (*b)->stats().rx_oversize < 10; ++i) {
    pollfd p{(*b)->fd(), POLLIN, 0};
    if (::poll(&p, 1, 2000) <= 0) break;
    (*b)->drain([](std::span<const uint8_t>, bool) {});
  }
  EXPECT_EQ((*b)->stats().rx_oversize, 10u);
}

TEST_P(PacketRingVeth, FullRxRingIsCountedByTheKernel) {
  NEED_VETH(ns);
  PacketRingConfig tiny = cfg();
  tiny.rx_block_size = 4096;  // V3: two 1514-byte frames per block
  tiny.rx_block_count = 2;
  tiny.rx_frame_count = 4;  // V2: four slots
  auto a = PacketRing::open("pa", cfg());
  auto b = PacketRing::open("pb", tiny);
  ASSERT_TRUE(a) << a.error();
  ASSERT_TRUE(b) << b.error();
  for (uint32_t i = 0; i < 100; ++i) (*a)->send_frame(frame(i, 1514));
  (*a)->flush();
  Received got = receive(**b, 100);
  (*b)->read_kernel_stats();
  EXPECT_LT(got.seqs.size(), 100u);
  EXPECT_GE((*b)->stats().rx_kernel_drops, 100u - got.seqs.size());
}

// The TX socket is bound with protocol 0: frames arriving on its interface
// are never queued to it (nobody would read them). And the RX socket does
// not see its own side's transmissions even when they pass the taps
// (qdisc bypass off: dev_queue_xmit_nit), by PACKET_IGNORE_OUTGOING.
TEST_P(PacketRingVeth, TxSocketNeverReceivesAndRxSkipsOwnFrames) {
  NEED_VETH(ns);
  PacketRingConfig c = cfg();
  c.qdisc_bypass = false;
  auto a = PacketRing::open("pa", c);
  auto b = PacketRing::open("pb", cfg());
  ASSERT_TRUE(a) << a.error();
  ASSERT_TRUE(b) << b.error();
  for (uint32_t i = 0; i < 10; ++i) (*b)->send_frame(frame(i, 1514));
  (*b)->flush();
  for (uint32_t i = 10; i < 20; ++i) (*a)->send_frame(frame(i, 1514));
  (*a)->flush();
  Received at_a = receive(**a, 10);
  Received at_b = receive(**b, 10);
  EXPECT_EQ(at_a.seqs.size(), 10u);
  EXPECT_EQ(at_b.seqs.size(), 10u);
  for (uint32_t s : at_a.seqs) EXPECT_LT(s, 10u);  // b's frames only
  EXPECT_EQ((*a)->stats().rx_outgoing, 0u);
  uint8_t buf[2048];
  for (auto* r : {a->get(), b->get()})
    EXPECT_LT(::recv(r->tx_fd(), buf, sizeof buf, MSG_DONTWAIT), 0) << "the TX socket received a frame";
}

// The copy path's own case: one flush of more frames than one sendmmsg
// takes (__sys_sendmmsg's UIO_MAXIOV) reaches the peer whole and in order.
TEST_P(PacketRingVeth, OneFlushOfMoreThanOneSendmmsg) {
  NEED_VETH(ns);
  if (std::get<1>(GetParam()) != TxMode::kCopy) GTEST_SKIP() << "the copy path's case";
  PacketRingConfig c = cfg();
  c.tx_frame_count = 3000;
  auto a = PacketRing::open("pa", c);
  auto b = PacketRing::open("pb", cfg());  // 4096 slots (V2), ~5,500 frames (V3): all 3000 fit
  ASSERT_TRUE(a) << a.error();
  ASSERT_TRUE(b) << b.error();
  EXPECT_EQ((*a)->tx_mode(), TxMode::kCopy);
  for (uint32_t i = 0; i < 3000; ++i) ASSERT_EQ((*a)->send_frame(frame(i, 1514)), XmitResult::kSent) << i;
  (*a)->flush();
  EXPECT_FALSE((*a)->tx_backlog());
  EXPECT_EQ((*a)->stats().tx_sends, 3u);
  Received got = receive(**b, 3000);
  ASSERT_EQ(got.seqs.size(), 3000u);
  for (uint32_t i = 0; i < 3000; ++i) ASSERT_EQ(got.seqs[i], i);
  EXPECT_TRUE(got.intact);
}

// An Ethernet frame holding a TCP/IPv4 segment of `len` bytes at `seq`.
std::vector<uint8_t> tcp_frame(uint32_t seq, size_t len, uint8_t flags) {
  wire::IpInfo ip;
  ip.version = 4;
  ip.src = *IpAddr::parse("192.0.2.1");
  ip.dst = *IpAddr::parse("192.0.2.2");
  wire::TcpHeader h;
  h.src_port = 80, h.dst_port = 40000, h.seq = Seq32(seq), h.ack = Seq32(1), h.flags = flags, h.window = 1000;
  std::vector<uint8_t> payload(len);
  for (size_t i = 0; i < len; ++i) payload[i] = static_cast<uint8_t>(seq + i);
  const auto pkt = wire::build_tcp_packet(ip, h, payload);
  constexpr uint8_t kEth[14] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x00};
  std::vector<uint8_t> f(sizeof kEth + pkt.size());
  std::copy(pkt.begin(), pkt.end(), std::copy(std::begin(kEth), std::end(kEth), f.begin()));
  return f;
}

// The copy path with GSO (tx_gso, the default): a run of one flow's
// segments leaves as one super-packet, which the kernel's GSO cuts back
// into the same MTU-sized frames before the device (TSO and GSO off on it,
// as weir's driver sets them), each with its payload intact and its
// checksum left for the device (CHECKSUM_PARTIAL, shown to the peer's
// ring as "not ready": valid).
TEST_P(PacketRingVeth, ARunOfSegmentsLeavesAsOneSuperPacketAndArrivesAsFrames) {
  NEED_VETH(ns);
  if (std::get<1>(GetParam()) != TxMode::kCopy) GTEST_SKIP() << "the copy path's case";
  ASSERT_EQ(driver::run_program({"ethtool", "-K", "pa", "tso", "off", "gso", "off"}), 0);
  auto a = PacketRing::open("pa", cfg());
  auto b = PacketRing::open("pb", cfg());
  ASSERT_TRUE(a) << a.error();
  ASSERT_TRUE(b) << b.error();
  constexpr uint32_t kSegs = 10, kLen = 1460;
  for (uint32_t i = 0; i < kSegs; ++i)
    ASSERT_EQ((*a)->send_frame(tcp_frame(1 + i * kLen, kLen, i + 1 == kSegs ? 0x18 : 0x10)), XmitResult::kSent);
  (*a)->flush();
  EXPECT_EQ((*a)->stats().tx_gso, 1u);
  EXPECT_EQ((*a)->stats().tx_gso_segs, kSegs);
  EXPECT_EQ((*a)->stats().tx_frames, 1u) << "one message to the kernel";
  std::vector<std::vector<uint8_t>> got;
  bool all_valid = true;
  for (int i = 0; i < 20 && got.size() < kSegs; ++i) {
    pollfd p{(*b)->fd(), POLLIN, 0};
    if (::poll(&p, 1, 2000) <= 0) break;
    (*b)->drain([&](std::span<const uint8_t> f, bool valid) {
      if (f.size() > 14 && f[12] == 0x08 && f[13] == 0x00) got.emplace_back(f.begin(), f.end()), all_valid &= valid;
    });
  }
  ASSERT_EQ(got.size(), kSegs);
  EXPECT_TRUE(all_valid) << "a partial checksum is handed on as valid";
  for (uint32_t i = 0; i < kSegs; ++i) {
    ASSERT_EQ(got[i].size(), 1514u) << i;
    // Completed as the device would, the checksum verifies.
    VnetHdr partial;
    partial.csum_start = 14 + 20, partial.csum_offset = 16;
    ASSERT_TRUE(complete_checksum(got[i], partial));
    auto seg = wire::parse_tcp_packet(std::span<const uint8_t>(got[i]).subspan(14));
    ASSERT_TRUE(seg) << wire::to_string(seg.error());
    EXPECT_EQ(seg->tcp.seq, Seq32(1 + i * kLen));
    EXPECT_EQ(seg->tcp.has(wire::tcp_flag::PSH), i + 1 == kSegs) << i;
    const auto want = tcp_frame(1 + i * kLen, kLen, 0x10);
    EXPECT_TRUE(std::equal(want.end() - kLen, want.end(), got[i].end() - kLen)) << "payload of segment " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Rings, PacketRingVeth,
                         ::testing::Combine(::testing::Values(RxRing::kV2, RxRing::kV3, RxRing::kCopy),
                                            ::testing::Values(TxMode::kRing, TxMode::kCopy)),
                         [](const ::testing::TestParamInfo<std::tuple<RxRing, TxMode>>& i) {
                           const RxRing rx = std::get<0>(i.param);
                           return std::string(rx == RxRing::kV2 ? "V2" : rx == RxRing::kV3 ? "V3" : "CopyRx") +
                                  (std::get<1>(i.param) == TxMode::kRing ? "Ring" : "Copy");
                         });

}  // namespace
}  // namespace weir::link
