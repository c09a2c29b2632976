// A scenario: topology, link models, hosts, flows, duration, seeds and the
// expectations a run is judged by. Loaded from TOML (scenario_load.cc);
// see docs/lab.md for the file format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/link.h"
#include "weir/expected.h"
#include "weir/time.h"

namespace weir::sim {

enum class Topology { kTwoHosts, kDumbbell, kEcmp };
// Every host's address family (RFC 8200 hosts when kIpv6).
enum class Family { kIpv4, kIpv6 };
enum class AppKind { kBulk, kRequestResponse };

struct HostSpec {
  // sysctl-style keys handed to StackConfig::set (in key order: toml++ tables are sorted).
  std::vector<std::pair<std::string, std::string>> sysctl;
  uint32_t mtu = 1500;
};

struct FlowSpec {
  int id = 1;                  // 1-based, as expectations name it (flow.1.*)
  AppKind kind = AppKind::kBulk;
  int sender = 0;              // dumbbell: which sender host (0-based)
  Time start;
  uint64_t bytes = 0;          // bulk: bytes to send (0: send for `send_for`)
  Duration send_for;           // bulk by duration
  std::vector<uint64_t> write_sizes{65536};  // record writer: sizes, cycled
  double reader_rate_bps = 0;  // slow reader (bits/s); 0: reads at once
  uint64_t reader_chunk = 16384;
  uint32_t sndbuf = 0;         // SO_SNDBUF / SO_RCVBUF (0: default autotuning)
  uint32_t rcvbuf = 0;
  std::string cc;              // TCP_CONGESTION (empty: the host's default)
  uint64_t request = 100;      // request/response sizes and count
  uint64_t response = 1000;
  uint32_t transactions = 10;
  Duration delivered_at;       // also report bytes delivered by start + this
  // Fairness: flows with the same group are summed and compared
  // (group.<name>.share, group.<name>.jain_index); default: the flow's `cc`.
  std::string group;
  Time window_start;           // the scenario's `measure_from` (window_goodput_mbps)
};

struct Expectation {
  std::string metric;
  std::string op;  // >= <= == != > <
  double value = 0;
  std::string text;
  int line = 0;
};

struct Scenario {
  std::string name;
  std::string description;
  std::string path;
  Duration duration = Duration::s(10);
  // Fairness metrics (window_goodput_mbps, window_jain_index, group shares)
  // count only bytes read from here on, after the staggered starts and the
  // slow starts are over; zero: whole-run goodputs.
  Duration measure_from;
  std::vector<uint64_t> seeds{1};
  Topology topology = Topology::kTwoHosts;
  Family family = Family::kIpv4;
  int senders = 1;                      // dumbbell, ecmp
  std::vector<Duration> access_delays;  // dumbbell: per-sender one-way access delay
  LinkConfig access;                    // dumbbell, ecmp: sender <-> router/switch links
  std::vector<LinkConfig> paths;        // ecmp: the parallel paths, each used both ways
  LinkConfig fwd;                       // data direction (client/senders -> server/receiver)
  LinkConfig rev;
  HostSpec client;                      // sender side (every dumbbell sender)
  HostSpec server;                      // receiver side
  std::vector<FlowSpec> flows;
  std::vector<Expectation> expects;
  // A reference run for comparisons: the same scenario with these overrides
  // (e.g. reordering off). Per-flow completion ratios and `wedged_runs` use it.
  std::vector<std::string> baseline_set;
  double wedged_ratio = 0;  // a run is wedged if a flow takes longer than ratio x baseline
  // The contrast (docs/lab.md "Seed contrasts"): the same scenario, same
  // seeds, with these overrides, usually a seed's fault switched on.
  // Expectations named "contrast.<metric>" are checked against its runs, so
  // a scenario shows that it tells the bug from the fix.
  std::vector<std::string> contrast_set;
  std::string contrast_note;  // what the contrast switches on, said plainly
  bool trace = true;        // keep per-connection samples (plots, CSV)
  bool capture = true;      // pcap per link when an output directory is given
  std::string note;         // what differs from the original experiment, said plainly
  // Where it came from, so a variant (the baseline) can be re-derived.
  std::string source;
  std::vector<std::string> overrides;
};

// Loads a scenario; `overrides` are "key=value" (e.g. "link.fwd.rate=10Mbit",
// "flow.1.bytes=1MB"), applied before interpretation. Errors name the file,
// the line and the expected type.
Expected<Scenario, std::string> load_scenario(const std::string& path,
                                              const std::vector<std::string>& overrides = {});
Expected<Scenario, std::string> parse_scenario(std::string_view text, const std::string& path,
                                               const std::vector<std::string>& overrides = {});
// "contrast.<metric>" names <metric> measured on the scenario's contrast.
inline constexpr std::string_view kContrastPrefix = "contrast.";
inline bool is_contrast_metric(std::string_view metric) {
  return metric.substr(0, kContrastPrefix.size()) == kContrastPrefix;
}

// A variant of `sc` (its baseline or its contrast): the same file and
// overrides plus `extra`, without a contrast of its own.
Expected<Scenario, std::string> derive_scenario(const Scenario& sc, const std::vector<std::string>& extra);
// "1..12" or "3" or "1,2,5".
Expected<std::vector<uint64_t>, std::string> parse_seed_list(std::string_view s);
Expected<Expectation, std::string> parse_expectation(std::string_view text);

}  // namespace weir::sim
