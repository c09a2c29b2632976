#include "wire/packet.h"

#include <gtest/gtest.h>

#include <vector>

#include "wire/bytes.h"
#include "wire/checksum.h"

namespace weir::wire {
namespace {

IpInfo v4_info() {
  IpInfo ip;
  ip.src = IpAddr::v4(192, 0, 2, 1);
  ip.dst = IpAddr::v4(192, 0, 2, 2);
  ip.ttl = 64;
  ip.id = 0x1234;
  return ip;
}

IpInfo v6_info() {
  IpInfo ip;
  ip.version = 6;
  ip.src = *IpAddr::parse("2001:db8::1");
  ip.dst = *IpAddr::parse("2001:db8::2");
  ip.ttl = 57;
  ip.tos = 0x02;
  ip.flow_label = 0xabcde;
  return ip;
}

TcpHeader syn_ack() {
  TcpHeader h;
  h.src_port = 8080;
  h.dst_port = 40000;
  h.seq = Seq32(0xfffffff0u);
  h.ack = Seq32(1001);
  h.flags = tcp_flag::SYN | tcp_flag::ACK;
  h.window = 65535;
  h.options.mss = 1460;
  h.options.sack_permitted = true;
  h.options.ts = TcpTimestamps{5, 6};
  h.options.wscale = 7;
  return h;
}

const std::vector<uint8_t> kPayload{'h', 'e', 'l', 'l', 'o'};

TEST(Packet, Ipv4RoundTrip) {
  auto d = build_tcp_packet(v4_info(), syn_ack(), kPayload);
  ASSERT_EQ(d.size(), 20u + 20 + 20 + 5);
  EXPECT_EQ(d[0], 0x45);
  EXPECT_EQ(load_be16(d.data() + 2), d.size());
  EXPECT_EQ(load_be16(d.data() + 6), 0x4000);  // DF
  EXPECT_EQ(d[9], kProtoTcp);
  auto p = parse_tcp_packet(d);
  ASSERT_TRUE(p) << to_string(p.error());
  EXPECT_EQ(p->ip.version, 4);
  EXPECT_EQ(p->ip.src, IpAddr::v4(192, 0, 2, 1));
  EXPECT_EQ(p->ip.dst, IpAddr::v4(192, 0, 2, 2));
  EXPECT_EQ(p->ip.id, 0x1234);
  EXPECT_TRUE(p->ip.df);
  EXPECT_EQ(p->tcp.seq, Seq32(0xfffffff0u));
  EXPECT_EQ(p->tcp.options.wscale, 7);
  EXPECT_EQ(std::vector<uint8_t>(p->payload.begin(), p->payload.end()), kPayload);
}

TEST(Packet, Ipv6RoundTrip) {
  auto d = build_tcp_packet(v6_info(), syn_ack(), kPayload);
  ASSERT_EQ(d.size(), 40u + 40 + 5);
  EXPECT_EQ(d[0] >> 4, 6);
  EXPECT_EQ(load_be16(d.data() + 4), 45);
  auto p = parse_tcp_packet(d);
  ASSERT_TRUE(p) << to_string(p.error());
  EXPECT_EQ(p->ip.version, 6);
  EXPECT_EQ(p->ip.src, v6_info().src);
  EXPECT_EQ(p->ip.ttl, 57);
  EXPECT_EQ(p->ip.tos, 0x02);
  EXPECT_EQ(p->ip.flow_label, 0xabcdeu);
  EXPECT_EQ(p->tcp.options.mss, 1460);
  EXPECT_EQ(p->payload.size(), 5u);
}

TEST(Packet, MappedAddressesMeanIpv4EvenIfVersionSaysSix) {
  IpInfo ip = v4_info();
  ip.version = 6;
  auto d = build_tcp_packet(ip, syn_ack(), {});
  EXPECT_EQ(d[0], 0x45);
  EXPECT_EQ(tcp_packet_size(ip, syn_ack(), 0), 60u);
}

TEST(Packet, SizeMatchesBytesWritten) {
  for (size_t n : {0u, 1u, 1000u}) {
    std::vector<uint8_t> payload(n, 0x5a);
    EXPECT_EQ(build_tcp_packet(v6_info(), syn_ack(), payload).size(),
              tcp_packet_size(v6_info(), syn_ack(), n));
  }
  std::vector<uint8_t> small(10);
  EXPECT_EQ(build_tcp_packet(v4_info(), syn_ack(), kPayload, small), 0u);
}

// A payload handed over in two pieces (the send ring wrapped, the cut at
// an odd or even byte) builds the same datagram, checksums included, as the
// contiguous payload; v4 and v6, with and without options.
TEST(Packet, PayloadInTwoPiecesBuildsTheSameBytes) {
  std::vector<uint8_t> payload(1449);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7 + 3);
  const std::span<const uint8_t> all(payload);
  TcpHeader plain;
  plain.src_port = 80;
  plain.dst_port = 4242;
  plain.seq = Seq32(1000);
  plain.ack = Seq32(77);
  plain.flags = tcp_flag::ACK | tcp_flag::PSH;
  plain.window = 500;
  TcpHeader opts = plain;
  opts.options.ts = TcpTimestamps{11, 22};
  opts.options.add_sack(SeqRange{Seq32(100), Seq32(200)});
  for (const IpInfo& ip : {v4_info(), v6_info()}) {
    for (const TcpHeader& h : {plain, opts}) {
      const std::vector<uint8_t> want = build_tcp_packet(ip, h, all);
      ASSERT_FALSE(want.empty());
      for (size_t cut : {0u, 1u, 2u, 701u, 702u, 1448u, 1449u}) {
        std::vector<uint8_t> out(kIpv6Header + kTcpHeaderMin + kTcpOptionsMax + all.size());
        const size_t n =
            build_tcp_packet_pieces(ip, h, PayloadView(all.first(cut), all.subspan(cut)), out);
        out.resize(n);
        EXPECT_EQ(out, want) << "cut " << cut;
        auto p = parse_tcp_packet(out);  // verifies both checksums
        ASSERT_TRUE(p.has_value());
        EXPECT_EQ(p->payload.size(), all.size());
      }
    }
  }
}

TEST(Packet, IgnoresLinkPaddingAfterIpv4TotalLength) {
  TcpHeader h;
  h.flags = tcp_flag::ACK;
  auto d = build_tcp_packet(v4_info(), h, {});
  d.resize(d.size() + 6, 0);  // Ethernet minimum-frame padding
  auto p = parse_tcp_packet(d);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->payload.empty());
}

