#include "sim/report.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/svg.h"

namespace weir::sim {
namespace {

constexpr uint32_t kHugeSsthresh = 0x7fffffff / 2;

double get(const RunResult& r, const std::string& k, double dflt = std::nan("")) {
  auto it = r.metrics.find(k);
  return it == r.metrics.end() ? dflt : it->second;
}

std::string cell(double v, int prec = 1) {
  if (std::isnan(v)) return "-";
  return fmt::format("{:.{}f}", v, prec);
}

bool write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}


std::string timeseries_csv(const ConnTrace& c) {
  std::string o = "time_s,event,state,cwnd,ssthresh,inflight,srtt_us,rwnd,snd_wnd,sacked,lost,retrans,ca_state,delivery_rate_Bps,a,b,"
      "pacing_rate_Bps,cubic_wmax,cubic_k_ms,cubic_epoch_ms,bbr_mode,bbr_bw_Bps,bbr_min_rtt_us\n";
  for (const auto& s : c.samples) {
    o += fmt::format("{:.9f},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},", s.now.secs(),
                     static_cast<int>(s.event), s.state, s.cwnd, s.ssthresh, s.inflight, s.srtt_us, s.rwnd,
                     s.snd_wnd, s.sacked, s.lost, s.retrans, to_string(s.ca_state), s.delivery_rate, s.a, s.b);
    // The algorithm's state (issue 7): CUBIC W_max, K, epoch; BBR mode, bw, min RTT.
    o += fmt::format("{},{},{},{},{},{},{}\n", s.pacing_rate, s.cubic_wmax, s.cubic_k_ms,
                     s.cubic_epoch_start_ms, static_cast<int>(s.bbr_mode), s.bbr_bw, s.bbr_min_rtt_us);
  }
  return o;
}

Chart cwnd_chart(const FlowView& f) {
  Chart c;
  c.title = fmt::format("flow {}: cwnd, ssthresh, inflight", f.id);
  c.ylabel = "segments";
  Series cw{"cwnd", "#1f77b4", Series::Style::kStep, {}, {}};
  Series ss{"ssthresh", "#d62728", Series::Style::kStep, {}, {}};
  Series in{"inflight", "#2ca02c", Series::Style::kStep, {}, {}};
  for (const auto& s : f.sender->samples) {
    double t = s.now.secs();
    cw.pts.emplace_back(t, s.cwnd);
    in.pts.emplace_back(t, s.inflight);
    if (s.ssthresh < kHugeSsthresh) ss.pts.emplace_back(t, s.ssthresh);
  }
  c.series = {cw, ss, in};
  return c;
}

Chart throughput_chart(const FlowView& f, Duration total) {
  Chart c;
  c.title = fmt::format("flow {}: goodput at the receiver and delivery rate at the sender", f.id);
  c.ylabel = "Mbit/s";
  Series g{"goodput", "#1f77b4", Series::Style::kStep, {}, {}};
  const auto& pr = f.stats->read_progress;
  double bin = std::max(0.01, total.secs() / 200);
  size_t j = 0;
  uint64_t prev = 0;
  for (double t = 0; t < total.secs() + bin / 2; t += bin) {
    uint64_t upto = prev;
    while (j < pr.size() && pr[j].first.secs() <= t + bin) upto = pr[j++].second;
    g.pts.emplace_back(t, static_cast<double>(upto - prev) * 8 / bin / 1e6);
    prev = upto;
  }
  Series d{"delivery rate", "#ff7f0e", Series::Style::kLine, {}, {}};
  if (f.sender)
    for (const auto& s : f.sender->samples)
      if (s.event == TraceEvent::kAck) d.pts.emplace_back(s.now.secs(), static_cast<double>(s.delivery_rate) * 8 / 1e6);
  c.series = {g, d};
  return c;
}

Chart rtt_chart(const FlowView& f) {
  Chart c;
  c.title = fmt::format("flow {}: RTT", f.id);
  c.ylabel = "ms";
  Series m{"RTT sample (monitor)", "#9467bd", Series::Style::kDots, {}, {}};
  for (auto [t, d] : f.watch->rtts) m.pts.emplace_back(t.secs(), static_cast<double>(d.ns()) / 1e6);
  Series s{"srtt (sender)", "#1f77b4", Series::Style::kLine, {}, {}};
  if (f.sender)
    for (const auto& x : f.sender->samples)
      if (x.srtt_us) s.pts.emplace_back(x.now.secs(), x.srtt_us / 1000.0);
  c.series = {m, s};
  return c;
}

Chart tsg_chart(const FlowView& f) {
  Chart c;
  c.title = fmt::format("flow {}: time-sequence graph{}", f.id, f.watch->tsg_truncated ? " (truncated)" : "");
  c.ylabel = "relative sequence (MB)";
  Series data{"data", "#1f77b4", Series::Style::kSegments, {}, {}};
  Series rtx{"retransmission", "#d62728", Series::Style::kSegments, {}, {}};
  Series sack{"SACK", "#2ca02c", Series::Style::kSegments, {}, {}};
  Series ack{"ACK", "#000000", Series::Style::kStep, {}, {}};
  for (const auto& p : f.watch->sent)
    (p.retrans ? rtx : data).segs.push_back({p.t.secs(), p.begin / 1e6, p.end / 1e6});
  for (const auto& p : f.watch->sacks) sack.segs.push_back({p.t.secs(), p.begin / 1e6, p.end / 1e6});
  for (auto [t, a] : f.watch->acks) ack.pts.emplace_back(t.secs(), a / 1e6);
  c.series = {data, ack, sack, rtx};
  return c;
}

// ECMP runs: each path's share of the forwarded bytes, CE marks and drops,
// and how many times PLB moved a flow (a flow's path is not otherwise visible).
std::string path_line(const RunResult& r) {
  std::string o;
  for (int i = 1; !std::isnan(get(r, fmt::format("path.{}.share", i))); ++i) {
    const std::string p = fmt::format("path.{}.", i);
    o += fmt::format("{}path {}: {:.1f}% (ce {}, drops {})", o.empty() ? "" : "; ", i, 100 * get(r, p + "share"),
                     fmt_metric(get(r, p + "ce_marks")), fmt_metric(get(r, p + "drops")));
  }
  if (o.empty()) return o;
  return fmt::format("{}; PLB rehashes {}\n", o, fmt_metric(get(r, "plb_rehash")));
}

}  // namespace

