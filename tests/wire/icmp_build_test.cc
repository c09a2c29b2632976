// build_icmp_unreachable: the errors EtherLink makes for packets whose next
// hop failed to resolve, checked by the stack's own ICMP parser.
#include <gtest/gtest.h>

#include "wire/bytes.h"
#include "wire/icmp_build.h"
#include "wire/packet.h"

namespace weir::wire {
namespace {

const IpAddr kUs4 = IpAddr::v4(10, 0, 0, 1), kThem4 = IpAddr::v4(10, 0, 0, 9);
const IpAddr kUs6 = *IpAddr::parse("2001:db8::1"), kThem6 = *IpAddr::parse("2001:db8::9");

std::vector<uint8_t> syn(const IpAddr& src, const IpAddr& dst, size_t payload = 0) {
  IpInfo ip;
  ip.version = src.is_v4() ? 4 : 6;
  ip.src = src;
  ip.dst = dst;
  TcpHeader h;
  h.src_port = 40000;
  h.dst_port = 80;
  h.seq = Seq32(12345);
  h.flags = tcp_flag::SYN;
  h.window = 65535;
  return build_tcp_packet(ip, h, std::vector<uint8_t>(payload, 0xab));
}

TEST(IcmpBuild, V4HostUnreachableQuotesOurSegmentAndParses) {
  const auto ours = syn(kUs4, kThem4);
  const auto d = build_icmp_unreachable(ours, kUs4, kIcmpDestUnreach, kIcmpHostUnreach);
  ASSERT_EQ(d.size(), 20 + 8 + ours.size());
  auto e = parse_icmp_error(d);
  ASSERT_TRUE(e) << to_string(e.error());
  EXPECT_EQ(e->type, 3);
  EXPECT_EQ(e->code, 1);
  EXPECT_EQ(e->ip.src, kUs4);
  EXPECT_EQ(e->ip.dst, kUs4) << "back to the packet's source";
  EXPECT_EQ(e->quoted_ip.dst, kThem4);
  EXPECT_EQ(e->quoted_src_port, 40000);
  EXPECT_EQ(e->quoted_dst_port, 80);
  EXPECT_EQ(e->quoted_seq, Seq32(12345));
  EXPECT_EQ(d[1], 0xc0) << "IPTOS_PREC_INTERNETCONTROL";
}

TEST(IcmpBuild, V6AddressUnreachableQuotesOurSegmentAndParses) {
  const auto ours = syn(kUs6, kThem6);
  const auto d = build_icmp_unreachable(ours, kUs6, kIcmpv6DestUnreach, kIcmpv6AddrUnreach);
  ASSERT_EQ(d.size(), 40 + 8 + ours.size());
  auto e = parse_icmp_error(d);
  ASSERT_TRUE(e) << to_string(e.error());
  EXPECT_EQ(e->type, 1);
  EXPECT_EQ(e->code, 3);
  EXPECT_EQ(e->ip.dst, kUs6);
  EXPECT_EQ(e->quoted_ip.dst, kThem6);
  EXPECT_EQ(e->quoted_seq, Seq32(12345));
}

TEST(IcmpBuild, TheQuoteStopsAt576And1280Bytes) {
  const auto big4 = syn(kUs4, kThem4, 1400);
  EXPECT_EQ(build_icmp_unreachable(big4, kUs4, 3, 1).size(), 576u);  // RFC 1812 §4.3.2.3
  EXPECT_TRUE(parse_icmp_error(build_icmp_unreachable(big4, kUs4, 3, 1)));
  const auto big6 = syn(kUs6, kThem6, 1400);
  EXPECT_EQ(build_icmp_unreachable(big6, kUs6, 1, 3).size(), 1280u);  // RFC 4443 §2.4 (c)
  EXPECT_TRUE(parse_icmp_error(build_icmp_unreachable(big6, kUs6, 1, 3)));
}

TEST(IcmpBuild, NeverAboutAnIcmpErrorALaterFragmentOrGarbage) {
  const auto err4 = build_icmp_unreachable(syn(kUs4, kThem4), kUs4, 3, 1);
  EXPECT_TRUE(build_icmp_unreachable(err4, kUs4, 3, 1).empty());  // RFC 1122 §3.2.2
  const auto err6 = build_icmp_unreachable(syn(kUs6, kThem6), kUs6, 1, 3);
  EXPECT_TRUE(build_icmp_unreachable(err6, kUs6, 1, 3).empty());  // RFC 4443 §2.4 (e.1)
  auto frag = syn(kUs4, kThem4);
  store_be16(frag.data() + 6, 0x0010);  // offset 128 bytes
  EXPECT_TRUE(build_icmp_unreachable(frag, kUs4, 3, 1).empty());
  const std::vector<uint8_t> junk{0x45, 0, 0};
  EXPECT_TRUE(build_icmp_unreachable(junk, kUs4, 3, 1).empty());
  EXPECT_TRUE(build_icmp_unreachable(syn(kUs4, kThem4), kUs6, 3, 1).empty()) << "families differ";
}

}  // namespace
}  // namespace weir::wire
