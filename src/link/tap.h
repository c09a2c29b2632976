// A TAP device (TunDevice::open_tap) as the FrameSink under an EtherLink:
// one write(2) per frame, as the TUN path writes one per datagram; frames
// are read with TunBatch like datagrams. The kernel side of the TAP is the
// other host on the wire.
#pragma once

#include <vector>

#include "link/frame_sink.h"
#include "link/tun.h"

namespace weir::link {

class TapSink final : public FrameSink {
 public:
  explicit TapSink(TunDevice& dev) : dev_(dev) {}
  // A full queue (EAGAIN, ENOBUFS: tun_write_verdict) is refused; any other
  // failure, or a frame over MTU + 14, is lost as on a wire (counted).
  using FrameSink::send_frame;
  XmitResult send_frame(std::span<const uint8_t> head, std::span<const uint8_t> rest) override {
    std::span<const uint8_t> frame = head;
    if (!rest.empty()) {  // one write(2) per frame: join the pieces
      frame_.assign(head.begin(), head.end());
      frame_.insert(frame_.end(), rest.begin(), rest.end());
      frame = frame_;
    }
    return dev_.xmit_vnet(VnetHdr{}, frame) == TunDevice::Xmit::kRefused ? XmitResult::kDropped : XmitResult::kSent;
  }

 private:
  TunDevice& dev_;
  std::vector<uint8_t> frame_;
};

}  // namespace weir::link
