// Scoreboard behaviour beyond seed 002: D-SACK detection, Karn's rule on RTT
// samples, reordering evidence, RACK's delivered packet, loss marking,
// non-SACK duplicate-ACK accounting, and a seeded random walk checked against
// an independent byte-level model of what the peer holds.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "recovery/scoreboard_fixture.h"

namespace weir::tcp {
namespace {

using testing::SbHarness;

TEST(Scoreboard, SendMustStartAtHighData) {
  Scoreboard sb(Seq32(100));
  EXPECT_FALSE(sb.on_send({Seq32(200), Seq32(300)}, 100, Time::zero()).has_value());
  EXPECT_FALSE(sb.on_send({Seq32(100), Seq32(300)}, 0, Time::zero()).has_value());
  auto r = sb.on_send({Seq32(100), Seq32(350)}, 100, Time::zero());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 3u);
  EXPECT_EQ(sb.at(2).seq.len(), 50u);
  EXPECT_EQ(sb.high_data(), Seq32(350));
}

TEST(Scoreboard, RetransmitMustStartOnPacketBoundary) {
  SbHarness h(0);
  h.send(0, 3000, 1000);
  EXPECT_FALSE(h.sb().on_retransmit(h.range(500, 1000), 1000, h.now()).has_value());
  EXPECT_FALSE(h.sb().on_retransmit(h.range(2000, 4000), 1000, h.now()).has_value());
  EXPECT_EQ(h.retransmit(1000, 3000, 1000), 2u);
  EXPECT_EQ(h.sb().retrans_out(), 2u);
  EXPECT_EQ(h.sb().high_rxt(), h.seq(3000));
}

TEST(Scoreboard, DsackBelowCumulativeAckIsDetected) {
  SbHarness h(0);
  h.send(0, 4000, 1000);
  h.mark_lost(0);
  h.retransmit(0, 1000, 1000);
  h.ack(2000);
  auto r = h.ack(2000, {{0, 1000}});
  EXPECT_TRUE(r.dsack);
  EXPECT_TRUE(r.dsack_below_una);
  EXPECT_EQ(r.dsack_range, h.range(0, 1000));
  EXPECT_EQ(r.discarded_blocks, 0u);
}

TEST(Scoreboard, DsackInsideSecondBlockClearsRetransInFlight) {
  SbHarness h(0);
  h.send(0, 4000, 1000);
  h.retransmit(1000, 2000, 1000, RetransmitKind::kNormal);  // e.g. a spurious retransmission
  EXPECT_EQ(h.sb().retrans_out(), 1u);
  auto r = h.ack(0, {{1000, 2000}, {1000, 3000}});
  EXPECT_TRUE(r.dsack);
  EXPECT_FALSE(r.dsack_below_una);
  EXPECT_EQ(r.dsack_retrans_packets, 1u);
  EXPECT_EQ(h.sb().retrans_out(), 0u) << "the duplicate proves no copy is in flight";
  EXPECT_EQ(h.sb().sacked_out(), 2u);
}

TEST(Scoreboard, OrdinaryFirstBlockIsNotDsack) {
  SbHarness h(0);
  h.send(0, 4000, 1000);
  auto r = h.ack(0, {{2000, 3000}, {1000, 1500}});
  EXPECT_FALSE(r.dsack);
}

TEST(Scoreboard, InvalidBlocksAreDiscardedAndCounted) {
  SbHarness h(0);
  h.send(0, 4000, 1000);
  h.ack(1000);
  auto r = h.ack(1000, {{2000, 3000}, {3000, 5000}, {500, 1500}});
  EXPECT_EQ(r.discarded_blocks, 2u) << "beyond HighData; below SND.UNA but not first";
  EXPECT_EQ(h.sb().sacked_out(), 1u);
}

// Issue 6: the rest of a packet a cumulative ACK covered in part begins at
// SND.UNA; Linux rejects a block starting there (tcp_is_sackblock_valid), so
// tcp_match_skb_to_sack never tags the trimmed packet.
TEST(Scoreboard, PartiallyAckedPacketIsNotCreditedByLaterSack) {
  SbHarness h(0);
  h.send(0, 3000, 1000);
  h.ack(1500);  // [1000,2000) is now [1500,2000)
  AckResult r = h.ack(1500, {{1500, 2000}});
  EXPECT_EQ(r.sacked_packets, 0u);
  EXPECT_EQ(r.discarded_blocks, 1u);
  EXPECT_EQ(h.sb().sacked_out(), 0u);
  // Not as a later block either, next to a valid one.
  r = h.ack(1500, {{2000, 3000}, {1500, 3000}});
  EXPECT_EQ(r.discarded_blocks, 1u);
  EXPECT_EQ(h.sb().sacked_out(), 1u);
  EXPECT_FALSE(h.sb().at(0).sacked());
  EXPECT_TRUE(h.sb().at(1).sacked());
  h.check();
}

TEST(Scoreboard, RttSamplesFollowKarn) {
  SbHarness h(0);
  h.send(0, 1000, 1000);
  h.advance(Duration::ms(10));
  h.send(1000, 2000, 1000);
  h.advance(Duration::ms(10));
  h.retransmit(0, 1000, 1000);
  h.advance(Duration::ms(30));
  auto r = h.ack(1000);
  EXPECT_TRUE(r.retrans_data_acked);
  EXPECT_FALSE(r.rtt_oldest.has_value()) << "ambiguous: retransmitted";
  r = h.ack(2000);
  ASSERT_TRUE(r.rtt_oldest.has_value());
  EXPECT_EQ(*r.rtt_oldest, Duration::ms(40));
  EXPECT_EQ(*r.rtt_newest, Duration::ms(40));
}

TEST(Scoreboard, RttOldestAndNewestFromOneAck) {
  SbHarness h(0);
  h.send(0, 1000, 1000);
  h.advance(Duration::ms(5));
  h.send(1000, 2000, 1000);
  h.advance(Duration::ms(20));
  auto r = h.ack(2000);
  EXPECT_EQ(*r.rtt_oldest, Duration::ms(25));
  EXPECT_EQ(*r.rtt_newest, Duration::ms(20));
}

TEST(Scoreboard, SackRttUsedWhenNothingCumulativelyAcked) {
  SbHarness h(0);
  h.send(0, 3000, 1000);
  h.advance(Duration::ms(7));
  auto r = h.ack(0, {{1000, 3000}});
  EXPECT_EQ(*r.rtt_oldest, Duration::ms(7));
}

TEST(Scoreboard, LatestDeliveredIsMostRecentlySent) {
  SbHarness h(0);
  h.send(0, 3000, 1000);
  h.advance(Duration::ms(1));
  h.mark_lost(0);
  h.retransmit(0, 1000, 1000);
  auto r = h.ack(3000);
  ASSERT_TRUE(r.latest_delivered.has_value());
  EXPECT_EQ(r.latest_delivered->end_seq, h.seq(1000)) << "the retransmission was sent last";
  EXPECT_TRUE(r.latest_delivered->retransmitted);
  EXPECT_EQ(r.delivered_packets, 3u);
}

TEST(Scoreboard, ReorderingEvidenceMeasuresDistanceBelowHighestSack) {
  SbHarness h(0);
  h.send(0, 8000, 1000);
  auto r = h.ack(0, {{6000, 7000}});
  EXPECT_EQ(r.reordering_bytes, 0u);
  r = h.ack(0, {{2000, 3000}, {6000, 7000}});
  // Linux tcp_highest_sack_seq() is the END of the highest SACKed packet
  // (sack-shift-sacked-7-3-4-8-9-fack.pkt: 7001:8001 then 3001:4001 gives
  // tcpi_reordering 5, not 4).
  EXPECT_EQ(r.reordering_bytes, 5000u) << "from 2000 up to the end of the highest SACKed packet, 7000";
  r = h.ack(1000, {{2000, 3000}, {6000, 7000}});
  EXPECT_EQ(r.reordering_bytes, 7000u) << "the hole at 0 filled: 0 up to 7000";
}

TEST(Scoreboard, RetransmittedPacketDeliveredIsNotReordering) {
  SbHarness h(0);
  h.send(0, 4000, 1000);
  h.ack(0, {{3000, 4000}});
  h.mark_lost(0);
  h.retransmit(0, 1000, 1000);
  auto r = h.ack(1000, {{3000, 4000}});
  EXPECT_EQ(r.reordering_bytes, 0u);
}

TEST(Scoreboard, LostRetransmissionIsCountedAndLeavesFlight) {
  SbHarness h(0);
  h.send(0, 3000, 1000);
  h.mark_lost(0);
  EXPECT_EQ(h.sb().in_flight(), 2u);
  h.retransmit(0, 1000, 1000);
  EXPECT_EQ(h.sb().in_flight(), 3u);
  h.mark_lost(0);  // RACK: the retransmission is lost as well
  EXPECT_EQ(h.sb().lost_retransmits(), 1u);
  EXPECT_EQ(h.sb().retrans_out(), 0u);
  EXPECT_EQ(h.sb().in_flight(), 2u);
  ASSERT_TRUE(h.sb().next_lost(h.seq(0)).has_value());
  EXPECT_EQ(*h.sb().next_lost(h.seq(0)), 0u);
}

TEST(Scoreboard, SackOfLostRetransmittedPacketClearsBoth) {
  SbHarness h(0);
  h.send(0, 3000, 1000);
  h.mark_lost(1000);
  h.retransmit(1000, 2000, 1000);
  h.ack(0, {{1000, 2000}});
  EXPECT_EQ(h.sb().lost_out(), 0u);
  EXPECT_EQ(h.sb().retrans_out(), 0u);
  EXPECT_EQ(h.sb().in_flight(), 2u);
}

TEST(Scoreboard, ClearLostRestoresFlight) {
  SbHarness h(0);
  h.send(0, 5000, 1000);
  h.rto(false);
  EXPECT_EQ(h.sb().in_flight(), 0u);
  h.sb().clear_lost();
  h.check();
  EXPECT_EQ(h.sb().in_flight(), 5u);
}

TEST(Scoreboard, RackRtoKeepsRecentlySentPacketsButAlwaysTheHead) {
  SbHarness h(0);
  h.send(0, 1000, 1000);
  h.advance(Duration::ms(100));
  h.send(1000, 3000, 1000);
  h.sb().on_rto(false, h.now() - Duration::ms(1));
  h.check();
  EXPECT_EQ(h.sb().lost_out(), 1u);
  EXPECT_TRUE(h.sb().at(0).lost());
}

TEST(Scoreboard, WalkByXmitTimePutsRetransmissionsLast) {
  SbHarness h(0);
  h.send(0, 3000, 1000);
  h.advance(Duration::ms(1));
  h.retransmit(0, 1000, 1000);
  std::vector<uint32_t> order;
  h.sb().walk_by_xmit_time([&](size_t i, const ScoreboardEntry& e) {
    order.push_back(static_cast<uint32_t>(i));
    (void)e;
    return true;
  });
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 2, 0}));
}

