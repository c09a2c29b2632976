// SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
// 2012): the keyed hash Linux uses for Fast Open cookies (siphash() in
// lib/siphash.c, the reference algorithm with a 128-bit key given as two
// little-endian 64-bit words).
#pragma once

#include <cstdint>
#include <span>

namespace weir {

struct SipKey {
  uint64_t k0 = 0;
  uint64_t k1 = 0;
};

uint64_t siphash24(const SipKey& key, std::span<const uint8_t> data);

}  // namespace weir
