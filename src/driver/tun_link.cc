#include "driver/tun_link.h"

#include <fmt/format.h>

namespace weir::driver {

TunLink::TunLink(link::TunDevice dev, size_t batch) : PolledLink(dev.name()), dev_(std::move(dev)), batch_(batch) {}

Expected<std::unique_ptr<TunLink>, std::string> TunLink::open(link::TunDevice dev, bool io_uring, size_t batch) {
  // With a ring the batch buffers go unused (the ring has its own).
  std::unique_ptr<TunLink> l(new TunLink(std::move(dev), io_uring ? 1 : batch));
  if (io_uring) {
    auto r = link::TunUring::open(l->dev_);
    if (!r) return Unexpected(fmt::format("io_uring unavailable: {}; run without --io-uring", r.error()));
    l->ring_ = std::move(*r);
  }
  l->netif_.emplace(l->dev_, l->ring_.get());
  return l;
}

// The ring's fd is readable while completions wait (io_uring_poll).
int TunLink::fd() const { return ring_ ? ring_->fd() : dev_.fd(); }

// One batch, all at the wake-up's time (as with Linux's per-NAPI-poll
// timestamp). From the ring, the buffers go back to the kernel at once:
// Stack::input is done with the bytes when it returns.
void TunLink::input(Time now, Stack& st) {
  if (ring_) {
    size_t n = ring_->read();
    for (size_t i = 0; i < n; ++i) {
      if (ring_->checksum_valid(i)) st.input_checksum_valid(now, ring_->packet(i));
      else st.input(now, ring_->packet(i));
    }
    ring_->release();
    return;
  }
  size_t n = batch_.read(dev_);
  for (size_t i = 0; i < n; ++i) {
    if (batch_.checksum_valid(i)) st.input_checksum_valid(now, batch_.packet(i));
    else st.input(now, batch_.packet(i));
  }
}

std::string TunLink::describe() const {
  const auto& s = dev_.stats();
  std::string out = fmt::format(
      "{}: rx {} pkts {} bytes in {} batches ({} super-packets, {} checksums completed, {} taken as valid); "
      "tx {} pkts {} bytes ({} super-packets of {} segments), {} dropped ({} refused: queue full), {} oversize\n",
      dev_.name(), s.rx_packets, s.rx_bytes, s.rx_batches, s.rx_gso, s.rx_csum_fixed, s.rx_csum_valid, s.tx_packets,
      s.tx_bytes, s.tx_gso, s.tx_gso_segs, s.tx_dropped, s.tx_refused, s.tx_oversize);
  if (!ring_) return out;
  const auto& r = ring_->stats();
  return out + fmt::format("{}: io_uring {} submits, {} completions, {} refused for want of a slot, {} reads failed, {}\n",
                           dev_.name(), r.submits, r.reaped, r.tx_no_slot, r.rx_failed,
                           ring_->multishot() ? fmt::format("multishot read re-armed {} times", r.rx_rearms)
                                              : std::string("one read per buffer"));
}

}  // namespace weir::driver
