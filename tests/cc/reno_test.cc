// Reno, the shared tcp_cong.c helpers, pacing rate and the registry.
#include <gtest/gtest.h>

#include "pipe_helper.h"
#include "tcp/cc/cc.h"
#include "tcp/cc/reno.h"

namespace weir::cc {
namespace {

constexpr Time t0 = Time::zero();

TEST(Registry, KnowsLinuxNamesAndRejectsOthers) {
  for (std::string_view n : {"reno", "cubic", "bbr", "dctcp"}) {
    auto cc = make_cc(n);
    ASSERT_NE(cc, nullptr) << n;
    EXPECT_EQ(cc->name(), n);
    EXPECT_TRUE(cc_available(n));
  }
  // setsockopt(TCP_CONGESTION, "vegas") fails with ENOENT in Linux without the module.
  EXPECT_EQ(make_cc("vegas"), nullptr);
  EXPECT_EQ(make_cc(""), nullptr);
  EXPECT_EQ(make_cc("CUBIC"), nullptr);  // names are case-sensitive
  EXPECT_FALSE(cc_available("vegas"));
  EXPECT_TRUE(make_cc("bbr")->has_cong_control());
  EXPECT_FALSE(make_cc("cubic")->has_cong_control());
}

TEST(Reno, SlowStartGrowsByPacketsAckedButStopsAtSsthresh) {
  Reno reno;
  Counters mib;
  CcState tp;
  tp.snd_cwnd = 10;
  tp.snd_ssthresh = 15;
  tp.is_cwnd_limited = true;
  reno.init(tp, t0);
  // 8 packets ACKed: 5 take cwnd to ssthresh, the other 3 count toward CA.
  reno.cong_avoid(tp, Seq32(0), 8, t0, mib);
  EXPECT_EQ(tp.snd_cwnd, 15u);
  EXPECT_EQ(tp.snd_cwnd_cnt, 3u);
}

TEST(Reno, CongestionAvoidanceAddsOnePacketPerWindowAcked) {
  Reno reno;
  Counters mib;
  CcState tp;
  tp.snd_cwnd = 20;
  tp.snd_ssthresh = 10;
  tp.is_cwnd_limited = true;
  for (int i = 0; i < 19; ++i) reno.cong_avoid(tp, Seq32(0), 1, t0, mib);
  EXPECT_EQ(tp.snd_cwnd, 20u);
  reno.cong_avoid(tp, Seq32(0), 1, t0, mib);
  EXPECT_EQ(tp.snd_cwnd, 21u);
  EXPECT_EQ(tp.snd_cwnd_cnt, 0u);
  // A stretch ACK for two windows adds two packets at once.
  reno.cong_avoid(tp, Seq32(0), 42, t0, mib);
  EXPECT_EQ(tp.snd_cwnd, 23u);
}

TEST(Reno, DoesNotGrowAWindowTheSenderDoesNotUse) {
  Reno reno;
  Counters mib;
  CcState tp;
  tp.snd_cwnd = 20;
  tp.snd_ssthresh = 10;
  tp.is_cwnd_limited = false;
  reno.cong_avoid(tp, Seq32(0), 40, t0, mib);
  EXPECT_EQ(tp.snd_cwnd, 20u);
  // In slow start Linux still grows while cwnd < 2 * max_packets_out.
  tp.snd_ssthresh = kInfiniteSsthresh;
  tp.max_packets_out = 11;
  reno.cong_avoid(tp, Seq32(0), 1, t0, mib);
  EXPECT_EQ(tp.snd_cwnd, 21u);
  reno.cong_avoid(tp, Seq32(0), 1, t0, mib);
  reno.cong_avoid(tp, Seq32(0), 1, t0, mib);
  EXPECT_EQ(tp.snd_cwnd, 22u);  // 22 == 2 * 11: no more
}

TEST(Reno, SsthreshHalvesCwndWithAFloorOfTwo) {
  Reno reno;
  CcState tp;
  tp.snd_cwnd = 41;
  EXPECT_EQ(reno.ssthresh(tp, t0), 20u);
  tp.snd_cwnd = 3;
  EXPECT_EQ(reno.ssthresh(tp, t0), 2u);
  tp.snd_cwnd = 1;
  EXPECT_EQ(reno.ssthresh(tp, t0), 2u);
}

TEST(Reno, UndoRestoresTheWindowBeforeTheReduction) {
  Reno reno;
  CcState tp;
  tp.prior_cwnd = 50;
  tp.snd_cwnd = 25;
  EXPECT_EQ(reno.undo_cwnd(tp), 50u);
  tp.snd_cwnd = 60;  // grew past it meanwhile: keep the larger
  EXPECT_EQ(reno.undo_cwnd(tp), 60u);
}

TEST(Reno, CwndClampIsNeverExceeded) {
  Reno reno;
  Counters mib;
  CcState tp;
  tp.snd_cwnd = 10;
  tp.snd_cwnd_clamp = 12;
  tp.is_cwnd_limited = true;
  reno.cong_avoid(tp, Seq32(0), 10, t0, mib);
  EXPECT_EQ(tp.snd_cwnd, 12u);
}

TEST(Reno, DoublesPerRoundTripInSlowStartAndAddsOneInAvoidance) {
  Reno reno;
  test::PathConfig cfg;
  cfg.rtt = Duration::ms(100);
  test::Pipe pipe(reno, cfg);
  pipe.run_until(Time::zero() + Duration::ms(150));
  EXPECT_EQ(pipe.tp.snd_cwnd, 20u);
  // RFC 5681 §3.1: slow start ends at ssthresh, then +1 per round.
  pipe.tp.snd_ssthresh = 30;
  pipe.run_until(Time::zero() + Duration::ms(250));
  EXPECT_EQ(pipe.tp.snd_cwnd, 30u);
  pipe.run_until(Time::zero() + Duration::ms(350));
  EXPECT_EQ(pipe.tp.snd_cwnd, 31u);
  pipe.run_until(Time::zero() + Duration::ms(450));
  EXPECT_EQ(pipe.tp.snd_cwnd, 32u);
}

TEST(Reno, LossHalvesTheWindowThroughTheEngineCallSequence) {
  Reno reno;
  test::PathConfig cfg;
  cfg.rtt = Duration::ms(100);
  test::Pipe pipe(reno, cfg);
  pipe.run_until(Time::zero() + Duration::ms(250));
  ASSERT_EQ(pipe.tp.snd_cwnd, 40u);
  pipe.drop_next_send();
  pipe.run_until(Time::zero() + Duration::ms(260));
  pipe.run_until([&] { return pipe.recoveries > 0; }, Time::zero() + Duration::s(1));
  // tcp_init_cwnd_reduction: ssthresh from the cwnd at detection.
  EXPECT_EQ(pipe.tp.snd_ssthresh, pipe.tp.prior_cwnd / 2);
  pipe.run_until([&] { return pipe.tp.ca_state == CaState::Open; }, Time::zero() + Duration::s(2));
  EXPECT_EQ(pipe.tp.snd_cwnd, pipe.tp.snd_ssthresh);
}

TEST(Helpers, CurrentSsthreshIsThreeQuartersOfCwndOutsideReduction) {
  CcState tp;
  tp.snd_cwnd = 40;
  tp.snd_ssthresh = 10;
  EXPECT_EQ(current_ssthresh(tp), 30u);
  tp.snd_ssthresh = 35;
  EXPECT_EQ(current_ssthresh(tp), 35u);
  tp.snd_ssthresh = 10;
  tp.ca_state = CaState::Recovery;
  EXPECT_EQ(current_ssthresh(tp), 10u);
}

TEST(Helpers, MayRaiseCwndOnlyOnNewDataUnlessReorderingIsHigh) {
  EXPECT_TRUE(may_raise_cwnd(3, 3, true, true));
  EXPECT_FALSE(may_raise_cwnd(3, 3, false, true));  // SACK-only progress
  EXPECT_TRUE(may_raise_cwnd(10, 3, false, true));
  EXPECT_FALSE(may_raise_cwnd(10, 3, false, false));
}

TEST(Pacing, TwiceTheWindowRateInSlowStartAndSixFifthsInAvoidance) {
  CcState tp;
  tp.mss = 1000;
  tp.snd_cwnd = 10;
  tp.srtt = Duration::ms(100);
  update_pacing_rate(tp);
  // 10 * 1000 B / 0.1 s = 100 kB/s, x 200 %.
  EXPECT_EQ(tp.pacing_rate, 200000u);
  // cwnd >= ssthresh / 2: Linux already uses the CA ratio.
  tp.snd_ssthresh = 20;
  update_pacing_rate(tp);
  EXPECT_EQ(tp.pacing_rate, 120000u);
  tp.snd_ssthresh = 22;  // 22 / 2 = 11 > 10 (21 / 2 would be 10: not below)
  update_pacing_rate(tp);
  EXPECT_EQ(tp.pacing_rate, 200000u);
  // More packets out than cwnd (after a reduction): use packets_out.
  tp.snd_ssthresh = 5;
  tp.packets_out = 20;
  update_pacing_rate(tp);
  EXPECT_EQ(tp.pacing_rate, 240000u);
  tp.max_pacing_rate = 1000;  // SO_MAX_PACING_RATE caps it
  update_pacing_rate(tp);
  EXPECT_EQ(tp.pacing_rate, 1000u);
}

TEST(Pacing, CongControlUpdatesPacingAfterEveryAckForNonBbr) {
  Reno reno;
  Counters mib;
  CcState tp;
  tp.mss = 1000;
  tp.srtt = Duration::ms(10);
  tp.is_cwnd_limited = true;
  RateSample rs;
  rs.acked_sacked = 2;
  bool prr_ran = false;
  cong_control(reno, tp, AckEvent{Seq32(0), true}, rs, t0, mib, [&] { prr_ran = true; });
  EXPECT_EQ(tp.snd_cwnd, 12u);
  EXPECT_FALSE(prr_ran);
  EXPECT_EQ(tp.pacing_rate, 12u * 1000 * 100 * 2);
  // In Recovery, recovery's PRR runs instead of growth.
  tp.ca_state = CaState::Recovery;
  cong_control(reno, tp, AckEvent{Seq32(0), true}, rs, t0, mib, [&] { prr_ran = true; });
  EXPECT_TRUE(prr_ran);
  EXPECT_EQ(tp.snd_cwnd, 12u);
  // No new data ACKed: no growth.
  tp.ca_state = CaState::Open;
  cong_control(reno, tp, AckEvent{Seq32(0), false}, rs, t0, mib, [] {});
  EXPECT_EQ(tp.snd_cwnd, 12u);
}

TEST(IdleRestart, HalvesPerRtoIdleButNotBelowTheInitialWindow) {
  Reno reno;
  CcState tp;
  tp.snd_cwnd = 80;
  tp.snd_ssthresh = 20;
  tp.lsndtime = t0;
  Duration rto = Duration::ms(200);
  // Idle 3.5 RTOs: Linux subtracts one RTO per halving while idle time
  // remains: 80 -> 40 (2.5 left) -> 20 (1.5) -> 10 (0.5), floor 10.
  slow_start_after_idle_check(reno, tp, rto, 10, true, t0 + Duration::ms(700));
  EXPECT_EQ(tp.snd_cwnd, 10u);
  EXPECT_EQ(tp.snd_ssthresh, 60u);  // tcp_current_ssthresh: 3/4 of 80
  // Short idle (< RTO): nothing.
  tp.snd_cwnd = 80;
  slow_start_after_idle_check(reno, tp, rto, 10, true, t0 + Duration::ms(150));
  EXPECT_EQ(tp.snd_cwnd, 80u);
  // 1.5 RTO idle: one halving.
  slow_start_after_idle_check(reno, tp, rto, 10, true, t0 + Duration::ms(300));
  EXPECT_EQ(tp.snd_cwnd, 40u);
  // Disabled by sysctl, or data still outstanding: nothing.
  tp.snd_cwnd = 80;
  slow_start_after_idle_check(reno, tp, rto, 10, false, t0 + Duration::s(5));
  EXPECT_EQ(tp.snd_cwnd, 80u);
  tp.packets_out = 1;
  slow_start_after_idle_check(reno, tp, rto, 10, true, t0 + Duration::s(5));
  EXPECT_EQ(tp.snd_cwnd, 80u);
}

}  // namespace
}  // namespace weir::cc
