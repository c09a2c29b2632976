// What `weir serve` and `weir fetch` share: enter a namespace, open the link
// (a TUN device, an AF_PACKET ring on an Ethernet interface, or a TAP
// device), optionally give its kernel side an address, build a Stack with
// the given addresses and sysctls, and run an app on it until it finishes
// or a signal stops it.
#pragma once

#include <string>
#include <vector>

#include "driver/app.h"
#include "driver/stack_driver.h"
#include "link/packet_ring.h"

namespace weir::driver {

struct StackSetup {
  // Exactly one of the three devices.
  std::string tun;                   // TUN device (created if missing)
  std::string packet;                // existing Ethernet interface, AF_PACKET rings (link/packet_ring.h)
  std::string tap;                   // TAP device (created if missing)
  std::string netns;                 // "" = current namespace
  std::vector<std::string> addrs;    // weir's own addresses, CIDR
  std::vector<std::string> peers;    // the kernel side's addresses, CIDR ("" = set up elsewhere)
  std::vector<std::string> sysctls;  // "net.ipv4.tcp_sack=0"
  bool offload = true;               // TUN: IFF_VNET_HDR + TSO super-packets (link/tun.h)
  bool io_uring = false;             // TUN: reads and writes through an io_uring (link/tun_uring.h)
  // Ethernet (--packet, --tap):
  std::string mac;                   // weir's MAC ("" = derived from the interface's, ether_setup.h)
  std::vector<std::string> gateways;  // the next hop for off-link destinations, at most one per family
  bool dad = true;                   // IPv6 duplicate address detection (Linux dad_transmits 1)
  link::PacketRingConfig ring;       // --packet: the rings' sizes, PACKET_QDISC_BYPASS
  DriverOptions driver;
};

// The device the setup names (for the control socket's path).
const std::string& device_name(const StackSetup& s);

// weir's addresses, parsed (the prefix length is for the kernel side).
Expected<std::vector<IpAddr>, std::string> parse_addrs(const std::vector<std::string>& cidrs);

// Checks that the flags fit together (one device; Ethernet flags only with
// an Ethernet device): "" or the error for the user.
std::string check_setup(const StackSetup& s);

// Runs `app` on a fresh stack. Returns the exit status.
int run_stack_app(const StackSetup& s, App& app);

}  // namespace weir::driver
