// The TUN device (link/tun.h) as a PolledLink: IP datagrams straight to the
// stack, read in batches from the fd, or through an io_uring (`--io-uring`,
// link/tun_uring.h) whose completions the driver reads instead.
#pragma once

#include <memory>
#include <optional>

#include "driver/polled_link.h"
#include "link/tun.h"
#include "link/tun_uring.h"

namespace weir::driver {

class TunLink final : public PolledLink {
 public:
  // Takes the device; with `io_uring` opens its ring (or says why not).
  static Expected<std::unique_ptr<TunLink>, std::string> open(link::TunDevice dev, bool io_uring, size_t batch);
  Netif& netif() override { return *netif_; }
  int fd() const override;
  void input(Time now, Stack& st) override;
  bool rx_pending() const override { return ring_ && ring_->rx_pending(); }
  bool input_on_timer() const override { return ring_ != nullptr; }
  void flush() override { netif_->flush(); }
  std::string describe() const override;

 private:
  TunLink(link::TunDevice dev, size_t batch);
  link::TunDevice dev_;
  std::unique_ptr<link::TunUring> ring_;  // refers to dev_, which therefore never moves
  std::optional<link::TunNetif> netif_;  // made once the ring is (it queues on it)
  link::TunBatch batch_;
};

}  // namespace weir::driver
