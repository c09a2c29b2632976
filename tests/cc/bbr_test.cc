// BBR v1 (Linux tcp_bbr.c): the mode machine, the filters, the gain cycle,
// PROBE_RTT, recovery, and what it reports.
#include <gtest/gtest.h>

#include <vector>

#include "pipe_helper.h"
#include "tcp/cc/bbr.h"
#include "tcp/cc/cubic.h"

namespace weir::cc {
namespace {

using Mode = Bbr::Mode;

Time at(Duration d) { return Time::zero() + d; }

double bw_pps(uint64_t bw) { return static_cast<double>(bw) * 1e6 / static_cast<double>(Bbr::kBwUnit); }

// 1000 packets/s bottleneck, 50 ms propagation RTT (51 ms with service), a
// 200-packet buffer.
test::PathConfig path() {
  test::PathConfig cfg;
  cfg.rtt = Duration::ms(50);
  cfg.rate_pps = 1000;
  cfg.buffer = 200;
  return cfg;
}

struct Transition {
  Mode mode;
  uint64_t round;
  Time t;
  uint32_t inflight;
};

TEST(Bbr, GainsAreLinuxs) {
  EXPECT_EQ(Bbr::kHighGain, 739u);  // 2/ln2 * 256, rounded up
  EXPECT_EQ(Bbr::kDrainGain, 88u);  // 256 * 1000 / 2885
  EXPECT_EQ(Bbr::kCwndGain, 512u);
}

TEST(Bbr, InitAsksForPacingAndStartsFromTheInitialWindow) {
  Bbr bbr;
  CcState tp;
  tp.mss = 1000;
  bbr.init(tp, Time::zero());
  EXPECT_EQ(tp.pacing_status, PacingStatus::Needed);
  EXPECT_EQ(tp.snd_ssthresh, kInfiniteSsthresh);
  EXPECT_EQ(bbr.state().mode, Mode::Startup);
  // No RTT yet: a nominal 1 ms, 10 packets per ms, x high gain, -1% margin.
  uint64_t expect = Bbr::rate_bytes_per_sec(10 * Bbr::kBwUnit / 1000, 1000, Bbr::kHighGain);
  EXPECT_EQ(tp.pacing_rate, expect);
  EXPECT_NEAR(static_cast<double>(tp.pacing_rate), 10e6 * 739 / 256 * 0.99, 10e6 * 0.002);
  // With an RTT sample already (a SYN RTT), the rate uses it.
  CcState tp2;
  tp2.mss = 1000;
  tp2.srtt = Duration::ms(100);
  bbr.init(tp2, Time::zero());
  EXPECT_NEAR(static_cast<double>(tp2.pacing_rate), 1e5 * 739 / 256 * 0.99, 1e5 * 0.002);
}

TEST(Bbr, StartupFillsThePipeThenDrainsThenProbesBandwidth) {
  Bbr bbr;
  test::Pipe pipe(bbr, path());
  std::vector<Transition> tr;
  uint64_t plateau_round = 0;  // first round whose bw did not grow by 25%
  uint64_t prev_bw = 0, last_round = 0;
  pipe.on_ack = [&] {
    const auto& s = bbr.state();
    if (tr.empty() || tr.back().mode != s.mode)
      tr.push_back({s.mode, s.rtt_cnt, pipe.now, pipe.tp.packets_in_flight});
    if (s.mode == Mode::Startup && s.round_start && s.rtt_cnt != last_round) {
      last_round = s.rtt_cnt;
      if (plateau_round == 0 && prev_bw != 0 && bbr.max_bw() < prev_bw * 5 / 4)
        plateau_round = s.rtt_cnt;
      if (bbr.max_bw() >= prev_bw * 5 / 4) prev_bw = bbr.max_bw();
    }
  };
  pipe.run_until(at(Duration::s(2)));
  ASSERT_GE(tr.size(), 3u);
  EXPECT_EQ(tr[0].mode, Mode::Startup);
  EXPECT_EQ(tr[1].mode, Mode::Drain);
  EXPECT_EQ(tr[2].mode, Mode::ProbeBw);
  // Full pipe: three rounds without 25% growth (the plateau round is the first).
  ASSERT_NE(plateau_round, 0u);
  EXPECT_EQ(tr[1].round, plateau_round + 2);
  // DRAIN ends once inflight is down to about one BDP (51 packets + budget).
  EXPECT_LE(tr[2].inflight, 51u + 3 * 2 + 2);
  EXPECT_NEAR(bw_pps(bbr.max_bw()), 1000, 10);
  EXPECT_EQ(pipe.drops, 0u);
  EXPECT_EQ(bbr.state().min_rtt, Duration::ms(51));
  // In PROBE_BW cwnd is 2 BDP plus the quantization budget.
  EXPECT_GE(pipe.tp.snd_cwnd, 102u);
  EXPECT_LE(pipe.tp.snd_cwnd, 102u + 3 * 2 + 2 + 2);
  TcpInfo info;
  bbr.get_info(info);
  EXPECT_EQ(info.ca_name, "bbr");
  EXPECT_EQ(info.bbr_mode, 2u);
  EXPECT_NEAR(static_cast<double>(info.bbr_bw), 1000.0 * 1000, 10000);
  EXPECT_EQ(info.bbr_min_rtt, 51000u);
  EXPECT_EQ(info.bbr_cwnd_gain, 512u);
}

TEST(Bbr, ProbeBwCyclesThroughTheEightGainPhases) {
  Bbr bbr;
  test::Pipe pipe(bbr, path());
  pipe.run_until([&] { return bbr.state().mode == Mode::ProbeBw; }, at(Duration::s(5)));
  struct Phase {
    uint32_t idx, gain;
    Time start;
  };
  std::vector<Phase> phases{{bbr.state().cycle_idx, 0, pipe.now}};
  pipe.on_ack = [&] {
    const auto& s = bbr.state();
    if (s.cycle_idx != phases.back().idx) phases.push_back({s.cycle_idx, s.pacing_gain, pipe.now});
    if (phases.back().gain == 0) phases.back().gain = s.pacing_gain;
  };
  pipe.run_until(pipe.now + Duration::s(3));
  ASSERT_GT(phases.size(), 20u);
  const uint32_t table[8] = {320, 192, 256, 256, 256, 256, 256, 256};
  for (size_t i = 1; i + 1 < phases.size(); ++i) {
    EXPECT_EQ(phases[i].idx, (phases[i - 1].idx + 1) % 8) << i;
    EXPECT_EQ(phases[i].gain, table[phases[i].idx]) << i;
    Duration len = phases[i + 1].start - phases[i].start;
    // Phases at gain 1 and 5/4 last at least min_rtt; 3/4 may end early
    // once the queue 5/4 built is gone.
    if (phases[i].gain != 192) {
      EXPECT_GE(len, Duration::ms(51)) << i;
    }
  }
  EXPECT_EQ(pipe.drops, 0u);
}

TEST(Bbr, ProbeRttAfterTenSecondsWithoutANewMinRtt) {
  Bbr bbr;
  test::Pipe pipe(bbr, path());
  pipe.run_until([&] { return bbr.state().mode == Mode::ProbeBw; }, at(Duration::s(5)));
  Time stamp = bbr.state().min_rtt_stamp;
  uint32_t cwnd_before = 0;  // cwnd on the last ACK before PROBE_RTT
  pipe.on_ack = [&] {
    if (bbr.state().mode != Mode::ProbeRtt) cwnd_before = pipe.tp.snd_cwnd;
  };
  // The queue the gain cycle keeps means no RTT sample beats min_rtt again.
  ASSERT_TRUE(pipe.run_until([&] { return bbr.state().mode == Mode::ProbeRtt; },
                             at(Duration::s(15))));
  EXPECT_GT(pipe.now, stamp + Duration::s(10));
  EXPECT_LT(pipe.now, stamp + Duration::s(10) + Duration::ms(60));
  EXPECT_EQ(pipe.tp.snd_cwnd, 4u);  // bbr_cwnd_min_target
  Time entered = pipe.now;
  Time min_inflight_at = Time::never();
  pipe.on_ack = [&] {
    if (min_inflight_at.is_never() && bbr.state().probe_rtt_done_valid) min_inflight_at = pipe.now;
    if (bbr.state().mode == Mode::ProbeRtt) {
      EXPECT_LE(pipe.tp.snd_cwnd, 4u);
    }
  };
  ASSERT_TRUE(pipe.run_until([&] { return bbr.state().mode != Mode::ProbeRtt; },
                             at(Duration::s(16))));
  // Held at 4 packets for 200 ms (and a round) once inflight got there.
  EXPECT_GE(pipe.now - min_inflight_at, Duration::ms(200));
  EXPECT_LT(pipe.now - entered, Duration::ms(400));
  EXPECT_EQ(bbr.state().mode, Mode::ProbeBw);
  EXPECT_GE(cwnd_before, 100u);
  EXPECT_EQ(bbr.state().prior_cwnd, cwnd_before);
  EXPECT_GE(pipe.tp.snd_cwnd, cwnd_before);  // prior cwnd restored
  EXPECT_EQ(bbr.state().min_rtt, Duration::ms(51));  // re-measured with the queue drained
  EXPECT_EQ(bbr.state().min_rtt_stamp, pipe.now);
  EXPECT_EQ(pipe.drops, 0u);
}

// Token-bucket policers (BBR v1's long-term bandwidth model): two intervals
// of >= 4 rounds with ~20% loss and a consistent rate mean "policed"; BBR then
// paces at that rate (gain 1) for 48 rounds before probing again.
TEST(Bbr, DetectsATokenBucketPolicerAndPacesAtItsRate) {
  Bbr bbr;
  test::PathConfig cfg = path();
  cfg.policer_pps = 400;
  cfg.policer_burst = 20;
  test::Pipe pipe(bbr, cfg);
  ASSERT_TRUE(pipe.run_until([&] { return bbr.state().lt_use_bw; }, at(Duration::s(2))));
  EXPECT_NEAR(bw_pps(bbr.bw()), 400, 8);
  EXPECT_GT(bw_pps(bbr.max_bw()), 600);  // the max filter still holds the burst's rate
  uint64_t drops = pipe.drops, acks = pipe.acks;
  Time from = pipe.now;
  uint64_t round = bbr.state().rtt_cnt;
  pipe.run_until([&] { return !bbr.state().lt_use_bw; }, at(Duration::s(10)));
  // Policed pacing: no more losses, delivery at the policed rate, for 48 rounds.
  EXPECT_EQ(pipe.drops, drops);
  double rate = static_cast<double>(pipe.acks - acks) / (pipe.now - from).secs();
  EXPECT_NEAR(rate, 400, 20);
  EXPECT_GE(bbr.state().rtt_cnt - round, 47u);
  EXPECT_LE(bbr.state().rtt_cnt - round, 49u);
  EXPECT_EQ(bbr.state().mode, Mode::ProbeBw);
}

// A rate sample for direct calls: `delivered` packets over `interval`,
// the chosen packet sent when delivered was `prior`.
RateSample sample(int64_t delivered, Duration interval, uint64_t prior, uint32_t acked,
                  Duration rtt, bool app_limited = false) {
  RateSample rs;
  rs.has_prior = true;
  rs.delivered = delivered;
  rs.interval = interval;
  rs.prior_delivered = prior;
  rs.acked_sacked = acked;
  rs.rtt = rtt;
  rs.is_app_limited = app_limited;
  return rs;
}

TEST(Bbr, AppLimitedSamplesCannotLowerTheBandwidthModel) {
  Bbr bbr;
  Counters mib;
  CcState tp;
  tp.mss = 1000;
  bbr.init(tp, Time::zero());
  tp.rate.count_delivered(10, false);
  bbr.cong_control(tp, sample(10, Duration::ms(10), 0, 10, Duration::ms(10)), at(Duration::ms(10)), mib);
  EXPECT_NEAR(bw_pps(bbr.max_bw()), 1000, 1);
  // A lower app-limited sample is ignored ...
  tp.rate.count_delivered(1, false);
  bbr.cong_control(tp, sample(1, Duration::ms(10), 10, 1, Duration::ms(10), true), at(Duration::ms(20)), mib);
  EXPECT_NEAR(bw_pps(bbr.max_bw()), 1000, 1);
  // ... a higher one is taken.
  tp.rate.count_delivered(40, false);
  bbr.cong_control(tp, sample(40, Duration::ms(20), 11, 40, Duration::ms(10), true), at(Duration::ms(30)), mib);
  EXPECT_NEAR(bw_pps(bbr.max_bw()), 2000, 1);
  // Invalid samples change nothing.
  bbr.cong_control(tp, RateSample{}, at(Duration::ms(40)), mib);
  EXPECT_NEAR(bw_pps(bbr.max_bw()), 2000, 1);
}

TEST(Bbr, MaxBandwidthFilterForgetsAfterTenRounds) {
  Bbr bbr;
  Counters mib;
  CcState tp;
  tp.mss = 1000;
  bbr.init(tp, Time::zero());
  uint64_t delivered = 0;
  // Round 1: a high sample (2000 pps); later rounds: 1000 pps.
  auto round = [&](int64_t n, Duration interval, int k) {
    uint64_t prior = delivered;
    delivered += static_cast<uint64_t>(n);
    tp.rate.count_delivered(static_cast<uint32_t>(n), false);
    bbr.cong_control(tp, sample(n, interval, prior, static_cast<uint32_t>(n), Duration::ms(10)),
                     at(Duration::ms(10 * k)), mib);
  };
  round(20, Duration::ms(10), 1);
  EXPECT_NEAR(bw_pps(bbr.max_bw()), 2000, 1);
  int k = 2;
  for (; bbr.state().rtt_cnt <= 1 + Bbr::kBwRtts; ++k) round(10, Duration::ms(10), k);
  EXPECT_NEAR(bw_pps(bbr.max_bw()), 1000, 1);
}

TEST(Bbr, RecoveryConservesPacketsThenRestoresCwnd) {
  Bbr bbr;
  Counters mib;
  CcState tp;
  tp.mss = 1000;
  bbr.init(tp, Time::zero());
  tp.snd_cwnd = 100;
  tp.packets_in_flight = 60;
  // Entering recovery (tcp_init_cwnd_reduction): BBR keeps ssthresh and
  // remembers cwnd.
  uint32_t ss = tp.snd_ssthresh;
  EXPECT_EQ(bbr.ssthresh(tp, Time::zero()), ss);
  EXPECT_EQ(bbr.state().prior_cwnd, 100u);
  bbr.set_state(tp, CaState::Recovery, Time::zero());
  tp.ca_state = CaState::Recovery;
  // First ACK in recovery: cwnd = in flight + newly ACKed (packet conservation).
  tp.rate.count_delivered(2, false);
  RateSample rs = sample(2, Duration::ms(10), 0, 2, Duration::ms(10));
  rs.losses = 3;
  bbr.cong_control(tp, rs, at(Duration::ms(10)), mib);
  EXPECT_TRUE(bbr.state().packet_conservation);
  EXPECT_EQ(tp.snd_cwnd, 62u);
  // Leaving recovery: the saved cwnd comes back.
  bbr.set_state(tp, CaState::Open, at(Duration::ms(20)));
  tp.ca_state = CaState::Open;
  tp.rate.count_delivered(1, false);
  bbr.cong_control(tp, sample(1, Duration::ms(10), 2, 1, Duration::ms(10)), at(Duration::ms(20)), mib);
  EXPECT_FALSE(bbr.state().packet_conservation);
  EXPECT_GE(tp.snd_cwnd, 100u);
}

TEST(Bbr, RtoEndsTheRoundAndResetsFullPipeEstimate) {
  Bbr bbr;
  test::Pipe pipe(bbr, path());
  pipe.run_until([&] { return bbr.state().full_bw != 0; }, at(Duration::s(2)));
  bbr.set_state(pipe.tp, CaState::Loss, pipe.now);
  EXPECT_EQ(bbr.state().full_bw, 0u);
  EXPECT_TRUE(bbr.state().round_start);
  EXPECT_EQ(bbr.state().prev_ca_state, CaState::Loss);
  // Undo of a spurious reduction leaves cwnd alone and restarts detection.
  pipe.tp.snd_cwnd = 33;
  EXPECT_EQ(bbr.undo_cwnd(pipe.tp), 33u);
  EXPECT_EQ(bbr.state().full_bw_cnt, 0u);
}

TEST(Bbr, RestartFromIdleInProbeBwPacesAtTheEstimatedRate) {
  Bbr bbr;
  test::Pipe pipe(bbr, path());
  pipe.run_until([&] { return bbr.state().mode == Mode::ProbeBw; }, at(Duration::s(5)));
  pipe.tp.rate.mark_app_limited(0);
  pipe.tp.pacing_rate = 1;
  bbr.cwnd_event(pipe.tp, CaEvent::TxStart, pipe.now);
  EXPECT_TRUE(bbr.state().idle_restart);
  EXPECT_EQ(pipe.tp.pacing_rate, Bbr::rate_bytes_per_sec(bbr.bw(), 1000, Bbr::kUnit));
  // Not app-limited: a TX start is not an idle restart.
  Bbr other;
  CcState tp;
  other.init(tp, Time::zero());
  other.cwnd_event(tp, CaEvent::TxStart, Time::zero());
  EXPECT_FALSE(other.state().idle_restart);
}

TEST(Bbr, OwnsCwndSoTheEngineSkipsPrrAndPacingUpdate) {
  Bbr bbr;
  Counters mib;
  CcState tp;
  tp.mss = 1000;
  bbr.init(tp, Time::zero());
  tp.ca_state = CaState::Recovery;
  uint64_t pacing = tp.pacing_rate;
  bool prr = false;
  RateSample rs;
  cong_control(bbr, tp, AckEvent{Seq32(0), true}, rs, Time::zero(), mib, [&] { prr = true; });
  EXPECT_FALSE(prr);
  EXPECT_EQ(tp.pacing_rate, pacing);  // not the cwnd/srtt formula
  // Restart after idle is not applied to BBR either.
  tp.snd_cwnd = 80;
  slow_start_after_idle_check(bbr, tp, Duration::ms(200), 10, true, at(Duration::s(10)));
  EXPECT_EQ(tp.snd_cwnd, 80u);
}

}  // namespace
}  // namespace weir::cc

