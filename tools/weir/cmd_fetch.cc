// `weir fetch URL --tun NAME|--packet IFACE|--tap NAME --addr 192.0.2.1/24`:
// weir's HTTP client on a real device: downloads to a file with a progress
// bar and prints the body's SHA-256 (sha256sum layout) at the end; with a
// tcp:// URL it reads a raw stream (no HTTP) until the peer closes.
#include <unistd.h>

#include <fmt/format.h>

#include "command.h"
#include "driver/fetch.h"
#include "driver/run.h"
#include "link_flags.h"

namespace weir::cli {
namespace {

struct FetchArgs {
  std::shared_ptr<driver::StackSetup> setup = std::make_shared<driver::StackSetup>();
  std::string url, output, sha;
  double timeout_s = 300;
  bool quiet = false, no_sha256 = false;
};

int run_fetch(FetchArgs& a) {
  if (std::string e = driver::check_setup(*a.setup); !e.empty()) return fmt::print(stderr, "weir fetch: {}\n", e), 2;
  auto url = driver::http::parse_url(a.url);
  if (!url) return fmt::print(stderr, "weir fetch: {}\n", url.error()), 2;
  driver::FetchOptions o;
  o.url = *url;
  o.output = a.output;
  o.expect_sha256 = a.sha;
  o.sha256 = !a.no_sha256;
  o.progress = !a.quiet && ::isatty(STDERR_FILENO);
  o.timeout = Duration::ns(static_cast<int64_t>(a.timeout_s * 1e9));
  auto app = driver::make_fetch(o);
  a.setup->driver.print_counters = !a.quiet;
  return driver::run_stack_app(*a.setup, *app);
}

Register reg("fetch", [](CLI::App& app) -> std::function<int()> {
  app.description("Download a URL over weir on a TUN, TAP or Ethernet interface (HTTP/1.1 GET, or a raw TCP stream; sha256 at the end)");
  auto a = std::make_shared<FetchArgs>();
  app.add_option("url", a->url, "http://IP[:PORT]/PATH, or tcp://IP:PORT to read the raw stream until the peer closes (IPv6 as [addr])")->required();
  add_link_flags(app, a->setup);
  app.add_option("-o,--output", a->output, "write the body here (default: discard)");
  auto* sha = app.add_option("--sha256", a->sha, "expected SHA-256 of the body; exit 3 on mismatch");
  app.add_flag("--no-sha256", a->no_sha256, "count the body's bytes only, no digest (hashing costs more CPU per byte than the stack: for benchmarks)")
      ->excludes(sha);
  app.add_option("--timeout", a->timeout_s, "give up after this many seconds");
  app.add_flag("-q,--quiet", a->quiet, "no progress bar, no counters");
  return [a] { return run_fetch(*a); };
});

}  // namespace
}  // namespace weir::cli
