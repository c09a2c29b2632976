// `rm` and `dd` over the runner's files (see the header).
#include "pkt/shell_files.h"

#include <charconv>

#include <fmt/format.h>

#include "pkt/runner_impl.h"

namespace weir::pkt {
namespace {

std::string base_name(const std::string& prog) { return prog.substr(prog.rfind('/') + 1); }

// coreutils rm: a missing file is an error (status 1) unless -f.
FileRun rm(FileSystem& fs, const std::vector<std::string>& w) {
  bool force = false;
  std::vector<std::string> paths;
  for (size_t i = 1; i < w.size(); ++i) {
    if (w[i] == "-f") force = true;
    else if (!w[i].empty() && w[i][0] == '-') return FileRun{0, "", fmt::format("rm option '{}'", w[i])};
    else paths.push_back(w[i]);
  }
  for (const std::string& p : paths) {
    if (fs.sizes.erase(p) == 0 && !force)
      return FileRun{1, fmt::format("rm: cannot remove '{}': No such file or directory", p), ""};
  }
  return {};
}

// dd's BLOCKS and BYTES: a number with an optional K, M or G (powers of 1024).
bool dd_number(const std::string& s, uint64_t& out) {
  uint64_t mult = 1;
  std::string digits = s;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'M' || s.back() == 'G')) {
    mult = s.back() == 'K' ? 1024 : s.back() == 'M' ? 1024 * 1024 : 1024 * 1024 * 1024;
    digits.pop_back();
  }
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  if (ec != std::errc() || p != digits.data() + digits.size()) return false;
  out *= mult;
  return true;
}

// dd if=/dev/zero of=PATH bs=N count=M: a file of N * M zero bytes (only
// its size is kept: packetdrill compares no payload bytes).
FileRun dd(FileSystem& fs, const std::vector<std::string>& w) {
  std::string in, out;
  uint64_t bs = 512, count = 0;  // dd's default block size
  bool have_count = false;
  for (size_t i = 1; i < w.size(); ++i) {
    const size_t eq = w[i].find('=');
    if (eq == std::string::npos) return FileRun{0, "", fmt::format("dd operand '{}'", w[i])};
    const std::string k = w[i].substr(0, eq), v = w[i].substr(eq + 1);
    if (k == "if") in = v;
    else if (k == "of") out = v;
    else if (k == "bs" || k == "count") {
      uint64_t n = 0;
      if (!dd_number(v, n)) return FileRun{1, fmt::format("dd: invalid number: '{}'", v), ""};
      (k == "bs" ? bs : count) = n;
      if (k == "count") have_count = true;
    } else if (k != "status") {
      return FileRun{0, "", fmt::format("dd operand '{}'", k)};
    }
  }
  if (in != "/dev/zero") return FileRun{0, "", "dd reads only if=/dev/zero"};
  if (out.empty() || !have_count) return FileRun{0, "", "dd without of= and count="};
  const uint64_t size = bs * count;
  const uint64_t prior = fs.sizes.count(out) ? fs.sizes[out] : 0;
  if (!fs.sizes.count(out) && fs.sizes.size() >= FileSystem::kMaxFiles)
    return FileRun{1, fmt::format("dd: more than {} files", FileSystem::kMaxFiles), ""};
  if (fs.total() - prior + size > FileSystem::kMaxBytes)
    return FileRun{1, fmt::format("dd: files over {} bytes in all", FileSystem::kMaxBytes), ""};
  fs.sizes[out] = size;  // of= truncates (no conv=notrunc)
  return {};
}

}  // namespace

bool is_file_command(const std::string& prog) {
  const std::string b = base_name(prog);
  return b == "rm" || b == "dd";
}

FileRun run_file_command(FileSystem& fs, const std::vector<std::string>& w) {
  if (w.empty()) return {};
  return base_name(w[0]) == "rm" ? rm(fs, w) : dd(fs, w);
}

}  // namespace weir::pkt
