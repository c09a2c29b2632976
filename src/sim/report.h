// Reports of a sweep: the terminal tables, summary.json, per-connection
// time series (CSV) and SVG plots. Everything written here is a function of
// the scenario and its seeds only (no wall-clock figures), so the same seed
// gives byte-identical files.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/runner.h"

namespace weir::sim {

// One row per flow: goodput, completion, retransmissions, spurious, RTOs,
// undos, max cwnd, HyStart exit, RTT, bytes beyond the peer's window.
std::string flow_table(const RunResult& r);
std::string expectation_table(const SweepResult& s);
nlohmann::json sweep_json(const SweepResult& s);
// Writes summary.json, and for the first run flow<N>/timeseries.csv,
// flow<N>/timeseries-receiver.csv and flow<N>/{cwnd,throughput,rtt,tsg}.svg.
// Returns an error message, or "" on success.
std::string write_outputs(const SweepResult& s, const std::string& dir);
// The scenario's report page (DIR/index.html) linking its plots.
std::string scenario_html(const SweepResult& s);
// "12.3" style formatting of a metric for tables.
std::string fmt_metric(double v);

}  // namespace weir::sim
