// Running a scenario: builds the topology for one seed, runs the event loop
// to the scenario's end (or until every flow completed), and turns what the
// apps, the monitor, the links and the trace hook saw into named metrics
// ("flow.1.goodput_mbps"), which expectations are then checked against.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/apps.h"
#include "sim/link.h"
#include "sim/monitor.h"
#include "sim/scenario.h"
#include "sim/trace_store.h"

namespace weir::sim {

struct FlowView {
  int id = 0;
  const FlowSpec* spec = nullptr;
  const FlowStats* stats = nullptr;
  const FlowWatch* watch = nullptr;
  const ConnTrace* sender = nullptr;    // nullptr when the trace had no matching connection
  const ConnTrace* receiver = nullptr;
};

struct LinkView {
  std::string name;
  const LinkStats* stats = nullptr;
  const LinkConfig* config = nullptr;
};

struct RunResult {
  uint64_t seed = 0;
  std::string error;                         // set when the run could not be built
  std::map<std::string, double> metrics;     // ordered: deterministic output
  std::map<std::string, std::string> labels; // text facts (HyStart exit reason, errors)
  double wall_s = 0;                         // not part of any deterministic output
  uint64_t events = 0;
  uint64_t packets = 0;                      // packets offered to links
  Duration simulated;
  std::vector<FlowView> flows;
  std::vector<LinkView> links;
  std::shared_ptr<void> keep;                // owns everything the views point into
};

struct Progress {
  Time now;
  Time end;
  double wall_s;
  uint64_t events;
};

struct RunOptions {
  std::string pcap_dir;  // write link-<name>.pcap here when non-empty
  std::function<void(const Progress&)> progress;  // called about every 0.1 s of wall time
};

RunResult run_once(const Scenario& sc, uint64_t seed, const RunOptions& opt = {});

struct ExpectResult {
  Expectation x;
  bool pass = false;
  bool missing = false;    // the metric was not produced
  double measured = 0;     // the deciding value (worst run for per-run metrics)
  uint64_t seed = 0;       // the run it came from (per-run metrics)
};

struct SweepResult {
  const Scenario* scenario = nullptr;
  std::vector<RunResult> runs;
  std::vector<RunResult> baselines;        // same seeds with `baseline.set` applied
  std::map<std::string, double> sweep;     // runs, wedged_runs, median.<m>, ...
  std::vector<ExpectResult> expects;
  // The scenario's [contrast], run over the same seeds; "contrast.<metric>"
  // expectations were checked against it. Null without a [contrast].
  std::shared_ptr<SweepResult> contrast;
  std::shared_ptr<const Scenario> variant;  // owns *scenario when this is a contrast
  bool pass() const;
};

// Runs every seed (and its baseline when the scenario has one), derives the
// comparison and sweep metrics and checks the expectations.
SweepResult run_sweep(const Scenario& sc, const std::vector<uint64_t>& seeds, const RunOptions& first_run_opt,
                      const std::function<void(const std::string&)>& status = {});

bool compare(double measured, const std::string& op, double value);
const char* hystart_reason_name(uint64_t reason);

}  // namespace weir::sim
