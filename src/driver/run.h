// What `weir serve` and `weir fetch` share: enter a namespace, open the TUN
// device, optionally give its kernel side an address, build a Stack with the
// given addresses and sysctls, and run an app on it until it finishes or a
// signal stops it.
#pragma once

#include <string>
#include <vector>

#include "driver/app.h"
#include "driver/stack_driver.h"

namespace weir::driver {

struct StackSetup {
  std::string tun;
  std::string netns;                 // "" = current namespace
  std::vector<std::string> addrs;    // weir's own addresses, CIDR
  std::vector<std::string> peers;    // the kernel side's addresses, CIDR ("" = set up elsewhere)
  std::vector<std::string> sysctls;  // "net.ipv4.tcp_sack=0"
  bool offload = true;               // IFF_VNET_HDR + TSO super-packets (link/tun.h)
  bool io_uring = false;             // TUN reads and writes through an io_uring (link/tun_uring.h)
  DriverOptions driver;
};

// weir's addresses, parsed (the prefix length is for the kernel side).
Expected<std::vector<IpAddr>, std::string> parse_addrs(const std::vector<std::string>& cidrs);

// Runs `make_app(addresses)` on a fresh stack. Returns the exit status.
int run_stack_app(const StackSetup& s, App& app);

}  // namespace weir::driver
