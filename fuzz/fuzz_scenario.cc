// libFuzzer target for the lab's scenario loader (src/sim/scenario.h): TOML
// text, then after a NUL byte "key=value" overrides one per line (as `weir
// sim --set`), then after a second NUL a seed list and an expectation line.
// Whatever the input, the loader returns a Scenario or an error message
// without crashing, throwing or reading out of bounds.
// Corpus: corpus/scenario/ (the lab's scenarios/*.toml and broken variants).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario.h"

namespace {

std::string_view next_part(std::string_view& rest) {
  const size_t nul = rest.find('\0');
  std::string_view part = rest.substr(0, nul);
  rest = nul == std::string_view::npos ? std::string_view{} : rest.substr(nul + 1);
  return part;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  const std::string_view toml = next_part(rest);
  std::vector<std::string> overrides;
  std::string_view sets = next_part(rest);
  while (!sets.empty()) {
    const size_t nl = sets.find('\n');
    overrides.emplace_back(sets.substr(0, nl));
    sets = nl == std::string_view::npos ? std::string_view{} : sets.substr(nl + 1);
  }
  // toml++ 3.3.0 (Debian's) reaches __builtin_unreachable() on some
  // non-ASCII code points (upstream #190/#295); the loader now refuses
  // non-ASCII text with its place before toml++ sees it, so every input is
  // fed through (docs/reliability.md).
  auto sc = weir::sim::parse_scenario(toml, "fuzz.toml", overrides);
  if (!sc && sc.error().empty()) {
    std::fprintf(stderr, "fuzz_scenario: an error without a message\n");
    std::abort();
  }
  const std::string_view extra = next_part(rest);
  const size_t nl = extra.find('\n');
  (void)weir::sim::parse_seed_list(extra.substr(0, nl));
  if (nl != std::string_view::npos) (void)weir::sim::parse_expectation(extra.substr(nl + 1));
  return 0;
}
