// Protective Load Balancing (Linux tcp_plb.c) and its use by DCTCP: runs of
// congested rounds, the forced and the idle rehash, the pause after an RTO,
// and the switch. The old shape (no PLB: DCTCP never asks for a rehash)
// fails every test that expects one.
#include <gtest/gtest.h>

#include "cc/dctcp_window.h"
#include "tcp/cc/dctcp.h"
#include "tcp/cc/plb.h"

namespace weir::cc {
namespace {

constexpr Time t0 = Time::zero() + Duration::s(100);

PlbParams on(uint32_t rehash_rounds = 12, uint32_t idle_rounds = 3) {
  PlbParams p;
  p.enabled = true;
  p.rehash_rounds = rehash_rounds;
  p.idle_rehash_rounds = idle_rounds;
  return p;
}

TEST(Plb, ARunOfCongestedRoundsForcesARehash) {
  const PlbParams p = on(12);
  PlbState s;
  for (int i = 0; i < 11; ++i) {
    plb_update_state(p, s, 128);  // exactly the threshold counts as congested
    EXPECT_FALSE(plb_check_rehash(p, s, 10, t0)) << "round " << i;
  }
  plb_update_state(p, s, 256);
  EXPECT_TRUE(plb_check_rehash(p, s, 10, t0));
  EXPECT_EQ(s.consec_cong_rounds, 0u);  // the run starts over
  EXPECT_FALSE(plb_check_rehash(p, s, 10, t0));
}

TEST(Plb, ACleanRoundEndsTheRunAndNoMeasureChangesNothing) {
  const PlbParams p = on(3);
  PlbState s;
  plb_update_state(p, s, 200);
  plb_update_state(p, s, 200);
  plb_update_state(p, s, -1);   // no ratio this round: the run stands
  EXPECT_EQ(s.consec_cong_rounds, 2u);
  plb_update_state(p, s, 127);  // below tcp_plb_cong_thresh
  EXPECT_EQ(s.consec_cong_rounds, 0u);
  EXPECT_FALSE(plb_check_rehash(p, s, 10, t0));
}

TEST(Plb, TheRunIsCappedAtRehashRounds) {
  const PlbParams p = on(4, 0);
  PlbState s;
  for (int i = 0; i < 20; ++i) plb_update_state(p, s, 256);
  EXPECT_EQ(s.consec_cong_rounds, 4u);
}

TEST(Plb, AnIdleSenderMovesAfterFewerRounds) {
  const PlbParams p = on(12, 3);
  PlbState s;
  for (int i = 0; i < 3; ++i) plb_update_state(p, s, 256);
  EXPECT_FALSE(plb_check_rehash(p, s, 5, t0));  // packets in flight: wait for the forced run
  EXPECT_TRUE(plb_check_rehash(p, s, 0, t0));   // idle: move now
  // idle_rehash_rounds 0 turns the idle move off.
  const PlbParams no_idle = on(12, 0);
  PlbState s2;
  for (int i = 0; i < 5; ++i) plb_update_state(no_idle, s2, 256);
  EXPECT_FALSE(plb_check_rehash(no_idle, s2, 0, t0));
}

TEST(Plb, AnRtoPausesRehashingForOneToTwoSuspendPeriods) {
  const PlbParams p = on(2);
  for (uint32_t random : {0u, 0x80000000u, 0xffffffffu}) {
    PlbState s;
    plb_update_state(p, s, 256);
    plb_update_state_upon_rto(p, s, t0, random);
    EXPECT_EQ(s.consec_cong_rounds, 0u);  // the RTO's own rehash changed the path
    const Duration pause = s.pause_until - t0;
    EXPECT_GE(pause, Duration::s(60));
    EXPECT_LT(pause, Duration::s(120));
    plb_update_state(p, s, 256);
    plb_update_state(p, s, 256);
    EXPECT_FALSE(plb_check_rehash(p, s, 10, s.pause_until - Duration::ms(1)));
    EXPECT_EQ(s.consec_cong_rounds, 2u);  // a paused check keeps the run
    EXPECT_TRUE(plb_check_rehash(p, s, 10, s.pause_until));
  }
}

TEST(Plb, DisabledDoesNothing) {
  PlbParams p = on(1, 1);
  p.enabled = false;
  PlbState s;
  plb_update_state(p, s, 256);
  plb_update_state_upon_rto(p, s, t0, 7);
  EXPECT_EQ(s.consec_cong_rounds, 0u);
  EXPECT_EQ(s.pause_until, Time::zero());
  EXPECT_FALSE(plb_check_rehash(p, s, 0, t0));
}

// DCTCP's use (dctcp_update_alpha, dctcp_cwnd_event): the round's own CE
// share, not alpha, decides; TX_START is the idle check; an RTO pauses.
void window(Dctcp& d, CcState& tp, uint32_t pkts, uint32_t ce) { test::window(d, tp, pkts, ce, t0); }
using test::ecn_state;

CcOptions plb_opts(uint32_t rehash_rounds) {
  CcOptions o;
  o.plb = on(rehash_rounds);
  return o;
}

TEST(DctcpPlb, TheRoundsCeShareDrivesTheRehash) {
  Dctcp d(plb_opts(3));
  CcState tp = ecn_state();
  d.init(tp, t0);
  window(d, tp, 10, 5);  // 128/256: congested
  window(d, tp, 10, 6);
  EXPECT_FALSE(tp.plb_rehash);
  window(d, tp, 10, 10);
  EXPECT_TRUE(tp.plb_rehash);
  tp.plb_rehash = false;  // the engine takes it
  // alpha is far below 1/2 after many clean windows, yet a round at 1/2
  // counts: PLB reads the round, not the EWMA.
  for (int i = 0; i < 100; ++i) window(d, tp, 10, 0);
  ASSERT_LT(d.alpha(), 128u);
  for (int i = 0; i < 3; ++i) window(d, tp, 10, 5);
  EXPECT_TRUE(tp.plb_rehash);
}

TEST(DctcpPlb, IdleTransmitStartAndRtoPause) {
  Dctcp d(plb_opts(12));
  CcState tp = ecn_state();
  d.init(tp, t0);
  for (int i = 0; i < 3; ++i) window(d, tp, 10, 10);
  EXPECT_FALSE(tp.plb_rehash);  // 3 of 12 rounds, data in flight
  tp.packets_out = 0;
  d.cwnd_event(tp, CaEvent::TxStart, t0);
  EXPECT_TRUE(tp.plb_rehash);  // idle after tcp_plb_idle_rehash_rounds
  tp.plb_rehash = false;
  for (int i = 0; i < 3; ++i) window(d, tp, 10, 10);
  d.cwnd_event(tp, CaEvent::Loss, t0);  // RTO: pause, run restarts
  for (int i = 0; i < 12; ++i) window(d, tp, 10, 10);
  EXPECT_FALSE(tp.plb_rehash);
}

TEST(DctcpPlb, OffByDefault) {
  Dctcp d;
  CcState tp = ecn_state();
  d.init(tp, t0);
  for (int i = 0; i < 40; ++i) window(d, tp, 10, 10);
  tp.packets_out = 0;
  d.cwnd_event(tp, CaEvent::TxStart, t0);
  EXPECT_FALSE(tp.plb_rehash);
}

}  // namespace
}  // namespace weir::cc
