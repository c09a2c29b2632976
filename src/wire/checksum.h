// Internet checksum (RFC 1071), pseudo-headers (RFC 9293 §3.1, RFC 8200 §8.1),
// incremental update (RFC 1624).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "weir/addr.h"

namespace weir::wire {

// One's-complement sum of `data` added to `sum` (not folded, not inverted).
uint32_t csum_partial(std::span<const uint8_t> data, uint32_t sum = 0);
// Copies `src` to `dst` (`src.size()` bytes, not overlapping) and returns
// csum_partial(src, sum): the copy and the sum in one pass.
uint32_t csum_copy(std::span<const uint8_t> src, uint8_t* dst, uint32_t sum = 0);
// `sum` plus `part`, the partial sum of a block that starts `offset` bytes
// into the checksummed data (an odd offset swaps the block's bytes).
// Inline: once per payload piece of every segment sent.
inline uint32_t csum_add_at(uint32_t sum, uint32_t part, size_t offset) {
  if (offset & 1) {
    // RFC 1071 §2(B): a block starting at an odd offset has its bytes in
    // the other halves of the 16-bit words; its folded sum is byte-swapped
    // (Linux csum_block_add).
    uint32_t f = (part & 0xffffu) + (part >> 16);
    f = (f & 0xffffu) + (f >> 16);
    part = ((f & 0xffu) << 8) | (f >> 8);
  }
  const uint64_t s = uint64_t{sum} + part;
  return static_cast<uint32_t>((s & 0xffffffffu) + (s >> 32));
}
// Folds a 32-bit partial sum to 16 bits and inverts it: the field value.
// Inline: a handful of instructions, several times per packet.
inline uint16_t csum_fold(uint32_t sum) {
  sum = (sum & 0xffffu) + (sum >> 16);
  sum = (sum & 0xffffu) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}
// Partial sum of the TCP/UDP pseudo-header for v4 (when both are v4) or v6.
uint32_t pseudo_header_sum(const IpAddr& src, const IpAddr& dst, uint8_t proto, uint32_t len);
// RFC 1624 eqn. 3: new checksum after a 16-bit field changes from `old_v` to `new_v`.
uint16_t csum_update16(uint16_t csum, uint16_t old_v, uint16_t new_v);

}  // namespace weir::wire
