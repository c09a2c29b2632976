// IP datagrams carrying TCP, and ICMP errors quoting them.
// IPv4: RFC 791 §3.1; IPv6: RFC 8200 §3/§4; ICMP: RFC 792, RFC 1191 §4;
// ICMPv6: RFC 4443 §3, RFC 8201.
#include "wire/packet.h"

#include <cstring>

#include "wire/bytes.h"
#include "wire/checksum.h"

namespace weir::wire {
namespace {

constexpr uint8_t kIpv6HopByHop = 0;
constexpr uint8_t kIpv6Routing = 43;
constexpr uint8_t kIpv6Fragment = 44;
constexpr uint8_t kIpv6DestOpts = 60;

IpAddr v6_addr(const uint8_t* p) {
  std::array<uint8_t, 16> b;
  std::memcpy(b.data(), p, 16);
  return IpAddr::v6(b);
}

// A parsed IP header: where the upper-layer payload lies in the datagram.
struct IpView {
  IpInfo info;
  std::span<const uint8_t> payload;
};

// RFC 791 §3.1 / RFC 1071 §2(C): the header checksum folds to zero. The
// header is `ihl` bytes, a multiple of 4, so it is summed a 32-bit word at a
// time into a 64-bit accumulator that needs no carries, then folded (Linux
// ip_fast_csum): csum_partial's length dispatch cost more than the 20 bytes
// of a usual header. The verdict is the same: both are the one's-complement
// sum, and the fold is byte-order independent (RFC 1071 §2(B)).
bool ipv4_header_sum_ok(const uint8_t* p, size_t ihl) {
  uint64_t sum = 0;
  for (size_t i = 0; i < ihl; i += 4) {
    uint32_t w;
    std::memcpy(&w, p + i, 4);
    sum += w;
  }
  sum = (sum & 0xffffffffu) + (sum >> 32);  // at most 15 words: two folds reach 32 bits
  sum = (sum & 0xffffffffu) + (sum >> 32);
  return csum_fold(static_cast<uint32_t>(sum)) == 0;
}

// RFC 791 §3.1. `check` verifies the header checksum; a quoted header inside
// an ICMP error is not checked (and may be cut short by the router).
Expected<IpView, PacketError> parse_ipv4(std::span<const uint8_t> d, bool check, bool quoted) {
  if (d.size() < kIpv4HeaderMin) return Unexpected{PacketError::kIpTruncated};
  const uint8_t* p = d.data();
  size_t ihl = size_t{p[0] & 0x0fu} * 4;
  if (ihl < kIpv4HeaderMin || ihl > d.size()) return Unexpected{PacketError::kIpBadHeaderLength};
  size_t total = load_be16(p + 2);
  if (!quoted) {
    if (total < ihl) return Unexpected{PacketError::kIpBadHeaderLength};
    if (total > d.size()) return Unexpected{PacketError::kIpTruncated};
    if (check && !ipv4_header_sum_ok(p, ihl)) return Unexpected{PacketError::kIpBadChecksum};
  } else {
    total = d.size();  // the quote holds as much as the router chose to send
  }
  uint16_t frag = load_be16(p + 6);
  // Fragments (MF set or offset nonzero) are not reassembled. A quote of our
  // own datagram is never a fragment: we set DF and never fragment.
  if (!quoted && (frag & 0x3fffu) != 0) return Unexpected{PacketError::kIpFragment};
  IpView v;
  v.info.version = 4;
  v.info.tos = p[1];
  v.info.id = load_be16(p + 4);
  v.info.df = (frag & 0x4000u) != 0;
  v.info.ttl = p[8];
  v.info.proto = p[9];
  v.info.src = IpAddr::v4(load_be32(p + 12));
  v.info.dst = IpAddr::v4(load_be32(p + 16));
  v.payload = d.subspan(ihl, total - ihl);  // trailing link padding dropped
  return v;
}

// RFC 8200 §4: skips hop-by-hop, routing and destination-options headers
// (their length is (hdr_ext_len + 1) * 8); a fragment header means a fragment.
Expected<IpView, PacketError> skip_ipv6_extensions(IpView v) {
  for (int hops = 0; hops < 8; ++hops) {
    uint8_t nh = v.info.proto;
    if (nh == kIpv6Fragment) return Unexpected{PacketError::kIpFragment};
    if (nh != kIpv6HopByHop && nh != kIpv6Routing && nh != kIpv6DestOpts) return v;
    if (v.payload.size() < 8) return Unexpected{PacketError::kIpTruncated};
    size_t len = (size_t{v.payload[1]} + 1) * 8;
    if (len > v.payload.size()) return Unexpected{PacketError::kIpTruncated};
    v.info.proto = v.payload[0];
    v.payload = v.payload.subspan(len);
  }
  return Unexpected{PacketError::kNotTcp};  // absurd chain: not worth walking
}

Expected<IpView, PacketError> parse_ipv6(std::span<const uint8_t> d, bool quoted) {
  if (d.size() < kIpv6Header) return Unexpected{PacketError::kIpTruncated};
  const uint8_t* p = d.data();
  uint32_t w0 = load_be32(p);
  size_t plen = load_be16(p + 4);
  if (!quoted) {
    // A zero payload length is a jumbogram (RFC 2675), which we do not support.
    if (plen == 0 && d.size() > kIpv6Header) return Unexpected{PacketError::kIpTruncated};
    if (kIpv6Header + plen > d.size()) return Unexpected{PacketError::kIpTruncated};
  } else {
    plen = d.size() - kIpv6Header;
  }
  IpView v;
  v.info.version = 6;
  v.info.tos = static_cast<uint8_t>(w0 >> 20);
  v.info.flow_label = w0 & 0xfffffu;
  v.info.proto = p[6];
  v.info.ttl = p[7];
  v.info.df = true;  // IPv6 routers never fragment (RFC 8200 §5)
  v.info.src = v6_addr(p + 8);
  v.info.dst = v6_addr(p + 24);
  v.payload = d.subspan(kIpv6Header, plen);
  return skip_ipv6_extensions(v);
}

Expected<IpView, PacketError> parse_ip(std::span<const uint8_t> d, bool check, bool quoted) {
  if (d.empty()) return Unexpected{PacketError::kIpTruncated};
  switch (d[0] >> 4) {
    case 4: return parse_ipv4(d, check, quoted);
    case 6: return parse_ipv6(d, quoted);
    default: return Unexpected{PacketError::kIpBadVersion};
  }
}

PacketError from_tcp_error(TcpParseError e) {
  switch (e) {
    case TcpParseError::kTruncated: return PacketError::kTcpTruncated;
    case TcpParseError::kBadDataOffset: return PacketError::kTcpBadDataOffset;
    default: return PacketError::kTcpBadOption;
  }
}

constexpr size_t kIcmpHeader = 8;  // type, code, checksum, 4 type-specific bytes

// ICMPv4 type 3 (destination unreachable, RFC 792; code 4 = fragmentation
// needed, next-hop MTU in bytes 6-7 per RFC 1191 §4) and type 11 (time
// exceeded); ICMPv6 types 1 (destination unreachable), 2 (packet too big,
// 32-bit MTU, RFC 4443 §3.2) and 3 (time exceeded). Anything else is not an
// error we hand to TCP.
bool icmp_error_kind(bool v6, uint8_t type, uint8_t code, std::span<const uint8_t> msg,
                     uint32_t& mtu) {
  if (!v6) {
    if (type == 3) {
      if (code == 4) mtu = load_be16(msg.data() + 6);
      return true;
    }
    return type == 11;
  }
  if (type == 2) {
    mtu = load_be32(msg.data() + 4);
    return true;
  }
  return type == 1 || type == 3;
}

}  // namespace

const char* to_string(PacketError e) {
  switch (e) {
    case PacketError::kIpTruncated: return "IP_TRUNCATED";
    case PacketError::kIpBadVersion: return "IP_BAD_VERSION";
    case PacketError::kIpBadHeaderLength: return "IP_BAD_HEADER_LENGTH";
    case PacketError::kIpBadChecksum: return "IP_CSUM";
    case PacketError::kIpFragment: return "IP_FRAGMENT";
    case PacketError::kNotTcp: return "NOT_TCP";
    case PacketError::kTcpTruncated: return "TCP_TRUNCATED";
    case PacketError::kTcpBadDataOffset: return "TCP_BAD_DATA_OFFSET";
    case PacketError::kTcpBadOption: return "TCP_BAD_OPTION";
    case PacketError::kTcpBadChecksum: return "TCP_CSUM";
  }
  return "?";
}

// The packet is built in place in the returned object (every return is
// `out`, so it is constructed once in the caller's storage): the parsed
// header is a few hundred bytes and was copied three times per segment.
Expected<TcpPacket, PacketError> parse_tcp_packet(std::span<const uint8_t> datagram,
                                                  bool verify_checksum, bool tcp_checksum_valid) {
  Expected<TcpPacket, PacketError> out(std::in_place);
  auto ip = parse_ip(datagram, verify_checksum, /*quoted=*/false);
  if (!ip) {
    out = Unexpected{ip.error()};
    return out;
  }
  if (ip->info.proto != kProtoTcp) {
    out = Unexpected{PacketError::kNotTcp};
    return out;
  }
  std::span<const uint8_t> seg = ip->payload;
  TcpPacket& pkt = *out;
  if (auto err = parse_tcp_into(seg, pkt.tcp)) {
    out = Unexpected{from_tcp_error(*err)};
    return out;
  }
  if (verify_checksum && !tcp_checksum_valid) {
    // RFC 9293 §3.1: the sum over pseudo-header and segment folds to zero.
    uint32_t sum = pseudo_header_sum(ip->info.src, ip->info.dst, kProtoTcp,
                                     static_cast<uint32_t>(seg.size()));
    if (csum_fold(csum_partial(seg, sum)) != 0) {
      out = Unexpected{PacketError::kTcpBadChecksum};
      return out;
    }
  }
  pkt.ip = ip->info;
  pkt.payload = seg.subspan(size_t{pkt.tcp.data_offset} * 4);
  // The network header (IPv4 options, IPv6 extension headers) and the TCP
  // header as received: Linux skb_network_header_len + tcp_hdrlen.
  const auto net_len = static_cast<size_t>(seg.data() - datagram.data());
  pkt.headers = datagram.first(net_len + size_t{pkt.tcp.data_offset} * 4);
  return out;
}

Expected<IcmpError, PacketError> parse_icmp_error(std::span<const uint8_t> datagram) {
  auto ip = parse_ip(datagram, /*check=*/true, /*quoted=*/false);
  if (!ip) return Unexpected{ip.error()};
  std::span<const uint8_t> msg = ip->payload;
  bool v6 = ip->info.version == 6;
  if (ip->info.proto != (v6 ? kProtoIcmpv6 : kProtoIcmp)) return Unexpected{PacketError::kNotTcp};
  if (msg.size() < kIcmpHeader) return Unexpected{PacketError::kIpTruncated};
  // RFC 792 / RFC 4443 §2.3: ICMPv6 sums a pseudo-header, ICMPv4 does not.
  uint32_t sum = v6 ? pseudo_header_sum(ip->info.src, ip->info.dst, kProtoIcmpv6,
                                        static_cast<uint32_t>(msg.size()))
                    : 0;
  if (csum_fold(csum_partial(msg, sum)) != 0) return Unexpected{PacketError::kIpBadChecksum};
  IcmpError e;
  e.ip = ip->info;
  e.type = msg[0];
  e.code = msg[1];
  if (!icmp_error_kind(v6, e.type, e.code, msg, e.mtu)) return Unexpected{PacketError::kNotTcp};
  // The quote: the offending datagram's IP header and at least 8 bytes of
  // TCP (RFC 792; RFC 4443 §3 quotes as much as fits in the minimum MTU).
  auto quoted = parse_ip(msg.subspan(kIcmpHeader), /*check=*/false, /*quoted=*/true);
  if (!quoted) return Unexpected{quoted.error()};
  if (quoted->info.version != ip->info.version) return Unexpected{PacketError::kIpBadVersion};
  if (quoted->info.proto != kProtoTcp) return Unexpected{PacketError::kNotTcp};
  if (quoted->payload.size() < 8) return Unexpected{PacketError::kTcpTruncated};
  e.quoted_ip = quoted->info;
  e.quoted_src_port = load_be16(quoted->payload.data());
  e.quoted_dst_port = load_be16(quoted->payload.data() + 2);
  e.quoted_seq = Seq32(load_be32(quoted->payload.data() + 4));
  return e;
}

}  // namespace weir::wire
