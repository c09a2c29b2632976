// A scoreboard under test: every operation is followed by the invariant
// checker (counts recomputed by a walk), so no test can pass with drifting
// counts. Sequence numbers are offsets from `base`, so the same test runs
// with and without sequence wrap.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

#include "tcp/scoreboard.h"

namespace weir::tcp::testing {

class SbHarness {
 public:
  explicit SbHarness(uint32_t base, bool sack = true) : base_(base), sb_(Seq32(base), sack) {}

  Seq32 seq(uint32_t off) const { return Seq32(base_) + off; }
  SeqRange range(uint32_t b, uint32_t e) const { return {seq(b), seq(e)}; }

  void send(uint32_t from, uint32_t to, uint32_t mss) {
    auto r = sb_.on_send(range(from, to), mss, now_);
    ASSERT_TRUE(r.has_value());
    check();
  }
  uint32_t retransmit(uint32_t from, uint32_t to, uint32_t mss,
                      RetransmitKind kind = RetransmitKind::kNormal) {
    auto r = sb_.on_retransmit(range(from, to), mss, now_, {}, kind);
    EXPECT_TRUE(r.has_value());
    check();
    return r.has_value() ? *r : 0;
  }
  AckResult ack(uint32_t cum, std::initializer_list<std::pair<uint32_t, uint32_t>> sacks = {}) {
    std::vector<SeqRange> blocks;
    for (auto [b, e] : sacks) blocks.push_back(range(b, e));
    AckResult r = sb_.on_ack(seq(cum), blocks, now_);
    check();
    return r;
  }
  void mark_lost(uint32_t off) {
    auto i = sb_.find(seq(off));
    ASSERT_TRUE(i.has_value());
    sb_.mark_lost(*i);
    check();
  }
  void rto(bool reneged) {
    sb_.on_rto(reneged);
    check();
  }
  void check() const {
    const std::string err = sb_.check_invariants();
    ASSERT_EQ(err, "") << "invariant broken";
  }
  void advance(Duration d) { now_ += d; }
  Time now() const { return now_; }
  Scoreboard& sb() { return sb_; }

 private:
  uint32_t base_;
  Scoreboard sb_;
  Time now_ = Time::from_ns(1'000'000'000);
};

// Bases: ordinary, and 3,000 bytes before the sequence space wraps.
inline constexpr uint32_t kBases[] = {1000u, 0xFFFFF448u};

}  // namespace weir::tcp::testing
