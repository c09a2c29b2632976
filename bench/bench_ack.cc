// Scoreboard ACK processing cost: nanoseconds and heap allocations per ACK
// for a plain cumulative ACK, a SACK block that newly covers a packet at the
// end of the queue (bulk recovery with one hole), and a repeated (duplicate)
// SACK block, with 128, 4096 and 65536 packets in flight.
//
// Each iteration is one ACK plus, where the flight must stay constant, one
// new packet sent (Scoreboard::on_send), as a sender would. gVisor reported
// 0.94 us per ACK for one new SACK block near the end of a 128-segment queue
// (seed 002 review thread).
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "bench_support.h"
#include "tcp/scoreboard.h"


namespace weir::tcp {
namespace {

constexpr uint32_t kMss = 1448;
// Start close to the wrap so that sequence arithmetic wraps during the runs.
constexpr uint32_t kIsn = 0xFFF00000u;

struct Flight {
  explicit Flight(uint32_t n) : sb(Seq32(kIsn)) {
    for (uint32_t i = 0; i < n; ++i) send();
  }
  void send() {
    const Seq32 b = sb.high_data();
    now += Duration::us(1);
    (void)sb.on_send({b, b + kMss}, kMss, now);
  }
  Scoreboard sb;
  Time now = Time::from_ns(1'000'000);
};

void report(benchmark::State& state, uint64_t allocs) {
  state.counters["allocs_per_ack"] =
      benchmark::Counter(static_cast<double>(allocs) / static_cast<double>(state.iterations()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// Every ACK acknowledges the oldest packet; one new packet keeps the flight.
void BM_CumulativeAck(benchmark::State& state) {
  Flight f(static_cast<uint32_t>(state.range(0)));
  const uint64_t a0 = bench::g_allocs.load();
  for (auto _ : state) {
    AckResult r = f.sb.on_ack(f.sb.high_ack() + kMss, {}, f.now);
    benchmark::DoNotOptimize(r);
    f.send();
  }
  report(state, bench::g_allocs.load() - a0);
}

// The head is lost; every ACK carries one SACK block from the packet after
// the hole to HighData, newly covering the packet just sent. Every n ACKs
// the cumulative ACK moves up by n packets (all SACKed) to keep the queue
// between n and 2n packets: that cost is included, amortised.
void BM_NewSackBlockAtEnd(benchmark::State& state) {
  const uint32_t n = static_cast<uint32_t>(state.range(0));
  Flight f(n);
  SeqRange block{f.sb.high_ack() + kMss, f.sb.high_data()};
  (void)f.sb.on_ack(f.sb.high_ack(), std::span(&block, 1), f.now);
  uint32_t since_trim = 0;
  const uint64_t a0 = bench::g_allocs.load();
  for (auto _ : state) {
    f.send();
    block = {f.sb.high_ack() + kMss, f.sb.high_data()};
    AckResult r = f.sb.on_ack(f.sb.high_ack(), std::span(&block, 1), f.now);
    benchmark::DoNotOptimize(r);
    if (++since_trim == n) {
      since_trim = 0;
      // The hole is repaired and the next n-1 packets, SACKed, are freed;
      // the new head becomes the next hole.
      const Seq32 ack = f.sb.high_ack() + kMss * n;
      SeqRange rest{ack + kMss, f.sb.high_data()};
      (void)f.sb.on_ack(ack, std::span(&rest, 1), f.now);
    }
  }
  report(state, bench::g_allocs.load() - a0);
}

// The same SACK block again and again (nothing new): must not walk the
// packets it covers.
void BM_DuplicateSack(benchmark::State& state) {
  Flight f(static_cast<uint32_t>(state.range(0)));
  const SeqRange block{f.sb.high_ack() + kMss, f.sb.high_data()};
  (void)f.sb.on_ack(f.sb.high_ack(), std::span(&block, 1), f.now);
  const uint64_t a0 = bench::g_allocs.load();
  for (auto _ : state) {
    AckResult r = f.sb.on_ack(f.sb.high_ack(), std::span(&block, 1), f.now);
    benchmark::DoNotOptimize(r);
  }
  report(state, bench::g_allocs.load() - a0);
}

BENCHMARK(weir::bench::BM_MemcpyReference)->Name("BM_MemcpyReference");
BENCHMARK(BM_CumulativeAck)->Arg(128)->Arg(4096)->Arg(65536);
BENCHMARK(BM_NewSackBlockAtEnd)->Arg(128)->Arg(4096)->Arg(65536);
BENCHMARK(BM_DuplicateSack)->Arg(128)->Arg(4096)->Arg(65536);

}  // namespace
}  // namespace weir::tcp

BENCHMARK_MAIN();
