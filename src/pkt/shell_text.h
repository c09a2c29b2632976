// `cat` and `grep` over the stack's virtual files, joined by `|`: what a
// script's shell line reads (/proc/net/tcp, /proc/net/tcp6), emulated so
// that the run stays in-process and hermetic.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace weir::pkt {

struct TextRun {
  int status = 0;           // the last stage's exit status (grep: 0 a line selected, 1 none, 2 trouble)
  std::string out;          // what the last stage printed
  std::string unsupported;  // non-empty: the pipeline cannot be emulated, and why
};

// A virtual file's text, or nullopt when weir has no such file.
using ReadFile = std::function<std::optional<std::string>(const std::string& path)>;

// Each stage is a command's words, quotes removed. Only `cat FILE...` and
// `grep [-qvcFEi] PATTERN [FILE...]` are known.
TextRun run_text_pipeline(const std::vector<std::vector<std::string>>& stages, const ReadFile& read);

// True when `prog` is one run_text_pipeline knows.
bool is_text_command(const std::string& prog);

}  // namespace weir::pkt
