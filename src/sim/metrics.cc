#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

namespace weir::sim {
namespace {

constexpr uint32_t kInfiniteSsthresh = 0x7fffffff / 2;  // anything above is "not yet set"

// Undo events with no spurious retransmission sent since the previous undo
// (or the start): the sender restored cwnd without proof (seed 003).
uint64_t unproven_undos(const ConnTrace& c, const FlowWatch& w) {
  uint64_t bad = 0;
  Time prev = Time::zero();
  for (Time u : c.undo_times) {
    bool proven = std::any_of(w.spurious_sent.begin(), w.spurious_sent.end(),
                              [&](Time t) { return prev <= t && t <= u; });
    if (!proven) ++bad;
    prev = u;
  }
  return bad;
}

// The cwnd when slow start first ended for any reason: the first sample
// with a finite ssthresh.
uint32_t ss_exit_cwnd(const ConnTrace& c) {
  for (const auto& s : c.samples)
    if (s.ssthresh < kInfiniteSsthresh && s.ssthresh > 0) return std::max(s.cwnd, s.ssthresh);
  return 0;
}

void flow_metrics(RunResult& r, const FlowView& f, Time end) {
  const std::string p = fmt::format("flow.{}.", f.id);
  auto& m = r.metrics;
  const FlowStats& st = *f.stats;
  const FlowWatch& w = *f.watch;
  Time stop = st.completed ? st.completed_at : end;
  double secs = (stop - st.start).secs();
  m[p + "bytes_read"] = static_cast<double>(st.bytes_read);
  m[p + "bytes_written"] = static_cast<double>(st.bytes_written);
  m[p + "goodput_mbps"] = secs > 0 ? static_cast<double>(st.bytes_read) * 8 / secs / 1e6 : 0;
  m[p + "completed"] = st.completed ? 1 : 0;
  m[p + "completion_s"] = secs;
  m[p + "payload_errors"] = static_cast<double>(st.payload_errors);
  m[p + "connected"] = st.connected ? 1 : 0;
  m[p + "retrans_segs"] = static_cast<double>(w.retrans_segs);
  m[p + "retrans_bytes"] = static_cast<double>(w.retrans_bytes);
  m[p + "spurious_retrans"] = static_cast<double>(w.spurious_segs);
  m[p + "data_segs"] = static_cast<double>(w.data_segs);
  m[p + "bytes_beyond_wnd"] = static_cast<double>(w.bytes_beyond_wnd);
  m[p + "max_adv_wnd"] = static_cast<double>(w.max_adv_wnd);
  if (w.rtt_samples) {
    m[p + "rtt_min_ms"] = static_cast<double>(w.rtt_min.ns()) / 1e6;
    m[p + "rtt_avg_ms"] = w.rtt_sum_ns / static_cast<double>(w.rtt_samples) / 1e6;
    m[p + "rtt_max_ms"] = static_cast<double>(w.rtt_max.ns()) / 1e6;
  }
  if (f.spec->window_start > Time::zero()) {
    // Goodput from the scenario's measure_from (or the flow's later start) on.
    Time from = std::max(f.spec->window_start, st.start);
    double w = stop > from ? (stop - from).secs() : 0;
    m[p + "window_goodput_mbps"] =
        w > 0 ? static_cast<double>(st.bytes_read - st.bytes_before_window) * 8 / w / 1e6 : 0;
  }
  if (f.spec->delivered_at > Duration::zero()) m[p + "delivered_at_bytes"] = static_cast<double>(st.delivered_at_mark);
  if (f.spec->reader_rate_bps > 0)
    m[p + "reader_rate_ratio"] = m[p + "goodput_mbps"] * 1e6 / f.spec->reader_rate_bps;
  if (!st.rr_latency.empty()) {
    std::vector<double> l;
    for (auto d : st.rr_latency) l.push_back(static_cast<double>(d.ns()) / 1e6);
    std::sort(l.begin(), l.end());
    m[p + "rr_p50_ms"] = l[l.size() / 2];
    m[p + "rr_p99_ms"] = l[std::min(l.size() - 1, l.size() * 99 / 100)];
    m[p + "transactions"] = static_cast<double>(l.size());
  }
  if (f.sender) {
    const ConnTrace& c = *f.sender;
    m[p + "max_cwnd"] = c.max_cwnd;
    m[p + "undo_events"] = static_cast<double>(c.undo_times.size());
    m[p + "unproven_undos"] = static_cast<double>(unproven_undos(c, w));
    m[p + "hystart_exit_cwnd"] = c.hystart_exited ? c.hystart_cwnd : 0;
    m[p + "hystart_exit_reason"] = static_cast<double>(c.hystart_reason);
    m[p + "ss_exit_cwnd"] = ss_exit_cwnd(c);
    // Slow start ended by a HyStart detector (ACK train, delay, CSS), not by loss.
    bool detector = c.hystart_exited && c.hystart_reason != 3 && c.hystart_reason != 0;
    m[p + "hystart_detector_exit_cwnd"] = detector ? c.hystart_cwnd : 0;
    m[p + "rto_events"] = static_cast<double>(c.rto_events);
    if (c.hystart_exited) {
      m[p + "hystart_exit_s"] = (c.hystart_time - st.start).secs();
      r.labels[p + "hystart_exit_reason"] = hystart_reason_name(c.hystart_reason);
    }
  } else {
    r.labels[p + "trace"] = "no trace samples matched this flow's sender";
  }
  if (f.receiver) m[p + "receiver_max_rwnd"] = f.receiver->max_rwnd;
  if (st.sender_info && !(f.sender && f.sender->hystart_exited)) {
    uint8_t why = st.sender_info->hystart_exit_reason;
    m[p + "hystart_detector_exit_cwnd"] = why != 0 && why != 3 ? st.sender_info->hystart_exit_cwnd : 0;
  }
  if (st.sender_info) {
    m[p + "rto_count"] = st.sender_info->tcpi_total_rto;
    m[p + "total_retrans"] = st.sender_info->tcpi_total_retrans;
    if (!f.sender || !f.sender->hystart_exited) {
      if (st.sender_info->hystart_exit_cwnd) {
        m[p + "hystart_exit_cwnd"] = st.sender_info->hystart_exit_cwnd;
        m[p + "hystart_exit_reason"] = st.sender_info->hystart_exit_reason;
        r.labels[p + "hystart_exit_reason"] = hystart_reason_name(st.sender_info->hystart_exit_reason);
      }
    }
  }
  if (!st.error.empty()) r.labels[p + "error"] = st.error;
}

// For a single flow on a lossy two-host path: the Mathis et al. bound for
// Reno, MSS/RTT * sqrt(3/2)/sqrt(p), with p the data loss rate the forward
// link actually applied and RTT the flow's measured average.
void mathis(RunResult& r) {
  if (r.flows.size() != 1) return;
  const LinkView* fwd = nullptr;
  for (const auto& l : r.links)
    if (l.name == "fwd") fwd = &l;
  const FlowView& f = r.flows[0];
  if (!fwd || f.watch->data_segs == 0 || fwd->stats->drop_loss == 0 || !f.watch->rtt_samples) return;
  double p = static_cast<double>(fwd->stats->drop_loss) / static_cast<double>(f.watch->data_segs);
  double mss = f.stats->sender_info && f.stats->sender_info->tcpi_snd_mss ? f.stats->sender_info->tcpi_snd_mss : 1448;
  double rtt = f.watch->rtt_sum_ns / static_cast<double>(f.watch->rtt_samples) / 1e9;
  double bound = mss * 8 / rtt * std::sqrt(1.5 / p) / 1e6;
  const std::string pre = fmt::format("flow.{}.", f.id);
  r.metrics[pre + "mathis_mbps"] = bound;
  r.metrics[pre + "mathis_ratio"] = r.metrics[pre + "goodput_mbps"] / bound;
}

// Fairness between bulk flows, over window goodputs when the scenario has
// `measure_from`, else over whole-run goodputs: the slowest flow against the
// mean (a starved flow shows as a ratio near 0), and per group (flows with
// the same `group`, by default the same `cc`) the group's summed goodput, its
// share of the total and Jain's index within it.
void fairness_metrics(RunResult& r) {
  auto& m = r.metrics;
  std::vector<double> all;
  std::map<std::string, std::vector<double>> groups;
  bool window = false;
  for (const auto& f : r.flows) {
    if (f.spec->kind != AppKind::kBulk) continue;
    const std::string p = fmt::format("flow.{}.", f.id);
    auto it = m.find(p + "window_goodput_mbps");
    window = it != m.end();
    double g = window ? it->second : m[p + "goodput_mbps"];
    all.push_back(g);
    if (!f.spec->group.empty()) groups[f.spec->group].push_back(g);
  }
  if (all.size() < 2) return;
  double total = 0;
  for (double g : all) total += g;
  if (window) {
    m["window_jain_index"] = jain_index(all);
    m["window_total_goodput_mbps"] = total;
  }
  double mean = total / static_cast<double>(all.size());
  m["min_flow_ratio"] = mean > 0 ? *std::min_element(all.begin(), all.end()) / mean : 0;
  for (const auto& [name, g] : groups) {
    const std::string p = "group." + name + ".";
    double sum = 0;
    for (double v : g) sum += v;
    m[p + "flows"] = static_cast<double>(g.size());
    m[p + "goodput_mbps"] = sum;
    m[p + "share"] = total > 0 ? sum / total : 0;
    if (g.size() > 1) m[p + "jain_index"] = jain_index(g);
  }
}

}  // namespace

const char* hystart_reason_name(uint64_t reason) {
  switch (reason) {
    case 1: return "ACK train";
    case 2: return "delay";
    case 3: return "loss";
    case 4: return "HyStart++ CSS end";
    default: return "none";
  }
}

double jain_index(const std::vector<double>& x) {
  double s = 0, s2 = 0;
  for (double v : x) {
    s += v;
    s2 += v * v;
  }
  return s2 > 0 ? s * s / (static_cast<double>(x.size()) * s2) : 0;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void compute_run_metrics(RunResult& r, Time end) {
  std::vector<double> goodputs;
  double total = 0, completed = 0, beyond = 0, errors = 0;
  for (const auto& f : r.flows) {
    flow_metrics(r, f, end);
    double g = r.metrics[fmt::format("flow.{}.goodput_mbps", f.id)];
    if (f.spec->kind == AppKind::kBulk) goodputs.push_back(g);
    total += g;
    completed += f.stats->completed;
    beyond += static_cast<double>(f.watch->bytes_beyond_wnd);
    errors += static_cast<double>(f.stats->payload_errors);
  }
  auto& m = r.metrics;
  m["flows"] = static_cast<double>(r.flows.size());
  m["completed_flows"] = completed;
  m["all_completed"] = completed == static_cast<double>(r.flows.size()) ? 1 : 0;
  m["total_goodput_mbps"] = total;
  m["bytes_beyond_wnd"] = beyond;
  m["payload_errors"] = errors;
  if (goodputs.size() > 1) m["jain_index"] = jain_index(goodputs);
  fairness_metrics(r);
  m["sim_s"] = r.simulated.secs();
  m["events"] = static_cast<double>(r.events);
  for (const auto& l : r.links) {
    const std::string p = fmt::format("link.{}.", l.name);
    if (l.name.find('-') != std::string::npos) continue;  // per-sender access links: summarised below
    m[p + "packets"] = static_cast<double>(l.stats->packets_in);
    m[p + "drops"] = static_cast<double>(l.stats->drops());
    m[p + "queue_drops"] = static_cast<double>(l.stats->drop_queue + l.stats->drop_codel);
    m[p + "max_queue_packets"] = l.stats->max_queue_packets;
    m[p + "ce_marks"] = static_cast<double>(l.stats->ce_marked);
    m[p + "mean_queue_delay_ms"] =
        l.stats->dequeued ? l.stats->sum_sojourn_ns / static_cast<double>(l.stats->dequeued) / 1e6 : 0;
    m[p + "reordered"] = static_cast<double>(l.stats->reordered);
    m[p + "utilisation"] = l.config->rate_bps && r.simulated > Duration::zero()
                               ? static_cast<double>(l.stats->bytes_delivered) * 8 /
                                     (static_cast<double>(l.config->rate_bps) * r.simulated.secs())
                               : 0;
  }
  mathis(r);
  if (!r.error.empty()) r.labels["error"] = r.error;
}

void compare_to_baseline(RunResult& r, const RunResult& b, double wedged_ratio) {
  double worst = 0;
  bool wedged = false;
  for (const auto& f : r.flows) {
    const std::string p = fmt::format("flow.{}.", f.id);
    auto bc = b.metrics.find(p + "completion_s");
    auto bd = b.metrics.find(p + "completed");
    if (bc == b.metrics.end() || bd == b.metrics.end() || bd->second == 0) continue;
    double ratio = r.metrics[p + "completion_s"] / bc->second;
    r.metrics[p + "completion_ratio"] = ratio;
    r.metrics[p + "baseline_completion_s"] = bc->second;
    worst = std::max(worst, ratio);
    if (r.metrics[p + "completed"] == 0) wedged = true;
    if (wedged_ratio > 0 && ratio > wedged_ratio) wedged = true;
  }
  r.metrics["max_completion_ratio"] = worst;
  r.metrics["wedged"] = wedged ? 1 : 0;
}

std::map<std::string, double> sweep_metrics(const std::vector<RunResult>& runs,
                                            const std::vector<RunResult>& baselines) {
  std::map<std::string, double> s;
  s["runs"] = static_cast<double>(runs.size());
  double wedged = 0, completed = 0;
  std::map<std::string, std::vector<double>> all;
  for (const auto& r : runs) {
    auto w = r.metrics.find("wedged");
    // Without a baseline, a run is wedged when a flow did not complete.
    wedged += w != r.metrics.end() ? w->second : (r.metrics.at("all_completed") == 0);
    completed += r.metrics.at("all_completed");
    for (const auto& [k, v] : r.metrics) all[k].push_back(v);
  }
  s["wedged_runs"] = wedged;
  s["completed_runs"] = completed;
  for (const auto& [k, v] : all) {
    s["median." + k] = median(v);
    s["min." + k] = *std::min_element(v.begin(), v.end());
    s["max." + k] = *std::max_element(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    s["mean." + k] = sum / static_cast<double>(v.size());
  }
  std::map<std::string, std::vector<double>> base;
  for (const auto& r : baselines)
    for (const auto& [k, v] : r.metrics) base[k].push_back(v);
  for (const auto& [k, v] : base) s["baseline.median." + k] = median(v);
  // The median completion against the baseline's median (seed 002's fetch test).
  for (const auto& [k, v] : all) {
    const std::string suffix = ".completion_s";
    if (k.size() > suffix.size() && k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        base.count(k)) {
      std::string flow = k.substr(0, k.size() - suffix.size());
      s["median_ratio." + flow + ".completion_s"] = median(v) / median(base[k]);
    }
  }
  return s;
}

bool compare(double a, const std::string& op, double b) {
  if (std::isnan(a)) return false;
  if (op == ">=") return a >= b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  if (op == "<") return a < b;
  if (op == "==") return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b));
  if (op == "!=") return !compare(a, "==", b);
  return false;
}

namespace {

// One expectation against a set of runs and their sweep metrics.
ExpectResult check_one(const Expectation& x, const std::string& metric, const std::vector<RunResult>& runs,
                       const std::map<std::string, double>& sweep) {
  ExpectResult e;
  e.x = x;
  // Sweep metrics (runs, wedged_runs, median.*, ...) never share a name
  // with a per-run metric.
  if (auto it = sweep.find(metric); it != sweep.end()) {
    e.measured = it->second;
    e.pass = compare(e.measured, x.op, x.value);
    return e;
  }
  // A per-run metric must hold in every run; report the first failing run
  // (or the last run when all pass).
  e.pass = !runs.empty();
  e.missing = runs.empty();
  for (const auto& r : runs) {
    auto m = r.metrics.find(metric);
    if (m == r.metrics.end()) {
      e.pass = false;
      e.missing = true;
      e.seed = r.seed;
      break;
    }
    e.measured = m->second;
    e.seed = r.seed;
    if (!compare(m->second, x.op, x.value)) {
      e.pass = false;
      break;
    }
  }
  return e;
}

}  // namespace

std::vector<ExpectResult> check_expectations(const std::vector<Expectation>& xs, const std::vector<RunResult>& runs,
                                             const std::map<std::string, double>& sweep) {
  std::vector<ExpectResult> out;
  for (const auto& x : xs) out.push_back(check_one(x, x.metric, runs, sweep));
  return out;
}

// "contrast.<metric>" is <metric> of the contrast's runs; without a
// contrast result (its overrides did not load) the metric is missing.
std::vector<ExpectResult> check_expectations(const std::vector<Expectation>& xs, const SweepResult& s) {
  std::vector<ExpectResult> out;
  for (const auto& x : xs) {
    if (!is_contrast_metric(x.metric)) {
      out.push_back(check_one(x, x.metric, s.runs, s.sweep));
      continue;
    }
    const std::string inner = x.metric.substr(kContrastPrefix.size());
    out.push_back(s.contrast ? check_one(x, inner, s.contrast->runs, s.contrast->sweep)
                             : check_one(x, inner, {}, {}));
  }
  return out;
}

namespace {

// The contrast runs as a sweep of its own (its baseline too, derived from
// the same file), with no pcaps: the main runs' captures are the record.
void run_contrast(const Scenario& sc, const std::vector<uint64_t>& seeds, const RunOptions& first_opt,
                  const std::function<void(const std::string&)>& status, SweepResult& s) {
  if (sc.contrast_set.empty()) return;
  auto variant = derive_scenario(sc, sc.contrast_set);
  if (!variant) return;  // parse_scenario checked it; an override in `sc` may still break it
  auto keep = std::make_shared<Scenario>(std::move(*variant));
  keep->name = sc.name + " (contrast)";
  keep->expects.clear();  // its metrics are read through "contrast.<metric>"
  s.contrast = std::make_shared<SweepResult>(run_sweep(*keep, seeds, RunOptions{{}, first_opt.progress}, status));
  s.contrast->variant = keep;  // owns what s.contrast->scenario points at
}

}  // namespace

bool SweepResult::pass() const {
  for (const auto& e : expects)
    if (!e.pass) return false;
  return true;
}

SweepResult run_sweep(const Scenario& sc, const std::vector<uint64_t>& seeds, const RunOptions& first_opt,
                      const std::function<void(const std::string&)>& status) {
  SweepResult s;
  s.scenario = &sc;
  Expected<Scenario, std::string> base = Unexpected(std::string());
  if (!sc.baseline_set.empty()) base = derive_scenario(sc, sc.baseline_set);
  for (size_t i = 0; i < seeds.size(); ++i) {
    if (status) status(fmt::format("{} seed {} ({}/{})", sc.name, seeds[i], i + 1, seeds.size()));
    RunOptions o = i == 0 ? first_opt : RunOptions{{}, first_opt.progress};
    s.runs.push_back(run_once(sc, seeds[i], o));
    if (!sc.baseline_set.empty() && !base) s.runs.back().labels["error"] = "baseline: " + base.error();
    if (base) {
      s.baselines.push_back(run_once(*base, seeds[i], RunOptions{{}, first_opt.progress}));
      compare_to_baseline(s.runs.back(), s.baselines.back(), sc.wedged_ratio);
    }
  }
  s.sweep = sweep_metrics(s.runs, s.baselines);
  run_contrast(sc, seeds, first_opt, status, s);
  s.expects = check_expectations(sc.expects, s);
  return s;
}

}  // namespace weir::sim
