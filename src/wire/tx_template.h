// Prebuilt IP headers for one address pair, patched per segment: the send
// path's fast forms of build_tcp_packet_pieces. Linux likewise keeps a
// socket's constant header fields (inet_sock's saddr/daddr, the TTL, DF;
// ipv6_pinfo's addresses) and __ip_queue_xmit / ip6_xmit write them into
// each skb; only the length, the identification, the TOS or traffic class
// and the checksums change per packet.
//
// The bytes are exactly build_tcp_packet_pieces's for the same IpInfo and
// header (tests/wire/tx_template_test.cc compares the two); an RFC 2385
// signed segment takes the general path.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "weir/addr.h"
#include "wire/packet.h"

namespace weir::wire {

class TxTemplateV4 {
 public:
  TxTemplateV4() = default;
  // Datagrams from `src` to `dst` (host byte order) with this TTL and DF.
  TxTemplateV4(uint32_t src, uint32_t dst, uint8_t ttl, bool df);

  // build_tcp_packet_pieces(ip, h, payload, out) for an IpInfo of this
  // template's addresses, TTL and DF with `tos` and `id`; `h.md5_key` must
  // be empty. `out` needs room for the largest headers (20 + 20 + 40 bytes)
  // and the payload. Returns the datagram's length, or 0 when it would not
  // fit `out` or its total-length field.
  size_t build(const TcpHeader& h, uint8_t tos, uint16_t id, PayloadView payload,
               std::span<uint8_t> out) const;

 private:
  std::array<uint8_t, kIpv4HeaderMin> ip_{};  // constant fields; length, id, TOS, checksum zero
  uint32_t ip_sum_ = 0;      // RFC 1071 sum of the constant IPv4 header words
  uint32_t pseudo_sum_ = 0;  // of the pseudo-header's addresses and protocol (RFC 9293 §3.1)
};

// The IPv6 form (RFC 8200 §3): no header checksum, so only the payload
// length, the first word (traffic class and flow label) and the hop limit
// are written per segment. The flow label is the connection's, not the
// address pair's (RFC 6437 §2: one per flow, a flow being a transport
// connection here; Linux ip6_xmit makes it per packet from the socket's
// transmit hash), so it comes with each segment like the traffic class:
// both in one word, `flowinfo` (Linux's name for the 28 bits, as in
// sin6_flowinfo and ip6_flow_hdr: tclass << 20 | label).
class TxTemplateV6 {
 public:
  TxTemplateV6() = default;
  // Datagrams from `src` to `dst` (neither IPv4-mapped).
  TxTemplateV6(const IpAddr& src, const IpAddr& dst);

  // build_tcp_packet_pieces(ip, h, payload, out) for an IpInfo of this
  // template's addresses with `flowinfo` (IpInfo::tos << 20 |
  // IpInfo::flow_label; its low 28 bits) and `hop_limit` (IpInfo::ttl);
  // `h.md5_key` must be empty. `out` needs room for the largest headers
  // (40 + 20 + 40 bytes) and the payload. Returns the datagram's length,
  // or 0 when it would not fit `out` or its payload-length field.
  size_t build(const TcpHeader& h, uint32_t flowinfo, uint8_t hop_limit, PayloadView payload,
               std::span<uint8_t> out) const;

 private:
  std::array<uint8_t, kIpv6Header> ip_{};  // constant fields; first word, length, hop limit zero
  uint32_t pseudo_sum_ = 0;  // of the pseudo-header's addresses and next header (RFC 8200 §8.1)
};

}  // namespace weir::wire
