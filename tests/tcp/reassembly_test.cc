// Out-of-order reassembly: merging, duplicate accounting, wrap-around,
// pruning and a randomized comparison against a byte-map model.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "tcp/reassembly.h"

namespace weir::tcp {
namespace {

std::vector<uint8_t> bytes(uint32_t n, uint8_t v) { return std::vector<uint8_t>(n, v); }

TEST(Reassembly, KeepsDisjointRangesInOrder) {
  Reassembly q;
  q.insert(Seq32(300), bytes(100, 3), 1);
  q.insert(Seq32(100), bytes(100, 1), 2);
  q.insert(Seq32(500), bytes(50, 5), 3);
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q.blocks()[0].range, (SeqRange{Seq32(100), Seq32(200)}));
  EXPECT_EQ(q.blocks()[1].range, (SeqRange{Seq32(300), Seq32(400)}));
  EXPECT_EQ(q.blocks()[2].range, (SeqRange{Seq32(500), Seq32(550)}));
  EXPECT_EQ(q.bytes(), 250u);
  EXPECT_EQ(q.mem(), 250u + 3 * Reassembly::kRangeOverhead);
}

TEST(Reassembly, MergesAdjacentRangesAndBridgesHoles) {
  Reassembly q;
  q.insert(Seq32(100), bytes(100, 1), 1);
  q.insert(Seq32(300), bytes(100, 3), 2);
  OfoInsert r = q.insert(Seq32(200), bytes(100, 2), 3);  // exactly fills the hole
  EXPECT_EQ(r.new_bytes, 100u);
  EXPECT_EQ(r.dup_bytes, 0u);
  EXPECT_FALSE(r.dup.has_value());
  EXPECT_EQ(r.absorbed, 0u);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(r.block, (SeqRange{Seq32(100), Seq32(400)}));
  EXPECT_EQ(q.blocks()[0].stamp, 3u);
  const auto& d = q.blocks()[0].data;
  ASSERT_EQ(d.size(), 300u);
  EXPECT_EQ(d[0], 1);
  EXPECT_EQ(d[150], 2);
  EXPECT_EQ(d[299], 3);
}

TEST(Reassembly, OverlapKeepsHeldBytesAndReportsFirstDuplicate) {
  Reassembly q;
  q.insert(Seq32(100), bytes(100, 1), 1);  // [100,200)
  q.insert(Seq32(300), bytes(100, 3), 2);  // [300,400)
  OfoInsert r = q.insert(Seq32(150), bytes(300, 9), 3);  // [150,450)
  EXPECT_EQ(r.dup_bytes, 150u);  // 50 of the first + 100 of the second
  EXPECT_EQ(r.new_bytes, 150u);
  ASSERT_TRUE(r.dup.has_value());
  EXPECT_EQ(*r.dup, (SeqRange{Seq32(150), Seq32(200)}));  // RFC 2883: first duplicate part
  EXPECT_EQ(r.absorbed, 1u);  // [300,400) was covered whole
  EXPECT_FALSE(r.fully_dup);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q.blocks()[0].range, (SeqRange{Seq32(100), Seq32(450)}));
  const auto& d = q.blocks()[0].data;
  EXPECT_EQ(d[60], 1);   // held byte kept (seq 160)
  EXPECT_EQ(d[150], 9);  // new byte (seq 250)
  EXPECT_EQ(d[250], 3);  // held byte kept (seq 350)
  EXPECT_EQ(d[349], 9);  // seq 449
  EXPECT_EQ(q.bytes(), 350u);
}

TEST(Reassembly, FullyDuplicateSegmentChangesNothingButRecency) {
  Reassembly q;
  q.insert(Seq32(100), bytes(100, 1), 1);
  OfoInsert r = q.insert(Seq32(120), bytes(30, 7), 2);
  EXPECT_TRUE(r.fully_dup);
  EXPECT_EQ(r.new_bytes, 0u);
  EXPECT_EQ(*r.dup, (SeqRange{Seq32(120), Seq32(150)}));
  EXPECT_EQ(q.bytes(), 100u);
  EXPECT_EQ(q.blocks()[0].data[25], 1);
  EXPECT_EQ(q.blocks()[0].stamp, 2u);
}

TEST(Reassembly, PullMovesOnlyContiguousBytesAndDropsStaleOnes) {
  Reassembly q;
  q.insert(Seq32(100), bytes(100, 1), 1);  // [100,200)
  q.insert(Seq32(250), bytes(50, 2), 2);   // [250,300)
  RcvQueue out;
  EXPECT_EQ(q.pull(Seq32(90), out), 0u);  // hole before the first range
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.pull(Seq32(150), out), 50u);  // in-order data reached into the range
  EXPECT_EQ(out.size(), 50u);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.bytes(), 50u);
  out.consume(out.size());
  EXPECT_EQ(q.pull(Seq32(320), out), 0u);  // everything below rcv.nxt is discarded
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.bytes(), 0u);
}

