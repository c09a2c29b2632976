// Ethernet II and ARP codecs: round trips, exact bytes, malformed input.
#include <gtest/gtest.h>

#include "link/arp.h"
#include "link/ether.h"

namespace weir::link {
namespace {

TEST(MacAddr, ParsesAndPrintsColonHex) {
  auto m = MacAddr::parse("02:00:5E:10:aa:ff");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->b, (std::array<uint8_t, 6>{0x02, 0x00, 0x5e, 0x10, 0xaa, 0xff}));
  EXPECT_EQ(m->str(), "02:00:5e:10:aa:ff");
  EXPECT_FALSE(m->is_multicast());
  EXPECT_TRUE(MacAddr::parse("33:33:00:00:00:01")->is_multicast());
  EXPECT_TRUE(kBroadcastMac.is_broadcast());
}

TEST(MacAddr, RejectsMalformedText) {
  for (const char* bad : {"", "02:00:00:00:00", "02:00:00:00:00:0", "02:00:00:00:00:001",
                          "02-00-00-00-00-01", "0g:00:00:00:00:01", "02:00:00:00:00:01:"}) {
    EXPECT_FALSE(MacAddr::parse(bad)) << bad;
  }
}

TEST(EtherHeader, RoundTripsAndRejectsShortFrames) {
  uint8_t buf[20] = {};
  const EtherHeader h{MacAddr{{1, 2, 3, 4, 5, 6}}, MacAddr{{7, 8, 9, 10, 11, 12}}, kEthPArp};
  write_ether_header(buf, h);
  EXPECT_EQ(buf[12], 0x08);
  EXPECT_EQ(buf[13], 0x06);
  auto f = parse_ether(buf);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->hdr.dst, h.dst);
  EXPECT_EQ(f->hdr.src, h.src);
  EXPECT_EQ(f->hdr.type, kEthPArp);
  EXPECT_EQ(f->payload.size(), 6u);
  EXPECT_FALSE(parse_ether(std::span<const uint8_t>(buf, 13)));
  EXPECT_TRUE(parse_ether(std::span<const uint8_t>(buf, 14)));
}

TEST(MulticastMac, MapsIpv4LowTwentyThreeBitsAndIpv6LowThirtyTwo) {
  // RFC 1112 §6.4: 239.129.2.3 -> 01:00:5e:01:02:03 (the 0x80 bit is not mapped).
  EXPECT_EQ(ipv4_multicast_mac(IpAddr::v4(239, 129, 2, 3)).str(), "01:00:5e:01:02:03");
  // RFC 2464 §7.
  EXPECT_EQ(ipv6_multicast_mac(*IpAddr::parse("ff02::1:ff12:3456")).str(), "33:33:ff:12:34:56");
  // RFC 4291 §2.7.1.
  EXPECT_EQ(solicited_node(*IpAddr::parse("2001:db8::abcd:1234:5678")),
            *IpAddr::parse("ff02::1:ff34:5678"));
}

std::vector<uint8_t> arp_bytes(const ArpPacket& a) {
  std::vector<uint8_t> b(kArpLen);
  emit_arp(a, b.data());
  return b;
}

TEST(Arp, EmitsRfc826LayoutAndParsesItBack) {
  const ArpPacket a{.op = kArpOpRequest, .sha = MacAddr{{2, 0, 0, 0, 0, 1}}, .spa = 0x0a000001,
                    .tha = MacAddr{}, .tpa = 0x0a000002};
  const auto b = arp_bytes(a);
  const std::vector<uint8_t> want = {0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01,  // hrd pro hln pln op
                                     2, 0, 0, 0, 0, 1, 10, 0, 0, 1,             // sha spa
                                     0, 0, 0, 0, 0, 0, 10, 0, 0, 2};            // tha tpa
  EXPECT_EQ(b, want);
  auto p = parse_arp(b);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->op, kArpOpRequest);
  EXPECT_EQ(p->sha, a.sha);
  EXPECT_EQ(p->spa, a.spa);
  EXPECT_EQ(p->tha, a.tha);
  EXPECT_EQ(p->tpa, a.tpa);
}

TEST(Arp, AcceptsTrailingPadding) {
  auto b = arp_bytes({.op = kArpOpReply});
  b.resize(46, 0);  // a 60-byte minimum frame's body
  EXPECT_TRUE(parse_arp(b));
}

TEST(Arp, RejectsMalformedPackets) {
  const auto good = arp_bytes({.op = kArpOpReply});
  auto err = [](std::vector<uint8_t> b) {
    auto p = parse_arp(b);
    return p ? std::string("ok") : std::string(to_string(p.error()));
  };
  EXPECT_EQ(err(good), "ok");
  EXPECT_EQ(err({good.begin(), good.end() - 1}), "truncated");
  EXPECT_EQ(err({}), "truncated");
  auto b = good;
  b[1] = 6;  // ARPHRD_IEEE802
  EXPECT_EQ(err(b), "hardware");
  b = good;
  b[4] = 8;  // hardware length
  EXPECT_EQ(err(b), "hardware");
  b = good;
  b[2] = 0x86;
  b[3] = 0xdd;  // protocol IPv6
  EXPECT_EQ(err(b), "protocol");
  b = good;
  b[5] = 16;  // protocol length
  EXPECT_EQ(err(b), "protocol");
  b = good;
  b[7] = 3;  // RARP request
  EXPECT_EQ(err(b), "opcode");
}

}  // namespace
}  // namespace weir::link
