// `weir serve --tun NAME|--packet IFACE|--tap NAME --addr 192.0.2.1/24
// --app echo|discard|chargen|http [DIR] [--port P]`: weir on a real device,
// serving one application on its socket API, until SIGINT/SIGTERM.
#include <fmt/format.h>

#include "command.h"
#include "driver/control.h"
#include "driver/http_server.h"
#include "driver/run.h"
#include "link_flags.h"

namespace weir::cli {
namespace {

struct ServeArgs {
  std::shared_ptr<driver::StackSetup> setup = std::make_shared<driver::StackSetup>();
  std::string app = "echo";
  std::string dir;
  int port = 0;
  bool no_control = false;
};

int run_serve(ServeArgs& a) {
  if (std::string e = driver::check_setup(*a.setup); !e.empty()) return fmt::print(stderr, "weir serve: {}\n", e), 2;
  auto addrs = driver::parse_addrs(a.setup->addrs);
  if (!addrs) return fmt::print(stderr, "weir serve: {}\n", addrs.error()), 2;
  // The well-known ports of the four services (RFC 862/863/864, HTTP).
  int port = a.port;
  std::unique_ptr<driver::App> app;
  if (a.app == "echo") app = driver::make_echo(*addrs, static_cast<uint16_t>(port ? port : 7));
  else if (a.app == "discard") app = driver::make_discard(*addrs, static_cast<uint16_t>(port ? port : 9));
  else if (a.app == "chargen") app = driver::make_chargen(*addrs, static_cast<uint16_t>(port ? port : 19));
  else if (a.app == "http") {
    if (a.dir.empty()) return fmt::print(stderr, "weir serve: --app http needs a directory\n"), 2;
    app = driver::make_http_server(*addrs, static_cast<uint16_t>(port ? port : 80), a.dir);
  } else {
    return fmt::print(stderr, "weir serve: unknown app '{}'\n", a.app), 2;
  }
  if (!a.no_control && a.setup->driver.control_path.empty())
    a.setup->driver.control_path = driver::default_control_path(driver::device_name(*a.setup));
  if (a.no_control) a.setup->driver.control_path.clear();
  return driver::run_stack_app(*a.setup, *app);
}

Register reg("serve", [](CLI::App& app) -> std::function<int()> {
  app.description("Run weir on a TUN, TAP or Ethernet interface, serving echo, discard, chargen or http");
  auto a = std::make_shared<ServeArgs>();
  add_link_flags(app, a->setup);
  app.add_option("--app", a->app, "echo | discard | chargen | http");
  app.add_option("dir", a->dir, "directory served by --app http");
  app.add_option("--port", a->port, "TCP port (default: 7, 9, 19 or 80)");
  app.add_option("--control", a->setup->driver.control_path, "control socket for `weir ss` (default /tmp/weir-DEVICE.sock)");
  app.add_flag("--no-control", a->no_control, "no control socket");
  return [a] { return run_serve(*a); };
});

}  // namespace
}  // namespace weir::cli
