// Running many scripts and reporting on them: file collection, per-run text
// (PASS/FAIL/SKIP with the reason and the marked packets), per-folder
// summaries, and pcap output of a run's packets.
#pragma once

#include <string>
#include <vector>

#include "pkt/runner.h"

namespace weir::pkt {

struct ScriptRun {
  std::string path;
  IpVersion variant = IpVersion::kIpv4;
  RunResult result;
};

// Files as given, and every *.pkt under each directory (recursively), sorted.
std::vector<std::string> collect_scripts(const std::vector<std::string>& args, std::string* error);

// "PASS path (ipv4)" or a FAIL/SKIP block with the reason, the script line
// and the expected/actual packets; with `verbose`, the whole exchange.
std::string format_run(const ScriptRun& r, bool verbose);

// "N passed, N failed, N skipped"
std::string format_totals(const std::vector<ScriptRun>& runs);

// One line per folder (relative to `root` when it is a prefix): counts and pass rate.
std::string format_summary_by_folder(const std::vector<ScriptRun>& runs, const std::string& root);

// Writes the packets of a run as a LINKTYPE_RAW pcap; returns "" or the error.
std::string write_pcap(const std::string& path, const std::vector<std::pair<Time, std::vector<uint8_t>>>& packets);

}  // namespace weir::pkt
