// Stand-in for the FrameSink of the Ethernet layer's contract
// (/work/ether-contract.md) until link/ether_link.h lands on main; the
// declaration is the contract's, word for word in meaning.
#pragma once

#include <cstdint>
#include <span>

#include "weir/netif.h"

namespace weir::link {

// A device that carries whole Ethernet II frames (no preamble, no FCS).
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  // Queues or writes one frame; kDropped when the device had no room.
  virtual XmitResult send_frame(std::span<const uint8_t> frame) = 0;
};

}  // namespace weir::link
