// The seam the engine transmits through. Packets are whole IP datagrams
// (IPv4 or IPv6, no link header): what a TUN device, a pcap with
// LINKTYPE_RAW, the simulator's links and the packetdrill runner all carry.
#pragma once

#include <cstdint>
#include <span>

namespace weir {

class Netif {
 public:
  virtual ~Netif() = default;
  // Called by the engine for every packet it sends. The bytes are valid only
  // for the duration of the call.
  virtual void transmit(std::span<const uint8_t> ip_packet) = 0;
  // The link MTU in bytes (IP header included), from which MSS is derived.
  virtual uint32_t mtu() const = 0;
};

}  // namespace weir
