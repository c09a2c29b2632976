// Fairness metrics on real dumbbell runs: window goodputs leave out what
// happened before `measure_from`, group shares and Jain's index within a
// group are computed per `group`, and a starved flow shows in min_flow_ratio.
#include <gtest/gtest.h>

#include "sim/metrics.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace weir::sim {
namespace {

// Two senders on a 20 Mbit/s, 20 ms bottleneck. Flow 1 ("paced") is read by
// a 2 Mbit/s slow reader, flows 2 and 3 ("bulk") are unlimited and start
// 0.5 s apart.
constexpr const char* kDumbbell = R"(
duration = "6s"
measure_from = "3s"
[topology]
kind = "dumbbell"
senders = 2
[topology.access]
rate = "1Gbit"
delay = "1ms"
[link.fwd]
rate = "20Mbit"
delay = "8ms"
queue = 40
[link.rev]
rate = "20Mbit"
delay = "8ms"
[[flow]]
sender = 1
duration = "6s"
reader_rate = "2Mbit"
group = "paced"
[[flow]]
sender = 2
duration = "6s"
start = "0.5s"
count = 2
start_step = "0.5s"
group = "bulk"
)";

RunResult run(std::vector<std::string> sets = {}) {
  auto sc = parse_scenario(kDumbbell, "fair.toml", sets);
  EXPECT_TRUE(sc.has_value()) << sc.error();
  return run_once(*sc, 1);
}

TEST(SimFairness, GroupSharesSplitTheWindowGoodput) {
  RunResult r = run();
  const auto& m = r.metrics;
  ASSERT_TRUE(m.count("group.paced.share") && m.count("group.bulk.share"));
  EXPECT_DOUBLE_EQ(m.at("group.paced.flows"), 1);
  EXPECT_DOUBLE_EQ(m.at("group.bulk.flows"), 2);
  EXPECT_NEAR(m.at("group.paced.share") + m.at("group.bulk.share"), 1.0, 1e-9);
  // The slow reader gets its 2 Mbit/s, the two bulk flows the rest of the 20.
  EXPECT_NEAR(m.at("group.paced.goodput_mbps"), 2.0, 0.2);
  EXPECT_NEAR(m.at("group.bulk.goodput_mbps"), m.at("window_total_goodput_mbps") - m.at("group.paced.goodput_mbps"),
              1e-9);
  EXPECT_GT(m.at("group.bulk.goodput_mbps"), 15.0);
  EXPECT_LT(m.at("window_total_goodput_mbps"), 20.0);
  // The two bulk flows share fairly with each other; across all three the
  // slow reader is far below the mean.
  EXPECT_GT(m.at("group.bulk.jain_index"), 0.9);
  EXPECT_FALSE(m.count("group.paced.jain_index"));
  EXPECT_LT(m.at("window_jain_index"), 0.8);
  EXPECT_LT(m.at("min_flow_ratio"), 0.4);
  EXPECT_NEAR(m.at("min_flow_ratio"), m.at("flow.1.window_goodput_mbps") /
                                          (m.at("window_total_goodput_mbps") / 3), 1e-9);
}

TEST(SimFairness, WindowGoodputLeavesOutTheStart) {
  RunResult r = run();
  const auto& m = r.metrics;
  // Flow 3 starts at 1 s: its whole-run goodput counts slow start and the
  // time before flow 1's share settled; its window goodput counts 3..6 s only.
  double window = m.at("flow.3.window_goodput_mbps");
  EXPECT_GT(window, 6.0);
  EXPECT_LT(window, 12.0);
  // Bytes read in the window alone, converted by hand.
  const FlowStats& st = *r.flows[2].stats;
  EXPECT_GT(st.bytes_before_window, 0u);
  EXPECT_NEAR(window, static_cast<double>(st.bytes_read - st.bytes_before_window) * 8 / 3.0 / 1e6, 1e-9);
  EXPECT_EQ(r.flows[2].spec->start, Time::zero() + Duration::ms(1000));
}

TEST(SimFairness, WithoutMeasureFromGroupsUseWholeRunGoodput) {
  auto sc = parse_scenario(kDumbbell, "fair.toml");
  ASSERT_TRUE(sc.has_value());
  sc->measure_from = Duration::zero();
  for (auto& f : sc->flows) f.window_start = Time::zero();
  RunResult r = run_once(*sc, 1);
  const auto& m = r.metrics;
  EXPECT_FALSE(m.count("window_jain_index"));
  EXPECT_FALSE(m.count("flow.1.window_goodput_mbps"));
  EXPECT_NEAR(m.at("group.bulk.goodput_mbps"), m.at("flow.2.goodput_mbps") + m.at("flow.3.goodput_mbps"), 1e-9);
}

}  // namespace
}  // namespace weir::sim
