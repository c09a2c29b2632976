#include "util/timer_queue.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace weir {
namespace {

Time at(int64_t ms) { return Time::from_ns(ms * 1000000); }

std::vector<uint64_t> drain(TimerQueue& q, Time now) {
  std::vector<uint64_t> tags;
  while (auto e = q.pop_expired(now)) tags.push_back(e->tag);
  return tags;
}

TEST(TimerQueue, EmptyHasNoDeadline) {
  TimerQueue q;
  EXPECT_TRUE(q.next_deadline().is_never());
  EXPECT_FALSE(q.pop_expired(Time::never()));
}

TEST(TimerQueue, FiresInDeadlineOrderOnlyWhenDue) {
  TimerQueue q;
  q.arm(at(30), 3);
  q.arm(at(10), 1);
  q.arm(at(20), 2);
  EXPECT_EQ(q.next_deadline(), at(10));
  EXPECT_TRUE(drain(q, at(9)).empty());
  EXPECT_EQ(drain(q, at(20)), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(q.next_deadline(), at(30));
  EXPECT_EQ(drain(q, at(100)), (std::vector<uint64_t>{3}));
  EXPECT_TRUE(q.empty());
}

TEST(TimerQueue, TiesFireInArmOrder) {
  TimerQueue q;
  for (uint64_t i = 0; i < 50; ++i) q.arm(at(5), i);
  auto tags = drain(q, at(5));
  ASSERT_EQ(tags.size(), 50u);
  for (uint64_t i = 0; i < 50; ++i) EXPECT_EQ(tags[i], i);
}

TEST(TimerQueue, RearmMovesBehindTimersAlreadyDueThen) {
  TimerQueue q;
  TimerHandle a = q.arm(at(5), 1);
  q.arm(at(5), 2);
  ASSERT_TRUE(q.rearm(a, at(5)));  // same deadline, now after tag 2
  EXPECT_EQ(drain(q, at(5)), (std::vector<uint64_t>{2, 1}));
}

TEST(TimerQueue, RearmEarlierAndLater) {
  TimerQueue q;
  TimerHandle a = q.arm(at(50), 1);
  q.arm(at(20), 2);
  ASSERT_TRUE(q.rearm(a, at(10)));
  EXPECT_EQ(q.next_deadline(), at(10));
  EXPECT_EQ(q.deadline(a), at(10));
  ASSERT_TRUE(q.rearm(a, at(40)));
  EXPECT_EQ(q.next_deadline(), at(20));
  EXPECT_EQ(drain(q, at(100)), (std::vector<uint64_t>{2, 1}));
}

TEST(TimerQueue, CancelledTimerNeverFires) {
  TimerQueue q;
  TimerHandle a = q.arm(at(1), 1);
  q.arm(at(2), 2);
  EXPECT_TRUE(q.cancel(a));
  EXPECT_FALSE(q.cancel(a));
  EXPECT_FALSE(q.armed(a));
  EXPECT_TRUE(q.deadline(a).is_never());
  EXPECT_EQ(drain(q, at(10)), (std::vector<uint64_t>{2}));
}

TEST(TimerQueue, StaleHandleDoesNotTouchSlotReuser) {
  TimerQueue q;
  TimerHandle a = q.arm(at(1), 1);
  auto e = q.pop_expired(at(1));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->handle, a);
  TimerHandle b = q.arm(at(7), 2);  // reuses a's slot
  EXPECT_EQ(b.slot, a.slot);
  EXPECT_FALSE(q.rearm(a, at(0)));
  EXPECT_FALSE(q.cancel(a));
  EXPECT_TRUE(q.armed(b));
  EXPECT_EQ(q.next_deadline(), at(7));
  EXPECT_FALSE(q.cancel(TimerHandle{}));
}

TEST(TimerQueue, SetArmsRearmsAndCancels) {
  TimerQueue q;
  TimerHandle h;
  ASSERT_TRUE(q.set(h, at(10), 42));
  EXPECT_TRUE(q.armed(h));
  TimerHandle first = h;
  ASSERT_TRUE(q.set(h, at(5), 43));
  EXPECT_EQ(h, first);  // same timer, moved
  EXPECT_EQ(q.size(), 1u);
  ASSERT_TRUE(q.set(h, Time::never(), 0));
  EXPECT_FALSE(h.valid());
  EXPECT_TRUE(q.empty());
  ASSERT_TRUE(q.set(h, at(3), 44));
  auto e = q.pop_expired(at(3));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->tag, 44u);
}

TEST(TimerQueue, BoundedCapacity) {
  TimerQueue q(2);
  EXPECT_TRUE(q.arm(at(1), 1).valid());
  EXPECT_TRUE(q.arm(at(1), 2).valid());
  EXPECT_FALSE(q.arm(at(1), 3).valid());
  TimerHandle h;
  EXPECT_FALSE(q.set(h, at(1), 4));
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_TRUE(q.arm(at(1), 5).valid());
}

// Random arm/rearm/cancel/pop against a reference ordered map keyed by
// (deadline, order): the queue must agree on every step.
TEST(TimerQueue, AgreesWithReferenceModelUnderRandomOperations) {
  std::mt19937 rng(8);
  TimerQueue q;
  std::map<std::pair<int64_t, uint64_t>, uint64_t> model;  // -> tag
  std::map<uint64_t, std::pair<TimerHandle, std::pair<int64_t, uint64_t>>> live;  // tag ->
  uint64_t order = 0, next_tag = 0;
  int64_t now = 0;
  for (int step = 0; step < 20000; ++step) {
    uint32_t op = rng() % 10;
    if (op < 4 || live.empty()) {
      int64_t d = now + static_cast<int64_t>(rng() % 50);
      TimerHandle h = q.arm(Time::from_ns(d), next_tag);
      model[{d, order}] = next_tag;
      live[next_tag++] = {h, {d, order++}};
    } else if (op < 6) {
      auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
      int64_t d = now + static_cast<int64_t>(rng() % 50);
      ASSERT_TRUE(q.rearm(it->second.first, Time::from_ns(d)));
      model.erase(it->second.second);
      it->second.second = {d, order++};
      model[it->second.second] = it->first;
    } else if (op < 7) {
      auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
      ASSERT_TRUE(q.cancel(it->second.first));
      model.erase(it->second.second);
      live.erase(it);
    } else {
      now += static_cast<int64_t>(rng() % 10);
      while (auto e = q.pop_expired(Time::from_ns(now))) {
        ASSERT_FALSE(model.empty());
        auto first = model.begin();
        ASSERT_LE(first->first.first, now);
        ASSERT_EQ(e->tag, first->second);
        ASSERT_EQ(e->deadline.ns(), first->first.first);
        live.erase(first->second);
        model.erase(first);
      }
      if (!model.empty()) {
        ASSERT_GT(model.begin()->first.first, now);
      }
    }
    ASSERT_EQ(q.size(), model.size());
    ASSERT_EQ(q.next_deadline().ns(),
              model.empty() ? Time::never().ns() : model.begin()->first.first);
  }
}

}  // namespace
}  // namespace weir
