// Internet checksum. RFC 1071 §2(B): the one's-complement sum is independent
// of byte order, so we add native-order 64-bit words (with end-around carry)
// and swap the folded 16-bit result once at the end. Partial sums crossing the
// API are always in "big-endian 16-bit word" arithmetic, so they compose.
#include "wire/checksum.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace weir::wire {
namespace {

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// a + b with the carry out of bit 63 added back in (one's-complement add).
inline uint64_t add_carry(uint64_t a, uint64_t b) {
  uint64_t s = a + b;
  return s + (s < b ? 1 : 0);
}

// Folds a 64-bit one's-complement sum to 16 bits (still one's-complement).
inline uint16_t fold64(uint64_t s) {
  s = (s & 0xffffffffu) + (s >> 32);
  s = (s & 0xffffffffu) + (s >> 32);
  s = (s & 0xffffu) + (s >> 16);
  s = (s & 0xffffu) + (s >> 16);
  return static_cast<uint16_t>(s);
}

inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Sum of `n` (< 4) bytes: a 16-bit word, then a byte zero-padded in memory
// order (RFC 1071's rule of padding an odd final byte with a zero low-order
// byte). Fixed-size loads: a variable-length copy into a padded buffer cost
// ~50 instructions per call, once per packet and once per header.
inline uint32_t sum_under_word(const uint8_t* p, size_t n) {
  uint32_t a = 0;
  if (n >= 2) {
    uint16_t w;
    std::memcpy(&w, p, 2);
    a = w;
    p += 2;
    n -= 2;
  }
  if (n > 0) {
    const uint8_t last[2] = {*p, 0};
    uint16_t w;
    std::memcpy(&w, last, 2);
    a += w;
  }
  return a;
}

// Sum of `n` (< 16) bytes as native-order words, zero-padded in memory order.
// Narrower words at 16-bit-aligned offsets add the same modulo 0xffff as the
// zero-padded 64-bit word would (2^16 = 1 there), so the pieces need no shift.
inline uint64_t native_sum_tail(const uint8_t* p, size_t n) {
  uint64_t a = 0;
  if (n >= 8) {
    a = load64(p);
    p += 8;
    n -= 8;
  }
  uint64_t b = 0;
  if (n >= 4) {
    b = load32(p);
    p += 4;
    n -= 4;
  }
  return add_carry(a, b + sum_under_word(p, n));
}

// 32-bit lanes (GCC/Clang vector extension): SSE2 on every x86-64, NEON on
// arm64, scalar code elsewhere; AVX2 where the CPU has it (below).
using U32x4 = uint32_t __attribute__((vector_size(16)));
using U32x8 = uint32_t __attribute__((vector_size(32)));

// Vector blocks per lane refill: each block adds two 16-bit words to every
// 32-bit lane, so 2^15 blocks cannot carry out of a lane.
constexpr size_t kBlocksPerFold = size_t{1} << 15;

// Sum of `n` bytes as native-order 16-bit words (RFC 1071 §2(B): byte order
// does not matter until the end), as a 64-bit one's-complement partial sum.
// With `Copy`, each block read is also stored to `dst`: the payload copy and
// its checksum in one pass over the bytes (Linux
// csum_partial_copy_nocheck). Each lane adds the low and the high halves of
// its 32 bits separately; two accumulator pairs let the adds overlap. What
// is left under one vector goes to the next smaller width, then to
// native_sum_tail.
template <typename V, bool Copy>
[[gnu::always_inline]] inline uint64_t lane_sum(const uint8_t* p, uint8_t* dst, size_t n) {
  constexpr size_t kW = sizeof(V);
  uint64_t total = 0;
  while (n >= kW) {
    size_t blocks = std::min(n / kW, kBlocksPerFold);
    n -= blocks * kW;
    V lo0 = {}, hi0 = {}, lo1 = {}, hi1 = {};
    for (; blocks >= 2; blocks -= 2) {
      V v0, v1;
      std::memcpy(&v0, p, kW);
      std::memcpy(&v1, p + kW, kW);
      if constexpr (Copy) {
        std::memcpy(dst, &v0, kW);
        std::memcpy(dst + kW, &v1, kW);
        dst += 2 * kW;
      }
      lo0 += v0 & 0xffff;
      hi0 += v0 >> 16;
      lo1 += v1 & 0xffff;
      hi1 += v1 >> 16;
      p += 2 * kW;
    }
    if (blocks > 0) {
      V v0;
      std::memcpy(&v0, p, kW);
      if constexpr (Copy) {
        std::memcpy(dst, &v0, kW);
        dst += kW;
      }
      lo0 += v0 & 0xffff;
      hi0 += v0 >> 16;
      p += kW;
    }
    // Each lane holds a plain sum of 16-bit words (< 2^32): their total is
    // congruent to the data's one's-complement sum modulo 0xffff.
    // No carry out of a lane: lo0 + lo1 and hi0 + hi1 each add at most 2^15
    // words of 16 bits, < 2^31.
    const V both = (lo0 + lo1) + (hi0 + hi1);
    uint64_t s = 0;
    for (size_t i = 0; i < kW / 4; ++i) s += both[i];
    total = add_carry(total, s);
  }
  if constexpr (kW > 16) {
    return add_carry(total, lane_sum<U32x4, Copy>(p, dst, n));
  } else {
    if constexpr (Copy) {
      if (n > 0) std::memcpy(dst, p, n);
    }
    return add_carry(total, native_sum_tail(p, n));
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
template <bool Copy>
[[gnu::target("avx2")]] uint64_t lane_sum_avx2(const uint8_t* p, uint8_t* dst, size_t n) {
  return lane_sum<U32x8, Copy>(p, dst, n);
}

bool cpu_has_avx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
}
#endif

// Headers (20 to 60 bytes): 64-bit words with end-around carry (a chain of
// carries the compiler does not vectorize: set up for 20 bytes, vector code
// cost more than it saved), then native_sum_tail.
uint64_t scalar_sum(const uint8_t* p, size_t n) {
  uint64_t a = 0;
  for (; n >= 16; n -= 16, p += 16) a = add_carry(add_carry(a, load64(p)), load64(p + 8));
  return add_carry(a, native_sum_tail(p, n));
}

constexpr size_t kScalarMax = 64;

// Buffers of kScalarMax bytes and more. Not inlined into the callers, so
// that a header's sum does not pay the vector path's register saves.
template <bool Copy>
[[gnu::noinline]] uint64_t vector_sum(const uint8_t* p, uint8_t* dst, size_t n) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (cpu_has_avx2()) return lane_sum_avx2<Copy>(p, dst, n);
#endif
  return lane_sum<U32x4, Copy>(p, dst, n);
}

template <bool Copy>
inline uint64_t native_sum(const uint8_t* p, uint8_t* dst, size_t n) {
  if (n < kScalarMax) {
    if constexpr (Copy) {
      if (n > 0) std::memcpy(dst, p, n);
    }
    return scalar_sum(p, n);
  }
  return vector_sum<Copy>(p, dst, n);
}

inline uint16_t to_network_word_order(uint16_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    return static_cast<uint16_t>((v >> 8) | (v << 8));
  }
  return v;
}

