// Turning a run's observations into named metrics, sweep aggregates, and
// expectation verdicts. The metric names are what scenario files use in
// `expect` lines; docs/lab.md lists them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/runner.h"

namespace weir::sim {

void compute_run_metrics(RunResult& r, Time end);
// Adds flow.N.completion_ratio (to the baseline's), max_completion_ratio and
// wedged (0/1) to a run given its baseline (same seed, baseline overrides).
void compare_to_baseline(RunResult& r, const RunResult& baseline, double wedged_ratio);
std::map<std::string, double> sweep_metrics(const std::vector<RunResult>& runs,
                                            const std::vector<RunResult>& baselines);
std::vector<ExpectResult> check_expectations(const std::vector<Expectation>& xs, const std::vector<RunResult>& runs,
                                             const std::map<std::string, double>& sweep);
// The same, with "contrast.<metric>" read from the sweep's contrast.
std::vector<ExpectResult> check_expectations(const std::vector<Expectation>& xs, const SweepResult& s);
// Jain's fairness index (sum x)^2 / (n sum x^2); 1 is perfectly fair.
double jain_index(const std::vector<double>& x);
double median(std::vector<double> v);

}  // namespace weir::sim
