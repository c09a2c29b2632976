// Runs a parsed packetdrill script against a weir::Stack in-process, on a
// virtual clock: the script's timeline is the only time there is, so a
// script that takes seconds on a kernel takes milliseconds and never flakes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pkt/ast.h"
#include "weir/time.h"

namespace weir::pkt {

enum class IpVersion { kIpv4, kIpv6, kIpv4MappedIpv6 };
const char* to_string(IpVersion v);  // "ipv4", "ipv6", "ipv4-mapped-ipv6"
bool parse_ip_version(std::string_view s, IpVersion* out);

// "/usr/bin/python3" when it exists, else "python3" from PATH.
std::string default_python();

struct RunOptions {
  IpVersion ip_version = IpVersion::kIpv4;
  std::map<std::string, std::string> defines;  // -D NAME=VALUE
  // Command-line settings that override the script's own header options
  // (same names: tolerance_usecs, tcp_ts_tick_usecs, strict_segments, ...).
  std::vector<std::pair<std::string, std::string>> overrides;
  // --sysctl KEY=VALUE: StackConfig keys set before the script's own set-up
  // lines run (those may change them again).
  std::vector<std::pair<std::string, std::string>> sysctls;
  bool verbose = false;          // record the whole exchange in RunResult::log
  // For %{ }% blocks: the system python3 (a PATH lookup can land on a
  // version-manager shim that costs seconds per run on a loaded machine).
  std::string python = default_python();
  bool run_code = true;          // evaluate %{ }% blocks after the run
};

enum class Outcome { kPass, kFail, kSkip };
const char* to_string(Outcome o);  // "PASS", "FAIL", "SKIP"

struct RunResult {
  Outcome outcome = Outcome::kPass;
  std::string reason;  // one line: why it failed or skipped
  int line = 0;        // the script line the reason refers to (0: none)
  std::string script_line;  // that line's text
  std::vector<std::string> detail;  // expected/actual packets, marked field
  std::vector<std::string> log;     // -v: every event with its virtual time
  Duration elapsed;                 // virtual time the script covered
  // Every packet in either direction, for --pcap: (time, IP datagram).
  std::vector<std::pair<Time, std::vector<uint8_t>>> packets;
};

// Runs one script (already parsed) in one IP variant. `source` is the
// script text, used to quote the failing line.
RunResult run_script(const Script& script, const std::string& source, const RunOptions& opt);

// Reads, parses and runs a file. Parse errors are failures with file:line:column.
RunResult run_file(const std::string& path, const RunOptions& opt);

// The IP variants a script's name allows, as packetdrill's run_all.py:
// names ending in -v4 / _ipv4 run only in IPv4, -v6 / _ipv6 only in IPv6,
// others in all three.
std::vector<IpVersion> variants_for(const std::string& path);

}  // namespace weir::pkt
