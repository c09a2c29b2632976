// cat/grep as POSIX and GNU grep(1) behave: grep prints the selected lines,
// prefixed with "FILE:" when given more than one file, and exits 0 when a
// line was selected, 1 when none, 2 on an error (a missing file); a
// pipeline's status is its last command's. A file weir does not emulate
// makes the pipeline unsupported rather than "No such file" (status 2): the
// real one exists on Linux.
#include "pkt/shell_text.h"

#include <regex>
#include <sstream>

#include <fmt/format.h>

namespace weir::pkt {
namespace {

struct GrepOpts {
  bool quiet = false, invert = false, count = false, fixed = false, extended = false, icase = false;
};

// Flags first, then the pattern: "-qv", "-F", "--" ends them.
std::optional<std::string> grep_flags(const std::vector<std::string>& w, size_t& i, GrepOpts& o) {
  for (; i < w.size() && w[i].size() > 1 && w[i][0] == '-'; ++i) {
    if (w[i] == "--") { ++i; break; }
    for (char c : w[i].substr(1)) {
      switch (c) {
        case 'q': o.quiet = true; break;
        case 'v': o.invert = true; break;
        case 'c': o.count = true; break;
        case 'F': o.fixed = true; break;
        case 'E': o.extended = true; break;
        case 'i': o.icase = true; break;
        default: return fmt::format("grep option -{} is not emulated", c);
      }
    }
  }
  return std::nullopt;
}

bool selects(const std::string& line, const std::string& pat, const std::regex* re, const GrepOpts& o) {
  const bool hit = re ? std::regex_search(line, *re) : line.find(pat) != std::string::npos;
  return hit != o.invert;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TextRun grep(const std::vector<std::string>& w, const std::string& input, const ReadFile& read) {
  GrepOpts o;
  size_t i = 1;
  if (auto why = grep_flags(w, i, o)) return {2, {}, *why};
  if (i >= w.size()) return {2, {}, "grep without a pattern"};
  const std::string pat = w[i++];
  std::optional<std::regex> re;
  if (!o.fixed) {
    auto flags = o.extended ? std::regex::extended : std::regex::basic;
    if (o.icase) flags |= std::regex::icase;
    try {
      re.emplace(pat, flags);
    } catch (const std::regex_error&) {
      return {2, {}, fmt::format("grep pattern '{}' is not a regular expression std::regex reads", pat)};
    }
  }
  std::vector<std::string> files(w.begin() + static_cast<std::ptrdiff_t>(i), w.end());
  TextRun r{1, {}, {}};
  size_t n = 0;
  auto scan = [&](const std::string& text, const std::string& prefix) {
    for (const std::string& l : split_lines(text)) {
      if (!selects(l, pat, re ? &*re : nullptr, o)) continue;
      ++n;
      if (!o.count && !o.quiet) r.out += prefix + l + '\n';
    }
  };
  if (files.empty()) scan(input, "");
  for (const std::string& f : files) {
    auto text = read(f);
    if (!text) return {2, {}, fmt::format("grep reads {}, which weir does not emulate", f)};
    scan(*text, files.size() > 1 ? f + ":" : "");
  }
  if (o.count) r.out = fmt::format("{}\n", n);
  r.status = n > 0 ? 0 : 1;
  return r;
}

TextRun cat(const std::vector<std::string>& w, const std::string& input, const ReadFile& read) {
  if (w.size() == 1) return {0, input, {}};
  TextRun r;
  for (size_t i = 1; i < w.size(); ++i) {
    auto text = read(w[i]);
    if (!text) return {1, {}, fmt::format("cat reads {}, which weir does not emulate", w[i])};
    r.out += *text;
  }
  return r;
}

}  // namespace

bool is_text_command(const std::string& prog) { return prog == "cat" || prog == "grep"; }

TextRun run_text_pipeline(const std::vector<std::vector<std::string>>& stages, const ReadFile& read) {
  TextRun r;
  for (const auto& w : stages) {
    if (w.empty() || !is_text_command(w[0]))
      return {2, {}, fmt::format("`{}` in a pipeline is not emulated", w.empty() ? "" : w[0])};
    r = w[0] == "grep" ? grep(w, r.out, read) : cat(w, r.out, read);
    if (!r.unsupported.empty()) return r;
  }
  return r;
}

}  // namespace weir::pkt
