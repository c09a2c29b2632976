// Whole runs through the simulator with the real engine: a two-host transfer
// arrives byte-exact, and the same seed gives byte-identical summaries.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace weir::sim {
namespace {

constexpr const char* kTwoHosts = R"(
name = "two-hosts"
duration = "20s"
[link.fwd]
rate = "20Mbit"
delay = "10ms"
queue = 100
[link.rev]
rate = "20Mbit"
delay = "10ms"
[[flow]]
bytes = "1MB"
)";

Scenario load(const char* text, std::vector<std::string> sets = {}) {
  auto sc = parse_scenario(text, "test.toml", sets);
  EXPECT_TRUE(sc.has_value()) << sc.error();
  return *sc;
}

TEST(SimTransfer, TwoHostTransferArrivesByteExact) {
  Scenario sc = load(kTwoHosts);
  RunResult r = run_once(sc, 1);
  ASSERT_EQ(r.flows.size(), 1u);
  const FlowStats& st = *r.flows[0].stats;
  EXPECT_TRUE(st.error.empty()) << st.error;
  EXPECT_TRUE(st.completed);
  EXPECT_EQ(st.bytes_read, 1'000'000u);
  EXPECT_EQ(st.payload_errors, 0u);
  EXPECT_EQ(r.flows[0].watch->bytes_beyond_wnd, 0u);
  // The transfer cannot beat the link: 1 MB at 20 Mbit/s is at least 0.4 s.
  EXPECT_GT(r.metrics.at("flow.1.completion_s"), 0.4);
  EXPECT_LT(r.metrics.at("flow.1.goodput_mbps"), 20.0);
  // The sender's trace was matched to the flow and saw the handshake RTT.
  ASSERT_NE(r.flows[0].sender, nullptr);
  EXPECT_GT(r.flows[0].sender->max_cwnd, 10u);
  EXPECT_GE(r.metrics.at("flow.1.rtt_min_ms"), 20.0);
}

TEST(SimTransfer, ImpairedPathStillDeliversEveryByte) {
  Scenario sc = load(kTwoHosts, {"link.fwd.loss=0.02", "link.fwd.duplicate=0.01", "link.fwd.corrupt=0.01",
                                 "link.fwd.jitter=2ms", "link.rev.loss=0.01"});
  RunResult r = run_once(sc, 3);
  const FlowStats& st = *r.flows[0].stats;
  EXPECT_TRUE(st.completed);
  EXPECT_EQ(st.bytes_read, 1'000'000u);
  EXPECT_EQ(st.payload_errors, 0u);
  EXPECT_GT(r.flows[0].watch->retrans_segs, 0u);
  EXPECT_GT(r.links[0].stats->corrupted, 0u);
}

TEST(SimTransfer, SameSeedGivesByteIdenticalSummary) {
  Scenario sc = load(kTwoHosts, {"link.fwd.loss=0.01", "link.fwd.jitter=1ms"});
  auto a = run_sweep(sc, {7}, {});
  auto b = run_sweep(sc, {7}, {});
  auto c = run_sweep(sc, {8}, {});
  std::string ja = sweep_json(a).dump(), jb = sweep_json(b).dump(), jc = sweep_json(c).dump();
  EXPECT_EQ(ja, jb);
  EXPECT_NE(ja, jc);
}

TEST(SimTransfer, SlowReaderLimitsGoodputToItsRate) {
  Scenario sc = load(kTwoHosts, {"flow.1.reader_rate=2Mbit", "flow.1.reader_chunk=4KiB", "flow.1.bytes=500KB"});
  RunResult r = run_once(sc, 1);
  EXPECT_TRUE(r.flows[0].stats->completed);
  EXPECT_NEAR(r.metrics.at("flow.1.goodput_mbps"), 2.0, 0.1);
  EXPECT_EQ(r.flows[0].watch->bytes_beyond_wnd, 0u);
}

TEST(SimTransfer, DumbbellFlowsShareTheBottleneck) {
  Scenario sc = load(R"(
duration = "3s"
[topology]
kind = "dumbbell"
senders = 3
[topology.access]
rate = "100Mbit"
delay = "1ms"
[link.fwd]
rate = "10Mbit"
delay = "5ms"
queue = 50
[link.rev]
delay = "5ms"
[[flow]]
duration = "2.5s"
count = 3
)");
  RunResult r = run_once(sc, 1);
  ASSERT_EQ(r.flows.size(), 3u);
  double total = 0;
  for (const auto& f : r.flows) {
    EXPECT_GT(f.stats->bytes_read, 0u) << "flow " << f.id;
    total += r.metrics.at(fmt::format("flow.{}.goodput_mbps", f.id));
  }
  EXPECT_LE(total, 10.0);
  EXPECT_GT(total, 5.0);
  EXPECT_GT(r.metrics.at("jain_index"), 0.0);
}

TEST(SimTransfer, RequestResponseCompletesEveryTransaction) {
  Scenario sc = load(kTwoHosts, {"flow.1.kind=rr", "flow.1.request=200", "flow.1.response=5000",
                                 "flow.1.transactions=20"});
  RunResult r = run_once(sc, 1);
  EXPECT_TRUE(r.flows[0].stats->completed) << r.flows[0].stats->error;
  EXPECT_EQ(r.flows[0].stats->rr_latency.size(), 20u);
  // Each transaction takes at least one 20 ms round trip.
  EXPECT_GE(r.metrics.at("flow.1.rr_p50_ms"), 20.0);
}

}  // namespace
}  // namespace weir::sim
