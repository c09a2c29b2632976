// Big-endian loads and stores on byte pointers (no alignment assumptions).
// Callers check lengths first; these never check.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

namespace weir::wire {

inline uint16_t load_be16(const uint8_t* p) {
  return static_cast<uint16_t>(uint16_t{p[0]} << 8 | p[1]);
}
inline uint32_t load_be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
inline uint64_t load_be64(const uint8_t* p) { return uint64_t{load_be32(p)} << 32 | load_be32(p + 4); }
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

// Copies s to p and returns the byte after it. An empty span may have a null
// data(), which memcpy must never see (C11 7.24.1p2), so it copies nothing.
inline uint8_t* put_bytes(uint8_t* p, std::span<const uint8_t> s) {
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

}  // namespace weir::wire
