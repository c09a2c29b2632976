// The TUN device's pure parts: coalescing engine segments into TSO
// super-packets (what the kernel's GSO would split back into the same
// segments) and completing a partial checksum as a NIC would.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "link/gso_recorder.h"
#include "link/tun.h"
#include "wire/checksum.h"
#include "wire/packet.h"

namespace weir::link {
namespace {

using wire::tcp_flag::ACK;
using wire::tcp_flag::PSH;
using wire::tcp_flag::SYN;

using test::GsoRecorder;
using test::Written;

wire::IpInfo ip_of(bool v6) {
  wire::IpInfo ip;
  ip.version = v6 ? 6 : 4;
  ip.src = *IpAddr::parse(v6 ? "fd00::1" : "192.0.2.1");
  ip.dst = *IpAddr::parse(v6 ? "fd00::2" : "192.0.2.2");
  return ip;
}

std::vector<uint8_t> segment(bool v6, uint32_t seq, size_t len, uint8_t flags, uint32_t ack = 5000) {
  wire::TcpHeader h;
  h.src_port = 80;
  h.dst_port = 40000;
  h.seq = Seq32(seq);
  h.ack = Seq32(ack);
  h.flags = flags;
  h.window = 1000;
  h.options.ts = wire::TcpTimestamps{77, 66};
  std::vector<uint8_t> payload(len);
  for (size_t i = 0; i < len; ++i) payload[i] = static_cast<uint8_t>(seq + i);
  return wire::build_tcp_packet(ip_of(v6), h, payload);
}

class Gso : public ::testing::TestWithParam<bool> {};

TEST_P(Gso, ConsecutiveSegmentsBecomeOneSuperPacketWithAValidChecksumOnceCompleted) {
  const bool v6 = GetParam();
  GsoRecorder rec;
  GsoCoalescer g(rec);
  auto& out = rec.out;
  g.push(segment(v6, 1000, 1000, ACK));
  g.push(segment(v6, 2000, 1000, ACK));
  g.push(segment(v6, 3000, 500, ACK | PSH));
  EXPECT_TRUE(out.empty()) << "nothing leaves before the burst ends";
  g.flush();
  ASSERT_EQ(out.size(), 1u);
  const VnetHdr& h = out[0].h;
  EXPECT_EQ(h.gso_type, v6 ? 4 : 1);
  EXPECT_EQ(h.gso_size, 1000);
  EXPECT_EQ(h.flags, 1) << "NEEDS_CSUM";
  // The kernel (or a NIC) finishes the checksum; then it must verify.
  ASSERT_TRUE(complete_checksum(out[0].pkt, h));
  auto p = wire::parse_tcp_packet(out[0].pkt);
  ASSERT_TRUE(p) << wire::to_string(p.error());
  EXPECT_EQ(p->tcp.seq, Seq32(1000));
  EXPECT_EQ(p->payload.size(), 2500u);
  EXPECT_TRUE(p->tcp.has(PSH)) << "the last segment's PSH stays on the run";
  EXPECT_EQ(h.hdr_len, out[0].pkt.size() - 2500);
  for (size_t i = 0; i < 2500; ++i) ASSERT_EQ(p->payload[i], static_cast<uint8_t>(1000 + i)) << i;
}

TEST_P(Gso, ADifferentAckAGapOrAControlSegmentEndsTheRun) {
  const bool v6 = GetParam();
  GsoRecorder rec;
  GsoCoalescer g(rec);
  auto& out = rec.out;
  const auto a = segment(v6, 1000, 1000, ACK);
  g.push(a);
  g.push(segment(v6, 2000, 1000, ACK, 6000));  // new ACK value
  g.push(segment(v6, 4000, 1000, ACK, 6000));  // a gap in SEQ
  g.push(segment(v6, 5000, 0, SYN | ACK));     // not data
  g.flush();
  ASSERT_EQ(out.size(), 4u);
  for (const auto& w : out) EXPECT_EQ(w.h.gso_type, 0) << "single segments go out as they came";
  EXPECT_EQ(out[0].pkt, a);
  EXPECT_TRUE(wire::parse_tcp_packet(out[1].pkt));
}

TEST_P(Gso, AShortSegmentOrPshIsTheLastOfARun) {
  const bool v6 = GetParam();
  GsoRecorder rec;
  GsoCoalescer g(rec);
  auto& out = rec.out;
  g.push(segment(v6, 1000, 1000, ACK));
  g.push(segment(v6, 2000, 600, ACK));
  g.push(segment(v6, 2600, 600, ACK));  // gso would cut it at 1000: not mergeable
  g.flush();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].h.gso_size, 1000);
  EXPECT_EQ(out[0].pkt.size(), segment(v6, 1000, 1600, ACK).size());
  EXPECT_EQ(out[1].h.gso_type, 0);
}

TEST_P(Gso, RunsStopShortOf64KB) {
  const bool v6 = GetParam();
  GsoRecorder rec;
  GsoCoalescer g(rec);
  auto& out = rec.out;
  for (uint32_t i = 0; i < 100; ++i) g.push(segment(v6, 1000 + i * 1400, 1400, ACK));
  g.flush();
  size_t payload = 0;
  for (auto& w : out) {
    EXPECT_LE(w.pkt.size(), GsoCoalescer::kMax);
    if (w.h.gso_type) {
      ASSERT_TRUE(complete_checksum(w.pkt, w.h));
    }
    auto p = wire::parse_tcp_packet(w.pkt);
    ASSERT_TRUE(p);
    payload += p->payload.size();
  }
  EXPECT_EQ(payload, 140000u);
  EXPECT_EQ(out.size(), 3u) << "46 + 46 + 8 segments";
}

