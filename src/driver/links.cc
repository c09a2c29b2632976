#include "driver/links.h"

#include <fmt/format.h>

#include "driver/ether_links.h"
#include "driver/netns.h"
#include "driver/tun_link.h"

namespace weir::driver {

namespace {

Expected<std::unique_ptr<PolledLink>, std::string> open_tun(const StackSetup& s) {
  auto dev = link::TunDevice::open(s.tun, s.offload);
  if (!dev) return Unexpected(dev.error());
  for (const auto& p : s.peers) {
    if (auto r = configure_kernel_side(dev->name(), p); !r) return Unexpected(r.error());
  }
  auto l = TunLink::open(std::move(*dev), s.io_uring, s.driver.batch);
  if (!l) return Unexpected(l.error());
  return std::unique_ptr<PolledLink>(std::move(*l));
}

}  // namespace

Expected<std::unique_ptr<PolledLink>, std::string> open_link(const StackSetup& s) {
  if (!s.tun.empty()) return open_tun(s);
  return open_ether(s);
}

}  // namespace weir::driver