// Linux tcp_collapse_retrans: the merged packet keeps the first one's marks
// and times, takes the second's bytes and EVER_RETRANS, and the second's
// counts leave with it (tcp_adjust_pcount); positions after it renumber,
// so find() and the time-ordered walk still agree with the ring; wrap too.
TEST(Scoreboard, MergeNextTakesTheSecondPacketsBytesNotItsMarks) {
  for (uint32_t base : {0u, 0xffffff00u}) {
    SbHarness h(base);
    for (uint32_t off = 0; off < 500; off += 100) {
      h.send(off, off + 100, 1000);  // five one-packet skbs of 100 bytes
      h.advance(Duration::ms(1));
    }
    h.mark_lost(0);
    h.mark_lost(200);
    h.retransmit(100, 200, 1000, RetransmitKind::kProbe);  // EVER_RETRANS only
    h.ack(0, {{300, 400}});
    ASSERT_TRUE(h.sb().alone_in_skb(0));
    h.sb().merge_next(0);  // 0:100 (lost) takes 100:200 (ever retransmitted)
    h.check();
    EXPECT_EQ(h.sb().size(), 4u);
    EXPECT_EQ(h.sb().packets_out(), 4u);
    EXPECT_EQ(h.sb().lost_out(), 2u);
    EXPECT_EQ(h.sb().at(0).seq, h.range(0, 200));
    EXPECT_TRUE(h.sb().at(0).lost());
    EXPECT_TRUE(h.sb().at(0).ever_retrans());
    h.sb().merge_next(0);  // 0:200 takes 200:300, lost: its LOST leaves with it
    h.check();
    EXPECT_EQ(h.sb().lost_out(), 1u);
    EXPECT_EQ(h.sb().counts().lost_bytes, 300u);
    EXPECT_EQ(h.sb().find(h.seq(350)), std::optional<size_t>(1));
    EXPECT_EQ(h.sb().find(h.seq(450)), std::optional<size_t>(2));
    std::vector<uint32_t> order;
    h.sb().walk_by_xmit_time([&](size_t i, const ScoreboardEntry&) {
      order.push_back(static_cast<uint32_t>(i));
      return true;
    });
    EXPECT_EQ(order, (std::vector<uint32_t>{2})) << "lost and SACKed packets are out of the walk";
    h.ack(400);  // the merged packet and the SACKed one
    EXPECT_EQ(h.sb().packets_out(), 1u);
    EXPECT_EQ(h.sb().sacked_out(), 0u);
  }
}

