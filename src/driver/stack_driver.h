// The real-time driver of one Stack: one thread, one TUN device, one
// reactor. Packets are read in batches and fed to Stack::input with the
// monotonic time; the timerfd is kept at Stack::next_deadline(); the app is
// serviced after every batch. SIGINT/SIGTERM close the app's connections,
// give the stack a short while to finish the FIN handshakes, then stop.
#pragma once

#include <string>

#include "driver/app.h"
#include "driver/reactor.h"
#include "link/tun.h"
#include "link/tun_uring.h"
#include "weir/stack.h"

namespace weir::driver {

struct DriverOptions {
  size_t batch = 64;                 // packets read per wake-up
  Duration linger = Duration::s(2);  // after shutdown: time allowed for FINs
  std::string control_path;          // unix socket for `weir ss` ("" = none)
  bool print_counters = true;        // nstat-style counters on exit
};

class StackDriver {
 public:
  // `netif` is the stack's transmit path: flushed after every burst.
  // With a `ring` (`--io-uring`, the one `netif` queues on) packets are
  // read from its completions instead of the device's fd.
  StackDriver(Stack& st, link::TunDevice& dev, link::TunNetif& netif, App& app, DriverOptions opt,
              link::TunUring* ring = nullptr);
  // Runs until the app finishes or a signal stops it; returns the exit status.
  int run();
  // The `weir ss` / `nstat` text of the running stack (also used on exit).
  std::string render(const std::string& command, Time now) const;

 private:
  void on_readable();
  void on_ring(Time now);
  void settle(Time now);
  void begin_shutdown(Time now);

  Stack& st_;
  link::TunDevice& dev_;
  link::TunNetif& netif_;
  App& app_;
  DriverOptions opt_;
  Reactor rx_;
  link::TunBatch batch_;
  link::TunUring* ring_;
  bool stopping_ = false;
  Time stop_by_ = Time::never();
};

}  // namespace weir::driver
