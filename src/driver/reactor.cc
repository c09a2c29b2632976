#include "driver/reactor.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "driver/clock.h"

namespace weir::driver {

namespace {
Unexpected<std::string> sys_error(const char* what) {
  return Unexpected(fmt::format("{}: {}", what, std::strerror(errno)));
}
}  // namespace

Reactor::~Reactor() {
  for (int fd : {epfd_, tfd_, sfd_})
    if (fd >= 0) ::close(fd);
}

Expected<bool, std::string> Reactor::init(bool signals) {
  // Linux pads every sleeping thread's timer by timer_slack_ns (50 us by
  // default) to batch wake-ups; a link emulator cannot afford that.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) return sys_error("epoll_create1");
  tfd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (tfd_ < 0) return sys_error("timerfd_create");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = tfd_;
  if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, tfd_, &ev) < 0) return sys_error("epoll_ctl timerfd");
  if (signals) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
    sfd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd_ < 0) return sys_error("signalfd");
    ev.data.fd = sfd_;
    if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, sfd_, &ev) < 0) return sys_error("epoll_ctl signalfd");
  }
  return true;
}

Expected<bool, std::string> Reactor::watch(int fd, uint32_t events, FdHandler h) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) < 0) return sys_error("epoll_ctl add");
  fds_[fd] = std::move(h);
  return true;
}

void Reactor::unwatch(int fd) {
  ::epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
  fds_.erase(fd);
}

void Reactor::set_deadline(Time t) { deadline_ = t; }

void SpinWindow::observe(Duration late) {
  // Jump to any new worst case, forget it slowly (1/64 per wake-up: a few
  // hundred wake-ups, tens of milliseconds when busy); never above the cap,
  // so one freak stall does not keep the thread spinning for long.
  est_ = std::min(max_, std::max(late, est_ - Duration::ns(est_.ns() / 64)));
}

// The margin covers the spin loop's own granularity (a clock read and a
// non-blocking epoll_wait) and the scatter around the estimate.
Duration SpinWindow::window() const {
  if (max_ <= Duration::zero()) return Duration::zero();
  return std::min(max_, est_ + kMargin);
}

WaitPlan plan_wait(Time now, Time deadline, Duration spin) {
  if (deadline.is_never()) return {WaitPlan::Kind::kSleepIdle, Time::never()};
  if (deadline - now <= spin) return {WaitPlan::Kind::kPoll, Time::never()};
  return {WaitPlan::Kind::kSleepUntil, deadline - spin};
}

WaitPlan plan_busy_wait(Time now, Time deadline, Duration spin, Duration horizon, bool may_spin, bool must_yield,
                        Duration min_sleep) {
  if (must_yield && !deadline.is_never()) return {WaitPlan::Kind::kSleepUntil, max(deadline, now + min_sleep)};
  return plan_wait(now, deadline, may_spin && horizon > spin ? horizon : spin);
}

RtBudget RtBudget::from_kernel(int64_t runtime_us, int64_t period_us) {
  if (runtime_us < 0 || period_us <= 0 || runtime_us >= period_us) return RtBudget();
  const double limit = static_cast<double>(runtime_us) / static_cast<double>(period_us);
  return RtBudget(std::max(0.0, limit - 0.05), Duration::us(period_us * 4 / 100));
}

void RtBudget::account(Duration wall, Duration asleep) {
  if (!limited_) return;
  const auto earned = static_cast<int64_t>(share_ * static_cast<double>(wall.ns()));
  tokens_ = std::min(burst_, tokens_ + Duration::ns(earned) - (wall - asleep));
  // Debt is bounded too: a thread preempted for long (awake by this
  // measure, but not running) should not be kept from spinning for ages.
  tokens_ = std::max(tokens_, -burst_);
}

void Reactor::arm_timerfd(Time t) {
  if (t == armed_) return;
  itimerspec its{};
  if (!t.is_never()) {
    // An absolute time of 0 would disarm the timer: use 1 ns instead.
    its.it_value = to_timespec(t.ns() > 0 ? t : Time::from_ns(1));
  }
  ::timerfd_settime(tfd_, TFD_TIMER_ABSTIME, &its, nullptr);
  armed_ = t;
}

void Reactor::fire_timer_if_due() {
  if (deadline_.is_never()) return;
  Time now = mono_now();
  if (now < deadline_) return;
  ++st_.timer_fires;
  deadline_ = Time::never();  // the handler re-arms as it needs
  if (timer_) timer_(now);
}

void Reactor::dispatch(int n, void* raw) {
  auto* events = static_cast<epoll_event*>(raw);
  for (int i = 0; i < n; ++i) {
    int fd = events[i].data.fd;
    if (fd == tfd_) {
      uint64_t expirations;
      while (::read(tfd_, &expirations, sizeof expirations) > 0) {
      }
      if (!armed_.is_never()) {
        Duration late = mono_now() - armed_;
        st_.wake_late.add(late);
        spin_.observe(late);
      }
      armed_ = Time::never();
      continue;
    }
    if (fd == sfd_) {
      signalfd_siginfo si{};
      while (::read(sfd_, &si, sizeof si) == sizeof si)
        if (signal_) signal_(static_cast<int>(si.ssi_signo));
      continue;
    }
    auto it = fds_.find(fd);
    if (it != fds_.end()) {
      FdHandler h = it->second;  // a handler may unwatch itself
      h(events[i].events);
    }
  }
}

int Reactor::run() {
  std::array<epoll_event, 64> events{};
  while (!stopped_) {
    fire_timer_if_due();
    if (stopped_) break;
    int timeout = -1;
    const Time now = mono_now();
    // Busy mode polls within its horizon while the budget lasts; either
    // mode sleeps when the budget is deep in debt (the RT throttle's stall
    // would be worse than the late packets).
    const WaitPlan plan = plan_busy_wait(now, deadline_, spin_window(), busy_, budget_.may_spin(), budget_.must_yield());
    if (busy_ > Duration::zero() && !budget_.may_spin() && plan.kind != WaitPlan::Kind::kPoll &&
        plan_busy_wait(now, deadline_, spin_window(), busy_, true).kind == WaitPlan::Kind::kPoll)
      ++st_.budget_refusals;
    if (budget_.must_yield() && !deadline_.is_never()) ++st_.forced_yields;
    if (plan.kind == WaitPlan::Kind::kPoll) {
      // Close enough: poll without sleeping so the deadline is met to within
      // a loop iteration rather than a scheduler wake-up.
      timeout = 0;
      ++st_.spins;
    }
    arm_timerfd(plan.wake);
    slept_ = timeout != 0;
    wait_start_ = mono_now();
    const Time prev_end = wait_end_;
    int n = ::epoll_wait(epfd_, events.data(), static_cast<int>(events.size()), timeout);
    wait_end_ = mono_now();
    // Awake from the end of the last wait to the start of this one, and
    // through this one if it polled.
    if (prev_end.ns() > 0) budget_.account(wait_end_ - prev_end, slept_ ? wait_end_ - wait_start_ : Duration::zero());
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n > 0) ++st_.wakeups;
    dispatch(n, events.data());
  }
  return 0;
}

}  // namespace weir::driver
