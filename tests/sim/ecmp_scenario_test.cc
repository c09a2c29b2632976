// IPv6 hosts and the ecmp topology in the lab: the loader's errors for a
// bad family or path table name the line and what was expected; an IPv6
// transfer arrives byte-exact over IPv6 packets; the ecmp topology spreads
// flows over its paths and reports each path.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "sim/runner.h"
#include "sim/scenario.h"

namespace weir::sim {
namespace {

std::string load_error(const char* text) {
  auto sc = parse_scenario(text, "x.toml");
  return sc ? std::string("loaded") : sc.error();
}

constexpr const char* kFlow = "\n[[flow]]\nbytes = \"1MB\"\n";

TEST(EcmpScenario, BadFamilyNamesLineAndChoices) {
  std::string e = load_error((std::string("duration = \"1s\"\nfamily = \"ipv5\"\n") + kFlow).c_str());
  EXPECT_NE(e.find("x.toml:2:10: family: expected \"ipv4\" or \"ipv6\""), std::string::npos) << e;
}

TEST(EcmpScenario, BadTopologyKindListsEcmp) {
  std::string e = load_error((std::string("[topology]\nkind = \"mesh\"\n") + kFlow).c_str());
  EXPECT_NE(e.find("x.toml:2:8: topology.kind: expected \"two-hosts\", \"dumbbell\" or \"ecmp\""), std::string::npos)
      << e;
}

TEST(EcmpScenario, EcmpNeedsTwoPaths) {
  std::string e = load_error((std::string("[topology]\nkind = \"ecmp\"\n[[topology.path]]\nrate = \"1Gbit\"\n") + kFlow).c_str());
  EXPECT_NE(e.find("x.toml:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("topology.path: kind = \"ecmp\" needs two or more [[topology.path]] tables"), std::string::npos) << e;
  std::string none = load_error((std::string("[topology]\nkind = \"ecmp\"\n") + kFlow).c_str());
  EXPECT_NE(none.find("needs two or more"), std::string::npos) << none;
}

TEST(EcmpScenario, BadPathKeyNamesPathAndLine) {
  std::string e = load_error((std::string("[topology]\nkind = \"ecmp\"\n[[topology.path]]\nrate = \"1Gbit\"\n"
                                          "[[topology.path]]\nrat = \"1Gbit\"\n") + kFlow).c_str());
  EXPECT_NE(e.find("x.toml:6:7: topology.path.2.rat: unknown key"), std::string::npos) << e;
  std::string t = load_error((std::string("[topology]\nkind = \"ecmp\"\n[[topology.path]]\ndelay = true\n"
                                          "[[topology.path]]\n") + kFlow).c_str());
  EXPECT_NE(t.find("x.toml:4:9: topology.path.1.delay: expected a duration"), std::string::npos) << t;
}

TEST(EcmpScenario, PathsOnlyWithEcmp) {
  std::string e = load_error((std::string("[topology]\nkind = \"dumbbell\"\n[[topology.path]]\nrate = \"1Gbit\"\n") + kFlow).c_str());
  EXPECT_NE(e.find("topology.path: only with kind = \"ecmp\""), std::string::npos) << e;
}

constexpr const char* kTwoHosts = R"(
duration = "10s"
[link.fwd]
rate = "20Mbit"
delay = "5ms"
[link.rev]
rate = "20Mbit"
delay = "5ms"
[[flow]]
bytes = "1MB"
)";

double rev_bytes_per_packet(const RunResult& r) {
  for (const auto& l : r.links)
    if (l.name == "rev") return static_cast<double>(l.stats->bytes_in) / static_cast<double>(l.stats->packets_in);
  return 0;
}

TEST(EcmpScenario, Ipv6HostsTransferByteExactOverIpv6) {
  auto v4 = parse_scenario(kTwoHosts, "t.toml");
  auto v6 = parse_scenario(kTwoHosts, "t.toml", {"family=\"ipv6\""});
  ASSERT_TRUE(v4 && v6) << (v4 ? v6.error() : v4.error());
  EXPECT_EQ(v6->family, Family::kIpv6);
  RunResult a = run_once(*v4, 1);
  RunResult b = run_once(*v6, 1);
  ASSERT_TRUE(b.error.empty()) << b.error;
  EXPECT_EQ(b.metrics.at("flow.1.completed"), 1);
  EXPECT_EQ(b.metrics.at("flow.1.bytes_read"), 1e6);
  EXPECT_EQ(b.metrics.at("payload_errors"), 0);
  // The ACKs carry a 40-byte IPv6 header (RFC 8200 §3), 20 more than IPv4's,
  // and the data segments 20 bytes less payload (a smaller MSS): more of them.
  EXPECT_NEAR(rev_bytes_per_packet(b) - rev_bytes_per_packet(a), 20, 1.5);
  EXPECT_GT(b.metrics.at("flow.1.data_segs"), a.metrics.at("flow.1.data_segs"));
}

constexpr const char* kEcmp = R"(
duration = "10s"
family = "ipv6"
[topology]
kind = "ecmp"
senders = 4
[topology.access]
rate = "1Gbit"
delay = "10us"
[[topology.path]]
rate = "100Mbit"
delay = "100us"
[[topology.path]]
rate = "100Mbit"
delay = "100us"
[[topology.path]]
rate = "100Mbit"
delay = "100us"
[link.fwd]
rate = "1Gbit"
[link.rev]
rate = "1Gbit"
[[flow]]
bytes = "500KB"
count = 12
)";

TEST(EcmpScenario, EcmpSpreadsFlowsAndCountsEveryPacket) {
  auto sc = parse_scenario(kEcmp, "e.toml");
  ASSERT_TRUE(sc) << sc.error();
  RunResult r = run_once(*sc, 3);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.metrics.at("completed_flows"), 12);
  EXPECT_EQ(r.metrics.at("payload_errors"), 0);
  // Every packet the senders sent crossed exactly one path.
  uint64_t up = 0;
  for (const auto& l : r.links)
    if (l.name.ends_with("-up")) up += l.stats->delivered;
  double paths = 0;
  for (int i = 1; i <= 3; ++i) {
    EXPECT_GT(r.metrics.at(fmt::format("path.{}.packets", i)), 0) << i;  // 12 flows reach all 3
    paths += r.metrics.at(fmt::format("path.{}.packets", i));
  }
  EXPECT_EQ(paths, static_cast<double>(up));
  EXPECT_GE(r.metrics.at("path_max_share"), 1.0 / 3);
  EXPECT_LE(r.metrics.at("path_min_share"), 1.0 / 3);
  EXPECT_EQ(r.metrics.at("plb_rehash"), 0);  // PLB is off by default
  // Deterministic: the same seed places the flows the same way.
  RunResult again = run_once(*sc, 3);
  EXPECT_EQ(again.metrics.at("path.1.bytes"), r.metrics.at("path.1.bytes"));
}

}  // namespace
}  // namespace weir::sim
