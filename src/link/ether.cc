#include "link/ether.h"

#include <algorithm>
#include <cstdio>

#include "wire/bytes.h"

namespace weir::link {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<MacAddr> MacAddr::parse(std::string_view text) {
  // Exactly "xx:xx:xx:xx:xx:xx": 17 characters, as `ip link` prints them.
  if (text.size() != 17) return std::nullopt;
  MacAddr m;
  for (size_t i = 0; i < 6; ++i) {
    const size_t at = i * 3;
    if (i > 0 && text[at - 1] != ':') return std::nullopt;
    const int hi = hex_digit(text[at]), lo = hex_digit(text[at + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    m.b[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return m;
}

std::string MacAddr::str() const {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4],
                b[5]);
  return buf;
}

std::optional<EtherFrame> parse_ether(std::span<const uint8_t> frame) {
  if (frame.size() < kEtherHeaderLen) return std::nullopt;
  EtherFrame f;
  std::copy(frame.begin(), frame.begin() + 6, f.hdr.dst.b.begin());
  std::copy(frame.begin() + 6, frame.begin() + 12, f.hdr.src.b.begin());
  f.hdr.type = wire::load_be16(frame.data() + 12);
  f.payload = frame.subspan(kEtherHeaderLen);
  return f;
}

void write_ether_header(uint8_t* out, const EtherHeader& h) {
  std::copy(h.dst.b.begin(), h.dst.b.end(), out);
  std::copy(h.src.b.begin(), h.src.b.end(), out + 6);
  wire::store_be16(out + 12, h.type);
}

MacAddr ipv4_multicast_mac(const IpAddr& group) {
  const auto& a = group.bytes();
  // RFC 1112 §6.4: the high 9 bits of the group are not mapped.
  return MacAddr{{0x01, 0x00, 0x5e, static_cast<uint8_t>(a[13] & 0x7f), a[14], a[15]}};
}

MacAddr ipv6_multicast_mac(const IpAddr& group) {
  const auto& a = group.bytes();
  return MacAddr{{0x33, 0x33, a[12], a[13], a[14], a[15]}};
}

IpAddr solicited_node(const IpAddr& addr) {
  std::array<uint8_t, 16> s{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff};
  s[13] = addr.bytes()[13];
  s[14] = addr.bytes()[14];
  s[15] = addr.bytes()[15];
  return IpAddr::v6(s);
}

}  // namespace weir::link