TEST(Reassembly, WorksAcrossSequenceWrap) {
  Reassembly q;
  const Seq32 base(0xffffff00u);
  q.insert(base + 0x80, bytes(0x100, 2), 1);  // [..80, 0x80) crosses zero
  q.insert(base, bytes(0x80, 1), 2);          // [..00, ..80) touches it
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q.blocks()[0].range, (SeqRange{base, Seq32(0x80)}));
  EXPECT_EQ(q.blocks()[0].range.len(), 0x180u);
  EXPECT_NE(q.find(Seq32(0x10)), nullptr);
  EXPECT_EQ(q.find(Seq32(0x80)), nullptr);
  RcvQueue out;
  EXPECT_EQ(q.pull(base, out), 0x180u);
  std::vector<uint8_t> got(0x180);
  ASSERT_EQ(out.peek(got), 0x180u);
  EXPECT_EQ(got.front(), 1);
  EXPECT_EQ(got.back(), 2);
}

TEST(Reassembly, PruneDropsHighestFirstAndStopsAtTheFloor) {
  Reassembly q;
  for (uint32_t i = 0; i < 10; ++i) q.insert(Seq32(1000 + i * 200), bytes(100, 0), i + 1);
  const uint64_t per = 100 + Reassembly::kRangeOverhead;
  // Room for 6 ranges: the four highest go.
  EXPECT_EQ(q.prune(6 * per), 400u);
  ASSERT_EQ(q.size(), 6u);
  EXPECT_EQ(q.blocks().back().range.begin, Seq32(2000));
  // With a floor, ranges at or below it survive even over budget.
  EXPECT_EQ(q.prune(0, Seq32(1600)), 200u);
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q.blocks().back().range.begin, Seq32(1600));
}

TEST(Reassembly, DropFromCutsARangeInTwo) {
  Reassembly q;
  q.insert(Seq32(100), bytes(100, 1), 1);
  q.insert(Seq32(300), bytes(100, 2), 2);
  EXPECT_EQ(q.drop_from(Seq32(150)), 150u);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q.blocks()[0].range, (SeqRange{Seq32(100), Seq32(150)}));
  EXPECT_EQ(q.bytes(), 50u);
  EXPECT_EQ(q.blocks()[0].data.size(), 50u);
}

// Random inserts near a wrap point compared with a byte map: the ranges are
// exactly the maximal runs of held bytes, and every byte is the first copy.
TEST(Reassembly, MatchesByteMapModelUnderRandomInserts) {
  std::mt19937 rng(20260207);
  for (int round = 0; round < 40; ++round) {
    Reassembly q;
    const Seq32 base(0xfffff000u + static_cast<uint32_t>(round) * 97);
    std::map<uint32_t, uint8_t> model;  // offset -> byte
    for (int k = 0; k < 60; ++k) {
      const uint32_t off = rng() % 6000;
      const uint32_t len = 1 + rng() % 400;
      const auto v = static_cast<uint8_t>(k + 1);
      uint32_t fresh = 0;
      for (uint32_t i = 0; i < len; ++i) fresh += model.emplace(off + i, v).second ? 1 : 0;
      const OfoInsert r = q.insert(base + off, bytes(len, v), static_cast<uint64_t>(k + 1));
      ASSERT_EQ(r.new_bytes, fresh);
      ASSERT_EQ(r.dup_bytes, len - fresh);
    }
    // Expected maximal runs.
    std::vector<std::pair<uint32_t, uint32_t>> runs;
    for (const auto& [off, v] : model) {
      if (!runs.empty() && runs.back().second == off) {
        ++runs.back().second;
      } else {
        runs.push_back({off, off + 1});
      }
    }
    ASSERT_EQ(q.size(), runs.size());
    ASSERT_EQ(q.bytes(), model.size());
    for (size_t i = 0; i < runs.size(); ++i) {
      const OfoBlock& b = q.blocks()[i];
      ASSERT_EQ(b.range, (SeqRange{base + runs[i].first, base + runs[i].second}));
      for (uint32_t j = 0; j < b.data.size(); ++j) {
        ASSERT_EQ(b.data[j], model.at(runs[i].first + j));
      }
    }
  }
}

}  // namespace
}  // namespace weir::tcp
