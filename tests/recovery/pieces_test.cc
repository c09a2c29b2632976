// The small pieces on their own: PRR arithmetic (RFC 6937), dupthresh
// marking (RFC 6675 / Linux tcp_mark_head_lost), the reordering degree,
// NewReno marking (RFC 6582), F-RTO steps (RFC 5682).
#include <gtest/gtest.h>

#include "recovery/scoreboard_fixture.h"
#include "tcp/recovery/dupthresh.h"
#include "tcp/recovery/frto.h"
#include "tcp/recovery/newreno.h"
#include "tcp/recovery/prr.h"

namespace weir::tcp::recovery {
namespace {

using tcp::testing::SbHarness;

// RFC 6937 §3: with RecoverFS 20 and ssthresh 10, one delivery per ACK and
// pipe above ssthresh, PRR sends one packet per two delivered.
TEST(Prr, ProportionalPartHalvesTheSendingRate) {
  Prr prr;
  prr.start(20);
  uint32_t pipe = 19;
  uint32_t sent = 0;
  for (int ack = 0; ack < 10; ++ack) {
    --pipe;  // one packet left the network
    const uint32_t cwnd = prr.cwnd_reduction(20, 10, pipe, 1, 0, false);
    const uint32_t sndcnt = cwnd > pipe ? cwnd - pipe : 0;
    prr.on_sent(sndcnt);
    pipe += sndcnt;
    sent += sndcnt;
  }
  EXPECT_EQ(sent, 5u);
  EXPECT_EQ(prr.prr_delivered(), 10u);
  EXPECT_EQ(prr.prr_out(), 5u);
}

TEST(Prr, FirstAckForcesTheFastRetransmit) {
  Prr prr;
  prr.start(10);
  // ceil(5 * 1 / 10) = 1 anyway; with ssthresh 1 the proportional part is 1 too.
  EXPECT_EQ(prr.cwnd_reduction(10, 1, 9, 1, 1, false), 10u);
  Prr p2;
  p2.start(100);
  EXPECT_EQ(p2.cwnd_reduction(100, 1, 99, 1, 1, false), 100u) << "at least one packet";
}

TEST(Prr, SlowStartReductionBoundAllowsOneMoreWhenUnaAdvances) {
  Prr prr;
  prr.start(10);
  prr.on_sent(3);
  // pipe 2 < ssthresh 5: send max(prr_delivered - prr_out, delivered) + 1,
  // at most ssthresh - pipe.
  EXPECT_EQ(prr.cwnd_reduction(10, 5, 2, 2, 0, true), 2u + 3u);
  Prr p2;
  p2.start(10);
  p2.on_sent(3);
  EXPECT_EQ(p2.cwnd_reduction(10, 5, 2, 2, /*newly_lost=*/1, true), 2u + 2u)
      << "no extra packet when a loss was just detected";
  Prr p3;
  p3.start(10);
  p3.on_sent(3);
  EXPECT_EQ(p3.cwnd_reduction(10, 5, 4, 5, 0, true), 5u) << "capped at ssthresh";
}

TEST(Prr, NothingDeliveredChangesNothing) {
  Prr prr;
  prr.start(10);
  EXPECT_EQ(prr.cwnd_reduction(7, 5, 6, 0, 0, false), 7u);
  Prr idle;
  EXPECT_EQ(idle.cwnd_reduction(7, 5, 6, 3, 0, false), 7u) << "no reduction started";
}

TEST(Dupthresh, MarksPacketsWithReorderingSackedAbove) {
  SbHarness h(0xFFFFF000u);
  h.send(0, 8000, 1000);
  h.ack(0, {{2000, 3000}, {4000, 7000}});  // packets 3, 5, 6, 7 SACKed
  h.check();
  // RFC 6675 IsLost(): DupThresh (3) SACKed packets above. Packets 1 and 2
  // have 4, packet 4 has 3, packet 8 none.
  EXPECT_EQ(update_scoreboard(h.sb(), 3, false), 3u);
  h.check();
  EXPECT_TRUE(h.sb().at(0).lost());
  EXPECT_TRUE(h.sb().at(1).lost());
  EXPECT_TRUE(h.sb().at(3).lost());
  EXPECT_FALSE(h.sb().at(7).lost());
  EXPECT_EQ(update_scoreboard(h.sb(), 4, false), 0u) << "a larger degree marks nothing more";
  EXPECT_EQ(update_scoreboard(h.sb(), 3, false), 0u) << "idempotent";
}

TEST(Dupthresh, FastRetransmitMarksAtLeastTheHead) {
  SbHarness h(0);
  h.send(0, 5000, 1000);
  h.ack(0, {{3000, 4000}});
  EXPECT_EQ(update_scoreboard(h.sb(), 3, false), 0u);
  EXPECT_EQ(update_scoreboard(h.sb(), 3, true), 1u);
  h.check();
  EXPECT_TRUE(h.sb().at(0).lost());
  EXPECT_FALSE(h.sb().at(1).lost());
  EXPECT_TRUE(dupthresh_reached(3, 3));
  EXPECT_FALSE(dupthresh_reached(2, 3));
}

TEST(Reordering, GrowsWithEvidenceUpToMaxAndShrinksOnRto) {
  Counters mib;
  Reordering r(3, 10);
  r.on_sack_reordering(2500, 1000, false, mib);
  EXPECT_EQ(r.degree(), 3u) << "within the current degree";
  EXPECT_EQ(r.seen(), 1u);
  r.on_sack_reordering(6500, 1000, false, mib);
  EXPECT_EQ(r.degree(), 7u);
  r.on_sack_reordering(50000, 1000, true, mib);
  EXPECT_EQ(r.degree(), 10u) << "tcp_max_reordering";
  EXPECT_EQ(mib.get(Counter::TcpExtTCPSACKReorder), 2u);
  EXPECT_EQ(mib.get(Counter::TcpExtTCPTSReorder), 1u);
  r.on_rto(true, 5, 3);
  EXPECT_EQ(r.degree(), 3u);
  r.on_reno_reordering(8, 0, mib);
  EXPECT_EQ(r.degree(), 8u);
  EXPECT_EQ(mib.get(Counter::TcpExtTCPRenoReorder), 1u);
}

TEST(NewReno, MarksHeadAtDupthreshAndOnPartialAck) {
  SbHarness h(0, /*sack=*/false);
  h.send(0, 6000, 1000);
  h.sb().reno_add_dupack();
  h.sb().reno_add_dupack();
  EXPECT_FALSE(newreno_mark_lost(h.sb(), CaState::Disorder, 3, false));
  h.sb().reno_add_dupack();
  EXPECT_TRUE(newreno_mark_lost(h.sb(), CaState::Disorder, 3, false));
  EXPECT_FALSE(newreno_mark_lost(h.sb(), CaState::Disorder, 3, false)) << "already lost";
  h.check();
  h.retransmit(0, 1000, 1000);
  h.ack(2000);
  EXPECT_FALSE(newreno_mark_lost(h.sb(), CaState::Recovery, 3, false)) << "a dupack in recovery";
  EXPECT_TRUE(newreno_mark_lost(h.sb(), CaState::Recovery, 3, true));
  EXPECT_TRUE(h.sb().at(0).lost());
  EXPECT_EQ(h.sb().at(0).seq.begin, h.seq(2000));
  h.check();
}

TEST(NewReno, PartialAckAndHoldAtHighSeq) {
  EXPECT_TRUE(is_partial_ack(Seq32(100), Seq32(200), Seq32(300)));
  EXPECT_FALSE(is_partial_ack(Seq32(100), Seq32(300), Seq32(300)));
  EXPECT_FALSE(is_partial_ack(Seq32(100), Seq32(100), Seq32(300)));
  EXPECT_TRUE(is_partial_ack(Seq32(0xFFFFFF00u), Seq32(0x10u), Seq32(0x200u)));
  EXPECT_TRUE(hold_at_high_seq(false, Seq32(300), Seq32(300)));
  EXPECT_FALSE(hold_at_high_seq(true, Seq32(300), Seq32(300)));
  EXPECT_FALSE(hold_at_high_seq(false, Seq32(301), Seq32(300)));
}

TEST(Frto, EnabledForNewEpisodesAndRepeatedTimeoutsOnly) {
  Frto f;
  f.on_rto(2, true, 0, false);
  EXPECT_TRUE(f.active());
  f.on_rto(2, false, 0, false);
  EXPECT_FALSE(f.active()) << "an RTO during recovery";
  f.on_rto(2, false, 1, false);
  EXPECT_TRUE(f.active()) << "RFC 5682 §3.2: repeated timeouts";
  f.on_rto(0, true, 0, false);
  EXPECT_FALSE(f.active());
  f.on_rto(2, true, 0, true);
  EXPECT_FALSE(f.active()) << "not while probing the MTU";
}

TEST(Frto, StepsTwoAndThree) {
  Frto f;
  f.on_rto(2, true, 0, false);
  Seq32 high_seq(10000);
  FrtoAck a;
  a.snd_una_advanced = true;
  a.snd_nxt = Seq32(10000);
  a.high_seq = high_seq;
  a.can_send_new_data = true;
  EXPECT_EQ(f.on_ack(a, high_seq), FrtoAction::kSendNewData);
  EXPECT_EQ(high_seq, Seq32(10000));
  a.snd_nxt = Seq32(12000);
  a.high_seq = high_seq;
  a.orig_data_delivered = true;
  EXPECT_EQ(f.on_ack(a, high_seq), FrtoAction::kSpuriousUndo);
  a.orig_data_delivered = false;
  a.num_dupack = 1;
  EXPECT_EQ(f.on_ack(a, high_seq), FrtoAction::kNone);
  EXPECT_FALSE(f.active()) << "step 3.a: a duplicate ACK after new data";
  Frto g;
  g.on_rto(2, true, 0, false);
  a = {};
  a.snd_una_advanced = true;
  a.snd_nxt = Seq32(10000);
  a.high_seq = Seq32(10000);
  EXPECT_EQ(g.on_ack(a, high_seq), FrtoAction::kNone);
  EXPECT_FALSE(g.active()) << "nothing new to send: conventional recovery";
}

}  // namespace
}  // namespace weir::tcp::recovery
