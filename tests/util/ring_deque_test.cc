#include "util/ring_deque.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>

namespace weir {
namespace {

// The connection's write queue uses RingDeque where it used std::deque:
// the same answers over random pushes, pops, inserts before the back,
// writes through references, growth and wrap.
TEST(RingDeque, BehavesAsStdDeque) {
  std::mt19937 rng(7);
  RingDeque<uint32_t> r;
  std::deque<uint32_t> d;
  for (int step = 0; step < 20000; ++step) {
    const uint32_t op = static_cast<uint32_t>(rng() % 10);
    const auto v = static_cast<uint32_t>(rng());
    if (op < 4 || d.empty()) {
      r.push_back(v);
      d.push_back(v);
    } else if (op < 7) {
      r.pop_front();
      d.pop_front();
    } else if (op == 7) {
      r.insert(r.size() - 1, v);
      d.insert(d.end() - 1, v);
    } else if (op == 8) {
      r.back() = v;
      d.back() = v;
    } else if (rng() % 50 == 0) {
      r.clear();
      d.clear();
    }
    ASSERT_EQ(r.size(), d.size());
    ASSERT_EQ(r.empty(), d.empty());
    for (size_t i = 0; i < d.size(); ++i) ASSERT_EQ(r[i], d[i]) << "step " << step << " index " << i;
    if (!d.empty()) {
      ASSERT_EQ(r.front(), d.front());
      ASSERT_EQ(r.back(), d.back());
    }
  }
}

TEST(RingDeque, PushOfItsOwnElementSurvivesGrowth) {
  RingDeque<uint32_t> r;
  for (uint32_t i = 0; i < 64; ++i) r.push_back(i);  // full: the next push grows
  r.push_back(r.front());
  EXPECT_EQ(r.size(), 65u);
  EXPECT_EQ(r.back(), 0u);
}

}  // namespace
}  // namespace weir
