// libFuzzer target for the wire parsers: parse_tcp, parse_tcp_packet (with
// and without checksum verification) and parse_icmp_error. Corpus: corpus/wire/.
#include <cstddef>
#include <cstdint>

#include "wire_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weir::wire::fuzz::check_wire_input({data, size});
  return 0;
}
