// The walk over net.ipv4.ip_local_port_range shared by connect()'s port
// choice (Linux __inet_hash_connect) and bind() to port 0 (Linux
// inet_csk_find_open_port).
//
// Linux splits the range by parity so the two rarely collide: connect()
// tries the ports of the range's low end's parity first, bind(0) the
// other parity first ("to not pollute connect() users"). Each then falls
// back to the other parity. A bind(0) with SO_REUSEADDR also keeps to the
// lower half of the range first (attempt_half), leaving the upper half to
// connect() and plain bind(0).
#pragma once

#include <cstdint>
#include <optional>

namespace weir {

struct PortPick {
  uint16_t port = 0;
  uint32_t index = 0;  // how far into its pass the walk went (Linux `i`)
};

enum class ParityFirst : uint8_t {
  kLow,    // connect(): the parity of `low` first
  kOther,  // bind(0): the other parity first
};

// Walks the ports [low, high] from `start` (any number: reduced modulo the
// range), calls `usable(port)` on each candidate and returns the first it
// accepts. Linux rounds the span down to even ("remaining &= ~1U") so the
// two parities alternate cleanly; with an odd span the top port is reached
// only from some starting points, as there.
template <class Usable>
std::optional<PortPick> scan_ports(uint32_t low, uint32_t high, uint32_t start, ParityFirst first,
                                   Usable&& usable) {
  const uint32_t end = high + 1;  // "[32768, 60999] -> [32768, 61000["
  uint32_t remaining = end - low;
  if (remaining > 1) remaining &= ~1u;
  uint32_t offset = start % remaining;
  offset = first == ParityFirst::kLow ? (offset & ~1u) : (offset | 1u);
  for (int pass = 0; pass < 2; ++pass) {
    uint32_t port = low + offset;
    for (uint32_t i = 0; i < remaining; i += 2, port += 2) {
      if (port >= end) port -= remaining;
      if (usable(static_cast<uint16_t>(port))) return PortPick{static_cast<uint16_t>(port), i};
    }
    if (remaining <= 1) break;
    // "offset++" (connect) or "offset--" (bind): the other parity.
    offset = first == ParityFirst::kLow ? offset + 1 : offset - 1;
  }
  return std::nullopt;
}

// Linux inet_csk_find_open_port's attempt_half: the lower half of the
// range, [low, half), and the upper half, [half, high]; nullopt when the
// range is too small to split ("high - low < 4").
struct PortHalves {
  uint32_t lower_high;  // inclusive end of the lower half
  uint32_t upper_low;
};
inline std::optional<PortHalves> split_port_range(uint32_t low, uint32_t high) {
  const uint32_t end = high + 1;
  if (end - low < 4) return std::nullopt;
  const uint32_t half = low + (((end - low) >> 2) << 1);
  return PortHalves{half - 1, half};
}

}  // namespace weir
