#include "link/arp.h"

#include <algorithm>

#include "wire/bytes.h"

namespace weir::link {

const char* to_string(ArpError e) {
  switch (e) {
    case ArpError::kTruncated: return "truncated";
    case ArpError::kHardware: return "hardware";
    case ArpError::kProtocol: return "protocol";
    case ArpError::kOpcode: return "opcode";
  }
  return "?";
}

Expected<ArpPacket, ArpError> parse_arp(std::span<const uint8_t> body) {
  if (body.size() < kArpLen) return Unexpected(ArpError::kTruncated);
  const uint8_t* p = body.data();
  // RFC 826 "Packet Reception": check ar$hrd (and its length), then ar$pro.
  if (wire::load_be16(p) != kArpHrdEther || p[4] != 6) return Unexpected(ArpError::kHardware);
  if (wire::load_be16(p + 2) != kEthPIp || p[5] != 4) return Unexpected(ArpError::kProtocol);
  ArpPacket a;
  a.op = wire::load_be16(p + 6);
  if (a.op != kArpOpRequest && a.op != kArpOpReply) return Unexpected(ArpError::kOpcode);
  std::copy(p + 8, p + 14, a.sha.b.begin());
  a.spa = wire::load_be32(p + 14);
  std::copy(p + 18, p + 24, a.tha.b.begin());
  a.tpa = wire::load_be32(p + 24);
  return a;
}

void emit_arp(const ArpPacket& a, uint8_t* out) {
  wire::store_be16(out, kArpHrdEther);
  wire::store_be16(out + 2, kEthPIp);
  out[4] = 6;
  out[5] = 4;
  wire::store_be16(out + 6, a.op);
  std::copy(a.sha.b.begin(), a.sha.b.end(), out + 8);
  wire::store_be32(out + 14, a.spa);
  std::copy(a.tha.b.begin(), a.tha.b.end(), out + 18);
  wire::store_be32(out + 24, a.tpa);
}

}  // namespace weir::link