// tcp_adjust_pcount for a non-SACK peer: a merged packet takes one
// duplicate ACK's delivery with it.
TEST(Scoreboard, MergeNextLowersARenoPeersDupackCount) {
  SbHarness h(0, /*sack=*/false);
  h.send(0, 100, 1000);
  h.send(100, 200, 1000);
  h.send(200, 300, 1000);
  h.sb().reno_add_dupack();
  EXPECT_EQ(h.sb().sacked_out(), 1u);
  h.sb().merge_next(0);
  h.check();
  EXPECT_EQ(h.sb().packets_out(), 2u);
  EXPECT_EQ(h.sb().sacked_out(), 0u);
}

// Non-SACK peers: Linux counts duplicate ACKs in sacked_out and limits them.
TEST(Scoreboard, RenoDupacksCountAsSackedAndAreLimited) {
  SbHarness h(0, /*sack=*/false);
  h.send(0, 4000, 1000);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(h.sb().reno_add_dupack().limited);
  h.check();
  EXPECT_EQ(h.sb().sacked_out(), 3u);
  auto d = h.sb().reno_add_dupack();
  EXPECT_TRUE(d.limited) << "4 dupacks cannot stand for 4 of 4 packets with a hole";
  EXPECT_EQ(h.sb().sacked_out(), 3u);
  h.check();
  auto r = h.ack(2000);  // hole plus one duplicate-ACKed packet
  EXPECT_EQ(h.sb().sacked_out(), 1u) << "2 left, at least one of them the hole";
  EXPECT_EQ(r.delivered_packets, 1u);
  h.ack(4000);
  EXPECT_EQ(h.sb().sacked_out(), 0u);
  EXPECT_EQ(h.sb().in_flight(), 0u);
}

