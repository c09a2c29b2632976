#include "link/mld.h"

#include <algorithm>
#include <array>
#include <optional>

#include "wire/bytes.h"
#include "wire/checksum.h"

namespace weir::link {
namespace {

constexpr uint8_t kIpprotoHopopts = 0;
constexpr uint8_t kIpprotoIcmpv6 = 58;
constexpr size_t kIp6Len = 40;
constexpr uint8_t kTlvPad1 = 0;         // RFC 8200 §4.2
constexpr uint8_t kTlvPadN = 1;
constexpr uint8_t kTlvRouterAlert = 5;  // RFC 2711 §2.1
constexpr size_t kMld1Len = 24;         // RFC 2710 §3
constexpr size_t kMld2QueryLen = 28;    // RFC 3810 §5.1, no sources
const IpAddr kAllMldv2Routers = *IpAddr::parse("ff02::16");  // RFC 3810 §5.2.14

IpAddr addr_at(const uint8_t* p) {
  std::array<uint8_t, 16> a;
  std::copy(p, p + 16, a.begin());
  return IpAddr::v6(a);
}

bool is_link_local(const IpAddr& a) {
  const auto& b = a.bytes();
  return !a.is_v4() && b[0] == 0xfe && (b[1] & 0xc0) == 0x80;
}

bool is_mld_type(uint8_t t) {
  return t == kIcmp6MldQuery || t == kIcmp6MldReport || t == kIcmp6MldDone || t == kIcmp6Mld2Report;
}

// RFC 2711 §2.1: whether the options carry a Router Alert with value 0
// (a datagram containing an MLD message).
bool has_mld_router_alert(std::span<const uint8_t> opts) {
  while (!opts.empty()) {
    if (opts[0] == kTlvPad1) {
      opts = opts.subspan(1);
      continue;
    }
    if (opts.size() < 2 || size_t{opts[1]} + 2 > opts.size()) return false;
    if (opts[0] == kTlvRouterAlert && opts[1] == 2 && opts[2] == 0 && opts[3] == 0) return true;
    opts = opts.subspan(size_t{opts[1]} + 2);
  }
  return false;
}

// RFC 3810 §6.2: a query counts only from a link-local source, with Hop
// Limit 1 and a Router Alert (the same three checks as Linux
// ipv6_mc_check_mld plus igmp6_event_query's source check).
std::optional<MldError> check_query(std::span<const uint8_t> ip6, const MldMessage& m, bool router_alert) {
  if (!is_link_local(m.src)) return MldError::kSource;  // §5.1.14
  if (ip6[7] != 1) return MldError::kHopLimit;
  if (!router_alert) return MldError::kNoRouterAlert;
  return std::nullopt;
}

// The query's own fields. RFC 3810 §8.1: 24 bytes is MLDv1, 28 or more
// MLDv2, anything else is silently ignored.
std::optional<MldError> read_query(std::span<const uint8_t> icmp, MldMessage& m) {
  const uint16_t code = wire::load_be16(icmp.data() + 4);
  m.group = addr_at(icmp.data() + 8);
  if (icmp.size() == kMld1Len) {
    m.v1 = true;
    m.max_delay = Duration::ms(code);  // RFC 2710 §3.4: milliseconds
    return std::nullopt;
  }
  if (icmp.size() < kMld2QueryLen) return MldError::kTruncated;
  m.max_delay = mld_max_delay(code);
  m.sources = wire::load_be16(icmp.data() + 26);
  if (icmp.size() < kMld2QueryLen + size_t{m.sources} * 16) return MldError::kTruncated;
  return std::nullopt;
}

}  // namespace

const char* to_string(MldError e) {
  switch (e) {
    case MldError::kNotMld: return "not-mld";
    case MldError::kTruncated: return "truncated";
    case MldError::kChecksum: return "checksum";
    case MldError::kHopLimit: return "hop-limit";
    case MldError::kSource: return "source-not-link-local";
    case MldError::kNoRouterAlert: return "no-router-alert";
  }
  return "?";
}

Duration mld_max_delay(uint16_t code) {
  if (code < 32768) return Duration::ms(code);
  // §5.1.3: 1 | exp (3 bits) | mant (12 bits) -> (mant | 0x1000) << (exp + 3).
  const int64_t mant = code & 0xfff;
  const int exp = (code >> 12) & 7;
  return Duration::ms((mant | 0x1000) << (exp + 3));
}

Expected<MldMessage, MldError> parse_mld(std::span<const uint8_t> ip6) {
  if (ip6.size() < kIp6Len || (ip6[0] >> 4) != 6) return Unexpected(MldError::kNotMld);
  const size_t end = kIp6Len + wire::load_be16(ip6.data() + 4);
  uint8_t next = ip6[6];
  size_t off = kIp6Len;
  bool router_alert = false;
  // RFC 3810 §5: MLD messages follow a Hop-by-Hop header with a Router Alert.
  if (next == kIpprotoHopopts) {
    if (ip6.size() < off + 8) return Unexpected(MldError::kNotMld);
    const size_t hlen = (size_t{ip6[off + 1]} + 1) * 8;
    if (ip6.size() < off + hlen) return Unexpected(MldError::kNotMld);
    router_alert = has_mld_router_alert(ip6.subspan(off + 2, hlen - 2));
    next = ip6[off];
    off += hlen;
  }
  if (next != kIpprotoIcmpv6 || ip6.size() <= off || !is_mld_type(ip6[off])) return Unexpected(MldError::kNotMld);
  if (end > ip6.size() || end < off + 8) return Unexpected(MldError::kTruncated);
  const auto icmp = ip6.subspan(off, end - off);
  MldMessage m;
  m.type = icmp[0];
  m.src = addr_at(ip6.data() + 8);
  const IpAddr dst = addr_at(ip6.data() + 24);
  const uint32_t sum = wire::csum_partial(
      icmp, wire::pseudo_header_sum(m.src, dst, kIpprotoIcmpv6, static_cast<uint32_t>(icmp.size())));
  if (wire::csum_fold(sum) != 0) return Unexpected(MldError::kChecksum);
  if (m.type != kIcmp6MldQuery) return m;  // reports and dones: counted, never acted on
  if (icmp.size() < kMld1Len) return Unexpected(MldError::kTruncated);
  if (auto err = check_query(ip6, m, router_alert)) return Unexpected(*err);
  if (auto err = read_query(icmp, m)) return Unexpected(*err);
  return m;
}

size_t emit_mld2_report(const IpAddr& src, std::span<const MldRecord> records, uint8_t* out) {
  const size_t len = mld2_report_len(records.size());
  std::fill(out, out + len, uint8_t{0});
  // RFC 8200 §3 header; RFC 3810 §5: Hop Limit 1.
  out[0] = 0x60;
  wire::store_be16(out + 4, static_cast<uint16_t>(len - kIp6Len));
  out[6] = kIpprotoHopopts;
  out[7] = 1;
  std::copy(src.bytes().begin(), src.bytes().end(), out + 8);
  std::copy(kAllMldv2Routers.bytes().begin(), kAllMldv2Routers.bytes().end(), out + 24);
  // Hop-by-Hop: ICMPv6 next, length 0 (8 bytes), Router Alert value 0
  // (RFC 2711 §2.1, MLD), and a PadN of two bytes to fill the 8.
  uint8_t* hbh = out + kIp6Len;
  hbh[0] = kIpprotoIcmpv6;
  hbh[2] = kTlvRouterAlert;
  hbh[3] = 2;
  hbh[6] = kTlvPadN;
  // §5.2: type, reserved, checksum, reserved, Nr of Mcast Address Records.
  uint8_t* icmp = hbh + 8;
  icmp[0] = kIcmp6Mld2Report;
  wire::store_be16(icmp + 6, static_cast<uint16_t>(records.size()));
  uint8_t* rec = icmp + 8;
  for (const MldRecord& r : records) {
    // §5.2.4: record type, Aux Data Len 0, Number of Sources 0, address.
    rec[0] = r.type;
    std::copy(r.group.bytes().begin(), r.group.bytes().end(), rec + 4);
    rec += kMld2RecordLen;
  }
  const size_t icmp_len = len - kIp6Len - 8;
  const uint32_t sum = wire::csum_partial(std::span<const uint8_t>(icmp, icmp_len),
                                          wire::pseudo_header_sum(src, kAllMldv2Routers, kIpprotoIcmpv6,
                                                                  static_cast<uint32_t>(icmp_len)));
  wire::store_be16(icmp + 2, wire::csum_fold(sum));
  return len;
}

}  // namespace weir::link
