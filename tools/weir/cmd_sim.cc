// `weir sim FILE.toml`: one scenario, one seed or a sweep. Prints a table
// per flow and the expectations with PASS/FAIL; with --out writes
// summary.json, time series, pcaps and plots. Exit status: 0 when every
// expectation passed, 1 when one failed, 2 when the scenario did not load.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command.h"
#include "sim/progress.h"
#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace weir::cli {
namespace {

struct SimArgs {
  std::string file;
  std::vector<std::string> sets;
  int64_t seed = -1;
  std::string seeds;
  std::string out;
  bool json = false;
};

int run_sim(const SimArgs& a) {
  auto sc = sim::load_scenario(a.file, a.sets);
  if (!sc) {
    std::fprintf(stderr, "%s\n", sc.error().c_str());
    return 2;
  }
  std::vector<uint64_t> seeds = sc->seeds;
  if (a.seed >= 0) seeds = {static_cast<uint64_t>(a.seed)};
  if (!a.seeds.empty()) {
    auto s = sim::parse_seed_list(a.seeds);
    if (!s) {
      std::fprintf(stderr, "--seeds: %s\n", s.error().c_str());
      return 2;
    }
    seeds = *s;
  }
  sim::ProgressBar bar;
  sim::RunOptions opt;
  opt.pcap_dir = a.out;
  if (!a.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.out, ec);  // pcaps are written during the run
    if (ec) {
      std::fprintf(stderr, "weir sim: %s: %s\n", a.out.c_str(), ec.message().c_str());
      return 2;
    }
  }
  opt.progress = [&bar](const sim::Progress& p) { bar.update(p); };
  auto res = sim::run_sweep(*sc, seeds, opt, [&bar](const std::string& s) { bar.set_label(s); });
  bar.clear();
  if (!a.out.empty()) {
    std::string err = sim::write_outputs(res, a.out);
    if (!err.empty()) std::fprintf(stderr, "weir sim: %s\n", err.c_str());
  }
  if (a.json) {
    std::puts(sim::sweep_json(res).dump(2).c_str());
    return res.pass() ? 0 : 1;
  }
  std::printf("%s", fmt::format("scenario {} ({}): {}\n", sc->name, sc->path, sc->description).c_str());
  if (!sc->note.empty()) std::printf("note: %s\n", sc->note.c_str());
  double wall = 0;
  uint64_t events = 0;
  for (size_t i = 0; i < res.runs.size(); ++i) {
    const auto& r = res.runs[i];
    wall += r.wall_s;
    events += r.events;
    if (i < 3 || res.runs.size() <= 4) {
      std::printf("\nseed %llu: simulated %.3f s\n", static_cast<unsigned long long>(r.seed), r.simulated.secs());
      std::printf("%s", sim::flow_table(r).c_str());
      auto e = r.labels.find("error");
      if (e != r.labels.end()) std::printf("error: %s\n", e->second.c_str());
    }
  }
  if (res.runs.size() > 4) std::printf("(%zu more seeds: see summary.json)\n", res.runs.size() - 3);
  if (res.contrast && !res.contrast->runs.empty()) {
    const auto& r = res.contrast->runs.front();
    std::printf("%s", fmt::format("\ncontrast ({}){}: seed {}\n", fmt::join(sc->contrast_set, ", "),
                                  sc->contrast_note.empty() ? "" : ": " + sc->contrast_note, r.seed).c_str());
    std::printf("%s", sim::flow_table(r).c_str());
    for (const auto& c : res.contrast->runs) {
      events += c.events;
      wall += c.wall_s;
    }
  }
  std::printf("\nexpectations:\n%s", sim::expectation_table(res).c_str());
  std::printf("%s", fmt::format("{} run(s){}, {} events in {:.2f} s wall\n", res.runs.size(),
                                std::string(res.baselines.empty() ? "" : " plus baselines") +
                                    (res.contrast ? " plus contrast" : ""),
                                events, wall).c_str());
  return res.pass() ? 0 : 1;
}

Register reg("sim", [](CLI::App& app) -> std::function<int()> {
  auto a = std::make_shared<SimArgs>();
  app.description("run one scenario file (see docs/lab.md)");
  app.add_option("file", a->file, "scenario (.toml)")->required();
  app.add_option("--seed", a->seed, "run this seed only");
  app.add_option("--seeds", a->seeds, "a sweep: 1..12 or 1,3,5");
  app.add_option("--set", a->sets, "override a key: link.fwd.rate=10Mbit (repeatable)");
  app.add_option("--out", a->out, "write summary.json, time series, pcaps and plots here");
  app.add_flag("--json", a->json, "print summary.json instead of tables");
  return [a] { return run_sim(*a); };
});

}  // namespace
}  // namespace weir::cli
