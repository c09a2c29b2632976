// The receive queue's ring: bytes come out in the order they went in across
// the wrap and across growth, peeking does not consume, and storage is given
// back only when empty.
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

#include "tcp/rcv_queue.h"

namespace weir::tcp {
namespace {

std::vector<uint8_t> counting(size_t n, uint8_t from) {
  std::vector<uint8_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST(RcvQueue, ReadsBackAcrossTheWrap) {
  RcvQueue q;
  q.append(counting(3000, 0));
  std::vector<uint8_t> out(2500);
  ASSERT_EQ(q.peek(out), 2500u);
  q.consume(2500);
  const size_t cap = q.capacity();
  q.append(counting(3000, 100));  // 500 + 3000 bytes: wraps, fits without growing
  EXPECT_EQ(q.capacity(), cap);
  std::vector<uint8_t> all(q.size());
  ASSERT_EQ(q.peek(all), 3500u);
  const auto first = counting(3000, 0);
  const auto second = counting(3000, 100);
  EXPECT_TRUE(std::equal(first.begin() + 2500, first.end(), all.begin()));
  EXPECT_TRUE(std::equal(second.begin(), second.end(), all.begin() + 500));
}

TEST(RcvQueue, GrowingKeepsOrderWhenTheRingHadWrapped) {
  RcvQueue q;
  q.append(counting(4000, 0));
  q.consume(3000);
  q.append(counting(2000, 7));  // wraps in a 4096-byte ring
  q.append(counting(9000, 9));  // forces growth while wrapped
  std::vector<uint8_t> all(q.size());
  ASSERT_EQ(q.peek(all), 12000u);
  std::vector<uint8_t> want = counting(4000, 0);
  want.erase(want.begin(), want.begin() + 3000);
  const auto b = counting(2000, 7), c = counting(9000, 9);
  want.insert(want.end(), b.begin(), b.end());
  want.insert(want.end(), c.begin(), c.end());
  EXPECT_EQ(all, want);
}

TEST(RcvQueue, PeekDoesNotConsumeAndConsumeIsBounded) {
  RcvQueue q;
  q.append(counting(10, 1));
  std::vector<uint8_t> out(64);
  EXPECT_EQ(q.peek(out), 10u);
  EXPECT_EQ(q.size(), 10u);
  q.consume(100);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.peek(out), 0u);
}

TEST(RcvQueue, ReleaseFreesOnlyAnEmptyQueue) {
  RcvQueue q;
  q.append(counting(100, 0));
  q.release();
  EXPECT_GT(q.capacity(), 0u);  // still holds data: kept
  EXPECT_EQ(q.size(), 100u);
  q.consume(100);
  q.release();
  EXPECT_EQ(q.capacity(), 0u);
  q.append(counting(5, 3));  // usable again after release
  std::vector<uint8_t> out(5);
  ASSERT_EQ(q.peek(out), 5u);
  EXPECT_EQ(out, counting(5, 3));
}

// Randomized against a plain vector model: any mix of appends and reads
// returns exactly the stream that went in.
TEST(RcvQueue, MatchesAVectorModel) {
  std::mt19937 rng(7);
  RcvQueue q;
  std::vector<uint8_t> model;
  uint8_t next = 0;
  for (int step = 0; step < 2000; ++step) {
    if (rng() % 2 == 0) {
      std::vector<uint8_t> seg(rng() % 3000);
      for (auto& b : seg) b = next++;
      q.append(seg);
      model.insert(model.end(), seg.begin(), seg.end());
    } else {
      std::vector<uint8_t> out(rng() % 5000);
      const size_t n = q.peek(out);
      ASSERT_EQ(n, std::min(out.size(), model.size()));
      ASSERT_TRUE(std::equal(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n), model.begin()));
      q.consume(n);
      model.erase(model.begin(), model.begin() + static_cast<std::ptrdiff_t>(n));
    }
    ASSERT_EQ(q.size(), model.size());
  }
}

}  // namespace
}  // namespace weir::tcp
