// The real-time driver of one Stack: one thread, one link (a PolledLink: the
// TUN device, or an Ethernet device under an EtherLink), one reactor.
// Packets are read in batches and fed to Stack::input with the monotonic
// time; the timerfd is kept at the earlier of the stack's and the link's
// next deadlines; the app is serviced after every batch. SIGINT/SIGTERM
// close the app's connections, give the stack a short while to finish the FIN handshakes, then stop.
#pragma once

#include <string>

#include "driver/app.h"
#include "driver/polled_link.h"
#include "driver/reactor.h"
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
  // `link` carries the stack's packets (its netif() is the one `st`
  // transmits on) and is flushed after every burst.
  StackDriver(Stack& st, PolledLink& link, App& app, DriverOptions opt);
  // Runs until the app finishes or a signal stops it; returns the exit status.
  int run();
  // The `weir ss` / `nstat` text of the running stack (also used on exit).
  std::string render(const std::string& command, Time now) const;

 private:
  void on_input(Time now);
  void settle(Time now);
  void begin_shutdown(Time now);

  Stack& st_;
  PolledLink& link_;
  App& app_;
  DriverOptions opt_;
  Reactor rx_;
  bool stopping_ = false;
  Time stop_by_ = Time::never();
};

}  // namespace weir::driver
