// splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): one step of a seeded, reproducible stream. The
// engine's draws (transmit hashes, Fast Open keys, BBR's phase, PLB's pause)
// and the neighbour table's use it, so runs repeat exactly from a seed.
#pragma once

#include <cstdint>

namespace weir {

inline uint64_t splitmix64(uint64_t& state) {
  state += 0x9e3779b97f4a7c15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace weir
