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
  // Queues or writes one frame, given in two pieces (the link header, then
  // the rest: EtherLink's header and the engine's datagram), which the
  // device joins as it copies them; kDropped when it had no room.
  virtual XmitResult send_frame(std::span<const uint8_t> head, std::span<const uint8_t> rest) = 0;
  XmitResult send_frame(std::span<const uint8_t> frame) { return send_frame(frame, {}); }
};

}  // namespace weir::link
