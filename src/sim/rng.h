// The scenario's random source. Every random choice in a run is drawn from
// one of these, seeded from the scenario seed, so the same seed gives
// byte-identical output. The distributions are written out here rather than
// taken from <random>, whose distributions differ between standard libraries.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace weir::sim {

class Rng {
 public:
  explicit Rng(uint64_t seed = 1) : g_(seed) {}
  // A child generator for one component (a link, a loss model), so adding a
  // component does not shift the draws of the others.
  Rng fork(uint64_t salt) { return Rng(g_() ^ (salt * 0x9e3779b97f4a7c15ull)); }

  uint64_t next() { return g_(); }
  // Uniform in [0, 1), 53 bits.
  double uniform() { return static_cast<double>(g_() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n), n > 0 (Lemire's nearly-divisionless method is
  // not needed at these rates; the modulo bias on 64 bits is below 2^-40).
  uint64_t below(uint64_t n) { return g_() % n; }
  bool chance(double p) { return p > 0 && (p >= 1 || uniform() < p); }
  // Standard normal by Box-Muller (one value per call, for simplicity).
  double normal() {
    double u1 = uniform();
    double u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::mt19937_64 g_;
};

}  // namespace weir::sim
