// `weir emu`'s forwarding threads run under SCHED_FIFO and busy-poll the
// last stretch before a departure (src/driver/reactor.h). On a 2-core
// machine a real-time thread that spins when nothing is due would starve
// the very senders it forwards for, so the decision of when to spin is a
// pure function of the clock, the deadline and the spin window, pinned here.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace weir::driver
