#include "driver/sha256.h"

#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <fmt/format.h>

namespace weir::driver {

namespace {

// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube
// roots of the first 64 primes.
constexpr uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

#if defined(__x86_64__)
// CPUID directly: clang 14's __builtin_cpu_supports has no "sha" feature.
// Leaf 1 ECX bit 19: SSE4.1; leaf 7 sub-leaf 0 EBX bit 29: SHA extensions.
bool cpu_has_sha() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1)) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b & bit_SHA) != 0;
}

// FIPS 180-4 §6.2.2 with the SHA-NI instructions: the state lives in two
// registers as (A,B,E,F) and (C,D,G,H), the layout SHA256RNDS2 works on; each
// SHA256RNDS2 does two rounds, SHA256MSG1/MSG2 extend the schedule four words
// at a time (W[t-16] + s0(W[t-15]), then + W[t-7] and + s1(W[t-2])).
__attribute__((target("sha,sse4.1"))) void blocks_shani(uint32_t* h, const uint8_t* p, size_t n) {
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h)), 0xB1);  // C D A B
  __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 4)), 0x1B);
  __m128i abef = _mm_alignr_epi8(dcba, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, dcba, 0xF0);
  for (; n > 0; --n, p += 64) {
    const __m128i abef0 = abef, cdgh0 = cdgh;
    __m128i w[4];
    for (int j = 0; j < 16; ++j) {
      if (j < 4) {
        w[j] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * j)), bswap);
      } else {
        __m128i t = _mm_sha256msg1_epu32(w[(j - 4) & 3], w[(j - 3) & 3]);
        t = _mm_add_epi32(t, _mm_alignr_epi8(w[(j - 1) & 3], w[(j - 2) & 3], 4));
        w[j & 3] = _mm_sha256msg2_epu32(t, w[(j - 1) & 3]);
      }
      const __m128i wk = _mm_add_epi32(w[j & 3], _mm_loadu_si128(reinterpret_cast<const __m128i*>(kK + 4 * j)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h + 4), _mm_alignr_epi8(dchg, feba, 8));
}
#else
bool cpu_has_sha() { return false; }
void blocks_shani(uint32_t*, const uint8_t*, size_t) {}
#endif

}  // namespace

// FIPS 180-4 §5.3.3: the initial hash value.
Sha256::Sha256() : Sha256(true) {}

Sha256::Sha256(bool allow_simd)
    : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19},
      simd_(allow_simd && cpu_has_sha()) {}

void Sha256::blocks(const uint8_t* p, size_t n) {
  if (simd_) return blocks_shani(h_.data(), p, n);
  for (; n > 0; --n, p += 64) block(p);
}

// FIPS 180-4 §6.2.2: one 512-bit block.
void Sha256::block(const uint8_t* p) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = uint32_t(p[4 * t]) << 24 | uint32_t(p[4 * t + 1]) << 16 | uint32_t(p[4 * t + 2]) << 8 | p[4 * t + 3];
  for (int t = 16; t < 64; ++t) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int t = 0; t < 64; ++t) {
    uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[t] + w[t];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  h_[0] += a; h_[1] += b; h_[2] += c; h_[3] += d; h_[4] += e; h_[5] += f; h_[6] += g; h_[7] += h;
}

void Sha256::update(std::span<const uint8_t> data) {
  total_ += data.size();
  size_t i = 0;
  if (used_) {
    size_t take = std::min(data.size(), 64 - used_);
    std::memcpy(buf_.data() + used_, data.data(), take);
    used_ += take;
    i = take;
    if (used_ < 64) return;
    blocks(buf_.data(), 1);
    used_ = 0;
  }
  const size_t whole = (data.size() - i) / 64;
  blocks(data.data() + i, whole);
  i += whole * 64;
  std::memcpy(buf_.data(), data.data() + i, data.size() - i);
  used_ = data.size() - i;
}

std::array<uint8_t, 32> Sha256::finish() {
  // FIPS 180-4 §5.1.1: a 1 bit, zeros to 56 mod 64 bytes, the bit length.
  uint64_t bits = total_ * 8;
  uint8_t pad[72] = {0x80};
  size_t padlen = (used_ < 56 ? 56 - used_ : 120 - used_);
  for (int i = 0; i < 8; ++i) pad[padlen + i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  update({pad, padlen + 8});
  std::array<uint8_t, 32> out;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<uint8_t>(h_[i] >> (24 - 8 * j));
  return out;
}

std::string Sha256::hex() {
  std::string s;
  for (uint8_t b : finish()) s += fmt::format("{:02x}", b);
  return s;
}

}  // namespace weir::driver
