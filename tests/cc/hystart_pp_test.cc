// HyStart++ (RFC 9406) as a CUBIC option: rounds, the delay-increase entry to
// Conservative Slow Start, CSS growth, the return to slow start, the end of
// CSS after CSS_ROUNDS, loss, and the L limit.
#include <gtest/gtest.h>

#include "pipe_helper.h"
#include "tcp/cc/cubic.h"

namespace weir::cc {
namespace {

using Phase = HystartPlusPlus::Phase;

// Drives CUBIC+HyStart++ by hand, one round (window of packets) at a time:
// every ACK acknowledges one packet; the sender keeps cwnd packets in flight.
struct Driver {
  Cubic cubic;
  CcState tp;
  Counters mib;
  Time now = Time::zero();

  Driver() : cubic(opts()) {
    tp.mss = 1000;
    tp.snd_una = Seq32(1);
    tp.snd_nxt = Seq32(1);
    cubic.init(tp, now);
    tp.snd_nxt = tp.snd_una + 1000 * tp.snd_cwnd;
  }
  static CcOptions opts() {
    CcOptions o;
    o.hystart = 2;
    return o;
  }
  // One ACK for `acked` packets with RTT `rtt`.
  void ack(Duration rtt, uint32_t acked = 1) {
    now += Duration::ms(1);
    tp.snd_una = tp.snd_una + 1000 * acked;
    tp.is_cwnd_limited = true;
    cubic.pkts_acked(tp, AckSample{acked, rtt, 0}, now, mib);
    cubic.cong_avoid(tp, tp.snd_una, acked, now, mib);
    tp.snd_nxt = seq_max(tp.snd_nxt, tp.snd_una + 1000 * tp.snd_cwnd);
  }
  // A whole round: ACKs for everything outstanding when it starts.
  void round(Duration rtt) {
    uint32_t n = seq_len(tp.snd_una, tp.snd_nxt) / 1000;
    for (uint32_t i = 0; i < n; ++i) ack(rtt);
  }
  Phase phase() const { return cubic.hystart_pp().phase(); }
};

TEST(HystartPlusPlus, SlowStartDoublesWhileRttIsFlat) {
  Driver d;
  d.round(Duration::ms(100));
  EXPECT_EQ(d.tp.snd_cwnd, 20u);
  d.round(Duration::ms(100));
  d.round(Duration::ms(100));
  EXPECT_EQ(d.tp.snd_cwnd, 80u);
  EXPECT_EQ(d.phase(), Phase::SlowStart);
}

TEST(HystartPlusPlus, EntersCssWhenRoundMinRttRisesByTheThreshold) {
  Driver d;
  d.round(Duration::ms(100));
  d.round(Duration::ms(100));
  // RttThresh = clamp(100/8, 4, 16) = 12.5 ms: 12.4 ms more is not enough.
  d.round(Duration::us(112400));
  EXPECT_EQ(d.phase(), Phase::SlowStart);
  // Now against 112.4 ms: RttThresh = 14.05 ms, so 126.45 ms enters CSS, on
  // the round's 8th sample (N_RTT_SAMPLE).
  uint32_t n = seq_len(d.tp.snd_una, d.tp.snd_nxt) / 1000;
  for (uint32_t i = 0; i < 7; ++i) d.ack(Duration::us(126450));
  EXPECT_EQ(d.phase(), Phase::SlowStart);  // only 7 samples this round
  d.ack(Duration::us(126450));
  EXPECT_EQ(d.phase(), Phase::Css);
  EXPECT_EQ(d.cubic.hystart_pp().css_baseline_min_rtt(), Duration::us(126450));
  EXPECT_GT(n, 8u);
  // Still slow start for the ssthresh test: CSS is part of slow start.
  EXPECT_EQ(d.tp.snd_ssthresh, kInfiniteSsthresh);
}

TEST(HystartPlusPlus, CssGrowsAQuarterAsFastAndReturnsToSlowStartIfRttFalls) {
  Driver d;
  d.round(Duration::ms(100));
  d.round(Duration::ms(100));
  d.round(Duration::ms(120));  // +20 ms >= 12.5 ms: CSS
  ASSERT_EQ(d.phase(), Phase::Css);
  // A CSS round of N ACKs grows cwnd by N / CSS_GROWTH_DIVISOR.
  uint32_t before = d.tp.snd_cwnd;
  uint32_t n = seq_len(d.tp.snd_una, d.tp.snd_nxt) / 1000;
  d.round(Duration::ms(120));
  EXPECT_EQ(d.phase(), Phase::Css);
  EXPECT_NEAR(d.tp.snd_cwnd, before + n / 4, 1);
  // RFC 9406 §4.2: a CSS round whose min RTT is below the baseline was a
  // false positive: resume slow start.
  d.round(Duration::ms(110));
  EXPECT_EQ(d.phase(), Phase::SlowStart);
  EXPECT_EQ(d.cubic.hystart_pp().css_baseline_min_rtt(), Duration::infinite());
}

TEST(HystartPlusPlus, CssEndsInCongestionAvoidanceAfterFiveRounds) {
  Driver d;
  d.round(Duration::ms(100));
  d.round(Duration::ms(100));
  d.round(Duration::ms(120));
  ASSERT_EQ(d.phase(), Phase::Css);
  for (int r = 0; r < 4; ++r) {
    d.round(Duration::ms(120));
    EXPECT_EQ(d.phase(), Phase::Css) << r;
  }
  d.round(Duration::ms(120));  // the fifth CSS round ends on its first ACK
  EXPECT_EQ(d.phase(), Phase::Done);
  EXPECT_FALSE(in_slow_start(d.tp));
  EXPECT_EQ(d.cubic.hystart_exit_reason(), static_cast<uint8_t>(HystartExit::CssEnd));
  // ssthresh is the cwnd CSS reached (the round's later ACKs grew cwnd in
  // congestion avoidance); the exit cwnd stays that of CSS entry.
  EXPECT_LE(d.tp.snd_ssthresh, d.tp.snd_cwnd);
  EXPECT_LT(d.cubic.hystart_exit_cwnd(), d.tp.snd_ssthresh);
  EXPECT_EQ(d.tp.slow_start_exit_reason, 4u);
  TcpInfo info;
  d.cubic.get_info(info);
  EXPECT_EQ(info.hystart_exit_reason, 4u);
}

TEST(HystartPlusPlus, LossEndsSlowStartAndCssForGood) {
  Driver d;
  d.round(Duration::ms(100));
  d.tp.snd_ssthresh = d.cubic.ssthresh(d.tp, d.now);  // loss in slow start
  EXPECT_EQ(d.phase(), Phase::Done);
  EXPECT_EQ(d.cubic.hystart_exit_reason(), static_cast<uint8_t>(HystartExit::Loss));
  // After an RTO, slow start is standard (no CSS even with rising RTT).
  d.cubic.set_state(d.tp, CaState::Loss, d.now);
  d.tp.snd_nxt = d.tp.snd_una + 1000;  // only the retransmission is out
  d.tp.snd_cwnd = 1;
  d.tp.snd_ssthresh = 1000;
  d.round(Duration::ms(100));
  d.round(Duration::ms(200));
  d.round(Duration::ms(300));
  EXPECT_EQ(d.phase(), Phase::Done);
  EXPECT_EQ(d.tp.snd_cwnd, 8u);  // 1 -> 2 -> 4 -> 8: plain doubling
}

TEST(HystartPlusPlus, UnpacedStretchAckGrowsAtMostLPackets) {
  Driver d;
  d.ack(Duration::ms(100), 10);  // one ACK for 10 packets
  EXPECT_EQ(d.tp.snd_cwnd, 18u);  // +min(10, L=8)
  Driver p;
  p.tp.pacing_status = PacingStatus::Needed;  // paced: L is infinite
  p.ack(Duration::ms(100), 10);
  EXPECT_EQ(p.tp.snd_cwnd, 20u);
}

TEST(HystartPlusPlus, LeavesSlowStartBeforeLossOnABufferedPath) {
  Cubic cubic(Driver::opts());
  test::PathConfig cfg;
  cfg.rtt = Duration::ms(100);
  cfg.rate_pps = 400;
  test::Pipe pipe(cubic, cfg);
  pipe.run_until([&] { return !in_slow_start(pipe.tp); }, Time::zero() + Duration::s(30));
  EXPECT_EQ(cubic.hystart_exit_reason(), static_cast<uint8_t>(HystartExit::CssEnd));
  EXPECT_EQ(pipe.drops, 0u);
  EXPECT_EQ(pipe.tp.snd_ssthresh, pipe.tp.snd_cwnd);
  EXPECT_GT(cubic.hystart_exit_cwnd(), 40u);  // the BDP
  EXPECT_LT(cubic.hystart_exit_cwnd(), pipe.tp.snd_ssthresh);
}

// The open bug of session 2: on an RTT rise HyStart++ entered CSS but never
// reported the end of slow start, so every exit looked like a loss exit at
// 4-6 BDP. RFC 9406 §4.2: the delay increase is the slow-start exit.
TEST(HystartPlusPlus, RttRiseEndsSlowStartWhenCssBegins) {
  Driver d;
  d.round(Duration::ms(100));
  d.round(Duration::ms(100));
  for (int i = 0; i < 8; ++i) d.ack(Duration::ms(120));  // N_RTT_SAMPLE samples, +20 ms
  ASSERT_EQ(d.phase(), Phase::Css);
  const uint32_t at_entry = d.tp.snd_cwnd;
  EXPECT_EQ(d.cubic.hystart_exit_reason(), static_cast<uint8_t>(HystartExit::Delay));
  EXPECT_EQ(d.cubic.hystart_exit_cwnd(), at_entry);
  EXPECT_EQ(d.tp.slow_start_exit_reason, 2u);  // the engine's trace event
  EXPECT_EQ(d.tp.snd_ssthresh, kInfiniteSsthresh);  // CSS is still "slow start" for cwnd
  TcpInfo info;
  d.cubic.get_info(info);
  EXPECT_EQ(info.hystart_exit_reason, 2u);
  EXPECT_EQ(info.hystart_exit_cwnd, at_entry);
  // A loss during CSS ends it; the exit stays the delay exit at CSS entry.
  d.round(Duration::ms(120));
  d.tp.snd_ssthresh = d.cubic.ssthresh(d.tp, d.now);
  EXPECT_EQ(d.phase(), Phase::Done);
  EXPECT_EQ(d.cubic.hystart_exit_reason(), static_cast<uint8_t>(HystartExit::Delay));
  EXPECT_EQ(d.cubic.hystart_exit_cwnd(), at_entry);
}

TEST(HystartPlusPlus, SpuriousCssEntryIsWithdrawnWhenSlowStartResumes) {
  Driver d;
  d.round(Duration::ms(100));
  d.round(Duration::ms(100));
  d.round(Duration::ms(120));
  ASSERT_EQ(d.cubic.hystart_exit_reason(), static_cast<uint8_t>(HystartExit::Delay));
  d.round(Duration::ms(110));  // below the CSS baseline: back to slow start
  ASSERT_EQ(d.phase(), Phase::SlowStart);
  EXPECT_EQ(d.cubic.hystart_exit_reason(), 0u);
  EXPECT_EQ(d.cubic.hystart_exit_cwnd(), 0u);
  // A later loss is then the slow-start exit.
  d.tp.snd_ssthresh = d.cubic.ssthresh(d.tp, d.now);
  EXPECT_EQ(d.cubic.hystart_exit_reason(), static_cast<uint8_t>(HystartExit::Loss));
}

// A drop-tail path like the lab grid's (4 BDP of buffer): the delay increase
// ends slow start before the queue overflows, even if CSS later meets a loss.
TEST(HystartPlusPlus, DelayExitPrecedesTheFirstLossOnAFourBdpBuffer) {
  Cubic cubic(Driver::opts());
  test::PathConfig cfg;
  cfg.rtt = Duration::ms(100);
  cfg.rate_pps = 400;  // BDP 40 packets
  cfg.buffer = 160;
  test::Pipe pipe(cubic, cfg);
  uint64_t drops_at_exit = UINT64_MAX;
  pipe.on_ack = [&] {
    if (drops_at_exit == UINT64_MAX && cubic.hystart_exit_reason() != 0) drops_at_exit = pipe.drops;
  };
  pipe.run_until(Time::zero() + Duration::s(20));
  ASSERT_NE(drops_at_exit, UINT64_MAX);
  EXPECT_EQ(drops_at_exit, 0u);
  EXPECT_NE(cubic.hystart_exit_reason(), static_cast<uint8_t>(HystartExit::Loss));
  EXPECT_GE(cubic.hystart_exit_cwnd(), 40u);
  EXPECT_LE(cubic.hystart_exit_cwnd(), 200u);  // BDP + buffer
}

}  // namespace
}  // namespace weir::cc