PacketError error_of(const std::vector<uint8_t>& d, bool verify = true) {
  auto p = parse_tcp_packet(d, verify);
  EXPECT_FALSE(p.has_value());
  return p ? PacketError::kNotTcp : p.error();
}

// Fixes the IPv4 header checksum after a test edits the header.
void reseal_ipv4(std::vector<uint8_t>& d) {
  size_t ihl = (d[0] & 0xf) * 4u;
  store_be16(d.data() + 10, 0);
  store_be16(d.data() + 10, csum_fold(csum_partial({d.data(), ihl})));
}

TEST(PacketErrors, EachMalformationHasItsKind) {
  auto good = build_tcp_packet(v4_info(), syn_ack(), kPayload);
  EXPECT_EQ(error_of({}), PacketError::kIpTruncated);
  EXPECT_EQ(error_of({good.begin(), good.begin() + 19}), PacketError::kIpTruncated);
  EXPECT_EQ(error_of({good.begin(), good.end() - 1}), PacketError::kIpTruncated);
  auto d = good;
  d[0] = 0x55;
  EXPECT_EQ(error_of(d), PacketError::kIpBadVersion);
  d = good;
  d[0] = 0x44;
  EXPECT_EQ(error_of(d), PacketError::kIpBadHeaderLength);
  d = good;
  d[8] = 63;  // TTL changed, checksum not
  EXPECT_EQ(error_of(d), PacketError::kIpBadChecksum);
  EXPECT_TRUE(parse_tcp_packet(d, /*verify_checksum=*/false));
  d = good;
  d[6] = 0x20;  // MF
  reseal_ipv4(d);
  EXPECT_EQ(error_of(d), PacketError::kIpFragment);
  d = good;
  d[9] = 17;
  reseal_ipv4(d);
  EXPECT_EQ(error_of(d), PacketError::kNotTcp);
  d = good;
  d[20 + 12] = 0x40;
  EXPECT_EQ(error_of(d, false), PacketError::kTcpBadDataOffset);
  d = good;
  d[20 + 12] = 0xf0;
  EXPECT_EQ(error_of(d, false), PacketError::kTcpTruncated);
  d = good;
  d[20 + 21] = 0;  // MSS option length 0
  EXPECT_EQ(error_of(d, false), PacketError::kTcpBadOption);
  d = good;
  d.back() ^= 1;
  EXPECT_EQ(error_of(d), PacketError::kTcpBadChecksum);
}

