// `weir emu`'s forwarding threads run under SCHED_FIFO and busy-poll the
// last stretch before a departure (src/driver/reactor.h). On a 2-core
// machine a real-time thread that spins when nothing is due would starve
// the very senders it forwards for, so the decision of when to spin is a
// pure function of the clock, the deadline and the spin window, pinned here.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "driver/reactor.h"

namespace weir::driver {
namespace {

Time at_us(int64_t us) { return Time::from_ns(us * 1000); }

TEST(EmuWaitPlan, NothingDueNeverSpinsAndArmsNoTimer) {
  WaitPlan p = plan_wait(at_us(1000), Time::never(), Duration::us(100));
  EXPECT_EQ(p.kind, WaitPlan::Kind::kSleepIdle);
  EXPECT_TRUE(p.wake.is_never());
}

TEST(EmuWaitPlan, FarDeadlineSleepsUntilTheSpinWindowBeforeIt) {
  // Due 5 ms from now: sleep on the timer until 100 us before, not poll.
  WaitPlan p = plan_wait(at_us(1000), at_us(6000), Duration::us(100));
  EXPECT_EQ(p.kind, WaitPlan::Kind::kSleepUntil);
  EXPECT_EQ(p.wake, at_us(5900));
  // Just outside the window is still a sleep (to 1 us from now).
  p = plan_wait(at_us(1000), at_us(1101), Duration::us(100));
  EXPECT_EQ(p.kind, WaitPlan::Kind::kSleepUntil);
  EXPECT_EQ(p.wake, at_us(1001));
}

TEST(EmuWaitPlan, DeadlineInsideTheWindowOrPastIsPolled) {
  EXPECT_EQ(plan_wait(at_us(1000), at_us(1100), Duration::us(100)).kind, WaitPlan::Kind::kPoll);
  EXPECT_EQ(plan_wait(at_us(1000), at_us(1001), Duration::us(100)).kind, WaitPlan::Kind::kPoll);
  // Overdue (the timer woke late): handle it now, do not sleep again.
  EXPECT_EQ(plan_wait(at_us(1000), at_us(900), Duration::us(100)).kind, WaitPlan::Kind::kPoll);
  EXPECT_TRUE(plan_wait(at_us(1000), at_us(1050), Duration::us(100)).wake.is_never());
}

TEST(EmuWaitPlan, ZeroWindowSleepsToTheDeadlineItself) {
  // --spin-us 0: the timer is armed for the departure; only an overdue
  // deadline is polled (once, to run it).
  WaitPlan p = plan_wait(at_us(1000), at_us(1001), Duration::zero());
  EXPECT_EQ(p.kind, WaitPlan::Kind::kSleepUntil);
  EXPECT_EQ(p.wake, at_us(1001));
  EXPECT_EQ(plan_wait(at_us(1000), at_us(1000), Duration::zero()).kind, WaitPlan::Kind::kPoll);
}

TEST(EmuWaitPlan, SpinningIsBoundedByTheWindowAcrossAWait) {
  // Walk the clock in 1 us poll iterations towards a deadline 10 ms away:
  // the thread polls only during the last window (plus the overdue instant).
  const Time due = at_us(10000);
  const Duration spin = SpinWindow(Duration::us(100)).window();
  int polls = 0;
  for (int64_t us = 0; us <= 10000; ++us)
    if (plan_wait(at_us(us), due, spin).kind == WaitPlan::Kind::kPoll) ++polls;
  EXPECT_EQ(polls, spin.us() + 1);
  EXPECT_LE(spin, Duration::us(100));
}

// --busy (a dedicated core): poll through the gaps between departures
// instead of sleeping, but only while something is due within the horizon,
// and only while the real-time budget lasts.
TEST(EmuBusyWait, PollsWhileADepartureIsWithinTheHorizon) {
  const Duration spin = Duration::us(100), horizon = Duration::ms(2);
  // 240 us away (the next packet at 50 Mbit/s): poll, do not sleep.
  EXPECT_EQ(plan_busy_wait(at_us(1000), at_us(1240), spin, horizon, true).kind, WaitPlan::Kind::kPoll);
  EXPECT_EQ(plan_busy_wait(at_us(1000), at_us(3000), spin, horizon, true).kind, WaitPlan::Kind::kPoll);
  // Further away (an idle link): sleep until the horizon before it.
  WaitPlan p = plan_busy_wait(at_us(1000), at_us(10000), spin, horizon, true);
  EXPECT_EQ(p.kind, WaitPlan::Kind::kSleepUntil);
  EXPECT_EQ(p.wake, at_us(8000));
  // Nothing queued: sleep until a packet arrives, never spin.
  EXPECT_EQ(plan_busy_wait(at_us(1000), Time::never(), spin, horizon, true).kind, WaitPlan::Kind::kSleepIdle);
}

TEST(EmuBusyWait, WithoutBudgetItWaitsAsTheDefaultModeDoes) {
  const Duration spin = Duration::us(100), horizon = Duration::ms(2);
  for (int64_t gap : {1, 50, 100, 101, 240, 3000, 20000}) {
    const WaitPlan busy = plan_busy_wait(at_us(1000), at_us(1000 + gap), spin, horizon, false);
    const WaitPlan dflt = plan_wait(at_us(1000), at_us(1000 + gap), spin);
    EXPECT_EQ(busy.kind, dflt.kind) << gap;
    EXPECT_EQ(busy.wake, dflt.wake) << gap;
  }
  // A horizon shorter than the spin window never narrows it.
  EXPECT_EQ(plan_busy_wait(at_us(1000), at_us(1080), spin, Duration::us(10), true).kind, WaitPlan::Kind::kPoll);
}

TEST(EmuBusyWait, DeepInDebtItSleepsEvenWithADepartureDue) {
  // 1 Gbit/s: departures 12 us apart leave the fallback no gap to sleep
  // in; deep in debt the thread sleeps anyway (to the deadline, at least
  // min_sleep) rather than run into the kernel's throttle.
  const Duration spin = Duration::us(100), horizon = Duration::ms(2);
  WaitPlan p = plan_busy_wait(at_us(1000), at_us(1012), spin, horizon, false, true);
  EXPECT_EQ(p.kind, WaitPlan::Kind::kSleepUntil);
  EXPECT_EQ(p.wake, at_us(1020));
  p = plan_busy_wait(at_us(1000), at_us(1300), spin, horizon, false, true);
  EXPECT_EQ(p.wake, at_us(1300));
  EXPECT_EQ(plan_busy_wait(at_us(1000), Time::never(), spin, horizon, false, true).kind, WaitPlan::Kind::kSleepIdle);
  RtBudget b = RtBudget::from_kernel(950000, 1000000);
  EXPECT_FALSE(b.must_yield());
  b.account(Duration::ms(600), Duration::zero());  // 60 ms short: 20 ms in debt
  EXPECT_FALSE(b.may_spin());
  EXPECT_TRUE(b.must_yield());
}

TEST(RtBudget, KernelSettingsGiveAShareBelowTheThrottle) {
  RtBudget b = RtBudget::from_kernel(950000, 1000000);
  EXPECT_TRUE(b.limited());
  EXPECT_NEAR(b.share(), 0.90, 1e-9);
  EXPECT_EQ(b.tokens(), Duration::ms(40));
  // Throttling off (-1) or no limit below the period: unlimited.
  EXPECT_FALSE(RtBudget::from_kernel(-1, 1000000).limited());
  EXPECT_FALSE(RtBudget::from_kernel(1000000, 1000000).limited());
  EXPECT_TRUE(RtBudget().may_spin());
}

TEST(RtBudget, AThreadThatNeverSleepsStopsSpinningBeforeTheThrottle) {
  // Polling continuously (awake all the time, 10 us per loop): the budget
  // runs out after burst / (1 - share) = 400 ms, long before the kernel's
  // 950 ms.
  RtBudget b = RtBudget::from_kernel(950000, 1000000);
  int64_t awake_us = 0;
  while (b.may_spin() && awake_us < 2000000) {
    b.account(Duration::us(10), Duration::zero());
    awake_us += 10;
  }
  EXPECT_NEAR(static_cast<double>(awake_us), 400000.0, 20.0);
}

TEST(RtBudget, OverAnyOneSecondTheThreadIsAwakeLessThanTheKernelAllows) {
  // A thread that spins whenever the budget allows and otherwise sleeps
  // 150 us (a timer wait in a gap): over every 1 s window its awake time
  // stays below the kernel's 950 ms.
  RtBudget b = RtBudget::from_kernel(950000, 1000000);
  // Awake microseconds so far, in 10 us steps (prefix sums).
  std::vector<int64_t> awake_by{0};
  int64_t t = 0;
  while (t < 5000000) {
    if (b.may_spin()) {
      b.account(Duration::us(10), Duration::zero());
      awake_by.push_back(awake_by.back() + 10);
      t += 10;
    } else {
      b.account(Duration::us(150), Duration::us(150));
      for (int i = 0; i < 15; ++i) awake_by.push_back(awake_by.back());
      t += 150;
    }
  }
  int64_t worst = 0;
  for (size_t i = 0; i + 100000 < awake_by.size(); ++i) worst = std::max(worst, awake_by[i + 100000] - awake_by[i]);
  EXPECT_LE(worst, 940000);
  EXPECT_GE(worst, 900000);  // and it does use the share it has
}

}  // namespace
}  // namespace weir::driver
