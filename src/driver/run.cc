#include "driver/run.h"

#include <fmt/format.h>

#include "driver/address_wait.h"
#include "driver/clock.h"
#include "driver/links.h"
#include "driver/netns.h"

namespace weir::driver {

const std::string& device_name(const StackSetup& s) {
  return !s.packet.empty() ? s.packet : !s.tap.empty() ? s.tap : s.tun;
}

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

std::string check_setup(const StackSetup& s) {
  const int devices = !s.tun.empty() + !s.packet.empty() + !s.tap.empty();
  if (devices != 1) return "give exactly one of --tun NAME, --packet IFACE (an existing Ethernet interface) or --tap NAME";
  const bool ether = s.tun.empty();
  if (!ether && (!s.mac.empty() || !s.gateways.empty()))
    return "--mac and --gateway are for an Ethernet link (--packet IFACE or --tap NAME), not --tun";
  if (ether && s.io_uring) return "--io-uring is for --tun; --packet uses its own memory-mapped rings";
  return "";
}

namespace {

Expected<StackConfig, std::string> make_config(const StackSetup& s) {
  StackConfig cfg;
  // ISNs and cookies are secret on a real wire: seed from the clock.
  cfg.secret ^= static_cast<uint64_t>(mono_now().ns()) * 0x9e3779b97f4a7c15ull;
  for (const auto& kv : s.sysctls) {
    auto eq = kv.find('=');
    std::string err = eq == std::string::npos ? "expected KEY=VALUE" : cfg.set(kv.substr(0, eq), kv.substr(eq + 1));
    if (!err.empty()) return Unexpected(fmt::format("--sysctl {}: {}", kv, err));
  }
  return cfg;
}

}  // namespace

int run_stack_app(const StackSetup& s, App& app) {
  if (std::string e = check_setup(s); !e.empty()) return fmt::print(stderr, "weir: {}\n", e), 2;
  if (!s.netns.empty()) {
    // This thread (the driver's only thread) moves for good: the device, the
    // control socket and any `ip` commands all live in that namespace.
    if (auto r = enter_netns(s.netns); !r) return fmt::print(stderr, "weir: {}\n", r.error()), 1;
  }
  auto addrs = parse_addrs(s.addrs);
  if (!addrs) return fmt::print(stderr, "weir: {}\n", addrs.error()), 2;
  auto cfg = make_config(s);
  if (!cfg) return fmt::print(stderr, "weir: {}\n", cfg.error()), 2;
  auto link = open_link(s);
  if (!link) return fmt::print(stderr, "weir: {}\n", link.error()), 1;
  Stack stack(*cfg, (*link)->netif());
  for (const auto& a : *addrs) stack.add_address(a);
  if (auto e = wait_for_addresses(**link, stack); !e.empty()) return fmt::print(stderr, "weir: {}\n", e), 1;
  StackDriver drv(stack, **link, app, s.driver);
  return drv.run();
}

}  // namespace weir::driver
