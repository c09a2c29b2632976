#include "driver/stack_driver.h"

#include <sys/epoll.h>

#include <cstdio>

#include <fmt/format.h>

#include "driver/clock.h"
#include "driver/control.h"
#include "driver/ss_format.h"

namespace weir::driver {

StackDriver::StackDriver(Stack& st, PolledLink& link, App& app, DriverOptions opt)
    : st_(st), link_(link), app_(app), opt_(std::move(opt)) {}

// One clock reading per wake-up: the packets arrived together as far as
// the engine can tell (as with Linux's per-NAPI-poll timestamp).
void StackDriver::on_input(Time now) {
  link_.input(now, st_);
  settle(now);
}

// After any event: run due timers, let the app act (which may queue data and
// so packets), and re-arm the timer at the engine's next deadline.
void StackDriver::settle(Time now) {
  // The link first (ether-contract.md): a resolution that timed out drops
  // its queued packets before the stack's timers send more behind them.
  link_.advance(now, st_);
  st_.advance(now);
  bool more = app_.service(now);
  // The burst is over: what the engine sent goes out (coalesced on a TUN
  // with TSO; one sendto() for a packet ring's burst).
  link_.flush();
  if (stopping_ && (now >= stop_by_ || (app_.finished() && st_.counters().get(Counter::TcpCurrEstab) == 0))) {
    rx_.stop();
    return;
  }
  if (!stopping_ && app_.finished()) {
    // A client app (fetch) is done: let its FIN exchange finish, then stop.
    stopping_ = true;
    stop_by_ = now + opt_.linger;
  }
  Time next = min(st_.next_deadline(), link_.next_deadline());
  if (more || link_.rx_pending()) next = now;
  if (stopping_) next = min(next, now + Duration::ms(50));
  rx_.set_deadline(next);
}

void StackDriver::begin_shutdown(Time now) {
  if (stopping_) {
    rx_.stop();  // a second signal: stop at once
    return;
  }
  fmt::print(stderr, "weir: shutting down, closing connections\n");
  stopping_ = true;
  stop_by_ = now + opt_.linger;
  app_.shutdown(now);
  settle(now);
}

std::string StackDriver::render(const std::string& command, Time now) const {
  if (command == "nstat") return format_nstat(st_.counters());
  if (command == "ss") return format_ss(st_, app_.sockets(), now, true);
  if (command == "ss-brief") return format_ss(st_, app_.sockets(), now, false);
  if (command == "tun" || command == "link") return link_.describe();
  return "unknown command (ss, ss-brief, nstat, tun, link)\n";
}

int StackDriver::run() {
  if (auto r = rx_.init(); !r) return fmt::print(stderr, "weir: {}\n", r.error()), 1;
  auto watched = rx_.watch(link_.fd(), EPOLLIN, [this](uint32_t) { on_input(mono_now()); });
  if (!watched) return fmt::print(stderr, "weir: {}\n", watched.error()), 1;
  std::unique_ptr<ControlServer> ctl;
  if (!opt_.control_path.empty()) {
    auto c = ControlServer::open(opt_.control_path, rx_, [this](const std::string& cmd) {
      return render(cmd, mono_now());
    });
    if (!c) return fmt::print(stderr, "weir: control socket: {}\n", c.error()), 1;
    ctl = std::move(*c);
  }
  rx_.on_timer([this](Time now) { link_.input_on_timer() ? on_input(now) : settle(now); });
  rx_.on_signal([this](int) { begin_shutdown(mono_now()); });
  Time now = mono_now();
  // The link learns the time before the app's first packet: an EtherLink
  // stamps a resolution started by it with the time of its last advance().
  link_.advance(now, st_);
  if (std::string e = app_.start(now, st_); !e.empty()) return fmt::print(stderr, "weir: {}\n", e), 1;
  settle(now);
  int r = rx_.run();
  if (r < 0) fmt::print(stderr, "weir: epoll: {}\n", r);
  if (opt_.print_counters) {
    fmt::print(stderr, "{}", link_.describe());
    fmt::print(stderr, "{}", format_nstat(st_.counters()));
  }
  return app_.exit_status();
}

}  // namespace weir::driver
