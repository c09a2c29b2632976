// Whole IP datagrams carrying TCP: parse (IPv4 RFC 791 / IPv6 RFC 8200 +
// TCP, checksum verified) and build. ICMP/ICMPv6 errors are parsed far
// enough to hand the quoted TCP header to the engine (RFC 1191, RFC 8201).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "weir/addr.h"
#include "weir/expected.h"
#include "wire/tcp_header.h"

namespace weir::wire {

inline constexpr uint8_t kProtoTcp = 6;
inline constexpr uint8_t kProtoIcmp = 1;
inline constexpr uint8_t kProtoIcmpv6 = 58;
inline constexpr size_t kIpv4HeaderMin = 20;
inline constexpr size_t kIpv6Header = 40;

struct IpInfo {
  uint8_t version = 4;       // 4 or 6
  IpAddr src;
  IpAddr dst;
  uint8_t proto = kProtoTcp; // IPv4 protocol / IPv6 next header
  uint8_t ttl = 64;          // IPv4 TTL / IPv6 hop limit
  uint8_t tos = 0;           // IPv4 TOS / IPv6 traffic class (ECN in low 2 bits)
  uint32_t flow_label = 0;   // IPv6 only
  uint16_t id = 0;           // IPv4 identification
  bool df = true;            // IPv4 don't-fragment
};

// Why a datagram was refused. Names follow Linux's skb drop reasons where
// Linux has one (SKB_DROP_REASON_*), so counters read the same.
enum class PacketError {
  kIpTruncated,        // shorter than the IP header or its total length
  kIpBadVersion,
  kIpBadHeaderLength,  // IHL < 5 or past the datagram
  kIpBadChecksum,      // IPv4 header checksum (IP_CSUM)
  kIpFragment,         // fragments are not reassembled
  kNotTcp,             // another protocol (and not an ICMP error we parse)
  kTcpTruncated,
  kTcpBadDataOffset,
  kTcpBadOption,
  kTcpBadChecksum,     // TCP_CSUM
};
const char* to_string(PacketError e);

struct TcpPacket {
  IpInfo ip;
  TcpHeader tcp;
  std::span<const uint8_t> payload;  // points into the parsed buffer
  std::span<const uint8_t> headers = {};  // the IP and TCP headers as received (TCP_SAVED_SYN)
};

// An ICMP destination-unreachable / packet-too-big / time-exceeded error
// quoting a TCP segment we sent.
struct IcmpError {
  IpInfo ip;             // of the ICMP packet itself
  uint8_t type = 0;
  uint8_t code = 0;
  uint32_t mtu = 0;      // next-hop MTU for frag-needed / packet-too-big
  IpInfo quoted_ip;      // the header of our packet, as quoted
  uint16_t quoted_src_port = 0;
  uint16_t quoted_dst_port = 0;
  Seq32 quoted_seq;
};

// `verify_checksum`: the IPv4 header's and the TCP checksum are checked.
// `tcp_checksum_valid`: the device vouches for the TCP checksum (Linux
// CHECKSUM_UNNECESSARY, or CHECKSUM_PARTIAL from a sender on this host),
// so only the IPv4 header's is checked.
Expected<TcpPacket, PacketError> parse_tcp_packet(std::span<const uint8_t> datagram,
                                                  bool verify_checksum = true,
                                                  bool tcp_checksum_valid = false);
Expected<IcmpError, PacketError> parse_icmp_error(std::span<const uint8_t> datagram);

// A segment's payload in at most two pieces, in order: a ring buffer's bytes
// wrap around once (tcp::SendBuffer::view). Built implicitly from one span.
struct PayloadView {
  PayloadView() = default;
  PayloadView(std::span<const uint8_t> one) : first(one) {}  // NOLINT(google-explicit-constructor)
  PayloadView(std::span<const uint8_t> a, std::span<const uint8_t> b) : first(a), second(b) {}
  size_t size() const { return first.size() + second.size(); }
  bool empty() const { return size() == 0; }
  std::span<const uint8_t> first;
  std::span<const uint8_t> second;
};

// Total bytes build_tcp_packet will write.
size_t tcp_packet_size(const IpInfo& ip, const TcpHeader& h, size_t payload_len);
// Writes IP header + TCP header + payload with both checksums filled in.
// `out` must hold tcp_packet_size() bytes; returns the bytes written.
size_t build_tcp_packet(const IpInfo& ip, const TcpHeader& h,
                        std::span<const uint8_t> payload, std::span<uint8_t> out);
// The same from a payload in pieces, each copied into `out` and summed in
// one pass (csum_copy). `out` must hold tcp_packet_size() bytes, or
// IPv6 header + 60 + payload bytes, which is never less.
size_t build_tcp_packet_pieces(const IpInfo& ip, const TcpHeader& h, PayloadView payload,
                               std::span<uint8_t> out);
// Convenience for tests and tools.
std::vector<uint8_t> build_tcp_packet(const IpInfo& ip, const TcpHeader& h,
                                      std::span<const uint8_t> payload);

}  // namespace weir::wire