TEST(Scoreboard, RenoIgnoresSackBlocks) {
  SbHarness h(0, /*sack=*/false);
  h.send(0, 4000, 1000);
  h.ack(0, {{1000, 2000}});
  EXPECT_EQ(h.sb().sacked_out(), 0u);
}

// Random operations against a byte-level model: a packet must be SACKed iff
// the peer is known to hold all its bytes (since the last reneging), and the
// counts must match a walk (checked inside the harness).
TEST(Scoreboard, RandomWalkMatchesPacketModel) {
  for (uint32_t base : testing::kBases) {
    std::mt19937 rng(12345 + base);
    SbHarness h(base);
    uint32_t una = 0, nxt = 0;
    std::set<uint32_t> held;  // offsets (in units of 100 bytes) the peer SACKed
    auto pick = [&](uint32_t lo, uint32_t hi) { return lo + rng() % (hi - lo + 1); };
    for (int step = 0; step < 4000; ++step) {
      h.advance(Duration::us(100));
      const uint32_t op = rng() % 10;
      if (op < 3 && nxt - una < 60000) {
        const uint32_t len = 100 * pick(1, 30);
        h.send(nxt, nxt + len, 100 * pick(5, 15));
        nxt += len;
      } else if (op < 6 && nxt > una) {
        const uint32_t b = una + 100 * pick(0, (nxt - una) / 100 - 1);
        const uint32_t e = b + 100 * pick(1, (nxt - b) / 100);
        // Linux tcp_match_skb_to_sack(): the block credits the packets it
        // covers whole; bytes of a packet it covers in part are forgotten.
        for (size_t i = 0; i < h.sb().size(); ++i) {
          const ScoreboardEntry& pk = h.sb().at(i);
          const uint32_t pb = static_cast<uint32_t>(pk.seq.begin - h.seq(0));
          const uint32_t pe = static_cast<uint32_t>(pk.seq.end - h.seq(0));
          if (b > una && b <= pb && pe <= e) {  // a block must start above SND.UNA
            for (uint32_t x = pb; x < pe; x += 100) held.insert(x);
          }
        }
        h.ack(una, {{b, e}, {b, e}});
      } else if (op < 7 && nxt > una) {
        una += 100 * pick(0, (nxt - una) / 100);
        h.ack(una);
        held.erase(held.begin(), held.lower_bound(una));
      } else if (op < 8 && !h.sb().empty()) {
        h.sb().mark_lost(rng() % h.sb().size());
        h.check();
      } else if (op < 9 && !h.sb().empty()) {
        const ScoreboardEntry& e = h.sb().at(rng() % h.sb().size());
        const uint32_t b = static_cast<uint32_t>(e.seq.begin - h.seq(0));
        const uint32_t len = e.seq.len() > 100 ? 100 * pick(1, e.seq.len() / 100) : e.seq.len();
        h.retransmit(b, b + len, 100 * pick(1, 10));
      } else if (rng() % 8 == 0) {
        h.rto(/*reneged=*/true);
        held.clear();
      }
      for (size_t i = 0; i < h.sb().size(); ++i) {
        const ScoreboardEntry& e = h.sb().at(i);
        bool all = true;
        for (uint32_t x = static_cast<uint32_t>(e.seq.begin - h.seq(0)); x < static_cast<uint32_t>(e.seq.end - h.seq(0)); x += 100) {
          all = all && held.count(x) > 0;
        }
        ASSERT_EQ(e.sacked(), all) << "step " << step << " entry " << i;
      }
      ASSERT_EQ(h.sb().packets_out(), h.sb().size());
      // next_lost() (with its hint) against a plain scan.
      const uint32_t from = una + (nxt > una ? 100 * pick(0, (nxt - una) / 100) : 0);
      std::optional<size_t> want;
      for (size_t i = 0; i < h.sb().size() && !want; ++i) {
        const ScoreboardEntry& e = h.sb().at(i);
        if (e.seq.end > h.seq(from) && e.lost() && !e.retrans() && !e.sacked()) want = i;
      }
      ASSERT_EQ(h.sb().next_lost(h.seq(from)), want) << "step " << step;
      ASSERT_EQ(h.sb().next_lost(h.seq(una)), [&]() -> std::optional<size_t> {
        for (size_t i = 0; i < h.sb().size(); ++i) {
          const ScoreboardEntry& e = h.sb().at(i);
          if (e.lost() && !e.retrans() && !e.sacked()) return i;
        }
        return std::nullopt;
      }()) << "step " << step;
    }
  }
}