INSTANTIATE_TEST_SUITE_P(V4V6, Gso, ::testing::Values(false, true),
                         [](const auto& i) { return i.param ? "v6" : "v4"; });

TEST(TunChecksum, CompletesAPartialSumAndRejectsOffsetsPastTheEnd) {
  auto pkt = segment(false, 1, 300, ACK);
  auto good = pkt;
  // What Linux hands over with NEEDS_CSUM: the pseudo-header sum in the field.
  const uint32_t pseudo = wire::pseudo_header_sum(ip_of(false).src, ip_of(false).dst, 6,
                                                  static_cast<uint32_t>(pkt.size() - 20));
  const uint16_t partial = static_cast<uint16_t>(~wire::csum_fold(pseudo));
  pkt[36] = static_cast<uint8_t>(partial >> 8);
  pkt[37] = static_cast<uint8_t>(partial);
  VnetHdr h;
  h.flags = 1;
  h.csum_start = 20;
  h.csum_offset = 16;
  ASSERT_TRUE(complete_checksum(pkt, h));
  EXPECT_EQ(pkt, good);
  h.csum_start = static_cast<uint16_t>(pkt.size() - 10);
  EXPECT_FALSE(complete_checksum(pkt, h));
}

// A TUN write refused for want of room (ENOBUFS, or EAGAIN on the
// non-blocking fd) is the engine's local drop (Netif::try_transmit ->
// XmitResult::kDropped, Linux's NET_XMIT_DROP); any other failure is a
// packet the wire lost.
TEST(TunXmit, QueueFullOrNoBufferIsALocalDropOtherErrorsAreLoss) {
  EXPECT_EQ(tun_write_verdict(ENOBUFS), XmitResult::kDropped);
  EXPECT_EQ(tun_write_verdict(EAGAIN), XmitResult::kDropped);
  EXPECT_EQ(tun_write_verdict(EWOULDBLOCK), XmitResult::kDropped);
  EXPECT_EQ(tun_write_verdict(EIO), XmitResult::kSent);  // device down
  EXPECT_EQ(tun_write_verdict(EINVAL), XmitResult::kSent);
}

// A non-blocking pipe stands in for the device (a full pipe refuses a write
// with EAGAIN, as a TUN fd would): the verdict reaches try_transmit.
struct PipeDev {
  int rd = -1;
  TunDevice dev;
  static PipeDev make(bool vnet) {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
    return PipeDev{fds[0], TunDevice::adopt(fds[1], "pipe", 1500, vnet)};
  }
  void fill() {
    std::vector<uint8_t> junk(4096);
    while (::write(dev.fd(), junk.data(), junk.size()) > 0) {
    }
    while (::write(dev.fd(), junk.data(), 1) > 0) {
    }
    ASSERT_EQ(errno, EAGAIN);
  }
  void drain() {
    std::vector<uint8_t> b(65536);
    while (::read(rd, b.data(), b.size()) > 0) {
    }
  }
  ~PipeDev() {
    if (rd >= 0) ::close(rd);
  }
};

TEST(TunXmit, PlainDeviceReportsAFullQueueAsDropped) {
  PipeDev p = PipeDev::make(false);
  TunNetif netif(p.dev);
  const auto seg = segment(false, 1, 1000, ACK);
  EXPECT_EQ(netif.try_transmit(seg), XmitResult::kSent);
  p.fill();
  EXPECT_EQ(netif.try_transmit(seg), XmitResult::kDropped);
  EXPECT_EQ(p.dev.stats().tx_dropped, 1u);
  EXPECT_EQ(p.dev.stats().tx_refused, 1u);
  p.drain();
  EXPECT_EQ(netif.try_transmit(seg), XmitResult::kSent);
  EXPECT_EQ(p.dev.stats().tx_packets, 2u);
  // Oversize is not the device's refusal: lost on the path, as before.
  const auto big = segment(false, 1, 1600, ACK);
  EXPECT_EQ(netif.try_transmit(big), XmitResult::kSent);
  EXPECT_EQ(p.dev.stats().tx_oversize, 1u);
}

TEST(TunXmit, VnetDeviceGivesTheVerdictOfPacketsWrittenAtOnceAndCountsHeldOnes) {
  PipeDev p = PipeDev::make(true);
  TunNetif netif(p.dev);
  p.fill();
  // A pure ACK is written at once: its refusal is the engine's to see.
  EXPECT_EQ(netif.try_transmit(segment(false, 1, 0, ACK)), XmitResult::kDropped);
  // A data segment is held for a super-packet: reported sent; its refusal
  // at flush() is counted and left to TCP's loss recovery.
  EXPECT_EQ(netif.try_transmit(segment(false, 1, 1000, ACK)), XmitResult::kSent);
  EXPECT_EQ(netif.try_transmit(segment(false, 1001, 1000, ACK)), XmitResult::kSent);
  netif.flush();
  EXPECT_EQ(p.dev.stats().tx_dropped, 2u);
  EXPECT_EQ(p.dev.stats().tx_refused, 2u);
  p.drain();
  EXPECT_EQ(netif.try_transmit(segment(false, 1, 0, ACK)), XmitResult::kSent);
  EXPECT_EQ(p.dev.stats().tx_packets, 1u);
}

}  // namespace
}  // namespace weir::link
