// The PLB experiment (scenarios/plb-ecmp.toml) as a test: its expectations
// hold, its control (plb-ecmp-off) shows the collision, and the same
// expectations fail when PLB is off or when the switch cannot see the move
// (IPv4 has no flow label: PLB rehashes, the path stays).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sanitizer_build.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace weir::sim {
namespace {

using weir::test::kSanitized;

// The sanitizer build (-O0, ASan) runs each seed about 30 times slower: the
// two whole-experiment tests take two of the ten seeds there (1 and 3, both
// collisions), which still fail without PLB, so the suite stays within CI's time.
std::vector<std::string> all_seeds() {
  if (kSanitized) return {"seeds=[1, 3]"};
  return {};
}

SweepResult sweep(const char* file, const std::vector<std::string>& sets = {}) {
  auto sc = load_scenario(std::string(WEIR_SOURCE_DIR) + "/scenarios/" + file, sets);
  EXPECT_TRUE(sc.has_value()) << sc.error();
  // The sweep keeps a pointer to its scenario: keep it alive with the result.
  static std::vector<std::unique_ptr<Scenario>> keep;
  keep.push_back(std::make_unique<Scenario>(*sc));
  return run_sweep(*keep.back(), keep.back()->seeds, {});
}

std::string failures(const SweepResult& s) {
  std::string o;
  for (const auto& e : s.expects)
    if (!e.pass) o += e.x.text + "; ";
  return o;
}

bool failed(const SweepResult& s, const std::string& text) {
  for (const auto& e : s.expects)
    if (e.x.text == text) return !e.pass;
  ADD_FAILURE() << "no expectation " << text;
  return false;
}

TEST(PlbEcmp, PlbBalancesThePaths) {
  SweepResult s = sweep("plb-ecmp.toml", all_seeds());
  EXPECT_TRUE(s.pass()) << failures(s);
}

TEST(PlbEcmp, ControlShowsTheCollision) {
  SweepResult s = sweep("plb-ecmp-off.toml", all_seeds());
  EXPECT_TRUE(s.pass()) << failures(s);
}

TEST(PlbEcmp, ExpectationsFailWithoutPlb) {
  SweepResult s = sweep("plb-ecmp.toml", {"host.sender.tcp_plb_enabled=0", "seeds=[1, 2]"});
  EXPECT_TRUE(failed(s, "path_min_share >= 0.2"));
  EXPECT_TRUE(failed(s, "window_total_goodput_mbps >= 360"));
  EXPECT_TRUE(failed(s, "plb_rehash >= 1"));
}

TEST(PlbEcmp, ExpectationsFailWhenTheSwitchCannotSeeTheLabel) {
  SweepResult s = sweep("plb-ecmp.toml", {"family=\"ipv4\"", "seeds=[1, 2]"});
  EXPECT_FALSE(failed(s, "plb_rehash >= 1"));  // PLB acts ...
  EXPECT_TRUE(failed(s, "path_min_share >= 0.2"));  // ... but the flows stay put
}

}  // namespace
}  // namespace weir::sim