namespace weir::cc {
namespace {

TEST(Trace, FillTraceCarriesTheAlgorithmsState) {
  Bbr bbr;
  test::Pipe pipe(bbr, path());
  pipe.run_until([&] { return bbr.state().mode == Mode::ProbeBw; }, at(Duration::s(5)));
  TraceSample s{};
  fill_trace(bbr, pipe.tp, s);
  EXPECT_EQ(s.bbr_mode, 2u);
  EXPECT_NEAR(static_cast<double>(s.bbr_bw), 1e6, 1e4);
  EXPECT_EQ(s.bbr_min_rtt_us, 51000u);
  EXPECT_EQ(s.pacing_rate, pipe.tp.pacing_rate);
  EXPECT_GT(s.pacing_rate, 0u);

  Cubic cubic;
  CcState tp;
  tp.snd_cwnd = 100;
  cubic.ssthresh(tp, Time::zero());
  tp.snd_cwnd = 70;
  tp.snd_ssthresh = 70;
  tp.is_cwnd_limited = true;
  Counters mib;
  cubic.cong_avoid(tp, Seq32(0), 1, at(Duration::s(2)), mib);
  TraceSample c{};
  fill_trace(cubic, tp, c);
  EXPECT_EQ(c.cubic_wmax, 100u);
  EXPECT_NEAR(c.cubic_k_ms, 4216, 5);
  EXPECT_EQ(c.cubic_epoch_start_ms, 2000u);
  EXPECT_EQ(c.bbr_mode, 0u);
}

}  // namespace
}  // namespace weir::cc
