#include "driver/run.h"

#include <fmt/format.h>

#include "driver/clock.h"
#include "driver/netns.h"
#include "link/tun.h"
#include "link/tun_uring.h"

namespace weir::driver {

Expected<std::vector<IpAddr>, std::string> parse_addrs(const std::vector<std::string>& cidrs) {
  std::vector<IpAddr> out;
  for (const auto& c : cidrs) {
    auto p = parse_cidr(c);
    if (!p) return Unexpected(p.error());
    out.push_back(*IpAddr::parse(p->addr));
  }
  if (out.empty()) return Unexpected(std::string("no --addr given"));
  return out;
}

int run_stack_app(const StackSetup& s, App& app) {
  if (!s.netns.empty()) {
    // This thread (the driver's only thread) moves for good: the device, the
    // control socket and any `ip` commands all live in that namespace.
    if (auto r = enter_netns(s.netns); !r) return fmt::print(stderr, "weir: {}\n", r.error()), 1;
  }
  auto addrs = parse_addrs(s.addrs);
  if (!addrs) return fmt::print(stderr, "weir: {}\n", addrs.error()), 2;
  auto dev = link::TunDevice::open(s.tun, s.offload);
  if (!dev) return fmt::print(stderr, "weir: {}\n", dev.error()), 1;
  for (const auto& p : s.peers) {
    if (auto r = configure_kernel_side(dev->name(), p); !r) return fmt::print(stderr, "weir: {}\n", r.error()), 1;
  }
  StackConfig cfg;
  // ISNs and cookies are secret on a real wire: seed from the clock.
  cfg.secret ^= static_cast<uint64_t>(mono_now().ns()) * 0x9e3779b97f4a7c15ull;
  for (const auto& kv : s.sysctls) {
    auto eq = kv.find('=');
    std::string err = eq == std::string::npos ? "expected KEY=VALUE" : cfg.set(kv.substr(0, eq), kv.substr(eq + 1));
    if (!err.empty()) return fmt::print(stderr, "weir: --sysctl {}: {}\n", kv, err), 2;
  }
  std::unique_ptr<link::TunUring> ring;
  if (s.io_uring) {
    auto r = link::TunUring::open(*dev);
    if (!r) return fmt::print(stderr, "weir: io_uring unavailable: {}; run without --io-uring\n", r.error()), 1;
    ring = std::move(*r);
  }
  link::TunNetif netif(*dev, ring.get());
  Stack stack(cfg, netif);
  for (const auto& a : *addrs) stack.add_address(a);
  StackDriver drv(stack, *dev, netif, app, s.driver, ring.get());
  return drv.run();
}

}  // namespace weir::driver
