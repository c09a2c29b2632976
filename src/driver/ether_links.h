// The Ethernet devices as PolledLinks: an EtherLink (link/ether_link.h:
// ARP, neighbour discovery, framing) over the AF_PACKET ring (--packet,
// link/packet_ring.h) or a TAP device (--tap, link/tap.h). Per wake-up, as
// ether-contract.md lays out: every frame through EtherLink::input, the IP
// datagrams it returns to the stack; EtherLink::advance with the stack's.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "driver/polled_link.h"
#include "driver/run.h"
#include "link/ether_link.h"
#include "link/packet_ring.h"
#include "link/tap.h"
#include "link/tun.h"

namespace weir::driver {

// "" or the error naming the addresses DAD found in use.
std::string duplicate_error(const link::EtherLink& ether);

class PacketLink final : public PolledLink {
 public:
  // `batch`: frames read per input() call (DriverOptions::batch).
  PacketLink(std::unique_ptr<link::PacketRing> ring, link::EtherLinkConfig cfg, size_t batch);
  Netif& netif() override { return ether_; }
  int fd() const override { return ring_->fd(); }
  void input(Time now, Stack& st) override;
  void advance(Time now, Stack& st) override;
  Time next_deadline() const override;
  void flush() override { ring_->flush(); }
  // A drain that stopped at `batch` frames may have left more: read again
  // at once, from the timer's wake-up as much as the fd's.
  bool rx_pending() const override { return ring_->rx_ready(); }
  bool input_on_timer() const override { return ring_->rx_ready(); }
  std::string describe() const override;
  bool addresses_pending() const override { return ether_.dad_pending(); }
  std::string address_error() const override { return duplicate_error(ether_); }

 private:
  uint32_t chunk_;
  std::unique_ptr<link::PacketRing> ring_;
  std::array<uint8_t, 6> mac_;  // weir's MAC, joined on the interface's filter
  link::EtherLink ether_;
  Time last_ = Time::from_ns(0);
};

class TapLink final : public PolledLink {
 public:
  TapLink(link::TunDevice dev, link::EtherLinkConfig cfg, size_t batch);
  Netif& netif() override { return ether_; }
  int fd() const override { return dev_.fd(); }
  void input(Time now, Stack& st) override;
  void advance(Time now, Stack& st) override;
  Time next_deadline() const override { return ether_.next_deadline(); }
  void flush() override {}  // every frame was written at once
  std::string describe() const override;
  bool addresses_pending() const override { return ether_.dad_pending(); }
  std::string address_error() const override { return duplicate_error(ether_); }

 private:
  link::TunDevice dev_;
  link::TapSink sink_;
  link::EtherLink ether_;
  link::TunBatch batch_;
};

// Opens --packet or --tap with its EtherLink, configuring the kernel side
// for --peer; the errors name the flag at fault.
Expected<std::unique_ptr<PolledLink>, std::string> open_ether(const StackSetup& s);

}  // namespace weir::driver
