#include "util/siphash.h"

namespace weir {
namespace {

constexpr uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

uint64_t load_le64(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

struct State {
  uint64_t v0, v1, v2, v3;

  // One SipRound (paper §2, figure 2).
  void round() {
    v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
    v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
  }
  // Compression: c = 2 rounds per message word.
  void compress(uint64_t m) {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

}  // namespace

uint64_t siphash24(const SipKey& key, std::span<const uint8_t> data) {
  // Initialisation constants: "somepseudorandomlygeneratedbytes".
  State s{key.k0 ^ 0x736f6d6570736575ull, key.k1 ^ 0x646f72616e646f6dull,
          key.k0 ^ 0x6c7967656e657261ull, key.k1 ^ 0x7465646279746573ull};
  const size_t n = data.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) s.compress(load_le64(data.data() + i, 8));
  // The last word holds the remaining bytes and, in its top byte, the length mod 256.
  s.compress(load_le64(data.data() + i, n - i) | (uint64_t{n & 0xff} << 56));
  // Finalisation: d = 4 rounds.
  s.v2 ^= 0xff;
  for (int r = 0; r < 4; ++r) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace weir