// The lookups by sequence (find, which every SACK block and retransmission
// uses: an index guessed from the head packet's MSS, then a doubling search
// from the guess) and the walk in transmission order (each node's position
// number) against plain scans, on flights of mixed packet sizes: new data at
// different MSSes, retransmissions that split packets in the middle of the
// ring (renumbering the nodes after them), partial cumulative ACKs that
// trim the head, the ring growing and wrapping. The harness's invariant
// checker also compares every node's position number with its index.
TEST(Scoreboard, FindAndTimeOrderWalkMatchScansOnMixedSizes) {
  for (uint32_t base : testing::kBases) {
    std::mt19937 rng(777 + base);
    SbHarness h(base);
    uint32_t una = 0, nxt = 0;
    auto pick = [&](uint32_t lo, uint32_t hi) { return static_cast<uint32_t>(lo + rng() % (hi - lo + 1)); };
    for (int step = 0; step < 3000; ++step) {
      h.advance(Duration::us(100));
      const uint32_t op = rng() % 8;
      if (op < 3 && nxt - una < 200000) {
        // Mostly one MSS for long runs, as a real flow, sometimes another.
        const uint32_t mss = rng() % 4 == 0 ? pick(1, 1500) : 1000u;
        const uint32_t len = pick(1, 40) * mss - (rng() % 2 ? 0 : pick(0, mss - 1));
        h.send(nxt, nxt + len, mss);
        nxt += len;
      } else if (op < 4 && nxt > una) {
        una += pick(0, std::min<uint32_t>(nxt - una, 5000));  // may end inside a packet
        h.ack(una);
      } else if (op < 6 && !h.sb().empty()) {
        // Retransmit part of a packet: splits it where the new MSS ends.
        const ScoreboardEntry& e = h.sb().at(rng() % h.sb().size());
        const uint32_t b = static_cast<uint32_t>(e.seq.begin - h.seq(0));
        const uint32_t len = pick(1, e.seq.len());
        h.retransmit(b, b + len, len);
      } else if (op < 7 && nxt > una) {
        const uint32_t b = una + pick(1, nxt - una);
        h.ack(una, {{b, std::min(nxt, b + pick(1, 8000))}});
      } else if (!h.sb().empty()) {
        h.sb().mark_lost(rng() % h.sb().size());
        h.check();
      }
      // find() at every packet's edges and inside, and outside the flight.
      auto scan = [&](Seq32 s) -> std::optional<size_t> {
        for (size_t i = 0; i < h.sb().size(); ++i)
          if (h.sb().at(i).seq.contains(s)) return i;
        return std::nullopt;
      };
      std::vector<Seq32> probes{h.seq(una) - 1, h.seq(una), h.seq(nxt), h.seq(nxt) + 1};
      for (size_t i = 0; i < h.sb().size(); ++i) {
        const SeqRange r = h.sb().at(i).seq;
        probes.insert(probes.end(), {r.begin, r.begin + r.len() / 2, r.end - 1});
      }
      for (Seq32 s : probes) ASSERT_EQ(h.sb().find(s), scan(s)) << "step " << step;
      // The walk hands out each packet with its own index.
      size_t walked = 0;
      h.sb().walk_by_xmit_time([&](size_t i, const ScoreboardEntry& e) {
        EXPECT_EQ(&h.sb().at(i), &e) << "step " << step;
        ++walked;
        return true;
      });
      size_t want = 0;
      for (size_t i = 0; i < h.sb().size(); ++i) {
        const ScoreboardEntry& e = h.sb().at(i);
        want += !e.sacked() && !(e.lost() && !e.retrans());
      }
      ASSERT_EQ(walked, want) << "step " << step;
    }
    EXPECT_GT(h.sb().size(), 16u) << "the ring grew";
  }
}

