#include "sim/event_loop.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/rng.h"

namespace weir::sim {
namespace {

struct Recorder final : EventTarget {
  std::vector<std::pair<int64_t, uint64_t>> seen;
  void on_event(Time now, uint64_t tag) override { seen.emplace_back(now.ns(), tag); }
};

TEST(EventLoop, RunsEventsInDeadlineOrder) {
  EventLoop loop;
  Recorder r;
  loop.at(Time::from_ns(30), &r, 3);
  loop.at(Time::from_ns(10), &r, 1);
  loop.at(Time::from_ns(20), &r, 2);
  loop.run_until(Time::from_ns(100));
  ASSERT_EQ(r.seen.size(), 3u);
  EXPECT_EQ(r.seen[0], std::make_pair(int64_t{10}, uint64_t{1}));
  EXPECT_EQ(r.seen[1], std::make_pair(int64_t{20}, uint64_t{2}));
  EXPECT_EQ(r.seen[2], std::make_pair(int64_t{30}, uint64_t{3}));
  EXPECT_EQ(loop.now(), Time::from_ns(100));
}

TEST(EventLoop, BreaksTiesByInsertionOrder) {
  EventLoop loop;
  Recorder r;
  for (uint64_t i = 0; i < 1000; ++i) loop.at(Time::from_ns(static_cast<int64_t>(i % 3)), &r, i);
  loop.run_until(Time::from_ns(10));
  ASSERT_EQ(r.seen.size(), 1000u);
  for (size_t i = 1; i < r.seen.size(); ++i) {
    ASSERT_LE(r.seen[i - 1].first, r.seen[i].first);
    if (r.seen[i - 1].first == r.seen[i].first) {
      ASSERT_LT(r.seen[i - 1].second, r.seen[i].second);
    }
  }
}

TEST(EventLoop, StopsAtTheHorizonAndKeepsLaterEvents) {
  EventLoop loop;
  Recorder r;
  loop.at(Time::from_ns(5), &r, 1);
  loop.at(Time::from_ns(50), &r, 2);
  EXPECT_EQ(loop.run_until(Time::from_ns(10)), 1u);
  EXPECT_EQ(loop.pending(), 1u);
  EXPECT_EQ(loop.next_time(), Time::from_ns(50));
}

TEST(EventLoop, EventInThePastRunsNow) {
  EventLoop loop;
  Recorder r;
  loop.run_until(Time::from_ns(100));
  loop.at(Time::from_ns(1), &r, 7);
  loop.step();
  ASSERT_EQ(r.seen.size(), 1u);
  EXPECT_EQ(r.seen[0].first, 100);
}

struct Chain final : EventTarget {
  EventLoop* loop;
  int left;
  void on_event(Time, uint64_t) override {
    if (--left > 0) loop->after(Duration::us(1), this);
  }
};

TEST(EventLoop, EventsMayScheduleEvents) {
  EventLoop loop;
  Chain c;
  c.loop = &loop;
  c.left = 500;
  loop.at(Time::zero(), &c);
  loop.run_until(Time::from_ns(Duration::s(1).ns()));
  EXPECT_EQ(c.left, 0);
  EXPECT_EQ(loop.events_run(), 500u);
}

TEST(Rng, SameSeedSameSequenceDifferentSeedDifferent) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    differs |= x != c.next();
  }
  EXPECT_TRUE(differs);
}

TEST(Rng, UniformHasTheRightMeanAndRange) {
  Rng r(7);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

}  // namespace
}  // namespace weir::sim
