// CUBIC (RFC 9438 with Linux's constants): the window curve, K, fast
// convergence, the Reno-friendly region, restart after idle, state resets.
#include <gtest/gtest.h>

#include <cmath>

#include "pipe_helper.h"
#include "tcp/cc/cubic.h"

namespace weir::cc {
namespace {

constexpr double kC = 410.0 / 1024;  // Linux: bic_scale 41 * 10 / 1024
constexpr double kBeta = 717.0 / 1024;

Time at(Duration d) { return Time::zero() + d; }

CcOptions no_hystart() {
  CcOptions o;
  o.hystart = 0;
  return o;
}

// RFC 9438 (1): W_cubic(t) = C * (t - K)^3 + W_max, t in seconds.
double w_cubic(double t, double k, double wmax) { return kC * std::pow(t - k, 3) + wmax; }

TEST(Cubic, SsthreshIsBetaTimesCwndWithFloorOfTwo) {
  Cubic cubic;
  CcState tp;
  tp.snd_cwnd = 100;
  EXPECT_EQ(cubic.ssthresh(tp, Time::zero()), 70u);  // 100 * 717 / 1024
  tp.snd_cwnd = 1000;
  EXPECT_EQ(cubic.ssthresh(tp, Time::zero()), 700u);
  tp.snd_cwnd = 2;
  EXPECT_EQ(cubic.ssthresh(tp, Time::zero()), 2u);
}

TEST(Cubic, FastConvergenceLowersWmaxWhenTheWindowShrankSinceTheLastLoss) {
  Cubic cubic;
  CcState tp;
  tp.snd_cwnd = 100;
  cubic.ssthresh(tp, Time::zero());
  EXPECT_EQ(cubic.state().last_max_cwnd, 100u);
  // RFC 9438 §4.7: the next loss comes below W_max: W_max = cwnd * (1 + beta) / 2.
  tp.snd_cwnd = 90;
  cubic.ssthresh(tp, Time::zero());
  EXPECT_EQ(cubic.state().last_max_cwnd, 90u * 1741 / 2048);
  // Above the old W_max: W_max is simply cwnd.
  tp.snd_cwnd = 120;
  cubic.ssthresh(tp, Time::zero());
  EXPECT_EQ(cubic.state().last_max_cwnd, 120u);

  CcOptions o;
  o.fast_convergence = false;
  Cubic plain(o);
  tp.snd_cwnd = 100;
  plain.ssthresh(tp, Time::zero());
  tp.snd_cwnd = 90;
  plain.ssthresh(tp, Time::zero());
  EXPECT_EQ(plain.state().last_max_cwnd, 90u);
}

TEST(Cubic, KIsTheCubeRootOfTheReductionOverC) {
  Cubic cubic(no_hystart());
  Counters mib;
  CcState tp;
  tp.snd_cwnd = 100;
  tp.snd_ssthresh = cubic.ssthresh(tp, Time::zero());
  tp.snd_cwnd = tp.snd_ssthresh;  // recovery ended at ssthresh
  tp.is_cwnd_limited = true;
  cubic.cong_avoid(tp, Seq32(0), 1, at(Duration::s(1)), mib);
  ASSERT_TRUE(cubic.state().epoch_valid);
  EXPECT_EQ(cubic.state().origin_point, 100u);
  // RFC 9438 (2): K = cbrt((W_max - cwnd_epoch) / C) = cbrt(30 / 0.4004) s.
  double k_rfc = std::cbrt(30.0 / kC);
  double k = static_cast<double>(cubic.state().k) / 1024;
  EXPECT_NEAR(k, k_rfc, 0.002);
  TcpInfo info;
  cubic.get_info(info);
  EXPECT_EQ(info.ca_name, "cubic");
  EXPECT_EQ(info.cubic_wmax, 100u);
  EXPECT_NEAR(info.cubic_k_ms, k_rfc * 1000, 3);
  EXPECT_EQ(info.cubic_epoch_start_ms, 1000u);
}

TEST(Cubic, CubeRootIsExactFloor) {
  EXPECT_EQ(Cubic::cube_root(0), 0u);
  EXPECT_EQ(Cubic::cube_root(26), 2u);
  EXPECT_EQ(Cubic::cube_root(27), 3u);
  EXPECT_EQ(Cubic::cube_root(uint64_t{1} << 60), 1u << 20);
  EXPECT_EQ(Cubic::cube_root((uint64_t{1} << 60) - 1), (1u << 20) - 1);
}

// Runs CUBIC through the test path to a loss at cwnd >= `loss_at`, returns
// when the new epoch has begun (the first ACK of congestion avoidance).
struct AfterLoss {
  double epoch_s;
  double wmax;
  double k;
};
AfterLoss lose_at(test::Pipe& pipe, const Cubic& cubic, uint32_t loss_at) {
  pipe.run_until([&] { return pipe.tp.snd_cwnd >= loss_at; }, at(Duration::s(60)));
  pipe.drop_next_send();
  pipe.run_until([&] { return pipe.recoveries > 0; }, at(Duration::s(60)));
  pipe.run_until([&] { return pipe.tp.ca_state == CaState::Open && cubic.state().epoch_valid; },
                 at(Duration::s(60)));
  return {pipe.now.secs(), static_cast<double>(cubic.state().last_max_cwnd),
          static_cast<double>(cubic.state().k) / 1024};
}

TEST(Cubic, WindowFollowsTheCubicCurveAfterALoss) {
  Cubic cubic(no_hystart());
  test::PathConfig cfg;
  cfg.rtt = Duration::ms(100);
  test::Pipe pipe(cubic, cfg);
  pipe.tp.snd_ssthresh = 100;
  AfterLoss l = lose_at(pipe, cubic, 105);
  EXPECT_EQ(pipe.tp.snd_cwnd, static_cast<uint32_t>(l.wmax * kBeta));
  EXPECT_NEAR(l.k, std::cbrt((l.wmax - pipe.tp.snd_ssthresh) / kC), 0.002);
  // Linux aims each RTT at W_cubic(t + RTT) (RFC 9438 §4.2's target), so the
  // window stays between W(t) and W(t + RTT), within rounding: Linux floors
  // C*(t-K)^3 (up to +1 below the origin) and cwnd is a whole packet (+1).
  double rtt = cfg.rtt.secs();
  int checked = 0;
  pipe.on_ack = [&] {
    double t = pipe.now.secs() - l.epoch_s;
    double cwnd = pipe.tp.snd_cwnd;
    ASSERT_GE(cwnd, w_cubic(t, l.k, l.wmax) - 1.5) << "t=" << t;
    ASSERT_LE(cwnd, w_cubic(t + rtt, l.k, l.wmax) + 2.0) << "t=" << t;
    checked++;
  };
  // Through the concave part, the plateau at W_max and into the convex part.
  pipe.run_until(at(Duration::ms(static_cast<int64_t>((l.epoch_s + 2 * l.k) * 1000))));
  EXPECT_GT(checked, 1000);
  EXPECT_GT(pipe.tp.snd_cwnd, l.wmax + 0.3 * kC * std::pow(l.k, 3));  // convex growth began
}

TEST(Cubic, BeforeAnyLossGrowsFivePercentPerRound) {
  Cubic cubic(no_hystart());
  test::PathConfig cfg;
  cfg.rtt = Duration::ms(100);
  test::Pipe pipe(cubic, cfg);
  pipe.tp.snd_ssthresh = 80;
  // Slow start reaches 80 at 300 ms; then W_max = 0 caps cnt at 20.
  pipe.run_until(at(Duration::ms(350)));
  ASSERT_EQ(pipe.tp.snd_cwnd, 80u);
  // +1 per 20 packets ACKed compounds to 1.05^r (cwnd_cnt carries the fractions).
  for (int r = 1; r <= 6; ++r) {
    pipe.run_until(at(Duration::ms(350 + 100 * r)));
    EXPECT_NEAR(pipe.tp.snd_cwnd, 80 * std::pow(1.05, r), 1) << "round " << r;
  }
}

// At a small RTT the cubic curve grows slower than Reno would; RFC 9438 §4.3
// then follows W_est = W_max*beta + alpha * t / RTT, alpha = 3(1-beta)/(1+beta).
TEST(Cubic, RenoFriendlyRegionDominatesAtSmallRtt) {
  auto run = [](bool friendly) {
    CcOptions o = no_hystart();
    o.tcp_friendliness = friendly;
    Cubic cubic(o);
    test::PathConfig cfg;
    cfg.rtt = Duration::ms(2);
    test::Pipe pipe(cubic, cfg);
    pipe.tp.snd_ssthresh = 100;
    AfterLoss l = lose_at(pipe, cubic, 100);
    pipe.run_until(at(Duration::ms(static_cast<int64_t>(l.epoch_s * 1000) + 1000)));
    return std::pair<double, double>(pipe.tp.snd_cwnd, l.wmax);
  };
  auto [with, wmax] = run(true);
  double alpha = 3 * (1 - kBeta) / (1 + kBeta);
  double w_est = wmax * kBeta + alpha * (1.0 / 0.002);
  EXPECT_NEAR(with, w_est, 0.03 * w_est);
  // Without the Reno-friendly region: the cubic curve, near W_max after 1 s.
  auto [without, wmax2] = run(false);
  EXPECT_LT(without, wmax2 + 2);
  EXPECT_GT(with, 2.5 * without);
}

TEST(Cubic, IdleShiftsTheEpochSoTheCurveDoesNotJump) {
  Cubic cubic(no_hystart());
  Counters mib;
  CcState tp;
  tp.snd_cwnd = 100;
  tp.snd_ssthresh = cubic.ssthresh(tp, Time::zero());
  tp.snd_cwnd = tp.snd_ssthresh;
  tp.is_cwnd_limited = true;
  cubic.cong_avoid(tp, Seq32(0), 1, at(Duration::s(10)), mib);
  ASSERT_EQ(cubic.state().epoch_start, 10000);
  // Last send at 12 s, next at 15 s: 3 s idle move the epoch by 3 s.
  tp.lsndtime = at(Duration::s(12));
  cubic.cwnd_event(tp, CaEvent::TxStart, at(Duration::s(15)));
  EXPECT_EQ(cubic.state().epoch_start, 13000);
  // The epoch never moves into the future.
  tp.lsndtime = at(Duration::s(15));
  cubic.cwnd_event(tp, CaEvent::TxStart, at(Duration::s(30)));
  EXPECT_EQ(cubic.state().epoch_start, 28000);
  tp.lsndtime = at(Duration::s(0));
  cubic.cwnd_event(tp, CaEvent::TxStart, at(Duration::s(31)));
  EXPECT_EQ(cubic.state().epoch_start, 31000);
}

TEST(Cubic, RtoForgetsEverythingAndRearmsHystart) {
  Cubic cubic;
  CcState tp;
  cubic.init(tp, Time::zero());
  tp.snd_cwnd = 100;
  cubic.ssthresh(tp, Time::zero());
  tp.snd_una = Seq32(5000);
  tp.snd_nxt = Seq32(9000);
  cubic.set_state(tp, CaState::Loss, at(Duration::s(3)));
  EXPECT_EQ(cubic.state().last_max_cwnd, 0u);
  EXPECT_FALSE(cubic.state().epoch_valid);
  EXPECT_FALSE(cubic.hystart().found());
  EXPECT_EQ(cubic.hystart().end_seq(), Seq32(9000));
  EXPECT_EQ(cubic.hystart().round_start(), at(Duration::s(3)));
  // Other state changes leave CUBIC alone.
  tp.snd_cwnd = 50;
  cubic.ssthresh(tp, Time::zero());
  cubic.set_state(tp, CaState::Recovery, at(Duration::s(4)));
  EXPECT_EQ(cubic.state().last_max_cwnd, 50u);
}

TEST(Cubic, UndoRestoresPriorCwnd) {
  Cubic cubic;
  CcState tp;
  tp.prior_cwnd = 80;
  tp.snd_cwnd = 56;
  EXPECT_EQ(cubic.undo_cwnd(tp), 80u);
}

TEST(Cubic, DelaySamplesRightAfterAReductionAreIgnored) {
  Cubic cubic(no_hystart());
  Counters mib;
  CcState tp;
  tp.snd_cwnd = 100;
  tp.snd_ssthresh = 50;
  tp.is_cwnd_limited = true;
  cubic.pkts_acked(tp, AckSample{1, Duration::ms(40), 0}, at(Duration::s(1)), mib);
  EXPECT_EQ(cubic.state().delay_min, Duration::ms(40));
  cubic.cong_avoid(tp, Seq32(0), 1, at(Duration::s(2)), mib);  // epoch starts at 2 s
  cubic.pkts_acked(tp, AckSample{1, Duration::ms(30), 0}, at(Duration::ms(2500)), mib);
  EXPECT_EQ(cubic.state().delay_min, Duration::ms(40));  // within 1 s of the epoch
  cubic.pkts_acked(tp, AckSample{1, Duration::ms(30), 0}, at(Duration::ms(3001)), mib);
  EXPECT_EQ(cubic.state().delay_min, Duration::ms(30));
  cubic.pkts_acked(tp, AckSample{1, Duration::ns(-1), 0}, at(Duration::s(4)), mib);
  EXPECT_EQ(cubic.state().delay_min, Duration::ms(30));
}

}  // namespace
}  // namespace weir::cc
