// Simulator speed: raw event-loop and link throughput, and whole scenarios
// with the real engine: `hystart-bdp` for 30 s of simulated time and a
// 100-flow dumbbell at 1 Gbit/s. Reported as simulated packets per wall
// second (packets offered to links) and simulated/wall time.
#include <benchmark/benchmark.h>

#include <ctime>
#include <string>

#include "sim/event_loop.h"
#include "sim/link.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace weir::sim {
namespace {

std::string scenario_path(const char* name) {
  std::string here = __FILE__;
  return here.substr(0, here.rfind("/bench/")) + "/scenarios/" + name;
}

struct Chain final : EventTarget {
  EventLoop* loop;
  void on_event(Time, uint64_t) override { loop->after(Duration::ns(100), this); }
};

void BM_EventLoop(benchmark::State& state) {
  EventLoop loop;
  std::vector<Chain> chains(static_cast<size_t>(state.range(0)));
  for (auto& c : chains) {
    c.loop = &loop;
    loop.at(Time::zero(), &c);
  }
  for (auto _ : state) loop.step();
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventLoop)->Arg(16)->Arg(4096);

struct Sink final : Node {
  PacketPool* pool;
  void receive(Time, Packet* p) override { pool->put(p); }
};

void BM_LinkPacket(benchmark::State& state) {
  EventLoop loop;
  PacketPool pool;
  Sink sink;
  sink.pool = &pool;
  LinkConfig cfg;
  cfg.rate_bps = 1'000'000'000;
  cfg.delay = Duration::ms(10);
  cfg.queue_packets = 100000;
  Link link("bench", cfg, loop, pool, Rng(1));
  link.connect(&sink);
  for (auto _ : state) {
    Packet* p = pool.get();
    p->bytes.resize(1500);
    link.send(loop.now(), p);
    loop.run_until(loop.now() + Duration::us(12));
  }
  state.counters["packets/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LinkPacket);

void run_scenario(benchmark::State& state, const char* file, const std::vector<std::string>& sets) {
  auto sc = load_scenario(scenario_path(file), sets);
  if (!sc) {
    state.SkipWithError(sc.error().c_str());
    return;
  }
  double packets = 0, wall = 0, sim = 0, events = 0, cpu = 0;
  for (auto _ : state) {
    std::clock_t c0 = std::clock();
    RunResult r = run_once(*sc, 1);
    cpu += static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    packets += static_cast<double>(r.packets);
    wall += r.wall_s;
    sim += r.simulated.secs();
    events += static_cast<double>(r.events);
  }
  state.counters["sim_packets_per_wall_s"] = packets / wall;
  state.counters["sim_over_wall"] = sim / wall;
  // On a shared machine wall time overstates the cost; CPU time does not.
  state.counters["sim_packets_per_cpu_s"] = packets / cpu;
  state.counters["sim_over_cpu"] = sim / cpu;
  state.counters["events_per_wall_s"] = events / wall;
  state.counters["packets_per_run"] = packets / static_cast<double>(state.iterations());
}

void BM_HystartBdp30s(benchmark::State& state) {
  run_scenario(state, "hystart-bdp.toml", {"duration=30s", "flow.1.duration=30s", "trace=false"});
}
BENCHMARK(BM_HystartBdp30s)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Dumbbell100Flows1G(benchmark::State& state) {
  run_scenario(state, "dumbbell-fairness.toml",
               {"topology.senders=100", "topology.access_delays=[]", "topology.access.rate=10Gbit",
                "link.fwd.rate=1Gbit", "link.rev.rate=1Gbit", "link.fwd.queue=1700", "duration=3s",
                "trace=false", "flow.1.count=100", "flow.1.duration=3s", "flow.2.duration=0.001s",
                "flow.3.duration=0.001s", "flow.4.duration=0.001s"});
}
BENCHMARK(BM_Dumbbell100Flows1G)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace weir::sim

BENCHMARK_MAIN();
