// Internet checksum. RFC 1071 §2(B): the one's-complement sum is independent
// of byte order, so we add native-order 64-bit words (with end-around carry)
// and swap the folded 16-bit result once at the end. Partial sums crossing the
// API are always in "big-endian 16-bit word" arithmetic, so they compose.
#include "wire/checksum.h"

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

// Sum of `n` bytes as native-order words. Four independent accumulators let
// the CPU overlap the add/carry chains.
uint64_t native_sum(const uint8_t* p, size_t n) {
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  while (n >= 32) {
    a0 = add_carry(a0, load64(p));
    a1 = add_carry(a1, load64(p + 8));
    a2 = add_carry(a2, load64(p + 16));
    a3 = add_carry(a3, load64(p + 24));
    p += 32;
    n -= 32;
  }
  while (n >= 8) {
    a0 = add_carry(a0, load64(p));
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    // Tail: zero-padded in memory order, which is exactly RFC 1071's rule of
    // padding an odd final byte with a zero low-order byte.
    uint8_t tail[8] = {};
    std::memcpy(tail, p, n);
    a1 = add_carry(a1, load64(tail));
  }
  return add_carry(add_carry(a0, a1), add_carry(a2, a3));
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

}  // namespace

uint32_t csum_partial(std::span<const uint8_t> data, uint32_t sum) {
  uint16_t folded = to_network_word_order(fold64(native_sum(data.data(), data.size())));
  uint64_t s = uint64_t{sum} + folded;
  return static_cast<uint32_t>((s & 0xffffffffu) + (s >> 32));
}

uint16_t csum_fold(uint32_t sum) {
  sum = (sum & 0xffffu) + (sum >> 16);
  sum = (sum & 0xffffu) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
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
