#include "sim/ecn.h"

#include "wire/checksum.h"

namespace weir::sim {

uint8_t ecn_field(const std::vector<uint8_t>& b) {
  if (b.size() >= 20 && b[0] >> 4 == 4) return b[1] & 3;           // IPv4: TOS low bits
  if (b.size() >= 40 && b[0] >> 4 == 6) return (b[1] >> 4) & 3;    // IPv6: traffic class low bits
  return 0;
}

bool mark_ce(std::vector<uint8_t>& b) {
  const uint8_t f = ecn_field(b);
  if (f == 0 || f == 3) return false;
  if (b[0] >> 4 == 6) {
    b[1] |= 0x30;  // no header checksum in IPv6 (RFC 8200)
    return true;
  }
  const uint16_t old_w = static_cast<uint16_t>(b[0] << 8 | b[1]);
  b[1] |= 3;
  const uint16_t new_w = static_cast<uint16_t>(b[0] << 8 | b[1]);
  uint16_t csum = static_cast<uint16_t>(b[10] << 8 | b[11]);
  csum = wire::csum_update16(csum, old_w, new_w);
  b[10] = static_cast<uint8_t>(csum >> 8);
  b[11] = static_cast<uint8_t>(csum);
  return true;
}

}  // namespace weir::sim