// CVE-2019-11478 pattern (SACK panic class): a peer SACKing one byte inside
// packets, a different one on every ACK. Linux keeps no sub-packet SACK
// state; neither does the scoreboard: nothing is credited or remembered, so
// the per-ACK cost and the memory stay flat.
TEST(Scoreboard, OneByteSacksInsidePacketsKeepNoState) {
  SbHarness h(testing::kBases[0]);
  h.send(0, 1000 * 1000, 1000);
  for (uint32_t k = 0; k < 250; ++k) {
    const uint32_t p = 4 * k * 1000;
    AckResult r = h.ack(0, {{p + 500, p + 501}, {p + 1500, p + 1501}, {p + 2500, p + 2501},
                            {p + 3500, p + 3501}});
    ASSERT_EQ(r.sacked_packets, 0u);
  }
  EXPECT_EQ(h.sb().sacked_out(), 0u);
  EXPECT_EQ(h.sb().sack_ranges(), 0u);
  // A real SACK of whole packets still counts, as one range per run.
  h.ack(0, {{3000, 6000}, {9000, 9500}});
  EXPECT_EQ(h.sb().sacked_out(), 3u);
  EXPECT_EQ(h.sb().sack_ranges(), 1u);
}

}  // namespace
}  // namespace weir::tcp
