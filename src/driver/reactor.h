// One driver thread's event loop: epoll over the device fds, one timerfd
// armed at the engine's next deadline (absolute CLOCK_MONOTONIC), and a
// signalfd for SIGINT/SIGTERM so shutdown is an ordinary event, not an
// async handler. Optionally busy-polls the last stretch before a deadline,
// because a sleeping thread wakes tens of microseconds late.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "driver/histogram.h"
#include "weir/expected.h"
#include "weir/time.h"

namespace weir::driver {

struct ReactorStats {
  uint64_t wakeups = 0;
  uint64_t timer_fires = 0;
  uint64_t spins = 0;  // busy-poll rounds
  // How late the timerfd woke the thread against the time it was armed for
  // (deadline minus the spin window): the spin window must cover this for
  // deadlines to be met by spinning rather than by luck.
  ErrorHistogram wake_late;
};

// The adaptive spin window (Reactor::set_spin): a decaying maximum of how
// late timer wake-ups were, plus a margin for the spin loop's own
// granularity, capped at `max`. Pure, so it is testable without a clock.
class SpinWindow {
 public:
  static constexpr Duration kMargin = Duration::us(5);
  explicit SpinWindow(Duration max = Duration::zero()) : max_(max), est_(max) {}
  // One timer wake-up `late` after the time it was armed for.
  void observe(Duration late);
  Duration window() const;

 private:
  Duration max_;
  Duration est_;
};

// How Reactor::run waits for its next deadline, decided from the clock
// reading, the deadline and the spin window alone (pure, so testable):
// poll (epoll_wait with timeout 0, i.e. busy-wait) only when the deadline
// is at most `spin` away or already past; otherwise sleep on the timerfd
// until `spin` before it; with nothing due, sleep until an fd or signal
// wakes the thread. So a SCHED_FIFO thread never spins while nothing is due
// soon, and each spin lasts at most `spin` (plus one loop iteration).
struct WaitPlan {
  enum class Kind : uint8_t { kPoll, kSleepUntil, kSleepIdle };
  Kind kind = Kind::kSleepIdle;
  Time wake = Time::never();  // kSleepUntil: when the timer fires
};
WaitPlan plan_wait(Time now, Time deadline, Duration spin);

class Reactor {
 public:
  using FdHandler = std::function<void(uint32_t epoll_events)>;
  using TimerHandler = std::function<void(Time now)>;
  using SignalHandler = std::function<void(int signo)>;

  Reactor() = default;
  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;
  ~Reactor();

  // Creates the epoll, timer and (if `signals`) signal fds; SIGINT and
  // SIGTERM are blocked in the calling thread so only the signalfd sees them.
  Expected<bool, std::string> init(bool signals = true);
  Expected<bool, std::string> watch(int fd, uint32_t events, FdHandler h);
  void unwatch(int fd);
  void on_timer(TimerHandler h) { timer_ = std::move(h); }
  void on_signal(SignalHandler h) { signal_ = std::move(h); }

  // Wake at `t` (Time::never() disarms). Re-arming to the same time is free.
  void set_deadline(Time t);
  Time deadline() const { return deadline_; }
  // Deadlines closer than the spin window are met by spinning instead of
  // sleeping. The window adapts to how late timer wake-ups actually are (a
  // decaying maximum of the observed lateness, plus a margin), capped at
  // `max`: spinning costs a core for as long as it lasts, so it should be
  // no longer than the wake-up latency it covers.
  void set_spin(Duration max) { spin_ = SpinWindow(max); }
  Duration spin_window() const { return spin_.window(); }

  // Runs until stop(); returns 0, or -errno if epoll failed.
  int run();
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }
  const ReactorStats& stats() const { return st_; }
  // Whether the last wait slept (timerfd or blocking epoll) rather than
  // polled: tells a late wake-up from a preempted busy-poll.
  bool last_wait_slept() const { return slept_; }
  Time last_wait_start() const { return wait_start_; }
  Time last_wait_end() const { return wait_end_; }

 private:
  void arm_timerfd(Time t);
  void fire_timer_if_due();
  void dispatch(int n, void* events);

  int epfd_ = -1;
  int tfd_ = -1;
  int sfd_ = -1;
  std::unordered_map<int, FdHandler> fds_;
  TimerHandler timer_;
  SignalHandler signal_;
  Time deadline_ = Time::never();
  Time armed_ = Time::never();
  SpinWindow spin_;
  bool stopped_ = false;
  bool slept_ = true;
  Time wait_start_ = Time::from_ns(0);
  Time wait_end_ = Time::from_ns(0);
  ReactorStats st_;
};

}  // namespace weir::driver
