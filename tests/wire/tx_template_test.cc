// TxTemplateV4::build and TxTemplateV6::build must write exactly
// build_tcp_packet_pieces's bytes: the send path uses them for every
// segment without an RFC 2385 key.
#include "wire/tx_template.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <vector>

namespace weir::wire {
namespace {

struct Case {
  IpInfo ip;
  TcpHeader h;
  std::vector<uint8_t> data;
  size_t split = 0;  // the payload in two pieces at this offset (a send ring's wrap)
};

// Headers as the engine sends them and stranger: every option, SACK blocks,
// items in a script's order, payloads of odd and even lengths in one or
// two pieces (the second starting at an odd offset), all TOS and id values.
// IPv6: random addresses under 2001:db8::/32 and fd00::/8 (never
// IPv4-mapped), any traffic class, hop limit and 20-bit flow label.
Case random_case(std::mt19937& rng, bool v6 = false) {
  auto u = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  Case c;
  if (v6) {
    std::array<uint8_t, 16> s{0x20, 0x01, 0x0d, 0xb8}, d{0xfd};
    for (size_t i = 4; i < 16; ++i) s[i] = static_cast<uint8_t>(u(256));
    for (size_t i = 1; i < 16; ++i) d[i] = static_cast<uint8_t>(u(256));
    c.ip.src = IpAddr::v6(s);
    c.ip.dst = IpAddr::v6(d);
    c.ip.version = 6;
    c.ip.flow_label = u(4) == 0 ? 0 : static_cast<uint32_t>(rng()) & 0xfffffu;
  } else {
    c.ip.src = IpAddr::v4(static_cast<uint8_t>(u(256)), 0, 2, static_cast<uint8_t>(u(256)));
    c.ip.dst = IpAddr::v4(198, 51, static_cast<uint8_t>(u(256)), 7);
  }
  c.ip.ttl = u(4) == 0 ? static_cast<uint8_t>(u(256)) : 64;
  c.ip.df = u(4) != 0;
  c.ip.tos = static_cast<uint8_t>(u(256));
  c.ip.id = static_cast<uint16_t>(u(65536));
  TcpHeader& h = c.h;
  h.src_port = static_cast<uint16_t>(u(65536));
  h.dst_port = static_cast<uint16_t>(u(65536));
  h.seq = Seq32(static_cast<uint32_t>(rng()));
  h.ack = Seq32(static_cast<uint32_t>(rng()));
  h.flags = static_cast<uint8_t>(u(256));
  h.window = static_cast<uint16_t>(u(65536));
  h.urgent = static_cast<uint16_t>(u(4) == 0 ? u(65536) : 0);
  if (u(2)) h.options.ts = TcpTimestamps{static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng())};
  for (uint32_t k = u(5); k > 0; --k) {
    const Seq32 b(static_cast<uint32_t>(rng()));
    h.options.add_sack({b, b + u(100000)});
  }
  if (u(8) == 0) h.options.mss = static_cast<uint16_t>(u(65536));
  if (u(8) == 0) h.options.wscale = static_cast<uint8_t>(u(15));
  if (u(8) == 0) h.options.sack_permitted = true;
  if (u(8) == 0) {
    // A script's own order: window scale, NOP, MSS.
    h.options.wscale = 7;
    h.options.mss = 1460;
    h.options.items[0] = TcpOptionItem{tcp_opt::WSCALE};
    h.options.items[1] = TcpOptionItem{tcp_opt::NOP};
    h.options.items[2] = TcpOptionItem{tcp_opt::MSS};
    h.options.item_count = 3;
  }
  const size_t len = u(3) == 0 ? 0 : u(1500);
  c.data.resize(len);
  for (uint8_t& b : c.data) b = static_cast<uint8_t>(rng());
  c.split = len ? u(static_cast<uint32_t>(len) + 1) : 0;
  return c;
}

TEST(TxTemplateV4, WritesTheGeneralBuildersBytes) {
  std::mt19937 rng(20261201);
  for (int i = 0; i < 5000; ++i) {
    const Case c = random_case(rng);
    const std::span<const uint8_t> all(c.data);
    const PayloadView pv(all.first(c.split), all.subspan(c.split));
    const size_t room = kIpv4HeaderMin + kTcpHeaderMin + kTcpOptionsMax + c.data.size();
    std::vector<uint8_t> want(room, 0xee), got(room, 0xdd);
    const size_t nw = build_tcp_packet_pieces(c.ip, c.h, pv, want);
    const TxTemplateV4 t(c.ip.src.v4_host_order(), c.ip.dst.v4_host_order(), c.ip.ttl, c.ip.df);
    const size_t ng = t.build(c.h, c.ip.tos, c.ip.id, pv, got);
    ASSERT_EQ(ng, nw) << "case " << i;
    ASSERT_GT(nw, 0u);
    ASSERT_TRUE(std::equal(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(nw), got.begin()))
        << "case " << i;
    // And it parses back with both checksums valid.
    ASSERT_TRUE(parse_tcp_packet(std::span<const uint8_t>(got.data(), ng)).has_value()) << "case " << i;
  }
}

TEST(TxTemplateV6, WritesTheGeneralBuildersBytes) {
  std::mt19937 rng(20261202);
  for (int i = 0; i < 5000; ++i) {
    const Case c = random_case(rng, true);
    const std::span<const uint8_t> all(c.data);
    const PayloadView pv(all.first(c.split), all.subspan(c.split));
    const size_t room = kIpv6Header + kTcpHeaderMin + kTcpOptionsMax + c.data.size();
    std::vector<uint8_t> want(room, 0xee), got(room, 0xdd);
    const size_t nw = build_tcp_packet_pieces(c.ip, c.h, pv, want);
    const TxTemplateV6 t(c.ip.src, c.ip.dst);
    const size_t ng = t.build(c.h, uint32_t{c.ip.tos} << 20 | c.ip.flow_label, c.ip.ttl, pv, got);
    ASSERT_EQ(ng, nw) << "case " << i;
    ASSERT_GT(nw, 0u);
    ASSERT_TRUE(std::equal(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(nw), got.begin()))
        << "case " << i;
    const auto back = parse_tcp_packet(std::span<const uint8_t>(got.data(), ng));
    ASSERT_TRUE(back.has_value()) << "case " << i;
    EXPECT_EQ(back->ip.flow_label, c.ip.flow_label);
    EXPECT_EQ(back->ip.tos, c.ip.tos);
    EXPECT_EQ(back->ip.ttl, c.ip.ttl);
  }
}

TEST(TxTemplateV6, RefusesTooLongAPayloadOrABufferWithoutRoomForAnyOptions) {
  // The payload length field counts the TCP segment only (RFC 8200 §3): a
  // segment of 65,535 bytes fits, one more does not.
  TcpHeader h;
  const TxTemplateV6 t(*IpAddr::parse("2001:db8::1"), *IpAddr::parse("2001:db8::2"));
  std::vector<uint8_t> fits(65535 - 20, 1), over(65535 - 20 + 1, 1);
  std::vector<uint8_t> out(100 + over.size());
  EXPECT_EQ(t.build(h, 0, 64, PayloadView(std::span<const uint8_t>(fits)), out), 40u + 65535u);
  EXPECT_EQ(t.build(h, 0, 64, PayloadView(std::span<const uint8_t>(over)), out), 0u);
  std::vector<uint8_t> small(99);
  EXPECT_EQ(t.build(h, 0, 64, {}, small), 0u);
}

TEST(TxTemplateV4, RefusesTooLongADatagramOrABufferWithoutRoomForAnyOptions) {
  // Longer than the 16-bit total length (as the general builder), and a
  // buffer without room for the largest headers (the template's contract).
  TcpHeader h;
  std::vector<uint8_t> data(65535 - 40 + 1, 1);
  std::vector<uint8_t> out(80 + data.size());
  const TxTemplateV4 t(0xc0000201, 0xc0000202, 64, true);
  EXPECT_EQ(t.build(h, 0, 1, PayloadView(std::span<const uint8_t>(data)), out), 0u);
  std::vector<uint8_t> small(79);
  EXPECT_EQ(t.build(h, 0, 1, {}, small), 0u);
}

}  // namespace
}  // namespace weir::wire
