// `weir fetch URL --tun NAME --addr 192.0.2.1/24`: weir's HTTP client on a
// real TUN device: downloads to a file with a progress bar and prints the
// body's SHA-256 (sha256sum layout) at the end.
#include <unistd.h>

#include <fmt/format.h>

#include "command.h"
#include "driver/fetch.h"
#include "driver/run.h"

namespace weir::cli {
namespace {

struct FetchArgs {
  driver::StackSetup setup;
  std::string url, output, sha;
  double timeout_s = 300;
  bool quiet = false;
};

int run_fetch(FetchArgs& a) {
  auto url = driver::http::parse_url(a.url);
  if (!url) return fmt::print(stderr, "weir fetch: {}\n", url.error()), 2;
  driver::FetchOptions o;
  o.url = *url;
  o.output = a.output;
  o.expect_sha256 = a.sha;
  o.progress = !a.quiet && ::isatty(STDERR_FILENO);
  o.timeout = Duration::ns(static_cast<int64_t>(a.timeout_s * 1e9));
  auto app = driver::make_fetch(o);
  a.setup.driver.print_counters = !a.quiet;
  return driver::run_stack_app(a.setup, *app);
}

Register reg("fetch", [](CLI::App& app) -> std::function<int()> {
  app.description("Download a URL over weir on a TUN device (HTTP/1.1 GET, sha256 at the end)");
  auto a = std::make_shared<FetchArgs>();
  app.add_option("url", a->url, "http://IP[:PORT]/PATH (IPv6 as [addr])")->required();
  app.add_option("--tun", a->setup.tun, "TUN device to attach to (created if missing)")->required();
  app.add_option("--addr", a->setup.addrs, "weir's address(es), CIDR")->required();
  app.add_option("--peer", a->setup.peers, "give the kernel side of the TUN this address (CIDR) and set it up");
  app.add_option("--netns", a->setup.netns, "network namespace to run in (ip netns name)");
  app.add_option("-o,--output", a->output, "write the body here (default: discard)");
  app.add_option("--sha256", a->sha, "expected SHA-256 of the body; exit 3 on mismatch");
  app.add_option("--timeout", a->timeout_s, "give up after this many seconds");
  app.add_option("--sysctl", a->setup.sysctls, "stack setting, e.g. net.ipv4.tcp_sack=0 (repeatable)");
  app.add_flag("--no-offload", [a](int64_t n) { a->setup.offload = n == 0; },
               "plain TUN: no IFF_VNET_HDR, no TSO super-packets");
  app.add_flag("--io-uring", a->setup.io_uring,
               "TUN reads and writes through an io_uring: one system call per burst, not per packet");
  app.add_flag("-q,--quiet", a->quiet, "no progress bar, no counters");
  return [a] { return run_fetch(*a); };
});

}  // namespace
}  // namespace weir::cli
