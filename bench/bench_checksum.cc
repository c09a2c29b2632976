// Internet checksum throughput next to memcpy's, over a 1500-byte packet and
// a 64 KiB buffer, in the same run. Counters: checksum_GBps, memcpy_GBps and
// checksum_over_memcpy (the ratio; the checksum reads each byte once, memcpy
// reads and writes, so a ratio near or above 1 means the sum is not the
// bottleneck).
#include <benchmark/benchmark.h>

#include <cstring>
#include <ctime>
#include <random>
#include <vector>

#include "wire/checksum.h"

namespace {

std::vector<uint8_t> random_bytes(size_t n) {
  std::vector<uint8_t> v(n);
  std::mt19937 rng(1071);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Bytes per CPU-second of `fn` over `reps` calls. Thread CPU time, not wall
// time, so other processes on a shared machine do not skew the ratio.
template <typename Fn>
double bytes_per_second(size_t bytes, int reps, Fn&& fn) {
  double t0 = thread_cpu_seconds();
  for (int i = 0; i < reps; ++i) fn();
  double dt = thread_cpu_seconds() - t0;
  return static_cast<double>(bytes) * reps / dt;
}

void BM_Checksum(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  auto src = random_bytes(n);
  std::vector<uint8_t> dst(n);
  for (auto _ : state) {
    uint32_t s = weir::wire::csum_partial(src);
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n));
  // A memcpy reference measured in the same process and moment, so the
  // ratio is meaningful on a noisy shared machine.
  const int reps = static_cast<int>(std::max<size_t>(1, (size_t{64} << 20) / n));
  double csum_bps = bytes_per_second(n, reps, [&] {
    uint32_t s = weir::wire::csum_partial(src);
    benchmark::DoNotOptimize(s);
  });
  double copy_bps = bytes_per_second(n, reps, [&] {
    std::memcpy(dst.data(), src.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  });
  state.counters["checksum_GBps"] = csum_bps / 1e9;
  state.counters["memcpy_GBps"] = copy_bps / 1e9;
  state.counters["checksum_over_memcpy"] = csum_bps / copy_bps;
}
BENCHMARK(BM_Checksum)->Arg(1500)->Arg(64 * 1024);

void BM_Memcpy(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  auto src = random_bytes(n);
  std::vector<uint8_t> dst(n);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_Memcpy)->Arg(1500)->Arg(64 * 1024);

}  // namespace

BENCHMARK_MAIN();