std::string fmt_metric(double v) {
  if (std::isnan(v)) return "missing";
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(std::round(v)));
  return fmt::format("{:.4g}", v);
}

std::string flow_table(const RunResult& r) {
  std::string o = fmt::format("{:>4} {:>9} {:>8} {:>6} {:>5} {:>4} {:>4} {:>6} {:>14} {:>20} {:>7}\n", "flow",
                              "goodput", "done(s)", "retx", "spur", "rto", "undo", "maxcwn", "hystart exit",
                              "rtt min/avg/max ms", "beyond");
  for (const auto& f : r.flows) {
    std::string p = fmt::format("flow.{}.", f.id);
    double done = get(r, p + "completed") == 1 ? get(r, p + "completion_s") : std::nan("");
    std::string hy = "-";
    if (get(r, p + "hystart_exit_cwnd", 0) > 0) {
      auto l = r.labels.find(p + "hystart_exit_reason");
      hy = fmt::format("{} {}", fmt_metric(get(r, p + "hystart_exit_cwnd")), l == r.labels.end() ? "" : l->second);
    }
    std::string rtt = fmt::format("{}/{}/{}", cell(get(r, p + "rtt_min_ms")), cell(get(r, p + "rtt_avg_ms")),
                                  cell(get(r, p + "rtt_max_ms")));
    o += fmt::format("{:>4} {:>9} {:>8} {:>6} {:>5} {:>4} {:>4} {:>6} {:>14} {:>20} {:>7}\n", f.id,
                     cell(get(r, p + "goodput_mbps"), 2), cell(done, 3), fmt_metric(get(r, p + "retrans_segs")),
                     fmt_metric(get(r, p + "spurious_retrans")),
                     fmt_metric(get(r, p + "rto_count", get(r, p + "rto_events", std::nan("")))),
                     fmt_metric(get(r, p + "undo_events")), fmt_metric(get(r, p + "max_cwnd")), hy, rtt,
                     fmt_metric(get(r, p + "bytes_beyond_wnd")));
    auto e = r.labels.find(p + "error");
    if (e != r.labels.end()) o += fmt::format("     error: {}\n", e->second);
  }
  o += "goodput in Mbit/s; retx/spur: retransmitted and spurious segments (monitor); beyond: bytes sent past the peer's window\n";
  return o + path_line(r);
}

std::string expectation_table(const SweepResult& s) {
  std::string o;
  for (const auto& e : s.expects) {
    std::string measured = e.missing ? "missing" : fmt_metric(e.measured);
    const std::string& m = e.x.metric;
    const bool contrast = is_contrast_metric(m) && s.contrast;
    const bool sweep = contrast ? s.contrast->sweep.count(m.substr(kContrastPrefix.size())) > 0 : s.sweep.count(m) > 0;
    std::string where = s.runs.size() > 1 && !sweep ? fmt::format(" (seed {})", e.seed) : "";
    o += fmt::format("  {:<4} {:<44} measured {}{}\n", e.pass ? "PASS" : "FAIL", e.x.text, measured, where);
  }
  return o;
}

