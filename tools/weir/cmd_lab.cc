// `weir lab`: runs every shipped scenario (scenarios/*.toml), prints one
// table (scenario, expectation, measured, PASS/FAIL) and writes
// DIR/index.html linking each scenario's report and plots. Exit status is 0
// unless --strict is given and an expectation failed (or a scenario did not
// load, which is always an error).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command.h"
#include "sim/progress.h"
#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario.h"
#include "sim/soak.h"

namespace weir::cli {
namespace {

namespace fs = std::filesystem;

struct LabArgs {
  std::string out = "build/lab";
  std::string dir;
  std::vector<std::string> only;
  bool strict = false;
  bool check = false;      // --check: load every scenario, run nothing
  uint64_t soak = 0;       // --soak N: the randomized integrity soak instead of the scenarios
  uint64_t soak_seed = 1;  // first seed
  bool verbose = false;
};

// `weir lab --soak N [--seed S]`: seeds S .. S+N-1 (src/sim/soak.h). Every
// failure prints its seed, what the seed chose and the command replaying it.
int run_soak(const LabArgs& a) {
  uint64_t failures = 0, packets = 0;
  double worst_ratio = 0, wall = 0;
  uint64_t worst_seed = 0;
  for (uint64_t seed = a.soak_seed; seed < a.soak_seed + a.soak; ++seed) {
    const sim::SoakCase c = sim::make_soak_case(seed);
    const auto t0 = std::chrono::steady_clock::now();
    const sim::SoakResult r = sim::run_soak(c);
    wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    packets += r.packets;
    const double ratio = r.elapsed.secs() / r.bound.secs();
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst_seed = seed;
    }
    if (a.verbose || !r.ok)
      std::printf("%s", fmt::format("{} seed {}: {:.2f}s of {:.1f}s bound, {} packets, {} retransmitted{}{}\n  {}\n",
                                    r.ok ? "ok" : "FAIL", seed, r.elapsed.secs(), r.bound.secs(), r.packets,
                                    r.retrans, r.ok ? "" : ": ", r.error, c.describe()).c_str());
    if (!r.ok) {
      ++failures;
      std::printf("  replay: weir lab --soak 1 --seed %llu\n", static_cast<unsigned long long>(seed));
    }
    std::fflush(stdout);
  }
  std::printf("%s", fmt::format("soak: {} seeds from {}: {} failed; {} packets; slowest run used {:.0f} % of its "
                                "bound (seed {}); {:.1f} s wall\n",
                                a.soak, a.soak_seed, failures, packets, 100 * worst_ratio, worst_seed, wall).c_str());
  return failures ? 1 : 0;
}

// scenarios/ next to the working directory, else beside the source tree the
// binary was built from (build/<preset>/tools/weir/weir).
fs::path find_scenarios(const std::string& given) {
  if (!given.empty()) return given;
  if (fs::is_directory("scenarios")) return "scenarios";
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (fs::path p = exe.parent_path(); !ec && !p.empty() && p != p.root_path(); p = p.parent_path())
    if (fs::is_directory(p / "scenarios") && fs::exists(p / "CMakeLists.txt")) return p / "scenarios";
  return "scenarios";
}

struct Row {
  std::string scenario, expectation, measured;
  bool pass;
};

int run_lab(const LabArgs& a) {
  fs::path dir = find_scenarios(a.dir);
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".toml") files.push_back(e.path());
  if (ec || files.empty()) {
    std::fprintf(stderr, "weir lab: no scenarios in %s\n", dir.c_str());
    return 2;
  }
  std::sort(files.begin(), files.end());
  if (!a.check) fs::create_directories(a.out, ec);
  sim::ProgressBar bar;
  std::vector<Row> rows;
  int failed = 0, broken = 0;
  double wall = 0;
  std::string links;
  nlohmann::json lab = nlohmann::json::array();
  for (const auto& f : files) {
    auto sc = sim::load_scenario(f.string());
    if (!sc) {
      std::fprintf(stderr, "%s\n", sc.error().c_str());
      rows.push_back({f.stem().string(), "(scenario did not load)", "-", false});
      ++broken;
      continue;
    }
    if (!a.only.empty() && std::find(a.only.begin(), a.only.end(), sc->name) == a.only.end()) continue;
    if (a.check) {
      std::printf("%s", fmt::format("{}: loads ({} flows, {} expectations)\n", f.string(), sc->flows.size(),
                                    sc->expects.size()).c_str());
      continue;
    }
    fs::path out = fs::path(a.out) / sc->name;
    fs::create_directories(out, ec);
    sim::RunOptions opt;
    opt.pcap_dir = out.string();
    opt.progress = [&bar](const sim::Progress& p) { bar.update(p); };
    auto res = sim::run_sweep(*sc, sc->seeds, opt, [&bar](const std::string& s) { bar.set_label(s); });
    bar.clear();
    for (const auto& r : res.runs) wall += r.wall_s;
    for (const auto& r : res.baselines) wall += r.wall_s;
    if (res.contrast)
      for (const auto* v : {&res.contrast->runs, &res.contrast->baselines})
        for (const auto& r : *v) wall += r.wall_s;
    std::string err = sim::write_outputs(res, out.string());
    if (!err.empty()) std::fprintf(stderr, "weir lab: %s\n", err.c_str());
    for (const auto& e : res.expects) {
      rows.push_back({sc->name, e.x.text, e.missing ? "missing" : sim::fmt_metric(e.measured), e.pass});
      failed += !e.pass;
    }
    for (const auto& r : res.runs) {
      auto it = r.labels.find("error");
      if (it != r.labels.end()) std::fprintf(stderr, "%s seed %llu: %s\n", sc->name.c_str(),
                                             static_cast<unsigned long long>(r.seed), it->second.c_str());
    }
    links += fmt::format("<tr><td><a href=\"{0}/index.html\">{0}</a></td><td>{1}</td><td>{2}</td></tr>\n", sc->name,
                         sc->description, res.pass() ? "PASS" : "FAIL");
    lab.push_back({{"scenario", sc->name}, {"pass", res.pass()}, {"summary", sc->name + "/summary.json"}});
  }
  if (a.check) return broken ? 2 : 0;
  size_t w = 8;
  for (const auto& r : rows) w = std::max(w, r.scenario.size());
  std::printf("%s", fmt::format("{:<{}}  {:<46} {:>12}  {}\n", "scenario", w, "expectation", "measured", "result").c_str());
  for (const auto& r : rows)
    std::printf("%s", fmt::format("{:<{}}  {:<46} {:>12}  {}\n", r.scenario, w, r.expectation, r.measured,
                                  r.pass ? "PASS" : "FAIL").c_str());
  std::printf("%s", fmt::format("{} expectations: {} passed, {} failed; {} scenario(s) did not load; {:.1f} s wall\n",
                                rows.size() - static_cast<size_t>(broken), rows.size() - static_cast<size_t>(failed + broken),
                                failed, broken, wall).c_str());
  std::ofstream(fs::path(a.out) / "index.html")
      << "<!doctype html><meta charset=\"utf-8\"><title>weir lab</title>\n<h1>weir lab</h1>\n"
      << "<table border=\"1\" cellpadding=\"4\"><tr><th>scenario</th><th>what</th><th>result</th></tr>\n"
      << links << "</table>\n";
  std::ofstream(fs::path(a.out) / "lab.json") << lab.dump(2) << "\n";
  std::printf("report: %s\n", (fs::path(a.out) / "index.html").c_str());
  if (broken) return 2;
  return a.strict && failed ? 1 : 0;
}

Register reg("lab", [](CLI::App& app) -> std::function<int()> {
  auto a = std::make_shared<LabArgs>();
  app.description("run every shipped scenario and write a report");
  app.add_option("--out", a->out, "report directory (default build/lab)");
  app.add_option("--scenarios", a->dir, "scenario directory (default: ./scenarios or the source tree's)");
  app.add_option("--only", a->only, "run only these scenarios (by name)");
  app.add_flag("--strict", a->strict, "exit 1 when any expectation fails");
  app.add_flag("--check", a->check, "only load every scenario (exit 2 if one does not), run nothing");
  app.add_option("--soak", a->soak, "run the randomized integrity soak over N seeds instead (exit 1 on a failure)");
  app.add_option("--seed", a->soak_seed, "first soak seed (default 1)");
  app.add_flag("-v,--verbose", a->verbose, "soak: print every run, not only failures");
  return [a] { return a->soak ? run_soak(*a) : run_lab(*a); };
});

}  // namespace
}  // namespace weir::cli
