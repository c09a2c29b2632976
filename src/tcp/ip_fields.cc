// IP_TOS / IP_TTL / IPV6_TCLASS / IPV6_UNICAST_HOPS and the header fields
// they set (tcp/ip_fields.h).
#include "tcp/ip_fields.h"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "tcp/connection.h"
#include "tcp/flow_label.h"

namespace weir::tcp {
namespace {

// Linux do_ip_setsockopt reads an int when optlen >= sizeof(int), else one
// unsigned char when optlen >= 1; an empty value is 0.
int ipv4_value(std::span<const uint8_t> v) {
  if (v.size() >= sizeof(int)) {
    int i = 0;
    std::memcpy(&i, v.data(), sizeof i);
    return i;
  }
  return v.empty() ? 0 : v[0];
}

// Linux __ip_sock_set_tos for SOCK_STREAM: the ECN bits stay TCP's
// ("val &= ~INET_ECN_MASK; val |= inet->tos & INET_ECN_MASK"); weir keeps
// the DSCP and ORs TCP's per-segment ECN field in (socket_ip_fields).
Errc set_ipv4(SockOpts& o, int name, std::span<const uint8_t> v) {
  const int val = ipv4_value(v);
  if (name == IP_TOS) {
    o.ip_tos = static_cast<uint8_t>(val & ~kIpEcnMask);
    return Errc::kOk;
  }
  // IP_TTL: "if (optlen < 1) goto e_inval; if (val != -1 && (val < 1 ||
  // val > 255)) goto e_inval;" -1 returns to net.ipv4.ip_default_ttl.
  if (v.empty() || (val != -1 && (val < 1 || val > 255))) return Errc::kInval;
  o.ip_ttl = static_cast<int16_t>(val);
  return Errc::kOk;
}

// Linux do_ipv6_setsockopt: IPV6_AUTOFLOWLABEL takes the int as a bool
// (valbool; a value shorter than an int reads as 0) and marks the choice
// made (AUTOFLOWLABEL_SET), so the sysctl's default no longer applies.
Errc set_autoflowlabel(SockOpts& o, std::span<const uint8_t> v) {
  int val = 0;
  if (v.size() >= sizeof(int)) std::memcpy(&val, v.data(), sizeof val);
  o.ipv6_autoflowlabel = val != 0 ? 1 : 0;
  return Errc::kOk;
}

// Linux do_ipv6_setsockopt: both need a full int ("if (optlen <
// sizeof(int)) goto e_inval").
Errc set_ipv6(SockOpts& o, int name, std::span<const uint8_t> v) {
  if (name == IPV6_AUTOFLOWLABEL) return set_autoflowlabel(o, v);
  if (v.size() < sizeof(int)) return Errc::kInval;
  int val = 0;
  std::memcpy(&val, v.data(), sizeof val);
  if (name == IPV6_TCLASS) {
    // -1..0xff; "RFC 3542, 6.5: default traffic class of 0x0"; SOCK_STREAM
    // keeps np->tclass's ECN bits (TCP's).
    if (val < -1 || val > 0xff) return Errc::kInval;
    o.ipv6_tclass = static_cast<uint8_t>(val == -1 ? 0 : val & ~kIpEcnMask);
    return Errc::kOk;
  }
  // IPV6_UNICAST_HOPS: -1..255, -1 the route's (the device's hop_limit).
  // Linux takes 0 too; RFC 8200 §3 has a packet with Hop Limit 0 die at
  // the first hop, which is what a 0 on the wire does.
  if (val < -1 || val > 255) return Errc::kInval;
  o.ipv6_hops = static_cast<int16_t>(val);
  return Errc::kOk;
}

Errc put_int(std::span<uint8_t> out, size_t* len, int v) {
  const size_t n = std::min(out.size(), sizeof v);
  std::memcpy(out.data(), &v, n);
  if (len) *len = n;
  return Errc::kOk;
}

// Linux do_ip_getsockopt: a buffer shorter than an int takes one byte when
// the value fits ("len < sizeof(int) && len > 0 && val >= 0 && val <= 255").
Errc put_ipv4(std::span<uint8_t> out, size_t* len, int v) {
  if (!out.empty() && out.size() < sizeof(int) && v >= 0 && v <= 255) {
    out[0] = static_cast<uint8_t>(v);
    if (len) *len = 1;
    return Errc::kOk;
  }
  return put_int(out, len, v);
}

bool is_ipv4_field(int level, int name) { return level == IPPROTO_IP && (name == IP_TOS || name == IP_TTL); }
bool is_ipv6_field(int level, int name) {
  return level == IPPROTO_IPV6 && (name == IPV6_TCLASS || name == IPV6_UNICAST_HOPS || name == IPV6_AUTOFLOWLABEL);
}

}  // namespace

// SOL_IP reaches ip_setsockopt on both families (ipv6_setsockopt hands it
// on); SOL_IPV6 on an AF_INET socket is ENOPROTOOPT (ip_setsockopt:
// "if (level != SOL_IP) return -ENOPROTOOPT").
std::optional<Errc> set_ip_field(SockOpts& o, bool v6_socket, int level, int name, std::span<const uint8_t> v) {
  if (is_ipv4_field(level, name)) return set_ipv4(o, name, v);
  if (!is_ipv6_field(level, name)) return std::nullopt;
  if (!v6_socket) return Errc::kNoProtoOpt;
  return set_ipv6(o, name, v);
}

std::optional<Errc> get_ip_field(const SockOpts& o, bool v6_socket, uint8_t tx_ecn, const StackConfig& cfg, int level,
                                 int name, std::span<uint8_t> out, size_t* len) {
  if (is_ipv4_field(level, name)) {
    // IP_TTL: uc_ttl, or the sysctl when -1 (do_ip_getsockopt).
    if (name == IP_TOS) return put_ipv4(out, len, o.ip_tos | tx_ecn);
    return put_ipv4(out, len, o.ip_ttl < 0 ? cfg.ip_default_ttl : o.ip_ttl);
  }
  if (!is_ipv6_field(level, name)) return std::nullopt;
  if (!v6_socket) return Errc::kNoProtoOpt;
  if (name == IPV6_TCLASS) return put_int(out, len, o.ipv6_tclass | tx_ecn);
  // do_ipv6_getsockopt: "val = ip6_autoflowlabel(sock_net(sk), sk)", the
  // socket's choice or the sysctl's default.
  if (name == IPV6_AUTOFLOWLABEL) return put_int(out, len, sock_autolabel(cfg, o.ipv6_autoflowlabel));
  // do_ipv6_getsockopt: np->hop_limit, else the route's hop limit.
  return put_int(out, len, o.ipv6_hops < 0 ? cfg.ipv6_hop_limit : o.ipv6_hops);
}

IpFields reply_ip_fields(const StackConfig& cfg, bool v4, uint8_t seg_tos) {
  return {static_cast<uint8_t>(seg_tos & ~kIpEcnMask),
          static_cast<uint8_t>(v4 ? cfg.ip_default_ttl : cfg.ipv6_hop_limit)};
}

void reflect_syn_tos(SockOpts& o, bool v4, uint8_t syn_tos) {
  const uint8_t dscp = syn_tos & ~kIpEcnMask;
  if (v4) o.ip_tos = dscp;
  else o.ipv6_tclass = dscp;
}

}  // namespace weir::tcp
