// The link layer's cost per frame, next to memcpy of one 1460-byte payload
// measured in the same run (bench_support.h), on the path weir's AF_PACKET
// copy transmit takes (link/packet_ring.h): EtherLink picks the next hop and
// its MAC and writes the Ethernet header (link/ether_link.h), and a
// GsoCoalescer (link/vnet.h) joins a flow's consecutive segments into one
// super-packet in room its output lends. No syscalls: the output only
// counts, so the figures are user-space work per frame.
//
// Counters: frames_per_s, ns_per_frame, over_memcpy (the frame's cost in
// memcpys of a 1460-byte payload) and allocs_per_frame (expected 0).
#include "bench_support.h"

#include <ctime>
#include <vector>

#include "link/ether_link.h"
#include "link/vnet.h"
#include "wire/packet.h"

namespace {

using weir::IpAddr;
using weir::Seq32;
using weir::Time;
using weir::XmitResult;
using namespace weir::link;

constexpr size_t kMss = 1448;  // 1500-byte packets with timestamps
constexpr size_t kRun = 16;    // segments per burst (PSH on the last, as weir sends)

// A 1500-byte TCP segment of one flow at `seq`.
std::vector<uint8_t> segment(bool v6, uint32_t seq, bool psh) {
  weir::wire::IpInfo ip;
  ip.version = v6 ? 6 : 4;
  ip.src = *IpAddr::parse(v6 ? "2001:db8::1" : "10.0.0.1");
  ip.dst = *IpAddr::parse(v6 ? "2001:db8::2" : "10.0.0.2");
  weir::wire::TcpHeader h;
  h.src_port = 80;
  h.dst_port = 40000;
  h.seq = Seq32(seq);
  h.ack = Seq32(1);
  h.flags = weir::wire::tcp_flag::ACK | (psh ? weir::wire::tcp_flag::PSH : 0);
  h.window = 1000;
  std::vector<uint8_t> payload(v6 ? kMss - 20 : kMss, 0x5a);
  return weir::wire::build_tcp_packet(ip, h, payload);
}

// One burst of kRun consecutive segments, PSH on the last.
std::vector<std::vector<uint8_t>> burst(bool v6) {
  std::vector<std::vector<uint8_t>> out;
  uint32_t seq = 1000;
  for (size_t i = 0; i < kRun; ++i) {
    out.push_back(segment(v6, seq, i + 1 == kRun));
    seq += static_cast<uint32_t>(out.back().size() - (v6 ? 60 : 40));
  }
  return out;
}

// Lends one buffer per run and counts what it is handed.
struct CountingOutput final : GsoCoalescer::Output {
  std::vector<uint8_t> room = std::vector<uint8_t>(14 + GsoCoalescer::kMax);
  uint64_t runs = 0, passed = 0;
  uint8_t* open(size_t) override { return room.data(); }
  void close(const VnetHdr&, size_t len) override {
    benchmark::DoNotOptimize(len);
    ++runs;
  }
  XmitResult pass(std::span<const uint8_t>, std::span<const uint8_t> pkt) override {
    benchmark::DoNotOptimize(pkt.data());
    ++passed;
    return XmitResult::kSent;
  }
};

// EtherLink's device: hands each frame to the coalescer, as PacketRing does.
struct GsoSink final : FrameSink {
  CountingOutput out;
  GsoCoalescer gso{out, 14, 65535 - 14};
  using FrameSink::send_frame;
  XmitResult send_frame(std::span<const uint8_t> head, std::span<const uint8_t> rest) override {
    return gso.push(head, rest);
  }
};

// This thread's CPU time in ns: other processes on a shared machine do not
// count against the figure.
double cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// memcpy of a 1460-byte payload in ns, timed here so the ratio is of one run.
double memcpy_ns() {
  std::vector<uint8_t> src(1460, 0x5a), dst(1460);
  constexpr int kReps = 1 << 20;
  const double t0 = cpu_ns();
  for (int i = 0; i < kReps; ++i) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  return (cpu_ns() - t0) / kReps;
}

void report(benchmark::State& state, uint64_t frames, uint64_t allocs, double ns) {
  state.SetItemsProcessed(static_cast<int64_t>(frames));
  state.counters["frames_per_s"] = benchmark::Counter(static_cast<double>(frames), benchmark::Counter::kIsRate);
  state.counters["ns_per_frame"] = ns;
  state.counters["over_memcpy"] = ns / memcpy_ns();
  state.counters["allocs_per_frame"] = static_cast<double>(allocs) / static_cast<double>(frames);
}

// EtherLink::try_transmit and the coalescer: one burst per iteration.
void BM_EtherLinkGso(benchmark::State& state) {
  const bool v6 = state.range(0) == 6;
  EtherLinkConfig cfg;
  cfg.mac = MacAddr{{2, 0, 0, 0, 0, 1}};
  cfg.addrs = {{*IpAddr::parse("10.0.0.1"), 24}, {*IpAddr::parse("2001:db8::1"), 64}};
  cfg.dad_transmits = 0;  // addresses usable at once
  cfg.mld = false;
  GsoSink sink;
  EtherLink link(cfg, sink);
  link.advance(Time::from_ns(0));
  link.add_static(*IpAddr::parse(v6 ? "2001:db8::2" : "10.0.0.2"), MacAddr{{2, 0, 0, 0, 0, 2}});
  const auto pkts = burst(v6);
  const uint64_t allocs0 = weir::bench::g_allocs.load();
  const double t0 = cpu_ns();
  for (auto _ : state) {
    for (const auto& p : pkts) benchmark::DoNotOptimize(link.try_transmit(p));
    sink.gso.flush();
  }
  const double ns = cpu_ns() - t0;
  const auto iters = static_cast<uint64_t>(state.iterations());
  const uint64_t frames = iters * kRun;
  if (sink.out.runs != iters || sink.out.passed != 0) state.SkipWithError("runs did not form");
  report(state, frames, weir::bench::g_allocs.load() - allocs0, ns / static_cast<double>(frames));
}
BENCHMARK(BM_EtherLinkGso)->Arg(4)->Arg(6);

// The coalescer alone on Ethernet frames (the link's share is the difference).
void BM_GsoCoalescer(benchmark::State& state) {
  CountingOutput out;
  GsoCoalescer gso(out, 14, 65535 - 14);
  std::vector<std::vector<uint8_t>> frames;
  for (const auto& p : burst(false)) {
    std::vector<uint8_t> f(14, 0);
    f[12] = 0x08;
    f.insert(f.end(), p.begin(), p.end());
    frames.push_back(std::move(f));
  }
  const uint64_t allocs0 = weir::bench::g_allocs.load();
  const double t0 = cpu_ns();
  for (auto _ : state) {
    for (const auto& f : frames) benchmark::DoNotOptimize(gso.push(f));
    gso.flush();
  }
  const double ns = cpu_ns() - t0;
  const auto iters = static_cast<uint64_t>(state.iterations());
  const uint64_t n = iters * kRun;
  if (out.runs != iters) state.SkipWithError("runs did not form");
  report(state, n, weir::bench::g_allocs.load() - allocs0, ns / static_cast<double>(n));
}
BENCHMARK(BM_GsoCoalescer);

}  // namespace

BENCHMARK_MAIN();