nlohmann::json sweep_json(const SweepResult& s) {
  using nlohmann::json;
  const Scenario& sc = *s.scenario;
  json j;
  j["scenario"] = sc.name;
  j["description"] = sc.description;
  j["note"] = sc.note;
  j["file"] = sc.path;
  j["overrides"] = sc.overrides;
  j["duration_s"] = sc.duration.secs();
  j["pass"] = s.pass();
  json runs = json::array();
  for (const auto& r : s.runs) {
    json jr;
    jr["seed"] = r.seed;
    jr["metrics"] = r.metrics;
    jr["labels"] = r.labels;
    json links = json::object();
    for (const auto& l : r.links) {
      const LinkStats& st = *l.stats;
      links[l.name] = {{"packets_in", st.packets_in},       {"delivered", st.delivered},
                       {"drop_queue", st.drop_queue},       {"drop_codel", st.drop_codel},
                       {"drop_loss", st.drop_loss},         {"drop_pattern", st.drop_pattern},
                       {"duplicated", st.duplicated},       {"corrupted", st.corrupted},
                       {"reordered", st.reordered},         {"max_queue_packets", st.max_queue_packets},
                       {"windows_retreated", st.windows_retreated}, {"ce_marked", st.ce_marked}};
    }
    jr["links"] = links;
    runs.push_back(jr);
  }
  j["runs"] = runs;
  json base = json::array();
  for (const auto& r : s.baselines) base.push_back({{"seed", r.seed}, {"metrics", r.metrics}});
  j["baselines"] = base;
  j["sweep"] = s.sweep;
  if (s.contrast) {
    json runs_c = json::array();
    for (const auto& r : s.contrast->runs)
      runs_c.push_back({{"seed", r.seed}, {"metrics", r.metrics}, {"labels", r.labels}});
    j["contrast"] = {{"set", sc.contrast_set}, {"note", sc.contrast_note}, {"runs", runs_c},
                     {"sweep", s.contrast->sweep}};
  }
  json ex = json::array();
  for (const auto& e : s.expects)
    ex.push_back({{"expect", e.x.text}, {"line", e.x.line}, {"pass", e.pass}, {"missing", e.missing},
                  {"measured", e.measured}, {"seed", e.seed}});
  j["expectations"] = ex;
  return j;
}

namespace {

// flowN/ under `dir` for every flow of `r`: CSV time series and the plots.
void write_flow_files(const RunResult& r, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& f : r.flows) {
    fs::path fd = dir / fmt::format("flow{}", f.id);
    fs::create_directories(fd, ec);
    if (f.sender) {
      write_file(fd / "timeseries.csv", timeseries_csv(*f.sender));
      write_file(fd / "cwnd.svg", cwnd_chart(f).render());
    }
    if (f.receiver) write_file(fd / "timeseries-receiver.csv", timeseries_csv(*f.receiver));
    write_file(fd / "throughput.svg", throughput_chart(f, r.simulated).render());
    write_file(fd / "rtt.svg", rtt_chart(f).render());
    write_file(fd / "tsg.svg", tsg_chart(f).render());
  }
}

}  // namespace

std::string write_outputs(const SweepResult& s, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fmt::format("{}: {}", dir, ec.message());
  if (!write_file(fs::path(dir) / "summary.json", sweep_json(s).dump(2) + "\n")) return dir + "/summary.json: write failed";
  if (s.runs.empty()) return "";
  write_flow_files(s.runs.front(), dir);
  // The contrast's first run beside it, so the bug can be seen next to the fix.
  if (s.contrast && !s.contrast->runs.empty()) write_flow_files(s.contrast->runs.front(), fs::path(dir) / "contrast");
  write_file(fs::path(dir) / "index.html", scenario_html(s));
  return "";
}

std::string scenario_html(const SweepResult& s) {
  const Scenario& sc = *s.scenario;
  std::string o = fmt::format("<!doctype html><meta charset=\"utf-8\"><title>{0}</title>\n<h1>{0}</h1>\n<p>{1}</p>\n",
                              sc.name, sc.description);
  if (!sc.note.empty()) o += fmt::format("<p><i>{}</i></p>\n", sc.note);
  o += "<h2>Expectations</h2><pre>" + expectation_table(s) + "</pre>\n";
  if (!s.runs.empty()) {
    o += fmt::format("<h2>Flows (seed {})</h2><pre>{}</pre>\n", s.runs.front().seed, flow_table(s.runs.front()));
    for (const auto& f : s.runs.front().flows) {
      if (f.id > 8) {
        o += "<p>(plots for further flows are in their flowN directories)</p>\n";
        break;
      }
      o += fmt::format("<h3>flow {0}</h3>\n<p><a href=\"flow{0}/timeseries.csv\">timeseries.csv</a></p>\n", f.id);
      for (const char* p : {"cwnd", "throughput", "rtt", "tsg"})
        o += fmt::format("<img src=\"flow{}/{}.svg\" width=\"960\"><br>\n", f.id, p);
    }
  }
  if (s.contrast && !s.contrast->runs.empty()) {
    const RunResult& c = s.contrast->runs.front();
    o += fmt::format("<h2>Contrast (seed {}): {}</h2>\n", c.seed, fmt::join(sc.contrast_set, ", "));
    if (!sc.contrast_note.empty()) o += fmt::format("<p><i>{}</i></p>\n", sc.contrast_note);
    o += fmt::format("<pre>{}</pre>\n", flow_table(c));
    for (const auto& f : c.flows) {
      if (f.id > 8) break;
      for (const char* p : {"cwnd", "throughput", "tsg"})
        o += fmt::format("<img src=\"contrast/flow{}/{}.svg\" width=\"960\"><br>\n", f.id, p);
    }
  }
  return o;
}

}  // namespace weir::sim
