// Network-namespace and interface set-up for the real-network tools: enter
// a named namespace (ip netns) for the calling thread, and configure a TUN
// device's kernel side with iproute2, which every test machine has.
#pragma once

#include <string>
#include <vector>

#include "weir/expected.h"

namespace weir::driver {

// Switches the calling thread into the namespace `ip netns add NAME` made
// (/run/netns/NAME). A TUN device opened afterwards belongs to it, and stays
// there after the thread switches back.
Expected<bool, std::string> enter_netns(const std::string& name);

// Remembers the thread's namespace and returns to it when destroyed.
class NetnsGuard {
 public:
  NetnsGuard();
  ~NetnsGuard();
  NetnsGuard(const NetnsGuard&) = delete;
  NetnsGuard& operator=(const NetnsGuard&) = delete;

 private:
  int fd_ = -1;
};

// Runs a program (PATH lookup) and waits; returns its exit status, or -1.
int run_program(const std::vector<std::string>& argv);

// Gives the kernel's side of TUN `dev` the address `cidr` ("192.0.2.2/24",
// "fd00::2/64"; IPv6 without duplicate address detection) and sets it up.
Expected<bool, std::string> configure_kernel_side(const std::string& dev, const std::string& cidr);

// "192.0.2.1/24" -> ("192.0.2.1", 24); the prefix defaults to the full width.
struct Cidr {
  std::string addr;
  int prefix = 0;
  bool v6 = false;
};
Expected<Cidr, std::string> parse_cidr(const std::string& text);

}  // namespace weir::driver
