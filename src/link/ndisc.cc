#include "link/ndisc.h"

#include <algorithm>

#include "wire/bytes.h"
#include "wire/checksum.h"

namespace weir::link {
namespace {

constexpr uint8_t kIpprotoIcmpv6 = 58;
constexpr size_t kIp6Len = 40;
constexpr size_t kNdFixedLen = 24;  // type, code, checksum, flags/reserved, target

IpAddr addr_at(const uint8_t* p) {
  std::array<uint8_t, 16> a;
  std::copy(p, p + 16, a.begin());
  return IpAddr::v6(a);
}

bool is_multicast6(const IpAddr& a) { return a.bytes()[0] == 0xff; }

// RFC 4291 §2.7.1: ff02::1:ffXX:XXXX.
bool is_solicited_node(const IpAddr& a) {
  return a == solicited_node(a);
}

// §4.6: walks the options; the link-layer option of `want` into m.lladdr.
std::optional<NdError> parse_options(std::span<const uint8_t> opts, uint8_t want, NdMessage& m) {
  while (!opts.empty()) {
    if (opts.size() < 2) return NdError::kTruncated;
    const size_t len = size_t{opts[1]} * 8;
    // §7.1.1/§7.1.2: all included options have a length that is greater than zero.
    if (len == 0) return NdError::kOptionLength;
    if (len > opts.size()) return NdError::kTruncated;
    if (opts[0] == want) {
      // Linux ndisc_opt_addr_data: the address must fill the option exactly.
      if (len != 8) return NdError::kLinkLayerLength;
      MacAddr mac;
      std::copy(opts.begin() + 2, opts.begin() + 8, mac.b.begin());
      m.lladdr = mac;
    }
    // §4.6: unknown options are skipped.
    opts = opts.subspan(len);
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(NdError e) {
  switch (e) {
    case NdError::kNotNd: return "not-nd";
    case NdError::kTruncated: return "truncated";
    case NdError::kHopLimit: return "hop-limit";
    case NdError::kChecksum: return "checksum";
    case NdError::kCode: return "code";
    case NdError::kTargetMulticast: return "target-multicast";
    case NdError::kOptionLength: return "option-length";
    case NdError::kLinkLayerLength: return "lladdr-length";
    case NdError::kDadWithSourceLl: return "dad-with-sllao";
    case NdError::kDadNotSolicited: return "dad-not-solicited-node";
    case NdError::kSolicitedMulticast: return "solicited-multicast";
  }
  return "?";
}

Expected<NdMessage, NdError> parse_nd(std::span<const uint8_t> ip6) {
  if (ip6.size() < kIp6Len || (ip6[0] >> 4) != 6 || ip6[6] != kIpprotoIcmpv6) {
    return Unexpected(NdError::kNotNd);
  }
  const size_t plen = wire::load_be16(ip6.data() + 4);
  if (plen < 1 || ip6.size() < kIp6Len + 1) return Unexpected(NdError::kNotNd);
  const uint8_t type = ip6[kIp6Len];
  if (type != kIcmp6NeighSolicit && type != kIcmp6NeighAdvert) return Unexpected(NdError::kNotNd);
  // §7.1.1/§7.1.2: ICMP length (derived from the IP length) is 24 or more octets.
  if (plen < kNdFixedLen || ip6.size() < kIp6Len + plen) return Unexpected(NdError::kTruncated);
  const auto icmp = ip6.subspan(kIp6Len, plen);
  NdMessage m;
  m.type = type;
  m.src = addr_at(ip6.data() + 8);
  m.dst = addr_at(ip6.data() + 24);
  if (ip6[7] != kNdHopLimit) return Unexpected(NdError::kHopLimit);
  const uint32_t sum = wire::csum_partial(icmp, wire::pseudo_header_sum(m.src, m.dst, kIpprotoIcmpv6,
                                                                       static_cast<uint32_t>(plen)));
  if (wire::csum_fold(sum) != 0) return Unexpected(NdError::kChecksum);
  if (icmp[1] != 0) return Unexpected(NdError::kCode);
  m.target = addr_at(icmp.data() + 8);
  if (is_multicast6(m.target)) return Unexpected(NdError::kTargetMulticast);
  const uint8_t flags = icmp[4];
  m.router = flags & 0x80;
  m.solicited = flags & 0x40;
  m.override_flag = flags & 0x20;
  const uint8_t want = type == kIcmp6NeighSolicit ? kNdOptSourceLl : kNdOptTargetLl;
  if (auto err = parse_options(icmp.subspan(kNdFixedLen), want, m)) return Unexpected(*err);
  if (type == kIcmp6NeighSolicit && m.src.is_unspecified()) {
    // §7.1.1: a DAD probe goes to a solicited-node group and carries no
    // source link-layer address.
    if (!is_solicited_node(m.dst)) return Unexpected(NdError::kDadNotSolicited);
    if (m.lladdr) return Unexpected(NdError::kDadWithSourceLl);
  }
  // §7.1.2: a multicast advertisement is never solicited.
  if (type == kIcmp6NeighAdvert && is_multicast6(m.dst) && m.solicited) {
    return Unexpected(NdError::kSolicitedMulticast);
  }
  if (type == kIcmp6NeighSolicit) m.router = m.solicited = m.override_flag = false;  // reserved in NS
  return m;
}

size_t emit_nd(const NdMessage& m, uint8_t* out) {
  const size_t icmp_len = kNdFixedLen + (m.lladdr ? 8 : 0);
  // RFC 8200 §3: version 6, traffic class and flow label 0.
  std::fill(out, out + kIp6Len + icmp_len, uint8_t{0});
  out[0] = 0x60;
  wire::store_be16(out + 4, static_cast<uint16_t>(icmp_len));
  out[6] = kIpprotoIcmpv6;
  out[7] = kNdHopLimit;  // §7.1: sent with hop limit 255
  std::copy(m.src.bytes().begin(), m.src.bytes().end(), out + 8);
  std::copy(m.dst.bytes().begin(), m.dst.bytes().end(), out + 24);
  uint8_t* icmp = out + kIp6Len;
  icmp[0] = m.type;
  if (m.type == kIcmp6NeighAdvert) {
    icmp[4] = static_cast<uint8_t>((m.router ? 0x80 : 0) | (m.solicited ? 0x40 : 0) |
                                   (m.override_flag ? 0x20 : 0));
  }
  std::copy(m.target.bytes().begin(), m.target.bytes().end(), icmp + 8);
  if (m.lladdr) {
    icmp[24] = m.type == kIcmp6NeighSolicit ? kNdOptSourceLl : kNdOptTargetLl;
    icmp[25] = 1;  // in units of 8 octets
    std::copy(m.lladdr->b.begin(), m.lladdr->b.end(), icmp + 26);
  }
  const uint32_t sum = wire::csum_partial(std::span<const uint8_t>(icmp, icmp_len),
                                          wire::pseudo_header_sum(m.src, m.dst, kIpprotoIcmpv6,
                                                                  static_cast<uint32_t>(icmp_len)));
  wire::store_be16(icmp + 2, wire::csum_fold(sum));
  return kIp6Len + icmp_len;
}

}  // namespace weir::link
