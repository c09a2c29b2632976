// `weir pkt`: packetdrill scripts against the stack, in-process, on
// virtual time. Files and directories (recursing into *.pkt); PASS, FAIL
// or SKIP per script and IP variant; a closing "N passed, N failed, N
// skipped"; exit status 1 when any failed.
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command.h"
#include "pkt/report.h"
#include "weir/config.h"

namespace weir::cli {
namespace {

struct PktArgs {
  std::vector<std::string> paths;
  std::string ip_version;
  bool all_ip_versions = false;
  bool verbose = false;
  bool json = false;
  bool summary_by_folder = false;
  std::string pcap;
  std::vector<std::string> defines;
  std::vector<std::string> settings;
  std::vector<std::string> sysctls;
  bool no_code = false;
};

nlohmann::json to_json(const pkt::ScriptRun& r) {
  nlohmann::json j;
  j["script"] = r.path;
  j["ip_version"] = pkt::to_string(r.variant);
  j["outcome"] = pkt::to_string(r.result.outcome);
  j["virtual_seconds"] = r.result.elapsed.secs();
  if (r.result.outcome != pkt::Outcome::kPass) {
    j["reason"] = r.result.reason;
    j["line"] = r.result.line;
    j["script_line"] = r.result.script_line;
    j["detail"] = r.result.detail;
  }
  return j;
}

// -D NAME=VALUE and --set NAME=VALUE into the options every run starts from.
pkt::RunOptions base_options(const PktArgs& a) {
  pkt::RunOptions base;
  base.verbose = a.verbose;
  base.run_code = !a.no_code;
  for (const std::string& d : a.defines) {
    size_t eq = d.find('=');
    base.defines[d.substr(0, eq)] = eq == std::string::npos ? "" : d.substr(eq + 1);
  }
  for (const std::string& s : a.settings) {
    size_t eq = s.find('=');
    base.overrides.emplace_back(s.substr(0, eq), eq == std::string::npos ? "" : s.substr(eq + 1));
  }
  for (const std::string& s : a.sysctls) {
    size_t eq = s.find('=');
    base.sysctls.emplace_back(s.substr(0, eq), eq == std::string::npos ? "" : s.substr(eq + 1));
  }
  return base;
}

// --sysctl KEY=VALUE is checked before any script runs: a typo must not
// turn into a run of the default stack.
bool sysctls_valid(const PktArgs& a) {
  StackConfig scratch;
  for (const std::string& s : a.sysctls) {
    size_t eq = s.find('=');
    std::string why = eq == std::string::npos ? "expected KEY=VALUE" : scratch.set(s.substr(0, eq), s.substr(eq + 1));
    if (why.empty()) continue;
    std::fprintf(stderr, "weir pkt: --sysctl %s: %s\n", s.c_str(), why.c_str());
    return false;
  }
  return true;
}

// The variants a file runs in: every one its name allows, or the one asked
// for (ipv4 by default). False on a bad --ip_version.
bool variants_of(const PktArgs& a, const std::string& file, std::vector<pkt::IpVersion>* out) {
  if (a.all_ip_versions) {
    *out = pkt::variants_for(file);
    return true;
  }
  pkt::IpVersion v = pkt::IpVersion::kIpv4;
  if (!a.ip_version.empty() && !pkt::parse_ip_version(a.ip_version, &v)) return false;
  *out = {v};
  return true;
}

// The closing report (JSON, or the per-folder summary and totals); the exit status.
int report(const PktArgs& a, const std::vector<pkt::ScriptRun>& runs) {
  bool failed = false;
  for (const auto& r : runs) failed |= r.result.outcome == pkt::Outcome::kFail;
  if (a.json) {
    nlohmann::json j;
    j["runs"] = nlohmann::json::array();
    for (const auto& r : runs) j["runs"].push_back(to_json(r));
    j["totals"] = pkt::format_totals(runs);
    std::printf("%s\n", j.dump(2).c_str());
    return failed ? 1 : 0;
  }
  if (a.summary_by_folder)
    std::printf("\n%s", pkt::format_summary_by_folder(runs, a.paths.size() == 1 ? a.paths[0] : "").c_str());
  std::printf("%s\n", pkt::format_totals(runs).c_str());
  return failed ? 1 : 0;
}

int run_pkt(const PktArgs& a) {
  std::string err;
  std::vector<std::string> files = pkt::collect_scripts(a.paths, &err);
  if (!err.empty()) {
    std::fprintf(stderr, "weir pkt: %s\n", err.c_str());
    return 2;
  }
  if (!sysctls_valid(a)) return 2;
  const pkt::RunOptions base = base_options(a);
  std::vector<pkt::ScriptRun> runs;
  std::vector<std::pair<Time, std::vector<uint8_t>>> all_packets;
  for (const std::string& f : files) {
    std::vector<pkt::IpVersion> variants;
    if (!variants_of(a, f, &variants)) {
      std::fprintf(stderr, "weir pkt: bad --ip_version=%s\n", a.ip_version.c_str());
      return 2;
    }
    for (pkt::IpVersion v : variants) {
      pkt::RunOptions o = base;
      o.ip_version = v;
      pkt::ScriptRun r{f, v, pkt::run_file(f, o)};
      if (!a.pcap.empty())
        all_packets.insert(all_packets.end(), r.result.packets.begin(), r.result.packets.end());
      r.result.packets.clear();
      if (!a.json) std::printf("%s\n", pkt::format_run(r, a.verbose).c_str());
      std::fflush(stdout);
      runs.push_back(std::move(r));
    }
  }
  if (!a.pcap.empty()) {
    std::string e = pkt::write_pcap(a.pcap, all_packets);
    if (!e.empty()) std::fprintf(stderr, "weir pkt: --pcap %s: %s\n", a.pcap.c_str(), e.c_str());
  }
  return report(a, runs);
}

Register reg("pkt", [](CLI::App& app) -> std::function<int()> {
  auto a = std::make_shared<PktArgs>();
  app.description("run packetdrill scripts against the stack on virtual time");
  app.add_option("paths", a->paths, "scripts (.pkt) or directories")->required();
  app.add_option("--ip_version,--ip-version", a->ip_version, "ipv4 (default), ipv6 or ipv4-mapped-ipv6");
  app.add_flag("--all-ip-versions", a->all_ip_versions, "run each script in every variant its name allows");
  app.add_flag("-v,--verbose", a->verbose, "print the whole exchange");
  app.add_flag("--json", a->json, "machine-readable results");
  app.add_flag("--summary-by-folder", a->summary_by_folder, "pass rates per folder");
  app.add_option("--pcap", a->pcap, "write every packet of the run(s) to this pcap file");
  app.add_option("-D,--define", a->defines, "NAME=VALUE substituted in scripts");
  app.add_option("--set", a->settings,
                 "packetdrill option override, e.g. tolerance_usecs=10000, tcp_ts_tick_usecs=1000");
  app.add_option("--sysctl", a->sysctls,
                 "KEY=VALUE set on the stack before each script (StackConfig keys, e.g. tcp_sack=0)");
  app.add_flag("--no-code", a->no_code, "do not evaluate %{ }% blocks");
  return [a]() { return run_pkt(*a); };
});

}  // namespace
}  // namespace weir::cli
