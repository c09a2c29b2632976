#include "pkt/report.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <pcap/pcap.h>

namespace weir::pkt {

std::vector<std::string> collect_scripts(const std::vector<std::string>& args, std::string* error) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(a, ec))
        if (e.is_regular_file() && e.path().extension() == ".pkt") found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(a, ec)) {
      out.push_back(a);
    } else if (error) {
      *error = fmt::format("{}: no such file or directory", a);
      return {};
    }
  }
  return out;
}

std::string format_run(const ScriptRun& r, bool verbose) {
  const RunResult& res = r.result;
  std::string s = fmt::format("{} {} ({})", to_string(res.outcome), r.path, to_string(r.variant));
  if (res.outcome != Outcome::kPass) {
    s += fmt::format(": {}", res.reason);
    if (res.line > 0) s += fmt::format("\n    {}:{}: {}", r.path, res.line, res.script_line);
    for (const std::string& d : res.detail) s += fmt::format("\n    {}", d);
  }
  if (verbose)
    for (const std::string& l : res.log) s += fmt::format("\n      {}", l);
  return s;
}

std::string format_totals(const std::vector<ScriptRun>& runs) {
  int pass = 0, fail = 0, skip = 0;
  for (const ScriptRun& r : runs) {
    if (r.result.outcome == Outcome::kPass) ++pass;
    else if (r.result.outcome == Outcome::kFail) ++fail;
    else ++skip;
  }
  return fmt::format("{} passed, {} failed, {} skipped", pass, fail, skip);
}

std::string format_summary_by_folder(const std::vector<ScriptRun>& runs, const std::string& root) {
  namespace fs = std::filesystem;
  struct Row {
    int pass = 0, fail = 0, skip = 0;
  };
  std::map<std::string, Row> rows;
  for (const ScriptRun& r : runs) {
    std::string dir = fs::path(r.path).parent_path().string();
    std::string base = fs::path(root).lexically_normal().string();
    std::string norm = fs::path(dir).lexically_normal().string();
    if (!base.empty() && norm.rfind(base, 0) == 0) norm = norm.substr(base.size());
    size_t first = norm.find_first_not_of('/');
    norm = first == std::string::npos ? std::string(".") : norm.substr(first);
    Row& row = rows[norm];
    if (r.result.outcome == Outcome::kPass) ++row.pass;
    else if (r.result.outcome == Outcome::kFail) ++row.fail;
    else ++row.skip;
  }
  std::string s = fmt::format("{:<28} {:>6} {:>6} {:>6} {:>9}\n", "folder", "pass", "fail", "skip", "pass rate");
  for (const auto& [dir, row] : rows) {
    int total = row.pass + row.fail + row.skip;
    s += fmt::format("{:<28} {:>6} {:>6} {:>6} {:>8.0f}%\n", dir, row.pass, row.fail, row.skip,
                     total ? 100.0 * row.pass / total : 0.0);
  }
  return s;
}

std::string write_pcap(const std::string& path, const std::vector<std::pair<Time, std::vector<uint8_t>>>& packets) {
  pcap_t* p = pcap_open_dead(DLT_RAW, 65535);
  if (!p) return "pcap_open_dead failed";
  pcap_dumper_t* d = pcap_dump_open(p, path.c_str());
  if (!d) {
    std::string err = pcap_geterr(p);
    pcap_close(p);
    return err;
  }
  for (const auto& [t, bytes] : packets) {
    pcap_pkthdr h{};
    h.ts.tv_sec = t.ns() / 1000000000;
    h.ts.tv_usec = (t.ns() % 1000000000) / 1000;
    h.caplen = h.len = static_cast<bpf_u_int32>(bytes.size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, bytes.data());
  }
  pcap_dump_close(d);
  pcap_close(p);
  return {};
}

}  // namespace weir::pkt
