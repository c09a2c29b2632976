#include "wire/icmp_build.h"

#include <algorithm>
#include <array>

#include "wire/bytes.h"
#include "wire/checksum.h"
#include "wire/packet.h"

namespace weir::wire {
namespace {

constexpr size_t kIcmpHeader = 8;
constexpr size_t kIpv4ErrorMax = 576;   // RFC 1812 §4.3.2.3
constexpr size_t kIpv6ErrorMax = 1280;  // RFC 4443 §2.4 (c): the IPv6 minimum MTU

// RFC 1122 §3.2.2: never about an ICMP error (types 3, 4, 5, 11, 12) nor
// about a fragment other than the first.
bool answerable_v4(std::span<const uint8_t> d) {
  if (d.size() < kIpv4HeaderMin) return false;
  const size_t ihl = size_t{d[0] & 0x0fu} * 4;
  if (ihl < kIpv4HeaderMin || ihl > d.size()) return false;
  if ((load_be16(d.data() + 6) & 0x1fff) != 0) return false;
  if (d[9] != kProtoIcmp) return true;
  if (d.size() <= ihl) return false;
  const uint8_t t = d[ihl];
  return t != 3 && t != 4 && t != 5 && t != 11 && t != 12;
}

// RFC 4443 §2.4 (e.1): never about an ICMPv6 error message (types < 128).
bool answerable_v6(std::span<const uint8_t> d) {
  if (d.size() < kIpv6Header) return false;
  if (d[6] != kProtoIcmpv6) return true;
  return d.size() > kIpv6Header && d[kIpv6Header] >= 128;
}

std::vector<uint8_t> v4_error(std::span<const uint8_t> d, const IpAddr& src, uint8_t type, uint8_t code) {
  const size_t quote = std::min(d.size(), kIpv4ErrorMax - kIpv4HeaderMin - kIcmpHeader);
  std::vector<uint8_t> p(kIpv4HeaderMin + kIcmpHeader + quote);
  uint8_t* o = p.data();
  o[0] = 0x45;
  o[1] = 0xc0;  // Linux icmp_send: IPTOS_PREC_INTERNETCONTROL for errors
  store_be16(o + 2, static_cast<uint16_t>(p.size()));
  o[8] = 64;
  o[9] = kProtoIcmp;
  store_be32(o + 12, src.v4_host_order());
  std::copy(d.begin() + 12, d.begin() + 16, o + 16);  // to the offending datagram's source
  store_be16(o + 10, csum_fold(csum_partial({o, kIpv4HeaderMin})));
  uint8_t* icmp = o + kIpv4HeaderMin;
  icmp[0] = type;
  icmp[1] = code;
  std::copy_n(d.begin(), quote, icmp + kIcmpHeader);
  store_be16(icmp + 2, csum_fold(csum_partial({icmp, kIcmpHeader + quote})));
  return p;
}

std::vector<uint8_t> v6_error(std::span<const uint8_t> d, const IpAddr& src, uint8_t type, uint8_t code) {
  const size_t quote = std::min(d.size(), kIpv6ErrorMax - kIpv6Header - kIcmpHeader);
  std::vector<uint8_t> p(kIpv6Header + kIcmpHeader + quote);
  uint8_t* o = p.data();
  store_be32(o, 6u << 28);
  const auto len = static_cast<uint32_t>(kIcmpHeader + quote);
  store_be16(o + 4, static_cast<uint16_t>(len));
  o[6] = kProtoIcmpv6;
  o[7] = 64;
  std::copy(src.bytes().begin(), src.bytes().end(), o + 8);
  std::copy(d.begin() + 8, d.begin() + 24, o + 24);  // to the offending datagram's source
  std::array<uint8_t, 16> dst{};
  std::copy(d.begin() + 8, d.begin() + 24, dst.begin());
  uint8_t* icmp = o + kIpv6Header;
  icmp[0] = type;
  icmp[1] = code;
  std::copy_n(d.begin(), quote, icmp + kIcmpHeader);
  const uint32_t sum = pseudo_header_sum(src, IpAddr::v6(dst), kProtoIcmpv6, len);
  store_be16(icmp + 2, csum_fold(csum_partial({icmp, len}, sum)));
  return p;
}

}  // namespace

std::vector<uint8_t> build_icmp_unreachable(std::span<const uint8_t> offending, const IpAddr& src,
                                            uint8_t type, uint8_t code) {
  if (offending.empty()) return {};
  const uint8_t version = offending[0] >> 4;
  if (version == 4 && src.is_v4() && answerable_v4(offending)) return v4_error(offending, src, type, code);
  if (version == 6 && !src.is_v4() && answerable_v6(offending)) return v6_error(offending, src, type, code);
  return {};
}

}  // namespace weir::wire
