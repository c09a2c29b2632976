// Internal to src/wire: the one option writer shared by emit and format.
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace weir::wire
