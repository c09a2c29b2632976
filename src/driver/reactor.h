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
  // Busy mode (Reactor::set_busy): waits that could have polled but slept
  // because the real-time budget (RtBudget) was spent.
  uint64_t budget_refusals = 0;
  // Waits that slept with a departure due because the budget was deep in
  // debt (RtBudget::must_yield).
  uint64_t forced_yields = 0;
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

// Busy mode (`weir emu --busy`, a dedicated core): poll whenever the next
// deadline is within `horizon` (milliseconds, not the spin window's
// microseconds), so the thread does not sleep between departures at all
// while packets are queued; with `may_spin` false (the real-time budget is
// spent, RtBudget) or a deadline beyond the horizon, wait as plan_wait does
// with the ordinary spin window. Nothing due: sleep until an fd wakes it.
// `must_yield` (the budget is deep in debt: departures closer together
// than the spin window left the fallback nothing to sleep in): sleep to the
// deadline, at least `min_sleep`, even if that departure is late: a few
// late packets instead of the throttle's 50 ms stall.
WaitPlan plan_busy_wait(Time now, Time deadline, Duration spin, Duration horizon, bool may_spin,
                        bool must_yield = false, Duration min_sleep = Duration::us(20));

// How long a SCHED_FIFO thread may stay awake without hitting the kernel's
// RT throttle (kernel.sched_rt_runtime_us of sched_rt_period_us, 950 ms of
// 1 s by default, per CPU): once an RT thread has run that long in a
// period, the kernel stops it for the rest of the period (a 50 ms stall
// for a thread that polls continuously; measured here: 52-54 ms once a
// second). A token bucket: the thread earns `share` of every wall-clock
// nanosecond, spends every nanosecond it is awake, holds at most `burst`;
// so over any window W it is awake at most burst + share * W. With share =
// runtime/period - 5 % and burst = 4 % of the period it stays 1 % of a
// period below the throttle. Pure (the caller measures), so testable.
class RtBudget {
 public:
  // No limit (runtime -1: throttling disabled, or not a real-time thread).
  RtBudget() = default;
  RtBudget(double share, Duration burst) : limited_(true), share_(share), burst_(burst), tokens_(burst) {}
  // From the kernel's settings (microseconds; runtime < 0 means unlimited).
  static RtBudget from_kernel(int64_t runtime_us, int64_t period_us);
  // `wall` elapsed, of which the thread slept `asleep`.
  void account(Duration wall, Duration asleep);
  bool may_spin() const { return !limited_ || tokens_ > Duration::zero(); }
  // Half the burst in debt: the thread has to sleep, due or not.
  bool must_yield() const { return limited_ && tokens_ <= -burst_ / 2; }
  bool limited() const { return limited_; }
  double share() const { return share_; }
  Duration tokens() const { return tokens_; }

 private:
  bool limited_ = false;
  double share_ = 1.0;
  Duration burst_ = Duration::zero();
  Duration tokens_ = Duration::zero();
};

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
  // Busy mode: poll while the deadline is within `horizon` and `budget`
  // allows (plan_busy_wait). Zero horizon: the spin window only, but still
  // never deep into the budget's debt.
  void set_busy(Duration horizon, RtBudget budget) { busy_ = horizon, budget_ = budget; }
  const RtBudget& budget() const { return budget_; }
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
  Duration busy_ = Duration::zero();
  RtBudget budget_;
  bool stopped_ = false;
  bool slept_ = true;
  Time wait_start_ = Time::from_ns(0);
  Time wait_end_ = Time::from_ns(0);
  ReactorStats st_;
};

}  // namespace weir::driver
