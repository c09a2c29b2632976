// A TAP device (TunDevice::open_tap) as the FrameSink under an EtherLink:
// one write(2) per frame, as the TUN path writes one per datagram; frames
// are read with TunBatch like datagrams. The kernel side of the TAP is the
// other host on the wire.
#pragma once

#include "link/frame_sink.h"
#include "link/tun.h"

namespace weir::link {

class TapSink final : public FrameSink {
 public:
  explicit TapSink(TunDevice& dev) : dev_(dev) {}
  // A full queue (EAGAIN, ENOBUFS: tun_write_verdict) is refused; any other
  // failure, or a frame over MTU + 14, is lost as on a wire (counted).
  XmitResult send_frame(std::span<const uint8_t> frame) override {
    return dev_.xmit_vnet(VnetHdr{}, frame) == TunDevice::Xmit::kRefused ? XmitResult::kDropped : XmitResult::kSent;
  }

 private:
  TunDevice& dev_;
};

}  // namespace weir::link
