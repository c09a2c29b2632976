// The IP header fields a TCP socket chooses: the DS field (RFC 2474; IPv4
// TOS, RFC 791, and IPv6 Traffic Class, RFC 8200 §7) and the TTL / Hop
// Limit (RFC 791, RFC 8200 §3). The socket options that set them (Linux
// do_ip_setsockopt / do_ipv6_setsockopt), and what each packet carries.
// The ECN field (the low two bits, RFC 3168 §5) is TCP's, decided per
// segment (tcp_ecn.cc); the socket keeps only the DSCP bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "weir/config.h"
#include "weir/errors.h"

namespace weir::tcp {

struct SockOpts;

inline constexpr uint8_t kIpEcnMask = 0x3;      // Linux INET_ECN_MASK
inline constexpr uint8_t kIpEct0 = 0x2;         // Linux INET_ECN_ECT_0 (RFC 3168 §5)

// The TOS / traffic class byte, TTL / hop limit and (IPv6 only) flow
// label (RFC 6437, 20 bits; tcp/flow_label.h) of one packet.
struct IpFields {
  uint8_t tos = 0;
  uint8_t ttl = 64;
  uint32_t flow_label = 0;
  // Not a header field: Linux skb->dst_pending_confirm, the socket's
  // pending neighbour confirmation riding on this packet (Netif::confirm_neighbor).
  bool confirm_neighbor = false;
};

// setsockopt at SOL_IP (IP_TOS, IP_TTL) or SOL_IPV6 (IPV6_TCLASS,
// IPV6_UNICAST_HOPS, IPV6_AUTOFLOWLABEL) on a socket of family v6 or not. nullopt: not one of
// these options (the caller goes on to the others).
std::optional<Errc> set_ip_field(SockOpts& o, bool v6_socket, int level, int name, std::span<const uint8_t> v);

// getsockopt for the same options; `tx_ecn` is the ECN field TCP set on
// the last segment (Linux INET_ECN_xmit keeps it in inet->tos and
// np->tclass, so the getters report it).
std::optional<Errc> get_ip_field(const SockOpts& o, bool v6_socket, uint8_t tx_ecn, const StackConfig& cfg, int level,
                                 int name, std::span<uint8_t> out, size_t* len);

// The socket's DSCP and TTL for packets of IP version 4 (`v4`) or 6: a
// v4-mapped IPv6 socket sends IPv4 with inet->tos and inet->uc_ttl. Linux
// ip_select_ttl: uc_ttl if set, else the route's (ip_default_ttl);
// ip6_xmit: np->hop_limit if set, else ip6_dst_hoplimit. Inline, as it is
// read for every segment sent (a call cost ~30 instructions per IPv6
// segment); a template only so that SockOpts (connection.h) need not be
// complete here.
template <typename Opts>
IpFields socket_ip_fields(const Opts& o, const StackConfig& cfg, bool v4) {
  if (v4) return {o.ip_tos, static_cast<uint8_t>(o.ip_ttl < 0 ? cfg.ip_default_ttl : o.ip_ttl)};
  return {o.ipv6_tclass, static_cast<uint8_t>(o.ipv6_hops < 0 ? cfg.ipv6_hop_limit : o.ipv6_hops)};
}

// What a reply built from an arriving segment carries (Linux
// tcp_v4_send_reset: arg.tos = ip_hdr(skb)->tos, whose ECN bits
// ip_send_unicast_reply clears; tcp_v6_send_reset: ipv6_get_dsfield &
// ~INET_ECN_MASK): the segment's DSCP, and the default TTL of the control
// socket that sends it (uc_ttl / hop_limit -1).
IpFields reply_ip_fields(const StackConfig& cfg, bool v4, uint8_t seg_tos);

// net.ipv4.tcp_reflect_tos: a passive open takes the SYN's DSCP (Linux
// tcp_v4_syn_recv_sock: newinet->tos = syn_tos & ~INET_ECN_MASK;
// tcp_v6_syn_recv_sock: newnp->tclass likewise). The SYN-ACK, sent by the
// child here, then carries it as tcp_v4_send_synack's reflected tos.
void reflect_syn_tos(SockOpts& o, bool v4, uint8_t syn_tos);

}  // namespace weir::tcp
