// Internal to src/wire: the one option writer shared by emit and format.
#pragma once

#include <cstddef>
#include <cstdint>

#include "wire/tcp_header.h"

namespace weir::wire {

// Writes `o` in wire order into `out` (at least kTcpOptionsMax bytes, or
// nullptr to only count); `pad` rounds up to a 32-bit boundary with EOL bytes.
size_t write_options(const TcpOptions& o, uint8_t* out, bool pad);

}  // namespace weir::wire
