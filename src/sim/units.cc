#include "sim/units.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace weir::sim {
namespace {

struct Split {
  double value = 0;
  std::string unit;
};

Expected<Split, std::string> split_number(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                          s[i] == 'e' || s[i] == '-' || s[i] == '+')) {
    // 'e' only as an exponent: stop if it starts a unit word.
    if (s[i] == 'e' && (i + 1 >= s.size() || !(std::isdigit(static_cast<unsigned char>(s[i + 1])) ||
                                              s[i + 1] == '-' || s[i + 1] == '+')))
      break;
    ++i;
  }
  Split out;
  auto [p, ec] = std::from_chars(s.data(), s.data() + i, out.value);
  if (ec != std::errc() || p != s.data() + i || i == 0)
    return Unexpected(fmt::format("'{}' does not start with a number", s));
  std::string_view u = s.substr(i);
  while (!u.empty() && u.front() == ' ') u.remove_prefix(1);
  out.unit.assign(u);
  if (out.value < 0) return Unexpected(fmt::format("'{}' is negative", s));
  return out;
}

}  // namespace

Expected<double, std::string> parse_rate(std::string_view s) {
  auto sp = split_number(s);
  if (!sp) return Unexpected(sp.error());
  std::string u = sp->unit;
  if (u.size() > 2 && u.substr(u.size() - 2) == "/s") u.resize(u.size() - 2);
  if (u.size() > 2 && u.substr(u.size() - 2) == "ps") u.resize(u.size() - 2);
  double mult = 0;
  bool bytes = false;
  if (!u.empty() && u.back() == 'B') { bytes = true; u.pop_back(); }
  else if (u.size() >= 3 && u.substr(u.size() - 3) == "bit") u.resize(u.size() - 3);
  else if (!u.empty() && u.back() == 'b') u.pop_back();
  else if (!u.empty()) return Unexpected(fmt::format("'{}': rate unit must be bit/s or B/s (e.g. 50Mbit, 2MB/s)", s));
  if (u.empty()) mult = 1;
  else if (u == "k" || u == "K") mult = 1e3;
  else if (u == "M") mult = 1e6;
  else if (u == "G") mult = 1e9;
  else if (u == "T") mult = 1e12;
  else return Unexpected(fmt::format("'{}': unknown rate prefix '{}'", s, u));
  return sp->value * mult * (bytes ? 8 : 1);
}

Expected<Duration, std::string> parse_duration(std::string_view s) {
  auto sp = split_number(s);
  if (!sp) return Unexpected(sp.error());
  const std::string& u = sp->unit;
  double ns_per = 0;
  if (u.empty() || u == "s") ns_per = 1e9;
  else if (u == "ms") ns_per = 1e6;
  else if (u == "us" || u == "µs") ns_per = 1e3;
  else if (u == "ns") ns_per = 1;
  else if (u == "min") ns_per = 60e9;
  else return Unexpected(fmt::format("'{}': duration unit must be s, ms, us or ns", s));
  return Duration::ns(static_cast<int64_t>(std::llround(sp->value * ns_per)));
}

Expected<uint64_t, std::string> parse_size(std::string_view s) {
  auto sp = split_number(s);
  if (!sp) return Unexpected(sp.error());
  const std::string& u = sp->unit;
  double mult = 0;
  if (u.empty() || u == "B") mult = 1;
  else if (u == "KB" || u == "kB" || u == "K" || u == "k") mult = 1e3;
  else if (u == "MB" || u == "M") mult = 1e6;
  else if (u == "GB" || u == "G") mult = 1e9;
  else if (u == "KiB") mult = 1024;
  else if (u == "MiB") mult = 1024.0 * 1024;
  else if (u == "GiB") mult = 1024.0 * 1024 * 1024;
  else return Unexpected(fmt::format("'{}': size unit must be B, KB, MB, GB, KiB, MiB or GiB", s));
  return static_cast<uint64_t>(std::llround(sp->value * mult));
}

Expected<double, std::string> parse_fraction(std::string_view s) {
  auto sp = split_number(s);
  if (!sp) return Unexpected(sp.error());
  double v = sp->value;
  if (sp->unit == "%") v /= 100;
  else if (!sp->unit.empty()) return Unexpected(fmt::format("'{}': a fraction is a number in [0,1] or a percentage", s));
  if (v > 1) return Unexpected(fmt::format("'{}': a fraction cannot exceed 100%", s));
  return v;
}

std::string format_rate(double bps) {
  if (bps >= 1e9) return fmt::format("{:g}Gbit", bps / 1e9);
  if (bps >= 1e6) return fmt::format("{:g}Mbit", bps / 1e6);
  if (bps >= 1e3) return fmt::format("{:g}kbit", bps / 1e3);
  return fmt::format("{:g}bit", bps);
}

std::string format_duration(Duration d) {
  int64_t ns = d.ns();
  if (ns % 1000000000 == 0) return fmt::format("{}s", ns / 1000000000);
  if (ns % 1000000 == 0) return fmt::format("{}ms", ns / 1000000);
  if (ns % 1000 == 0) return fmt::format("{}us", ns / 1000);
  return fmt::format("{}ns", ns);
}

}  // namespace weir::sim
