// Building IP datagrams carrying TCP, both checksums filled in.
// IPv4 header: RFC 791 §3.1; IPv6: RFC 8200 §3; TCP checksum: RFC 9293 §3.1.
#include <cstring>
#include <initializer_list>

#include "wire/bytes.h"
#include "wire/checksum.h"
#include "wire/packet.h"
#include "wire/tcp_md5.h"
#include "wire/tcp_options_layout.h"
#include "wire/tx_template.h"

namespace weir::wire {
namespace {

// An IPv4-mapped pair of addresses means IPv4 on the wire; anything else IPv6.
bool is_v4_packet(const IpInfo& ip) { return ip.src.is_v4() && ip.dst.is_v4(); }

void write_ipv4(const IpInfo& ip, size_t total, uint8_t* p) {
  p[0] = 0x45;  // version 4, IHL 5: we never send IP options
  p[1] = ip.tos;
  store_be16(p + 2, static_cast<uint16_t>(total));
  store_be16(p + 4, ip.id);
  store_be16(p + 6, ip.df ? 0x4000 : 0);
  p[8] = ip.ttl;
  p[9] = kProtoTcp;
  const uint32_t src = ip.src.v4_host_order();
  const uint32_t dst = ip.dst.v4_host_order();
  store_be32(p + 12, src);
  store_be32(p + 16, dst);
  // RFC 1071 over the header's ten 16-bit words, added from the values just
  // written rather than read back (Linux's ip_fast_csum is likewise
  // specialised to the header); the checksum word itself counts as zero.
  const uint32_t sum = (0x4500u | ip.tos) + uint32_t{static_cast<uint16_t>(total)} + ip.id +
                       (ip.df ? 0x4000u : 0u) + (uint32_t{ip.ttl} << 8 | kProtoTcp) +
                       (src >> 16) + (src & 0xffffu) + (dst >> 16) + (dst & 0xffffu);
  store_be16(p + 10, csum_fold(sum));
}

void write_ipv6(const IpInfo& ip, size_t payload_len, uint8_t* p) {
  store_be32(p, 6u << 28 | uint32_t{ip.tos} << 20 | (ip.flow_label & 0xfffffu));
  store_be16(p + 4, static_cast<uint16_t>(payload_len));
  p[6] = kProtoTcp;
  p[7] = ip.ttl;
  std::memcpy(p + 8, ip.src.bytes().data(), 16);
  std::memcpy(p + 24, ip.dst.bytes().data(), 16);
}

// pseudo_header_sum for IPv4 (RFC 9293 §3.1: source, destination, zero,
// PTCL, TCP length), here where the packet is known to be IPv4: the same
// words, without the call and its address-family tests.
uint32_t pseudo_header_sum_v4(const IpInfo& ip, size_t seg_len) {
  const uint32_t src = ip.src.v4_host_order();
  const uint32_t dst = ip.dst.v4_host_order();
  return (src >> 16) + (src & 0xffffu) + (dst >> 16) + (dst & 0xffffu) + kProtoTcp +
         static_cast<uint32_t>(seg_len & 0xffffu);
}

// RFC 1071 over the fixed 20 bytes of the TCP header as emit_tcp writes
// them (checksum field zero), added from the field values rather than read
// back from the packet, as write_ipv4 does for the IPv4 header.
uint32_t tcp_fixed_sum(const TcpHeader& h, size_t hlen) {
  const uint32_t seq = h.seq.raw();
  const uint32_t ack = h.ack.raw();
  const uint64_t sum = uint64_t{h.src_port} + h.dst_port + (seq >> 16) + (seq & 0xffffu) + (ack >> 16) +
                       (ack & 0xffffu) + ((uint32_t{static_cast<uint8_t>((hlen / 4) << 4)} << 8) | h.flags) +
                       h.window + h.urgent;
  return static_cast<uint32_t>(sum);
}

// Fills the MD5 option emit_tcp wrote (as zeros) with the segment's digest.
void sign_md5(const IpInfo& ip, const TcpHeader& h, size_t hlen, size_t seg_len, PayloadView payload,
              uint8_t* tcp) {
  const size_t at = md5_digest_offset({tcp, hlen});
  if (at == 0) return;
  const Md5Digest d = tcp_md5_digest(ip.src, ip.dst, is_v4_packet(ip), h, static_cast<uint8_t>(hlen / 4),
                                     seg_len, payload, h.md5_key);
  std::memcpy(tcp + at, d.data(), d.size());
}

}  // namespace

size_t tcp_packet_size(const IpInfo& ip, const TcpHeader& h, size_t payload_len) {
  size_t ip_len = is_v4_packet(ip) ? kIpv4HeaderMin : kIpv6Header;
  return ip_len + kTcpHeaderMin + options_wire_len(h.options) + payload_len;
}

size_t build_tcp_packet(const IpInfo& ip, const TcpHeader& h, std::span<const uint8_t> payload,
                        std::span<uint8_t> out) {
  return build_tcp_packet_pieces(ip, h, PayloadView(payload), out);
}

// The TCP header first (emit_tcp writes the options and learns their length
// in one pass), then each payload piece copied and summed at once, then the
// IP header, which needs the total length.
size_t build_tcp_packet_pieces(const IpInfo& ip, const TcpHeader& h, PayloadView payload,
                               std::span<uint8_t> out) {
  const bool v4 = is_v4_packet(ip);
  const size_t ip_len = v4 ? kIpv4HeaderMin : kIpv6Header;
  const size_t plen = payload.size();
  // With room for any options the header goes straight out (emit_tcp then
  // makes one pass over the options); else its length is computed first.
  const bool roomy = out.size() >= ip_len + kTcpHeaderMin + kTcpOptionsMax + plen;
  const size_t hlen =
      roomy ? emit_tcp(h, out.subspan(ip_len)) : kTcpHeaderMin + options_wire_len(h.options);
  const size_t total = ip_len + hlen + plen;
  // Both length fields are 16 bits; a datagram they cannot describe is not built.
  if (out.size() < total || total - (v4 ? 0 : ip_len) > 0xffff) return 0;
  if (!roomy) emit_tcp(h, out.subspan(ip_len));
  uint8_t* p = out.data();
  uint8_t* tcp = p + ip_len;
  const size_t seg_len = total - ip_len;
  uint32_t sum = v4 ? pseudo_header_sum_v4(ip, seg_len)
                    : pseudo_header_sum(ip.src, ip.dst, kProtoTcp, static_cast<uint32_t>(seg_len));
  sum += tcp_fixed_sum(h, hlen);  // both sums of a few dozen 16-bit words: no carry out
  size_t off = hlen;
  for (std::span<const uint8_t> piece : {payload.first, payload.second}) {
    if (piece.empty()) continue;
    sum = csum_add_at(sum, csum_copy(piece, tcp + off), off);
    off += piece.size();
  }
  // RFC 2385: the digest covers the payload, so it is written once the
  // payload is in place, and before the options are summed.
  if (!h.md5_key.empty()) sign_md5(ip, h, hlen, seg_len, payload, tcp);
  if (hlen > kTcpHeaderMin) sum = csum_partial({tcp + kTcpHeaderMin, hlen - kTcpHeaderMin}, sum);
  store_be16(tcp + 16, csum_fold(sum));
  if (v4) write_ipv4(ip, total, p);
  else write_ipv6(ip, total - ip_len, p);
  return total;
}

TxTemplateV4::TxTemplateV4(uint32_t src, uint32_t dst, uint8_t ttl, bool df) {
  // write_ipv4's constant fields; the sum is its sum less TOS, length and id.
  uint8_t* p = ip_.data();
  p[0] = 0x45;
  store_be16(p + 6, df ? 0x4000 : 0);
  p[8] = ttl;
  p[9] = kProtoTcp;
  store_be32(p + 12, src);
  store_be32(p + 16, dst);
  const uint32_t addrs = (src >> 16) + (src & 0xffffu) + (dst >> 16) + (dst & 0xffffu);
  ip_sum_ = 0x4500u + (df ? 0x4000u : 0u) + (uint32_t{ttl} << 8 | kProtoTcp) + addrs;
  pseudo_sum_ = addrs + kProtoTcp;
}

// build_tcp_packet_pieces's steps in its order, so that every partial sum is
// the same integer: the TCP header (emit_tcp's layout), the payload copied
// and summed, the options summed, then the IPv4 header from the template.
size_t TxTemplateV4::build(const TcpHeader& h, uint8_t tos, uint16_t id, PayloadView payload,
                           std::span<uint8_t> out) const {
  const size_t plen = payload.size();
  if (out.size() < kIpv4HeaderMin + kTcpHeaderMin + kTcpOptionsMax + plen) return 0;
  uint8_t* p = out.data();
  uint8_t* tcp = p + kIpv4HeaderMin;
  const size_t hlen =
      kTcpHeaderMin + (no_options(h.options) ? 0 : write_options(h.options, tcp + kTcpHeaderMin, true));
  const size_t total = kIpv4HeaderMin + hlen + plen;
  if (total > 0xffff) return 0;
  store_tcp_fixed(tcp, h, hlen);
  const size_t seg_len = total - kIpv4HeaderMin;
  uint32_t sum = pseudo_sum_ + static_cast<uint32_t>(seg_len & 0xffffu);  // pseudo_header_sum_v4
  sum += tcp_fixed_sum(h, hlen);
  size_t off = hlen;
  for (std::span<const uint8_t> piece : {payload.first, payload.second}) {
    if (piece.empty()) continue;
    sum = csum_add_at(sum, csum_copy(piece, tcp + off), off);
    off += piece.size();
  }
  if (hlen > kTcpHeaderMin) sum = csum_partial({tcp + kTcpHeaderMin, hlen - kTcpHeaderMin}, sum);
  store_be16(tcp + 16, csum_fold(sum));
  std::memcpy(p, ip_.data(), kIpv4HeaderMin);
  p[1] = tos;
  store_be16(p + 2, static_cast<uint16_t>(total));
  store_be16(p + 4, id);
  store_be16(p + 10, csum_fold(ip_sum_ + tos + uint32_t{static_cast<uint16_t>(total)} + id));
  return total;
}

TxTemplateV6::TxTemplateV6(const IpAddr& src, const IpAddr& dst) {
  // write_ipv6's constant fields; pseudo_header_sum's words less the length.
  uint8_t* p = ip_.data();
  p[6] = kProtoTcp;
  std::memcpy(p + 8, src.bytes().data(), 16);
  std::memcpy(p + 24, dst.bytes().data(), 16);
  pseudo_sum_ = pseudo_header_sum(src, dst, kProtoTcp, 0);
}

// TxTemplateV4::build's steps (build_tcp_packet_pieces's order, so every
// partial sum is the same integer), then the IPv6 header from the template.
// IPv6's length field leaves its own header out (RFC 8200 §3).
size_t TxTemplateV6::build(const TcpHeader& h, uint32_t flowinfo, uint8_t hop_limit, PayloadView payload,
                           std::span<uint8_t> out) const {
  const size_t plen = payload.size();
  if (out.size() < kIpv6Header + kTcpHeaderMin + kTcpOptionsMax + plen) return 0;
  uint8_t* p = out.data();
  uint8_t* tcp = p + kIpv6Header;
  const size_t hlen =
      kTcpHeaderMin + (no_options(h.options) ? 0 : write_options(h.options, tcp + kTcpHeaderMin, true));
  const size_t seg_len = hlen + plen;
  if (seg_len > 0xffff) return 0;
  store_tcp_fixed(tcp, h, hlen);
  uint32_t sum = pseudo_sum_ + static_cast<uint32_t>(seg_len);  // pseudo_header_sum's length words
  sum += tcp_fixed_sum(h, hlen);
  size_t off = hlen;
  for (std::span<const uint8_t> piece : {payload.first, payload.second}) {
    if (piece.empty()) continue;
    sum = csum_add_at(sum, csum_copy(piece, tcp + off), off);
    off += piece.size();
  }
  if (hlen > kTcpHeaderMin) sum = csum_partial({tcp + kTcpHeaderMin, hlen - kTcpHeaderMin}, sum);
  store_be16(tcp + 16, csum_fold(sum));
  std::memcpy(p, ip_.data(), kIpv6Header);
  store_be32(p, 6u << 28 | (flowinfo & 0x0fffffffu));
  store_be16(p + 4, static_cast<uint16_t>(seg_len));
  p[7] = hop_limit;
  return kIpv6Header + seg_len;
}

std::vector<uint8_t> build_tcp_packet(const IpInfo& ip, const TcpHeader& h,
                                      std::span<const uint8_t> payload) {
  std::vector<uint8_t> out(tcp_packet_size(ip, h, payload.size()));
  out.resize(build_tcp_packet(ip, h, payload, out));
  return out;
}

}  // namespace weir::wire
