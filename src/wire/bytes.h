// Big-endian loads and stores on byte pointers (no alignment assumptions).
// Callers check lengths first; these never check.
#pragma once

#include <cstdint>

namespace weir::wire {

inline uint16_t load_be16(const uint8_t* p) {
  return static_cast<uint16_t>(uint16_t{p[0]} << 8 | p[1]);
}
inline uint32_t load_be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
inline void store_be16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
inline void store_be32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

}  // namespace weir::wire
