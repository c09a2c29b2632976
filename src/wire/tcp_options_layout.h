// Internal to src/wire: the one option writer shared by emit and format.
#pragma once

#include <cstddef>
#include <cstdint>

#include "wire/bytes.h"
#include "wire/tcp_header.h"

namespace weir::wire {

// Writes `o` in wire order into `out` (at least kTcpOptionsMax bytes, or
// nullptr to only count); `pad` rounds up to a 32-bit boundary with EOL bytes.
size_t write_options(const TcpOptions& o, uint8_t* out, bool pad);

// No option at all (a data segment or ACK without timestamps or SACK
// blocks): nothing to write or pad. Inline so that callers test it before
// the call.
inline bool no_options(const TcpOptions& o) {
  return o.item_count == 0 && !o.mss && !o.ts && !o.sack_permitted && !o.wscale && o.sack_count == 0 &&
         !o.fastopen && !o.md5;
}

// The TCP header's fixed fields but the checksum (RFC 9293 §3.1), with a
// data offset for `hlen` bytes of header: the one writer for emit_tcp and
// the IPv4 template path.
inline void store_tcp_fixed(uint8_t* p, const TcpHeader& h, size_t hlen) {
  store_be16(p, h.src_port);
  store_be16(p + 2, h.dst_port);
  store_be32(p + 4, h.seq.raw());
  store_be32(p + 8, h.ack.raw());
  p[12] = static_cast<uint8_t>((hlen / 4) << 4);
  p[13] = h.flags;
  store_be16(p + 14, h.window);
  store_be16(p + 18, h.urgent);
}

}  // namespace weir::wire
