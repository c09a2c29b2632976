// RFC 2385 §2.0 digest input, in the order the RFC lists it; Linux
// tcp_v4_md5_hash_skb / tcp_v6_md5_hash_skb feed the same bytes.
#include "wire/tcp_md5.h"

#include <nettle/md5.h>

#include <algorithm>

#include "wire/bytes.h"

namespace weir::wire {
namespace {

void feed(md5_ctx& ctx, std::span<const uint8_t> s) {
  if (!s.empty()) md5_update(&ctx, s.size(), s.data());
}

// (1) The pseudo-header. IPv4: RFC 2385 §2.0 "source IP address,
// destination IP address, zero-padded protocol number, and segment length".
void feed_pseudo_header(md5_ctx& ctx, const IpAddr& src, const IpAddr& dst, bool v4, size_t seg_len) {
  if (v4) {
    uint8_t ph[12];
    store_be32(ph, src.v4_host_order());
    store_be32(ph + 4, dst.v4_host_order());
    ph[8] = 0;
    ph[9] = kProtoTcp;
    store_be16(ph + 10, static_cast<uint16_t>(seg_len));
    feed(ctx, ph);
    return;
  }
  uint8_t ph[40];
  std::copy(src.bytes().begin(), src.bytes().end(), ph);
  std::copy(dst.bytes().begin(), dst.bytes().end(), ph + 16);
  store_be32(ph + 32, static_cast<uint32_t>(seg_len));
  store_be32(ph + 36, kProtoTcp);
  feed(ctx, ph);
}

// (2) "the TCP header, excluding options, and assuming a checksum of zero".
void feed_fixed_header(md5_ctx& ctx, const TcpHeader& h, uint8_t doff) {
  uint8_t b[kTcpHeaderMin];
  store_be16(b, h.src_port);
  store_be16(b + 2, h.dst_port);
  store_be32(b + 4, h.seq.raw());
  store_be32(b + 8, h.ack.raw());
  b[12] = static_cast<uint8_t>(doff << 4);
  b[13] = h.flags;
  store_be16(b + 14, h.window);
  store_be16(b + 16, 0);
  store_be16(b + 18, h.urgent);
  feed(ctx, b);
}

}  // namespace

Md5Digest tcp_md5_digest(const IpAddr& src, const IpAddr& dst, bool v4, const TcpHeader& h, uint8_t doff,
                         size_t seg_len, PayloadView payload, std::span<const uint8_t> key) {
  md5_ctx ctx;
  md5_init(&ctx);
  feed_pseudo_header(ctx, src, dst, v4, seg_len);
  feed_fixed_header(ctx, h, doff);
  feed(ctx, payload.first);   // (3) the segment data
  feed(ctx, payload.second);
  feed(ctx, key);             // (4) "a connection-specific key"
  Md5Digest d{};
  md5_digest(&ctx, d.size(), d.data());
  return d;
}

size_t md5_digest_offset(std::span<const uint8_t> tcp) {
  if (tcp.size() < kTcpHeaderMin) return 0;
  const size_t hlen = std::min<size_t>(static_cast<size_t>(tcp[12] >> 4) * 4, tcp.size());
  size_t i = kTcpHeaderMin;
  while (i < hlen) {
    const uint8_t kind = tcp[i];
    if (kind == tcp_opt::EOL) return 0;
    if (kind == tcp_opt::NOP) { ++i; continue; }
    if (i + 1 >= hlen || tcp[i + 1] < 2 || i + tcp[i + 1] > hlen) return 0;
    if (kind == tcp_opt::MD5) return tcp[i + 1] == 18 ? i + 2 : 0;
    i += tcp[i + 1];
  }
  return 0;
}

}  // namespace weir::wire
