// ARP for IPv4 over Ethernet (RFC 826): the 28-byte packet, parsed into a
// value once its fixed fields are checked, and emitted exactly.
#pragma once

#include <cstdint>
#include <span>

#include "link/ether.h"
#include "weir/expected.h"

namespace weir::link {

inline constexpr size_t kArpLen = 28;            // Ethernet/IPv4 ARP body
inline constexpr uint16_t kArpHrdEther = 1;      // ARPHRD_ETHER
inline constexpr uint16_t kArpOpRequest = 1;     // ARPOP_REQUEST
inline constexpr uint16_t kArpOpReply = 2;       // ARPOP_REPLY

// RFC 826 field names: ar$op, ar$sha, ar$spa, ar$tha, ar$tpa. The protocol
// addresses are IPv4 addresses in host order.
struct ArpPacket {
  uint16_t op = 0;
  MacAddr sha{};
  uint32_t spa = 0;
  MacAddr tha{};
  uint32_t tpa = 0;
};

enum class ArpError : uint8_t {
  kTruncated,   // fewer than 28 bytes
  kHardware,    // ar$hrd not Ethernet or ar$hln not 6
  kProtocol,    // ar$pro not IPv4 or ar$pln not 4
  kOpcode,      // neither request nor reply (RARP, InARP: Linux arp_process drops them)
};
const char* to_string(ArpError e);

// Linux arp_rcv/arp_process: hardware type, protocol type and both lengths
// must be Ethernet's and IPv4's. Trailing bytes (Ethernet padding) are ignored.
Expected<ArpPacket, ArpError> parse_arp(std::span<const uint8_t> body);
// Writes kArpLen bytes at `out`.
void emit_arp(const ArpPacket& p, uint8_t* out);

}  // namespace weir::link
