#include "driver/stack_driver.h"

#include <sys/epoll.h>

#include <cstdio>

#include <fmt/format.h>

#include "driver/clock.h"
#include "driver/control.h"
#include "driver/ss_format.h"

namespace weir::driver {

StackDriver::StackDriver(Stack& st, link::TunDevice& dev, link::TunNetif& netif, App& app, DriverOptions opt,
                         link::TunUring* ring)
    : st_(st), dev_(dev), netif_(netif), app_(app), opt_(std::move(opt)), batch_(ring ? 1 : opt_.batch), ring_(ring) {}

void StackDriver::on_readable() {
  size_t n = batch_.read(dev_);
  // One clock read per batch: the packets arrived together as far as the
  // engine can tell (as with Linux's per-NAPI-poll timestamp).
  Time now = mono_now();
  for (size_t i = 0; i < n; ++i) {
    if (batch_.checksum_valid(i)) st_.input_checksum_valid(now, batch_.packet(i));
    else st_.input(now, batch_.packet(i));
  }
  settle(now);
}

// The ring's reads completed (or a flush reaped some: settle() then asks
// for this at once through the deadline): the same per-batch input as
// on_readable, then the buffers go back to the kernel with the burst's
// writes, in settle()'s flush.
void StackDriver::on_ring(Time now) {
  size_t n = ring_->read();
  for (size_t i = 0; i < n; ++i) {
    if (ring_->checksum_valid(i)) st_.input_checksum_valid(now, ring_->packet(i));
    else st_.input(now, ring_->packet(i));
  }
  ring_->release();
  settle(now);
}

// After any event: run due timers, let the app act (which may queue data and
// so packets), and re-arm the timer at the engine's next deadline.
void StackDriver::settle(Time now) {
  st_.advance(now);
  bool more = app_.service(now);
  // The burst is over: what the engine sent goes out, coalesced (TSO).
  netif_.flush();
  if (stopping_ && (now >= stop_by_ || (app_.finished() && st_.counters().get(Counter::TcpCurrEstab) == 0))) {
    rx_.stop();
    return;
  }
  if (!stopping_ && app_.finished()) {
    // A client app (fetch) is done: let its FIN exchange finish, then stop.
    stopping_ = true;
    stop_by_ = now + opt_.linger;
  }
  Time next = st_.next_deadline();
  if (more || (ring_ && ring_->rx_pending())) next = now;
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
  if (command == "tun") {
    const auto& s = dev_.stats();
    return fmt::format("{}: rx {} pkts {} bytes in {} batches ({} super-packets, {} checksums completed, {} taken as valid); "
                       "tx {} pkts {} bytes ({} super-packets of {} segments), {} dropped ({} refused: queue full), {} oversize\n",
                       dev_.name(), s.rx_packets, s.rx_bytes, s.rx_batches, s.rx_gso, s.rx_csum_fixed, s.rx_csum_valid,
                       s.tx_packets, s.tx_bytes, s.tx_gso, s.tx_gso_segs, s.tx_dropped, s.tx_refused, s.tx_oversize) +
           (ring_ ? fmt::format("{}: io_uring {} submits, {} completions, {} refused for want of a slot, {} reads failed, "
                                "{}\n",
                                dev_.name(), ring_->stats().submits, ring_->stats().reaped, ring_->stats().tx_no_slot,
                                ring_->stats().rx_failed,
                                ring_->multishot() ? fmt::format("multishot read re-armed {} times", ring_->stats().rx_rearms)
                                                   : std::string("one read per buffer"))
                  : std::string());
  }
  return "unknown command (ss, ss-brief, nstat, tun)\n";
}

int StackDriver::run() {
  if (auto r = rx_.init(); !r) return fmt::print(stderr, "weir: {}\n", r.error()), 1;
  // The ring's fd is readable while completions wait (io_uring_poll).
  auto watched = ring_ ? rx_.watch(ring_->fd(), EPOLLIN, [this](uint32_t) { on_ring(mono_now()); })
                       : rx_.watch(dev_.fd(), EPOLLIN, [this](uint32_t) { on_readable(); });
  if (!watched) return fmt::print(stderr, "weir: {}\n", watched.error()), 1;
  std::unique_ptr<ControlServer> ctl;
  if (!opt_.control_path.empty()) {
    auto c = ControlServer::open(opt_.control_path, rx_, [this](const std::string& cmd) {
      return render(cmd, mono_now());
    });
    if (!c) return fmt::print(stderr, "weir: control socket: {}\n", c.error()), 1;
    ctl = std::move(*c);
  }
  rx_.on_timer([this](Time now) { ring_ ? on_ring(now) : settle(now); });
  rx_.on_signal([this](int) { begin_shutdown(mono_now()); });
  Time now = mono_now();
  if (std::string e = app_.start(now, st_); !e.empty()) return fmt::print(stderr, "weir: {}\n", e), 1;
  settle(now);
  int r = rx_.run();
  if (r < 0) fmt::print(stderr, "weir: epoll: {}\n", r);
  if (opt_.print_counters) {
    fmt::print(stderr, "{}", render("tun", mono_now()));
    fmt::print(stderr, "{}", format_nstat(st_.counters()));
  }
  return app_.exit_status();
}

}  // namespace weir::driver
