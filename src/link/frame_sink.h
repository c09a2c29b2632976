// The FrameSink of the Ethernet layer's contract: what a frame device
// (PacketRing, TapSink, a test's recorder) implements for an EtherLink.
// link/ether.h includes it, so either header brings it in.
#pragma once

#include <cstdint>
#include <span>

#include "weir/netif.h"

namespace weir::link {

// A device that carries whole Ethernet II frames: destination MAC, source
// MAC, EtherType, payload; no preamble, no FCS, no padding required (the
// device or kernel pads to 60 bytes if needed).
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  // Queues or writes one frame; kDropped when the device had no room.
  virtual XmitResult send_frame(std::span<const uint8_t> frame) = 0;
};

}  // namespace weir::link
