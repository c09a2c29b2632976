// DCTCP (RFC 8257 §3.3-3.5, Linux tcp_dctcp.c): alpha's EWMA per
// observation window, the cut by alpha/2 on ECE, the halving on loss and
// RTO, undo, the fallback to Reno without ECN and the TCP_CC_INFO record.
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "tcp/cc/cc_info.h"
#include "cc/dctcp_window.h"
#include "tcp/cc/dctcp.h"

namespace weir::cc {
namespace {

constexpr Time t0 = Time::zero();

using test::ecn_state;
using test::window;

TEST(Dctcp, AlphaStartsAtOneAndDecaysByOneSixteenthPerCleanWindow) {
  Dctcp d;
  CcState tp = ecn_state();
  d.init(tp, t0);
  EXPECT_EQ(d.alpha(), 1024u);  // dctcp_alpha_on_init
  window(d, tp, 10, 0);
  EXPECT_EQ(d.alpha(), 960u);   // 1024 - 1024/16
  window(d, tp, 10, 0);
  EXPECT_EQ(d.alpha(), 900u);   // 960 - 60
}

TEST(Dctcp, AlphaMovesTowardTheMarkedFraction) {
  Dctcp d;
  CcState tp = ecn_state();
  d.init(tp, t0);
  for (int i = 0; i < 200; ++i) window(d, tp, 10, 0);
  EXPECT_EQ(d.alpha(), 0u);  // min_not_zero: 15 >> 4 = 0, so a small alpha drops to 0
  // F = 1/2: alpha += (5 << 6) / 10 = 32 per window (g * F in 1/1024).
  window(d, tp, 10, 5);
  EXPECT_EQ(d.alpha(), 32u);
  window(d, tp, 10, 5);
  EXPECT_EQ(d.alpha(), 32u - 2 + 32);
  // Every packet marked: alpha climbs back to 1024, never past it.
  for (int i = 0; i < 200; ++i) window(d, tp, 10, 10);
  EXPECT_EQ(d.alpha(), 1024u);
}

TEST(Dctcp, NoUpdateBeforeTheWindowEnds) {
  Dctcp d;
  CcState tp = ecn_state();
  d.init(tp, t0);
  window(d, tp, 10, 0);  // alpha 960, next window ends at snd_nxt
  tp.rate.count_delivered(5, true);
  tp.snd_una = tp.snd_nxt - 1;
  d.in_ack_event(tp, t0);
  EXPECT_EQ(d.alpha(), 960u);
  // The window's counts show in TCP_CC_INFO meanwhile (bytes, by mss).
  tp.mss = 1000;
  const TcpDctcpInfo i = d.dctcp_info(tp);
  EXPECT_EQ(i.dctcp_enabled, 1u);
  EXPECT_EQ(i.dctcp_alpha, 960u);
  EXPECT_EQ(i.dctcp_ab_ecn, 5000u);
  EXPECT_EQ(i.dctcp_ab_tot, 5000u);
}

TEST(Dctcp, EceCutsByHalfAlphaLossHalvesAndUndoRestores) {
  Dctcp d;
  CcState tp = ecn_state();
  d.init(tp, t0);
  window(d, tp, 10, 0);  // alpha 960
  tp.snd_cwnd = 100;
  // RFC 8257 §3.3: cwnd * (1 - alpha/2) = 100 - 100 * 960 / 2048 = 54.
  EXPECT_EQ(d.ssthresh(tp, t0), 54u);
  // Entering fast recovery is a loss: ssthresh = cwnd / 2 (§3.5).
  tp.ca_state = CaState::Open;
  d.set_state(tp, CaState::Recovery, t0);
  EXPECT_EQ(tp.snd_ssthresh, 50u);
  tp.snd_cwnd = 50;
  EXPECT_EQ(d.undo_cwnd(tp), 100u);  // dctcp_cwnd_undo: the cwnd before the cut
  // An RTO (CA_EVENT_LOSS) halves as well; never below 2.
  tp.snd_cwnd = 3;
  d.cwnd_event(tp, CaEvent::Loss, t0);
  EXPECT_EQ(tp.snd_ssthresh, 2u);
}

TEST(Dctcp, AlphaZeroMeansNoCut) {
  Dctcp d;
  CcState tp = ecn_state();
  d.init(tp, t0);
  for (int i = 0; i < 200; ++i) window(d, tp, 10, 0);
  tp.snd_cwnd = 100;
  EXPECT_EQ(d.ssthresh(tp, t0), 100u);
  tp.snd_cwnd = 1;
  EXPECT_EQ(d.ssthresh(tp, t0), 2u);
}

TEST(Dctcp, WithoutEcnFallsBackToRenoAsDctcpReno) {
  Dctcp d;
  CcState tp;  // ecn_ok false: the peer did not agree
  d.init(tp, t0);
  EXPECT_TRUE(d.fallen_back());
  EXPECT_FALSE(d.needs_ecn());  // the engine stops marking ECT (INET_ECN_dontxmit)
  EXPECT_EQ(d.name(), "dctcp-reno");
  tp.snd_cwnd = 100;
  EXPECT_EQ(d.ssthresh(tp, t0), 50u);  // tcp_reno_ssthresh
  std::array<uint8_t, 64> out{};
  EXPECT_EQ(cc_info(d, tp, out), sizeof(TcpDctcpInfo));  // the record, all zero
  EXPECT_EQ(out[0], 0u);
  // TCP_CONGESTION set again on an ECN connection: DCTCP proper.
  tp.ecn_ok = true;
  d.init(tp, t0);
  EXPECT_TRUE(d.needs_ecn());
  EXPECT_EQ(d.name(), "dctcp");
}

TEST(Dctcp, CcInfoIsLinuxsLayoutCutToTheCallersLength) {
  Dctcp d;
  CcState tp = ecn_state();
  tp.ce_state = 1;
  d.init(tp, t0);
  std::array<uint8_t, 64> out{};
  ASSERT_EQ(cc_info(d, tp, out), 16u);
  TcpDctcpInfo i;
  std::memcpy(&i, out.data(), sizeof i);
  EXPECT_EQ(i.dctcp_enabled, 1u);
  EXPECT_EQ(i.dctcp_ce_state, 1u);
  EXPECT_EQ(i.dctcp_alpha, 1024u);
  EXPECT_EQ(cc_info(d, tp, std::span(out.data(), 4)), 4u);
}

}  // namespace
}  // namespace weir::cc