// A device that vouches for the TCP checksum (CHECKSUM_PARTIAL from this
// host, or verified by the NIC) spares the TCP sum, not the IPv4 header's.
TEST(PacketErrors, AVouchedTcpChecksumIsNotSummedButTheIpHeaderIs) {
  auto d = build_tcp_packet(v4_info(), syn_ack(), kPayload);
  d.back() ^= 1;  // the TCP checksum no longer adds up (as a partial one would not)
  EXPECT_FALSE(parse_tcp_packet(d));
  EXPECT_TRUE(parse_tcp_packet(d, true, /*tcp_checksum_valid=*/true));
  d[8] = 63;  // and now the IPv4 header's does not either
  auto p = parse_tcp_packet(d, true, true);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error(), PacketError::kIpBadChecksum);
}

TEST(PacketErrors, Ipv6FragmentAndExtensionHeaders) {
  auto good = build_tcp_packet(v6_info(), syn_ack(), {});
  // Insert an 8-byte destination-options header in front of TCP.
  auto d = good;
  std::vector<uint8_t> ext{kProtoTcp, 0, 1, 4, 0, 0, 0, 0};  // PadN
  d.insert(d.begin() + 40, ext.begin(), ext.end());
  d[6] = 60;
  store_be16(d.data() + 4, static_cast<uint16_t>(d.size() - 40));
  auto p = parse_tcp_packet(d);
  ASSERT_TRUE(p) << to_string(p.error());
  EXPECT_EQ(p->tcp.options.mss, 1460);
  d[6] = 44;
  EXPECT_EQ(error_of(d), PacketError::kIpFragment);
  d = good;
  store_be16(d.data() + 4, static_cast<uint16_t>(d.size()));  // claims more than present
  EXPECT_EQ(error_of(d), PacketError::kIpTruncated);
}

