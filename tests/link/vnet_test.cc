// GsoCoalescer on Ethernet frames (link/vnet.h, l2 = 14), as the AF_PACKET
// copy path uses it: the link header is kept and must match, the vnet
// header's offsets count it, an Ethernet frame's padding is never taken
// for payload, and a run stops at the caller's limit. The IP-only mode
// (TUN) is tested in tests/interop/tun_unit.cc.
#include "link/vnet.h"

#include "link/gso_recorder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "wire/packet.h"

namespace weir::link {
namespace {

using wire::tcp_flag::ACK;
using wire::tcp_flag::PSH;

constexpr size_t kEth = 14;

using test::GsoRecorder;
using test::Written;

// An Ethernet frame to `dst_mac_last` holding a TCP segment of `len` bytes
// at `seq`, padded to IEEE 802.3's 60-byte minimum as a link pads it.
std::vector<uint8_t> frame(bool v6, uint32_t seq, size_t len, uint8_t flags = ACK, uint8_t dst_mac_last = 2) {
  const auto pkt = test::tcp_segment(*IpAddr::parse(v6 ? "fd00::1" : "192.0.2.1"),
                                     *IpAddr::parse(v6 ? "fd00::2" : "192.0.2.2"), 80, 40000, seq, len, flags);
  const uint8_t eth[kEth] = {2, 0, 0, 0, 0, dst_mac_last, 2, 0, 0, 0, 0, 1, static_cast<uint8_t>(v6 ? 0x86 : 0x08),
                             static_cast<uint8_t>(v6 ? 0xdd : 0x00)};
  std::vector<uint8_t> f(std::max<size_t>(60, kEth + pkt.size()), 0xee);
  std::copy(pkt.begin(), pkt.end(), std::copy(std::begin(eth), std::end(eth), f.begin()));
  return f;
}

// The super-packet's TCP segment, its checksum completed as the kernel's
// GSO (or a NIC) completes it.
wire::TcpPacket segment_of(Written& w) {
  EXPECT_TRUE(complete_checksum(w.pkt, w.h));
  auto p = wire::parse_tcp_packet(std::span<const uint8_t>(w.pkt).subspan(kEth));
  EXPECT_TRUE(p) << wire::to_string(p.error());
  return p ? *p : wire::TcpPacket{};
}

class GsoEther : public ::testing::TestWithParam<bool> {};

TEST_P(GsoEther, FramesMergeBehindTheirLinkHeaderAndTheOffsetsCountIt) {
  const bool v6 = GetParam();
  GsoRecorder rec;
  GsoCoalescer g(rec, kEth);
  auto& out = rec.out;
  for (uint32_t i = 0; i < 4; ++i) g.push(frame(v6, 1000 + i * 1400, 1400, i == 3 ? ACK | PSH : ACK));
  g.flush();
  ASSERT_EQ(out.size(), 1u);
  Written& w = out[0];
  const size_t ip = v6 ? 40 : 20;
  EXPECT_EQ(w.h.gso_type, v6 ? 4 : 1);
  EXPECT_EQ(w.h.gso_size, 1400);
  EXPECT_EQ(w.h.csum_start, kEth + ip) << "the checksum starts at TCP, past the link header";
  EXPECT_EQ(w.h.hdr_len, kEth + ip + 20);
  EXPECT_EQ(w.pkt.size(), kEth + ip + 20 + 4 * 1400);
  const auto first = frame(v6, 1000, 1400);
  EXPECT_TRUE(std::equal(first.begin(), first.begin() + kEth, w.pkt.begin())) << "the link header is kept";
  auto p = segment_of(w);
  EXPECT_EQ(p.tcp.seq, Seq32(1000));
  ASSERT_EQ(p.payload.size(), 5600u);
  EXPECT_TRUE(p.tcp.has(PSH));
  for (size_t i = 0; i < 5600; ++i) ASSERT_EQ(p.payload[i], static_cast<uint8_t>(1000 + i)) << i;
}

TEST_P(GsoEther, ADifferentLinkHeaderEndsTheRun) {
  const bool v6 = GetParam();
  GsoRecorder rec;
  GsoCoalescer g(rec, kEth);
  auto& out = rec.out;
  g.push(frame(v6, 1000, 1400));
  g.push(frame(v6, 2400, 1400, ACK, 3));  // another next hop: never one super-packet
  g.flush();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].h.gso_type, 0);
  EXPECT_EQ(out[1].pkt, frame(v6, 2400, 1400, ACK, 3));
}

// Two 1-byte segments ride in 60-byte frames whose last bytes are padding:
// merged, the super-packet holds the two data bytes and no padding, so the
// kernel's segments carry the bytes the engine sent.
TEST(GsoEtherPadding, PaddingIsNotPayload) {
  GsoRecorder rec;
  GsoCoalescer g(rec, kEth);
  auto& out = rec.out;
  ASSERT_EQ(frame(false, 1000, 1).size(), 60u);
  g.push(frame(false, 1000, 1));
  g.push(frame(false, 1001, 1));
  g.flush();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].pkt.size(), kEth + 40 + 2);
  auto p = segment_of(out[0]);
  ASSERT_EQ(p.payload.size(), 2u);
  EXPECT_EQ(p.payload[0], static_cast<uint8_t>(1000));
  EXPECT_EQ(p.payload[1], static_cast<uint8_t>(1001));
}

TEST(GsoEtherLimit, ARunStopsAtTheCallersLimit) {
  GsoRecorder rec;
  GsoCoalescer g(rec, kEth, 3000);
  auto& out = rec.out;  // room for two 1400-byte segments and headers
  for (uint32_t i = 0; i < 5; ++i) g.push(frame(false, 1000 + i * 1400, 1400));
  g.flush();
  ASSERT_EQ(out.size(), 3u);
  for (const auto& w : out) EXPECT_LE(w.pkt.size() - kEth, 3000u);
  EXPECT_EQ(out[0].h.gso_type, 1);
  EXPECT_EQ(out[2].h.gso_type, 0) << "the fifth goes alone";
}

// A device with no room for a run (its bytes taken by frames the kernel
// has not taken yet) still gets each segment alone, as it came.
TEST(GsoEtherRoom, WithoutRoomForARunEachSegmentGoesAlone) {
  GsoRecorder rec;
  rec.room = false;
  GsoCoalescer g(rec, kEth);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(g.push(frame(false, 1000 + i * 1400, 1400)), XmitResult::kSent);
  g.flush();
  ASSERT_EQ(rec.out.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(rec.out[i].h.gso_type, 0);
    EXPECT_EQ(rec.out[i].pkt, frame(false, 1000 + i * 1400, 1400)) << i;
  }
}

TEST(VnetHeader, EncodesLittleEndianInTheLegacyLayout) {
  VnetHdr h{1, 4, 0x1234, 1448, 54, 16};
  uint8_t b[kVnetLen];
  encode_vnet(h, b);
  const uint8_t want[kVnetLen] = {1, 4, 0x34, 0x12, 0xa8, 0x05, 54, 0, 16, 0};
  EXPECT_TRUE(std::equal(b, b + kVnetLen, want));
  const VnetHdr back = decode_vnet(b);
  EXPECT_EQ(back.hdr_len, 0x1234);
  EXPECT_EQ(back.gso_size, 1448);
  EXPECT_EQ(back.csum_start, 54);
  EXPECT_EQ(back.csum_offset, 16);
}

INSTANTIATE_TEST_SUITE_P(Ip, GsoEther, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "v6" : "v4"; });

}  // namespace
}  // namespace weir::link