inline uint32_t be32_sum(const uint8_t* p) {
  return (uint32_t{p[0]} << 8 | p[1]) + (uint32_t{p[2]} << 8 | p[3]);
}

// `native` (a native-order partial sum) added to `sum` (big-endian words).
inline uint32_t add_native(uint32_t sum, uint64_t native) {
  const uint16_t folded = to_network_word_order(fold64(native));
  const uint64_t s = uint64_t{sum} + folded;
  return static_cast<uint32_t>((s & 0xffffffffu) + (s >> 32));
}

}  // namespace

uint32_t csum_partial(std::span<const uint8_t> data, uint32_t sum) {
  return add_native(sum, native_sum<false>(data.data(), nullptr, data.size()));
}

uint32_t csum_copy(std::span<const uint8_t> src, uint8_t* dst, uint32_t sum) {
  return add_native(sum, native_sum<true>(src.data(), dst, src.size()));
}

uint32_t pseudo_header_sum(const IpAddr& src, const IpAddr& dst, uint8_t proto, uint32_t len) {
  const uint8_t* s = src.bytes().data();
  const uint8_t* d = dst.bytes().data();
  uint64_t sum = 0;
  if (src.is_v4() && dst.is_v4()) {
    // RFC 9293 §3.1: src, dst, zero, PTCL, TCP length (16 bits).
    sum += be32_sum(s + 12) + be32_sum(d + 12);
    sum += proto;
    sum += len & 0xffffu;
  } else {
    // RFC 8200 §8.1: src, dst, upper-layer length (32 bits), zero, next header.
    for (int i = 0; i < 16; i += 4) sum += be32_sum(s + i) + be32_sum(d + i);
    sum += (len >> 16) + (len & 0xffffu);
    sum += proto;
  }
  sum = (sum & 0xffffffffu) + (sum >> 32);
  return static_cast<uint32_t>(sum);
}

uint16_t csum_update16(uint16_t csum, uint16_t old_v, uint16_t new_v) {
  // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'). It agrees with a full
  // recomputation, including the -0 corner where RFC 1141's formula does not.
  uint32_t s = static_cast<uint16_t>(~csum);
  s += static_cast<uint16_t>(~old_v);
  s += new_v;
  return csum_fold(s);
}

}  // namespace weir::wire