// An ICMP error as a router would send it: outer IP header, ICMP header,
// then the start of our datagram.
std::vector<uint8_t> icmp_error(bool v6, uint8_t type, uint8_t code, uint32_t rest,
                                const std::vector<uint8_t>& quoted_datagram, size_t quote_len) {
  std::vector<uint8_t> msg(8);
  msg[0] = type;
  msg[1] = code;
  store_be32(msg.data() + 4, rest);
  msg.insert(msg.end(), quoted_datagram.begin(), quoted_datagram.begin() + quote_len);
  IpAddr router = v6 ? *IpAddr::parse("2001:db8::fe") : IpAddr::v4(198, 51, 100, 254);
  IpAddr dst = v6 ? v6_info().src : v4_info().src;
  uint32_t sum = v6 ? pseudo_header_sum(router, dst, kProtoIcmpv6, uint32_t(msg.size())) : 0;
  store_be16(msg.data() + 2, csum_fold(csum_partial(msg, sum)));
  std::vector<uint8_t> d(v6 ? 40 : 20);
  if (v6) {
    d[0] = 0x60;
    store_be16(d.data() + 4, uint16_t(msg.size()));
    d[6] = kProtoIcmpv6;
    d[7] = 255;
    std::copy(router.bytes().begin(), router.bytes().end(), d.begin() + 8);
    std::copy(dst.bytes().begin(), dst.bytes().end(), d.begin() + 24);
  } else {
    d[0] = 0x45;
    store_be16(d.data() + 2, uint16_t(20 + msg.size()));
    d[8] = 64;
    d[9] = kProtoIcmp;
    store_be32(d.data() + 12, router.v4_host_order());
    store_be32(d.data() + 16, dst.v4_host_order());
    store_be16(d.data() + 10, csum_fold(csum_partial({d.data(), 20})));
  }
  d.insert(d.end(), msg.begin(), msg.end());
  return d;
}

TEST(Icmp, V4FragNeededCarriesNextHopMtu) {
  auto ours = build_tcp_packet(v4_info(), syn_ack(), kPayload);
  auto d = icmp_error(false, 3, 4, 1400, ours, 28);  // RFC 792: header + 8 bytes
  auto e = parse_icmp_error(d);
  ASSERT_TRUE(e) << to_string(e.error());
  EXPECT_EQ(e->type, 3);
  EXPECT_EQ(e->code, 4);
  EXPECT_EQ(e->mtu, 1400u);
  EXPECT_EQ(e->ip.src, IpAddr::v4(198, 51, 100, 254));
  EXPECT_EQ(e->quoted_ip.src, v4_info().src);
  EXPECT_EQ(e->quoted_ip.dst, v4_info().dst);
  EXPECT_EQ(e->quoted_src_port, 8080);
  EXPECT_EQ(e->quoted_dst_port, 40000);
  EXPECT_EQ(e->quoted_seq, Seq32(0xfffffff0u));
}

TEST(Icmp, V4PortUnreachableAndTimeExceeded) {
  auto ours = build_tcp_packet(v4_info(), syn_ack(), {});
  auto e = parse_icmp_error(icmp_error(false, 3, 3, 0, ours, ours.size()));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->mtu, 0u);
  e = parse_icmp_error(icmp_error(false, 11, 0, 0, ours, 28));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, 11);
}

TEST(Icmp, V6PacketTooBigCarries32BitMtu) {
  auto ours = build_tcp_packet(v6_info(), syn_ack(), kPayload);
  auto e = parse_icmp_error(icmp_error(true, 2, 0, 1280, ours, ours.size()));
  ASSERT_TRUE(e) << to_string(e.error());
  EXPECT_EQ(e->type, 2);
  EXPECT_EQ(e->mtu, 1280u);
  EXPECT_EQ(e->quoted_ip.version, 6);
  EXPECT_EQ(e->quoted_seq, Seq32(0xfffffff0u));
  e = parse_icmp_error(icmp_error(true, 1, 4, 0, ours, 48));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, 1);
}

TEST(Icmp, RejectsWhatIsNotATcpError) {
  auto ours = build_tcp_packet(v4_info(), syn_ack(), {});
  auto e = parse_icmp_error(icmp_error(false, 0, 0, 0, ours, 28));  // echo reply
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), PacketError::kNotTcp);
  e = parse_icmp_error(icmp_error(false, 3, 4, 1400, ours, 27));  // quote too short
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), PacketError::kTcpTruncated);
  auto bad = icmp_error(false, 3, 4, 1400, ours, 28);
  bad[20 + 6] ^= 1;  // MTU altered, ICMP checksum not
  e = parse_icmp_error(bad);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), PacketError::kIpBadChecksum);
  e = parse_icmp_error(ours);  // plain TCP
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), PacketError::kNotTcp);
}

}  // namespace
}  // namespace weir::wire
