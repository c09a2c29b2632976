// Bulk goodput between two in-process stacks on one core (MSS 1460 at
// MTU 1500, checksums computed on send and verified on receive), as Gbit/s
// and segments/s and as a fraction of memcpy bandwidth measured in the same
// run; connection set-up and tear-down per second; heap bytes per idle
// established connection. Results and method: docs/performance.md
// ("In-process bulk transfer").
#include <benchmark/benchmark.h>

#include <malloc.h>
#include <sys/socket.h>
#include <time.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "link/memory_pipe.h"
#include "weir/stack.h"

namespace weir {
namespace {

// The two ends' addresses: 10.0.0.1 and .2, or fd00::1 and ::2.
IpAddr end_addr(bool v6, uint8_t host) {
  return v6 ? IpAddr::v6({0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, host}) : IpAddr::v4(10, 0, 0, host);
}

struct Net {
  link::MemoryPipe pipe;
  Stack a;
  Stack b;
  Time now = Time::zero();
  explicit Net(Duration delay = Duration::us(20), uint32_t mtu = 1500, bool v6 = false)
      : pipe(link::MemoryPipe::Config{delay, mtu, 1 << 16}), a(StackConfig{}, pipe.a()), b(StackConfig{}, pipe.b()) {
    a.add_address(end_addr(v6, 1));
    b.add_address(end_addr(v6, 2));
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
  std::pair<SocketId, SocketId> connect(SocketId listener, uint16_t port, bool v6 = false) {
    SocketId c = *a.socket(v6);
    a.connect(now, c, Endpoint{end_addr(v6, 2), port});
    for (int i = 0; i < 1000; ++i) {
      const bool more = step();
      auto s = b.accept(now, listener, nullptr);
      if (s) return {c, *s};
      if (!more) break;
    }
    return {c, kNoSocket};
  }
};

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// memcpy bandwidth in thread CPU time (the machine may be shared, so wall
// time would measure the neighbours), measured once per process the way the
// lwIP anchor (../shared/anchors/lwipbench.c) does: "hot" copies one 64 KiB
// buffer to another 16,384 times (1 GiB, cache-resident like the stacks'
// working set); "stream" copies 256 MiB to a second 256 MiB in 64 KiB calls.
struct MemcpyRates {
  double hot_gbps = 0;
  double stream_gbps = 0;
};

const MemcpyRates& memcpy_rates() {
  static const MemcpyRates rates = [] {
    constexpr size_t kChunk = 64 << 10;
    MemcpyRates r;
    std::vector<uint8_t> a(kChunk, 1), b(kChunk, 2);
    double t0 = thread_cpu_seconds();
    for (size_t done = 0; done < (size_t{1} << 30); done += kChunk) {
      std::memcpy(b.data(), a.data(), kChunk);
      benchmark::DoNotOptimize(b.data());
      benchmark::ClobberMemory();
    }
    r.hot_gbps = 8.0 * (1 << 30) / (thread_cpu_seconds() - t0) / 1e9;
    constexpr size_t kStream = size_t{256} << 20;
    std::vector<uint8_t> sa(kStream, 1), sb(kStream, 2);  // faulted in before timing
    t0 = thread_cpu_seconds();
    for (size_t off = 0; off < kStream; off += kChunk) {
      std::memcpy(sb.data() + off, sa.data() + off, kChunk);
      benchmark::DoNotOptimize(sb.data());
      benchmark::ClobberMemory();
    }
    r.stream_gbps = 8.0 * kStream / (thread_cpu_seconds() - t0) / 1e9;
    return r;
  }();
  return rates;
}

// The measured part: `bytes` from c (stack A) to s (stack B) through 64 KiB
// application buffers (send as much as the socket takes, read everything
// readable, then one driver step). Kept out of line so that
// `valgrind --tool=callgrind --toggle-collect='*transfer_bytes*'` counts the
// instructions of exactly this loop.
[[gnu::noinline]] uint64_t transfer_bytes(Net& n, SocketId c, SocketId s, uint64_t bytes,
                                          std::span<const uint8_t> chunk, std::span<uint8_t> sink) {
  uint64_t sent = 0, got = 0;
  while (got < bytes) {
    while (sent < bytes) {
      auto w = n.a.send(n.now, c, chunk.first(std::min<uint64_t>(chunk.size(), bytes - sent)));
      if (!w || *w == 0) break;
      sent += *w;
    }
    for (;;) {
      auto r = n.b.recv(n.now, s, sink);
      if (!r || *r == 0) break;
      got += *r;
    }
    if (got < bytes && !n.step()) break;
  }
  return got;
}

// Rates are per second of this thread's CPU time (Google Benchmark's default
// clock), so they mean "on one core" even on a loaded machine; Gbit/s_wall
// is the same transfer over wall-clock time. MSS 1460 at MTU 1500 (1448
// bytes of payload per segment with timestamps); every segment's IPv4 and
// TCP checksums are computed by the sender and verified by the receiver.
// BM_JumboTransfer: the same at MTU 65,535, the largest IPv4 datagram, so
// MSS 65,495 as on Linux's loopback (MTU 65,536 gives the same segments
// there), for the comparison with Linux's loopback (iperf3).
// BM_BulkTransfer6: BM_BulkTransfer over IPv6 (MSS 1440, 1,428 payload
// bytes per segment with timestamps; the TCP checksum only).
void bulk(benchmark::State& state, uint32_t mtu, bool v6 = false) {
  const MemcpyRates& mc = memcpy_rates();
  Net n(Duration::us(20), mtu, v6);
  SocketId l = *n.b.socket(v6);
  n.b.bind(l, Endpoint{end_addr(v6, 2), 5001});
  n.b.listen(n.now, l, 8);
  auto [c, s] = n.connect(l, 5001, v6);
  if (s == kNoSocket) {
    state.SkipWithError("connect failed");
    return;
  }
  const uint64_t per_iter = static_cast<uint64_t>(state.range(0)) << 20;
  std::vector<uint8_t> chunk(64 * 1024), sink(64 * 1024);
  for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<uint8_t>((i * 2654435761u) >> 24);
  uint64_t total = 0;
  const uint64_t segs0 = n.pipe.stats(link::Side::A).delivered;
  const auto wall0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    const uint64_t got = transfer_bytes(n, c, s, per_iter, chunk, sink);
    if (got < per_iter) {
      state.SkipWithError("transfer stalled");
      return;
    }
    total += got;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const auto segs = static_cast<double>(n.pipe.stats(link::Side::A).delivered - segs0);
  const double gbit = static_cast<double>(total) * 8 / 1e9;
  state.SetBytesProcessed(static_cast<int64_t>(total));
  state.counters["Gbit/s"] = benchmark::Counter(gbit, benchmark::Counter::kIsRate);
  state.counters["Gbit/s_wall"] = gbit / wall;
  state.counters["segments/s"] = benchmark::Counter(segs, benchmark::Counter::kIsRate);
  state.counters["segments"] = segs;  // A->B packets: data segments (plus the odd ACK)
  state.counters["memcpy_hot_Gbit/s"] = mc.hot_gbps;
  state.counters["memcpy_stream_Gbit/s"] = mc.stream_gbps;
  state.counters["ratio_to_memcpy_hot"] = benchmark::Counter(gbit / mc.hot_gbps, benchmark::Counter::kIsRate);
}
void BM_BulkTransfer(benchmark::State& state) { bulk(state, 1500); }
void BM_JumboTransfer(benchmark::State& state) { bulk(state, 65535); }
void BM_BulkTransfer6(benchmark::State& state) { bulk(state, 1500, true); }
BENCHMARK(BM_BulkTransfer)->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BulkTransfer6)->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JumboTransfer)->Arg(1024)->Unit(benchmark::kMillisecond);

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
BENCHMARK(BM_ConnectAndClose);

// bind() to port 0 with N ports already held. The bind table is indexed by
// port, so each candidate costs a look at that port's holders: the time
// per call must not grow with N (it grew linearly while every candidate
// walked every socket).
void BM_BindAnyAmong(benchmark::State& state) {
  Net n;
  const IpAddr a = IpAddr::v4(10, 0, 0, 1);
  for (int64_t i = 0; i < state.range(0); ++i) {
    SocketId s = *n.a.socket();
    if (n.a.bind(s, Endpoint{a, 0}) != Errc::kOk) {
      state.SkipWithError("set-up bind failed");
      return;
    }
  }
  for (auto _ : state) {
    SocketId s = *n.a.socket();
    if (n.a.bind(s, Endpoint{a, 0}) != Errc::kOk) {
      state.SkipWithError("bind failed");
      return;
    }
    n.a.close(n.now, s);
  }
}
BENCHMARK(BM_BindAnyAmong)->Arg(16)->Arg(1024)->Arg(8192);

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
