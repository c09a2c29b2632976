// Sender pacing (Linux internal pacing / EDT) and tcp_cwnd_validate.
#include <gtest/gtest.h>

#include <limits>

#include "tcp/cc/cc.h"
#include "tcp/pacing.h"

namespace weir::tcp {
namespace {

constexpr Time t0 = Time::zero();

cc::CcState paced(uint64_t rate) {
  cc::CcState tp;
  tp.pacing_status = cc::PacingStatus::Needed;
  tp.pacing_rate = rate;
  return tp;
}

TEST(Pacer, SpacesPacketsByLengthOverRateAfterTheFirstTen) {
  Pacer p;
  cc::CcState tp = paced(1'000'000);  // 1 MB/s: 1000 bytes take 1 ms
  // The first 10 data packets leave unpaced (sch_fq / tcp_update_skb_after_send).
  for (uint32_t n = 1; n < Pacer::kUnpacedSegs; ++n) {
    EXPECT_FALSE(p.hold(tp, t0));
    p.on_sent(tp, 1000, n, t0);
  }
  EXPECT_FALSE(p.hold(tp, t0));
  p.on_sent(tp, 1000, Pacer::kUnpacedSegs, t0);
  EXPECT_EQ(tp.wstamp, t0 + Duration::ms(1));
  // The 11th waits 1 ms: held, and the pacing timer is armed for then.
  EXPECT_TRUE(p.hold(tp, t0 + Duration::us(500)));
  EXPECT_EQ(p.deadline(), t0 + Duration::ms(1));
  EXPECT_FALSE(p.fire(t0 + Duration::us(999)));
  EXPECT_TRUE(p.fire(t0 + Duration::ms(1)));
  EXPECT_TRUE(p.deadline().is_never());
  EXPECT_FALSE(p.hold(tp, t0 + Duration::ms(1)));
  p.on_sent(tp, 500, 11, t0 + Duration::ms(1));
  EXPECT_EQ(tp.wstamp, t0 + Duration::us(1500));
}

TEST(Pacer, IdleTimeCreditsAtMostHalfAPacket) {
  Pacer p;
  cc::CcState tp = paced(1'000'000);
  tp.wstamp = t0 + Duration::ms(1);
  // Sent 10 ms after its stamp: the gap may shorten the next interval by at
  // most half of it (Linux's OS-jitter credit), not cancel it.
  p.on_sent(tp, 1000, 20, t0 + Duration::ms(11));
  EXPECT_EQ(tp.wstamp, t0 + Duration::ms(11) + Duration::us(500));
  // Sent exactly on time: no credit.
  p.on_sent(tp, 1000, 21, tp.wstamp);
  EXPECT_EQ(tp.wstamp, t0 + Duration::ms(12) + Duration::us(500));
}

TEST(Pacer, OnlyWhenTheAlgorithmOrTheSocketOrTheStackAsks) {
  Pacer p;
  cc::CcState tp;
  tp.pacing_rate = 1000;
  p.on_sent(tp, 1000, 50, t0);
  EXPECT_EQ(tp.wstamp, t0);  // CUBIC without fq: no departure times
  EXPECT_FALSE(p.hold(tp, t0));
  p.enable_for_all(true);  // net.core.default_qdisc = fq
  p.on_sent(tp, 1000, 50, t0);
  EXPECT_EQ(tp.wstamp, t0 + Duration::s(1));
  EXPECT_TRUE(p.hold(tp, t0));
}

TEST(Pacer, MaxPacingRateCapsAndTurnsPacingOn) {
  cc::CcState tp;
  tp.pacing_rate = 5'000'000;
  set_max_pacing_rate(tp, 1'000'000);
  EXPECT_EQ(tp.pacing_status, cc::PacingStatus::Needed);
  EXPECT_EQ(tp.pacing_rate, 1'000'000u);
  // cwnd/srtt growth cannot exceed the cap (tcp_update_pacing_rate).
  tp.snd_cwnd = 100;
  tp.srtt = Duration::ms(10);
  cc::update_pacing_rate(tp);
  EXPECT_EQ(tp.pacing_rate, 1'000'000u);
  cc::CcState tp2;
  set_max_pacing_rate(tp2, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(tp2.pacing_status, cc::PacingStatus::None);  // ~0U: unlimited, no pacing
}

TEST(PacingRate, TwiceCwndOverSrttInSlowStartAndOnePointTwoAfter) {
  cc::CcState tp;
  tp.mss = 1000;
  tp.snd_cwnd = 10;
  tp.srtt = Duration::ms(100);
  cc::update_pacing_rate(tp);
  EXPECT_EQ(tp.pacing_rate, 200'000u);  // 10 * 1000 B / 0.1 s * 200 %
  tp.snd_ssthresh = 12;                 // cwnd >= ssthresh / 2: CA ratio
  cc::update_pacing_rate(tp);
  EXPECT_EQ(tp.pacing_rate, 120'000u);
}

// --- tcp_cwnd_validate -----------------------------------------------------

struct Validate {
  std::unique_ptr<cc::CongestionControl> reno = cc::make_cc("reno");
  cc::CcState tp;
  cc::CwndValidateArgs a;
  Validate() {
    tp.snd_cwnd = 20;
    tp.snd_ssthresh = 10;  // congestion avoidance
    a.rto = Duration::ms(200);
  }
};

TEST(CwndValidate, AWindowNotFilledIsNotCwndLimitedAndDoesNotGrowInCa) {
  Validate v;
  v.tp.snd_nxt = Seq32(5000);
  v.tp.packets_out = 5;
  cc::cwnd_validate(*v.reno, v.tp, v.a, t0);
  EXPECT_FALSE(v.tp.is_cwnd_limited);
  EXPECT_EQ(v.tp.max_packets_out, 5u);
  EXPECT_FALSE(cc::is_cwnd_limited(v.tp));
  Counters mib;
  v.reno->cong_avoid(v.tp, Seq32(0), 40, t0, mib);
  EXPECT_EQ(v.tp.snd_cwnd, 20u);  // RFC 7661: no growth while application-limited
  // A pass that fills the window marks it for the rest of the window.
  v.a.cwnd_limited = true;
  v.tp.packets_out = 20;
  cc::cwnd_validate(*v.reno, v.tp, v.a, t0);
  EXPECT_TRUE(cc::is_cwnd_limited(v.tp));
  v.a.cwnd_limited = false;
  v.tp.packets_out = 3;
  cc::cwnd_validate(*v.reno, v.tp, v.a, t0);  // same window: still limited
  EXPECT_TRUE(v.tp.is_cwnd_limited);
  v.tp.snd_una = Seq32(5000);  // the window ended
  cc::cwnd_validate(*v.reno, v.tp, v.a, t0);
  EXPECT_FALSE(v.tp.is_cwnd_limited);
  EXPECT_EQ(v.tp.max_packets_out, 3u);
}

TEST(CwndValidate, SlowStartMayGrowToTwiceTheLargestFlight) {
  Validate v;
  v.tp.snd_ssthresh = cc::kInfiniteSsthresh;
  v.tp.packets_out = 11;
  cc::cwnd_validate(*v.reno, v.tp, v.a, t0);
  EXPECT_TRUE(cc::is_cwnd_limited(v.tp));  // 20 < 2 * 11
  v.tp.snd_una = v.tp.snd_nxt = Seq32(100);
  v.tp.packets_out = 10;
  cc::cwnd_validate(*v.reno, v.tp, v.a, t0);
  EXPECT_FALSE(cc::is_cwnd_limited(v.tp));  // 20 == 2 * 10
}

TEST(CwndValidate, AnRtoOfUnusedWindowHalvesTowardWhatWasUsed) {
  Validate v;
  v.tp.packets_out = 4;
  cc::cwnd_validate(*v.reno, v.tp, v.a, t0);
  EXPECT_EQ(v.tp.snd_cwnd, 20u);  // not yet an RTO
  cc::cwnd_validate(*v.reno, v.tp, v.a, t0 + Duration::ms(200));
  // win_used = max(4, initial window 10): cwnd (20 + 10) / 2, ssthresh 3/4 of 20.
  EXPECT_EQ(v.tp.snd_cwnd, 15u);
  EXPECT_EQ(v.tp.snd_ssthresh, 15u);
  EXPECT_EQ(v.tp.snd_cwnd_stamp, t0 + Duration::ms(200));
  // BBR owns its window: never moderated this way.
  auto bbr = cc::make_cc("bbr");
  Validate w;
  w.tp.packets_out = 4;
  cc::cwnd_validate(*bbr, w.tp, w.a, t0 + Duration::s(1));
  EXPECT_EQ(w.tp.snd_cwnd, 20u);
  // Nor with tcp_slow_start_after_idle = 0, nor in recovery.
  Validate x;
  x.a.slow_start_after_idle = false;
  cc::cwnd_validate(*x.reno, x.tp, x.a, t0 + Duration::s(1));
  EXPECT_EQ(x.tp.snd_cwnd, 20u);
  Validate y;
  y.tp.ca_state = CaState::Recovery;
  cc::cwnd_validate(*y.reno, y.tp, y.a, t0 + Duration::s(1));
  EXPECT_EQ(y.tp.snd_cwnd, 20u);
}

TEST(CwndRestart, HalvesOncePerRtoOfIdlenessBeyondTheFirstAndResetsTheStamp) {
  auto reno = cc::make_cc("reno");
  cc::CcState tp;
  tp.snd_cwnd = 80;
  tp.snd_ssthresh = 40;
  tp.lsndtime = t0;
  // Linux: idle 1.75 RTO halves once (each further full RTO once more);
  // never below the initial window.
  cc::slow_start_after_idle_check(*reno, tp, Duration::ms(200), 10, true, t0 + Duration::ms(350));
  EXPECT_EQ(tp.snd_cwnd, 40u);
  EXPECT_EQ(tp.snd_ssthresh, 60u);  // tcp_current_ssthresh: 3/4 of 80
  EXPECT_EQ(tp.snd_cwnd_stamp, t0 + Duration::ms(350));
  tp.lsndtime = t0 + Duration::ms(350);
  cc::slow_start_after_idle_check(*reno, tp, Duration::ms(200), 10, true, t0 + Duration::s(10));
  EXPECT_EQ(tp.snd_cwnd, 10u);
}

}  // namespace
}  // namespace weir::tcp
