// Neighbour solicitation/advertisement codec: exact layout, round trips and
// the receipt checks of RFC 4861 §7.1.1/§7.1.2.
#include <gtest/gtest.h>

#include <vector>

#include "link/ndisc.h"
#include "wire/bytes.h"
#include "wire/checksum.h"

namespace weir::link {
namespace {

IpAddr a6(const char* t) { return *IpAddr::parse(t); }

NdMessage ns_from_a() {
  NdMessage m;
  m.type = kIcmp6NeighSolicit;
  m.src = a6("2001:db8::1");
  m.dst = a6("ff02::1:ff00:2");
  m.target = a6("2001:db8::2");
  m.lladdr = MacAddr{{2, 0, 0, 0, 0, 1}};
  return m;
}

NdMessage na_from_b() {
  NdMessage m;
  m.type = kIcmp6NeighAdvert;
  m.src = a6("2001:db8::2");
  m.dst = a6("2001:db8::1");
  m.target = a6("2001:db8::2");
  m.solicited = m.override_flag = true;
  m.lladdr = MacAddr{{2, 0, 0, 0, 0, 2}};
  return m;
}

std::vector<uint8_t> bytes(const NdMessage& m) {
  std::vector<uint8_t> b(kNdPacketLen);
  b.resize(emit_nd(m, b.data()));
  return b;
}

// Recomputes the ICMPv6 checksum after a test edits the packet.
void fix_checksum(std::vector<uint8_t>& b) {
  std::array<uint8_t, 16> s, d;
  std::copy(b.begin() + 8, b.begin() + 24, s.begin());
  std::copy(b.begin() + 24, b.begin() + 40, d.begin());
  const IpAddr src = IpAddr::v6(s), dst = IpAddr::v6(d);
  const uint32_t len = wire::load_be16(b.data() + 4);
  b[42] = b[43] = 0;
  const uint32_t sum = wire::csum_partial(std::span<const uint8_t>(b).subspan(40, len),
                                          wire::pseudo_header_sum(src, dst, 58, len));
  wire::store_be16(b.data() + 42, wire::csum_fold(sum));
}

std::string err(const std::vector<uint8_t>& b) {
  auto p = parse_nd(b);
  return p ? "ok" : to_string(p.error());
}

TEST(Ndisc, EmitsSolicitationLayout) {
  const auto b = bytes(ns_from_a());
  ASSERT_EQ(b.size(), 72u);
  EXPECT_EQ(b[0], 0x60);
  EXPECT_EQ(wire::load_be16(b.data() + 4), 32);  // payload length
  EXPECT_EQ(b[6], 58);                            // ICMPv6
  EXPECT_EQ(b[7], 255);                           // hop limit
  EXPECT_EQ(b[40], 135);
  EXPECT_EQ(b[41], 0);
  EXPECT_EQ(wire::load_be32(b.data() + 44), 0u);  // reserved
  EXPECT_EQ(b[64], 1);                            // source link-layer address option
  EXPECT_EQ(b[65], 1);                            // 8 octets
  EXPECT_EQ(std::vector<uint8_t>(b.begin() + 66, b.end()), (std::vector<uint8_t>{2, 0, 0, 0, 0, 1}));
  EXPECT_EQ(err(b), "ok");
}

TEST(Ndisc, RoundTripsBothMessages) {
  for (const NdMessage& m : {ns_from_a(), na_from_b()}) {
    auto p = parse_nd(bytes(m));
    ASSERT_TRUE(p) << to_string(p.error());
    EXPECT_EQ(p->type, m.type);
    EXPECT_EQ(p->src, m.src);
    EXPECT_EQ(p->dst, m.dst);
    EXPECT_EQ(p->target, m.target);
    EXPECT_EQ(p->solicited, m.solicited);
    EXPECT_EQ(p->override_flag, m.override_flag);
    EXPECT_EQ(p->router, m.router);
    EXPECT_EQ(p->lladdr, m.lladdr);
  }
  auto na = bytes(na_from_b());
  EXPECT_EQ(na[44], 0x60);  // S and O
  EXPECT_EQ(na[64], 2);     // target link-layer address option
}

TEST(Ndisc, OtherIpv6PacketsAreNotNd) {
  auto b = bytes(ns_from_a());
  b[6] = 6;  // TCP
  EXPECT_EQ(err(b), "not-nd");
  b = bytes(ns_from_a());
  b[40] = 128;  // echo request
  EXPECT_EQ(err(b), "not-nd");
  EXPECT_EQ(err({0x45, 0, 0, 20}), "not-nd");
}

TEST(Ndisc, RejectsWhatRfc4861Section7_1Rejects) {
  auto b = bytes(ns_from_a());
  b[7] = 254;
  EXPECT_EQ(err(b), "hop-limit");
  b = bytes(ns_from_a());
  b[50] ^= 1;  // a target byte, checksum left alone
  EXPECT_EQ(err(b), "checksum");
  b = bytes(ns_from_a());
  b[41] = 1;
  fix_checksum(b);
  EXPECT_EQ(err(b), "code");
  NdMessage m = ns_from_a();
  m.target = a6("ff02::1");
  EXPECT_EQ(err(bytes(m)), "target-multicast");
  b = bytes(ns_from_a());
  b[65] = 0;
  fix_checksum(b);
  EXPECT_EQ(err(b), "option-length");
  b = bytes(ns_from_a());
  b.resize(60);
  wire::store_be16(b.data() + 4, 20);
  fix_checksum(b);
  EXPECT_EQ(err(b), "truncated");
  b = bytes(ns_from_a());
  b.resize(70);  // payload length says 32, 30 bytes present
  EXPECT_EQ(err(b), "truncated");
  m = ns_from_a();
  m.src = IpAddr::v6({});
  EXPECT_EQ(err(bytes(m)), "dad-with-sllao");
  m.lladdr.reset();
  EXPECT_EQ(err(bytes(m)), "ok");
  m.dst = a6("ff02::1");
  EXPECT_EQ(err(bytes(m)), "dad-not-solicited-node");
  NdMessage na = na_from_b();
  na.dst = a6("ff02::1");
  EXPECT_EQ(err(bytes(na)), "solicited-multicast");
  na.solicited = false;
  EXPECT_EQ(err(bytes(na)), "ok");
}

TEST(Ndisc, SkipsUnknownOptionsAndChecksLinkLayerLength) {
  auto b = bytes(ns_from_a());
  // Append an unknown 8-byte option (type 200).
  b.insert(b.end(), {200, 1, 0, 0, 0, 0, 0, 0});
  wire::store_be16(b.data() + 4, 40);
  fix_checksum(b);
  auto p = parse_nd(b);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->lladdr);
  b = bytes(ns_from_a());
  b.insert(b.end(), 8, 0);
  b[65] = 2;  // a 16-byte link-layer option
  wire::store_be16(b.data() + 4, 40);
  fix_checksum(b);
  EXPECT_EQ(err(b), "lladdr-length");
}

}  // namespace
}  // namespace weir::link
