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

// The plain sum of the 16-bit words that passed through each 32-bit lane.
// `whole` adds the lanes' 32 bits modulo 2^32 and `hi` their upper halves
// exactly, so the lower halves' sum is whole - (hi << 16) modulo 2^32: exact,
// as it stays below 2^32 (kBlocksPerFold). One shift and two adds per
// vector, where masking out the lower halves took a third operation.
// (Vectors go by reference: by value they would change the ABI of a
// function not compiled for AVX.)
template <typename V>
struct LaneWords {
  V whole = {};
  V hi = {};
  // The vector at p + off; with `Copy` also stored to dst + off (without,
  // `dst` is null and takes no offset).
  template <bool Copy>
  [[gnu::always_inline]] void add_block(const uint8_t* p, uint8_t* dst, size_t off) {
    V v;
    std::memcpy(&v, p + off, sizeof(V));
    if constexpr (Copy) std::memcpy(dst + off, &v, sizeof(V));
    whole += v;
    hi += v >> 16;
  }
  // The 16 bytes at `p` (with `Copy` also stored to `dst`) in the low
  // lanes of an 8-lane vector, the high lanes zero.
  template <bool Copy>
  [[gnu::always_inline]] void add_half(const uint8_t* p, uint8_t* dst) {
    static_assert(sizeof(V) == 32);
    U32x4 h;
    std::memcpy(&h, p, sizeof h);
    if constexpr (Copy) std::memcpy(dst, &h, sizeof h);
    const V v = __builtin_shufflevector(h, U32x4{}, 0, 1, 2, 3, 4, 5, 6, 7);
    whole += v;
    hi += v >> 16;
  }
  [[gnu::always_inline]] void add_to(V& out) const { out += (whole - (hi << 16)) + hi; }
};

// Sum of `n` bytes as native-order 16-bit words (RFC 1071 §2(B): byte order
// does not matter until the end), as a 64-bit one's-complement partial sum.
// With `Copy`, each block read is also stored to `dst`: the payload copy and
// its checksum in one pass over the bytes (Linux
// csum_partial_copy_nocheck). Four blocks per step with two accumulators
// (the adds overlap, the loop's own bookkeeping is paid once per four).
// With AVX2, under one vector left, its first 16 bytes join the same lanes
// (one horizontal sum, not a narrower pass with its own); what is left
// under that goes to native_sum_tail.
template <typename V, bool Copy>
[[gnu::always_inline]] inline uint64_t lane_sum(const uint8_t* p, uint8_t* dst, size_t n) {
  constexpr size_t kW = sizeof(V);
  constexpr size_t kHalf = kW / 2;
  constexpr bool kHalves = kW == 32;  // (SSE2's half, 8 bytes, goes to the tail)
  uint64_t total = 0;
  while (n >= (kHalves ? kHalf : kW)) {
    const size_t fold = std::min(n / kW, kBlocksPerFold);
    n -= fold * kW;
    LaneWords<V> a0, a1;
    size_t blocks = fold;
    for (; blocks >= 4; blocks -= 4) {
      a0.template add_block<Copy>(p, dst, 0);
      a1.template add_block<Copy>(p, dst, kW);
      a0.template add_block<Copy>(p, dst, 2 * kW);
      a1.template add_block<Copy>(p, dst, 3 * kW);
      p += 4 * kW;
      if constexpr (Copy) dst += 4 * kW;
    }
    for (; blocks > 0; --blocks) {
      a0.template add_block<Copy>(p, dst, 0);
      p += kW;
      if constexpr (Copy) dst += kW;
    }
    // The half counts as a block: after a full fold it waits for the next.
    if constexpr (kHalves) {
      if (n >= kHalf && n < kW && fold < kBlocksPerFold) {
        a0.template add_half<Copy>(p, dst);
        p += kHalf;
        if constexpr (Copy) dst += kHalf;
        n -= kHalf;
      }
    }
    // Each lane holds a plain sum of 16-bit words, below 2^32 (at most 2^15
    // blocks of two words each): their total is congruent to the data's
    // one's-complement sum modulo 0xffff.
    V both = {};
    a0.add_to(both);
    a1.add_to(both);
    uint64_t s = 0;
    for (size_t i = 0; i < kW / 4; ++i) s += both[i];
    total = add_carry(total, s);
  }
  if constexpr (Copy) {
    if (n > 0) std::memcpy(dst, p, n);
  }
  return add_carry(total, native_sum_tail(p, n));
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
