// `weir ss`: the connections of a running `weir serve`, with tcp_info in the
// `ss -ti` layout, or its counters in the `nstat` layout, read over the
// serve process's control socket.
#include <fmt/format.h>

#include "command.h"
#include "driver/control.h"

namespace weir::cli {
namespace {

struct SsArgs {
  std::string tun, control;
  bool info = true, nstat = false, tun_stats = false;
};

int run_ss(const SsArgs& a) {
  std::string path = a.control.empty() ? driver::default_control_path(a.tun) : a.control;
  std::string cmd = a.nstat ? "nstat" : a.tun_stats ? "tun" : a.info ? "ss" : "ss-brief";
  auto r = driver::control_query(path, cmd);
  if (!r) return fmt::print(stderr, "weir ss: {}\n", r.error()), 1;
  fmt::print("{}", *r);
  return 0;
}

Register reg("ss", [](CLI::App& app) -> std::function<int()> {
  app.description("Connections (ss -ti layout) or counters (nstat layout) of a running `weir serve`");
  auto a = std::make_shared<SsArgs>();
  app.add_option("--tun,--packet,--tap", a->tun, "the device `weir serve` runs on (TUN, Ethernet interface or TAP)");
  app.add_option("--control", a->control, "the control socket path (instead of --tun)");
  app.add_flag("--nstat", a->nstat, "counters, nstat layout");
  app.add_flag("--dev", a->tun_stats, "device statistics");
  app.add_flag("!--brief", a->info, "no tcp_info line");
  return [a] {
    if (a->tun.empty() && a->control.empty())
      return fmt::print(stderr, "weir ss: give the device (--tun, --packet or --tap) or --control\n"), 2;
    return run_ss(*a);
  };
});

}  // namespace
}  // namespace weir::cli
