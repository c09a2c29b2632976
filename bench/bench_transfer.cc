// Bulk goodput between two in-process stacks on one core (MSS 1460 at
// MTU 1500, checksums computed on send and verified on receive), as Gbit/s
// and as a fraction of memcpy bandwidth measured in the same run; connection
// set-up and tear-down per second; heap bytes per idle established connection.
#include <benchmark/benchmark.h>

#include <malloc.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "link/memory_pipe.h"
#include "weir/stack.h"

namespace weir {
namespace {

struct Net {
  link::MemoryPipe pipe;
  Stack a;
  Stack b;
  Time now = Time::zero();
  explicit Net(Duration delay = Duration::us(20))
      : pipe(link::MemoryPipe::Config{delay, 1500, 1 << 16}), a(StackConfig{}, pipe.a()), b(StackConfig{}, pipe.b()) {
    a.add_address(IpAddr::v4(10, 0, 0, 1));
    b.add_address(IpAddr::v4(10, 0, 0, 2));
  }
  // One step of the driver loop; returns false when nothing is left to do.
  bool step() {
    pipe.set_now(now);
    if (a.next_deadline() <= now) a.advance(now);
    if (b.next_deadline() <= now) b.advance(now);
    pipe.deliver_due(now, [&](link::Side to, std::span<const uint8_t> bytes) {
      (to == link::Side::A ? a : b).input(now, bytes);
    });
    Time next = min(pipe.next_delivery(), min(a.next_deadline(), b.next_deadline()));
    if (next.is_never()) return false;
    now = max(next, now);
    return true;
  }
  std::pair<SocketId, SocketId> connect(SocketId listener, uint16_t port) {
    SocketId c = *a.socket();
    a.connect(now, c, Endpoint{IpAddr::v4(10, 0, 0, 2), port});
    for (int i = 0; i < 1000; ++i) {
      const bool more = step();
      auto s = b.accept(now, listener, nullptr);
      if (s) return {c, *s};
      if (!more) break;
    }
    return {c, kNoSocket};
  }
};

double memcpy_gbps() {
  std::vector<uint8_t> src(64 << 20, 1), dst(64 << 20);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 4.0 * static_cast<double>(src.size()) * 8 / s / 1e9;
}

void BM_BulkTransfer(benchmark::State& state) {
  const double memcpy_rate = memcpy_gbps();
  Net n;
  SocketId l = *n.b.socket();
  n.b.bind(l, Endpoint{IpAddr::v4(10, 0, 0, 2), 5001});
  n.b.listen(n.now, l, 8);
  auto [c, s] = n.connect(l, 5001);
  if (s == kNoSocket) {
    state.SkipWithError("connect failed");
    return;
  }
  const uint64_t per_iter = static_cast<uint64_t>(state.range(0)) << 20;
  std::vector<uint8_t> chunk(256 * 1024, 0x42), sink(256 * 1024);
  uint64_t total = 0;
  for (auto _ : state) {
    uint64_t sent = 0, got = 0;
    while (got < per_iter) {
      while (sent < per_iter) {
        auto w = n.a.send(n.now, c, std::span(chunk.data(), std::min<uint64_t>(chunk.size(), per_iter - sent)));
        if (!w) break;
        sent += *w;
      }
      for (;;) {
        auto r = n.b.recv(n.now, s, sink);
        if (!r || *r == 0) break;
        got += *r;
      }
      if (got < per_iter && !n.step()) break;
    }
    total += got;
  }
  state.SetBytesProcessed(static_cast<int64_t>(total));
  state.counters["Gbit/s"] = benchmark::Counter(static_cast<double>(total) * 8 / 1e9, benchmark::Counter::kIsRate);
  state.counters["memcpy_Gbit/s"] = memcpy_rate;
  state.counters["ratio_to_memcpy"] =
      benchmark::Counter(static_cast<double>(total) * 8 / 1e9 / memcpy_rate, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BulkTransfer)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ConnectAndClose(benchmark::State& state) {
  Net n;
  SocketId l = *n.b.socket();
  n.b.bind(l, Endpoint{IpAddr::v4(10, 0, 0, 2), 80});
  n.b.listen(n.now, l, 4096);
  int64_t done = 0;
  for (auto _ : state) {
    auto [c, s] = n.connect(l, 80);
    if (s == kNoSocket) {
      state.SkipWithError("connect failed");
      return;
    }
    n.a.close(n.now, c);
    n.b.close(n.now, s);
    for (int i = 0; i < 8 && n.step(); ++i) {
    }
    ++done;
    // Let TIME-WAIT entries expire now and then so the tables stay small.
    if (done % 4096 == 0) {
      n.now = n.now + Duration::s(61);
      n.a.advance(n.now);
      n.b.advance(n.now);
    }
  }
  state.counters["connections/s"] = benchmark::Counter(static_cast<double>(done), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ConnectAndClose)->UseRealTime();

void BM_IdleConnectionMemory(benchmark::State& state) {
  const int conns = static_cast<int>(state.range(0));
  for (auto _ : state) {
    Net n(Duration::zero());
    SocketId l = *n.b.socket();
    n.b.bind(l, Endpoint{IpAddr::v4(10, 0, 0, 2), 80});
    n.b.listen(n.now, l, 65535);
    // Warm the allocator with one connection, then measure the rest.
    n.connect(l, 80);
    const size_t before = mallinfo2().uordblks;
    for (int i = 0; i < conns; ++i) n.connect(l, 80);
    while (n.step() && n.now < Time::zero() + Duration::s(1)) {
    }
    const size_t after = mallinfo2().uordblks;
    state.counters["bytes_per_idle_conn_end"] =
        static_cast<double>(after - before) / (2.0 * conns);  // both ends are connections
  }
}
BENCHMARK(BM_IdleConnectionMemory)->Arg(1000)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
