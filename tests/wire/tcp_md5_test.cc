// RFC 2385 §2.0 digests against independently computed vectors.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "wire/packet.h"
#include "wire/tcp_md5.h"

namespace weir::wire {
namespace {

// Expected digests from Python's hashlib over the RFC's four parts:
//   import hashlib, struct, socket
//   th = struct.pack('!HHIIBBHHH', 179, 40000, 1000, 2000, 10 << 4, 0x18, 8192, 0, 0)
//   v4: ph = inet_aton('10.0.0.1') + inet_aton('10.0.0.2') + bytes([0, 6]) + struct.pack('!H', 45)
//   v6: ph = 2001:db8::1 + 2001:db8::2 (16 bytes each) + struct.pack('!II', 45, 6)
//   hashlib.md5(ph + th + b'hello' + b'secret').hexdigest()
// (45 = 20-byte header + 20 bytes of NOP NOP MD5 option + 5 bytes of data.)
TcpHeader sample_header() {
  TcpHeader h;
  h.src_port = 179;
  h.dst_port = 40000;
  h.seq = Seq32(1000);
  h.ack = Seq32(2000);
  h.flags = tcp_flag::ACK | tcp_flag::PSH;
  h.window = 8192;
  return h;
}

std::string hex(const Md5Digest& d) {
  std::string s;
  for (uint8_t b : d) s += fmt::format("{:02x}", b);
  return s;
}

const std::vector<uint8_t> kPayload = {'h', 'e', 'l', 'l', 'o'};
const std::vector<uint8_t> kKey = {'s', 'e', 'c', 'r', 'e', 't'};

Md5Digest built_digest(const IpAddr& src, const IpAddr& dst) {
  IpInfo ip;
  ip.src = src;
  ip.dst = dst;
  ip.version = src.is_v4() ? 4 : 6;
  TcpHeader h = sample_header();
  h.options.md5 = Md5Digest{};
  h.md5_key = kKey;
  auto bytes = build_tcp_packet(ip, h, kPayload);
  auto p = parse_tcp_packet(bytes);  // the checksum is verified too
  EXPECT_TRUE(p.has_value());
  EXPECT_EQ(p->tcp.data_offset, 10);
  return p && p->tcp.options.md5 ? *p->tcp.options.md5 : Md5Digest{};
}

TEST(TcpMd5, Ipv4DigestMatchesHashlib) {
  EXPECT_EQ(hex(built_digest(IpAddr::v4(10, 0, 0, 1), IpAddr::v4(10, 0, 0, 2))), "bdf8b7a33a8191a92b604bad2d5da5c7");
}

TEST(TcpMd5, Ipv6DigestMatchesHashlib) {
  EXPECT_EQ(hex(built_digest(*IpAddr::parse("2001:db8::1"), *IpAddr::parse("2001:db8::2"))),
            "333ddeaec7768c17587006317860ea24");
}

TEST(TcpMd5, OptionIsWrittenFirstAsNopNopKind19Length18) {
  TcpHeader h = sample_header();
  h.options.md5 = Md5Digest{};
  h.options.mss = 1460;
  EXPECT_EQ(options_wire_len(h.options), 24u);  // 20 + MSS
  std::array<uint8_t, 64> out{};
  emit_tcp(h, out);
  EXPECT_EQ(out[20], tcp_opt::NOP);
  EXPECT_EQ(out[21], tcp_opt::NOP);
  EXPECT_EQ(out[22], tcp_opt::MD5);
  EXPECT_EQ(out[23], 18);
  EXPECT_EQ(out[40], tcp_opt::MSS);
}

}  // namespace
}  // namespace weir::wire
