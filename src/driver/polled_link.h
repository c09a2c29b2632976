// A link the real-time driver polls: a device whose fd becomes readable,
// the Netif the stack transmits on, and whatever the link layer keeps
// between packets (neighbour resolution timers). StackDriver runs one loop
// over any of them: the TUN (link/tun.h, its io_uring path) and the
// Ethernet devices under an EtherLink (the AF_PACKET ring, TAP).
#pragma once

#include <string>

#include "weir/netif.h"
#include "weir/stack.h"
#include "weir/time.h"

namespace weir::driver {

class PolledLink {
 public:
  virtual ~PolledLink() = default;
  // The stack's transmit path (given to the Stack at construction).
  virtual Netif& netif() = 0;
  // Watched for EPOLLIN.
  virtual int fd() const = 0;
  const std::string& name() const { return name_; }
  // Reads everything waiting (bounded per call) and hands each IP datagram
  // to `st` at `now`, the one clock reading of the wake-up.
  virtual void input(Time now, Stack& st) = 0;
  // The link layer's own timers (ARP/ND retransmissions and ageing); what
  // they make for the stack itself (ICMP errors for packets whose next hop
  // failed to resolve) goes to `st` at `now`.
  virtual void advance(Time now, Stack& st) { (void)now, (void)st; }
  virtual Time next_deadline() const { return Time::never(); }
  // Input that waits without the fd saying so: poll again at once.
  virtual bool rx_pending() const { return false; }
  // Whether the timer's wake-up also reads input (the io_uring path, whose
  // completions a flush may have reaped).
  virtual bool input_on_timer() const { return false; }
  // The burst is over: what the stack sent goes out.
  virtual void flush() = 0;
  // RFC 4862 §5.4: whether the link is still checking its addresses (the
  // driver starts the app once it is not), and "" or the error for the
  // user when an address was found in use.
  virtual bool addresses_pending() const { return false; }
  virtual std::string address_error() const { return ""; }
  // The device's counters, one or two lines (`weir ss --tun`, and on exit).
  virtual std::string describe() const = 0;

 protected:
  explicit PolledLink(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

}  // namespace weir::driver
