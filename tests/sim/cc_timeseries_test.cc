// The lab's time series carry the congestion-control state (issue 7): CUBIC's
// W_max, K and epoch, BBR's mode, bandwidth and min RTT, and the pacing rate,
// as columns of flow<N>/timeseries.csv.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace weir::sim {
namespace {

// A 20 Mbit/s, 40 ms path with a 50-packet queue: slow start overflows it, so
// CUBIC has a loss epoch (W_max, K) and BBR reaches PROBE_BW.
std::string scenario(const std::string& cc) {
  return R"(
duration = "4s"
[link.fwd]
rate = "20Mbit"
delay = "20ms"
queue = 50
[link.rev]
delay = "20ms"
[[flow]]
duration = "4s"
cc = ")" + cc + "\"\n";
}

using Row = std::map<std::string, std::string>;

std::vector<Row> timeseries(const std::string& cc) {
  auto sc = parse_scenario(scenario(cc), cc + ".toml");
  EXPECT_TRUE(sc.has_value()) << sc.error();
  if (!sc) return {};
  SweepResult res = run_sweep(*sc, {1}, RunOptions{});
  auto dir = std::filesystem::temp_directory_path() / ("weir-cc-timeseries-" + cc);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(write_outputs(res, dir.string()), "");
  std::ifstream f(dir / "flow1" / "timeseries.csv");
  std::string line;
  std::getline(f, line);
  std::vector<std::string> cols;
  for (std::stringstream h(line); std::getline(h, line, ',');) cols.push_back(line);
  std::vector<Row> rows;
  while (std::getline(f, line)) {
    Row r;
    std::stringstream in(line);
    for (const auto& c : cols) std::getline(in, r[c], ',');
    rows.push_back(r);
  }
  std::filesystem::remove_all(dir);
  return rows;
}

uint64_t num(const Row& r, const std::string& c) {
  auto it = r.find(c);
  return it == r.end() || it->second.empty() ? 0 : std::stoull(it->second);
}

TEST(CcTimeseries, CubicRowsCarryWmaxKAndEpochAfterALoss) {
  auto rows = timeseries("cubic");
  ASSERT_FALSE(rows.empty());
  ASSERT_TRUE(rows.back().count("cubic_wmax"));
  bool epoch_seen = false;
  for (const Row& r : rows) {
    if (num(r, "cubic_wmax") > 0 && num(r, "cubic_k_ms") > 0 && num(r, "cubic_epoch_ms") > 0) {
      epoch_seen = true;
      EXPECT_EQ(num(r, "bbr_bw_Bps"), 0u);
      break;
    }
  }
  EXPECT_TRUE(epoch_seen);
  EXPECT_GT(num(rows.back(), "pacing_rate_Bps"), 0u);
}

TEST(CcTimeseries, BbrRowsCarryModeBandwidthAndMinRtt) {
  auto rows = timeseries("bbr");
  ASSERT_FALSE(rows.empty());
  const Row& last = rows.back();
  ASSERT_TRUE(last.count("bbr_mode"));
  // 20 Mbit/s = 2.5 MB/s of IP packets; BBR's bandwidth counts payload.
  EXPECT_GT(num(last, "bbr_bw_Bps"), 2000000u);
  EXPECT_LT(num(last, "bbr_bw_Bps"), 2600000u);
  EXPECT_GE(num(last, "bbr_min_rtt_us"), 40000u);
  EXPECT_LT(num(last, "bbr_min_rtt_us"), 45000u);
  bool probe_bw = false;
  for (const Row& r : rows) probe_bw |= num(r, "bbr_mode") == 2;
  EXPECT_TRUE(probe_bw);
  EXPECT_EQ(num(last, "cubic_wmax"), 0u);
}

}  // namespace
}  // namespace weir::sim
