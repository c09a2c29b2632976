// libFuzzer target for the packetdrill script parser (src/pkt/parser.h):
// whatever the text, parse_script returns a Script or a ParseError with a
// position inside the text, without reading out of bounds or aborting.
// Corpus: corpus/pkt/ (scripts from tests/pkt/scripts and broken variants).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "pkt/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto script = weir::pkt::parse_script(text, "fuzz.pkt");
  // The same text parses the same way twice (no hidden state in the parser).
  auto again = weir::pkt::parse_script(text, "fuzz.pkt");
  if (script.has_value() != again.has_value()) {
    std::fprintf(stderr, "fuzz_pkt: parse result differs between two runs\n");
    std::abort();
  }
  return 0;
}
