// Shared by the benchmark binaries that report allocations and quote costs in
// a same-run machine-speed unit. Include in exactly one translation unit of a
// benchmark executable: it replaces the global allocation functions.
#pragma once

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace weir::bench {
// Every operator new since the program started.
inline std::atomic<uint64_t> g_allocs{0};
}  // namespace weir::bench

// Counting replacements of the global allocation functions. Kept out of
// line so that GCC's -Wmismatched-new-delete does not see malloc/free pairs
// through inlining.
[[gnu::noinline]] void* operator new(std::size_t n) {
  weir::bench::g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace weir::bench {

// memcpy of one 1460-byte packet: the machine-speed unit per-ACK costs are
// quoted against, measured in the same run (the machines are shared and
// noisy, so absolute times are not comparable across runs).
inline void BM_MemcpyReference(benchmark::State& state) {
  std::vector<uint8_t> src(1460, 0x5a);
  std::vector<uint8_t> dst(1460);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
    ++src[0];
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace weir::bench
