// HyStart (Linux tcp_cubic.c) and HyStart++ (RFC 9406). See hystart.h.
#include "tcp/cc/hystart.h"

#include <algorithm>

namespace weir::cc {

// ---------------------------------------------------------------- HyStart

void Hystart::reset_round(const CcState& tp, Time now) {
  round_start_ = now;
  last_ack_ = now;
  end_seq_ = tp.snd_nxt;
  curr_rtt_ = Duration::infinite();
  sample_cnt_ = 0;
  rounds_++;
}

// Linux hystart_ack_delay(): ACKs may be compressed by up to the time one
// GSO burst takes at the pacing rate (at most 1 ms).
static Duration hystart_ack_delay(const CcState& tp) {
  if (tp.pacing_rate == 0) return Duration::zero();
  uint64_t ns = static_cast<uint64_t>(tp.gso_max_size) * 4u * 1000000000u / tp.pacing_rate;
  return Duration::ns(static_cast<int64_t>(std::min<uint64_t>(ns, 1000000u)));
}

HystartExit Hystart::update(CcState& tp, Duration delay, Duration delay_min, Time now,
                            Counters& mib) {
  if (p_.seed004_bug && tp.snd_cwnd < p_.low_window) return HystartExit::None;
  // Seed 004: a new round begins whenever snd.una passes the previous
  // round's end, whatever the cwnd (Linux commit "tcp_cubic: fix incorrect
  // HyStart round start detection").
  if (tp.snd_una > end_seq_) reset_round(tp, now);
  // Only then: no detection below hystart_low_window.
  if (tp.snd_cwnd < p_.low_window) return HystartExit::None;

  HystartExit fired = HystartExit::None;
  if (p_.detect & 1) fired = ack_train(tp, delay_min, now, mib);
  if (p_.detect & 2) {
    HystartExit d = delay_increase(tp, delay, delay_min, mib);
    if (fired == HystartExit::None) fired = d;
  }
  return fired;
}

HystartExit Hystart::ack_train(CcState& tp, Duration delay_min, Time now, Counters& mib) {
  // ACKs closer than ack_delta to the previous one extend the train.
  if (now - last_ack_ > p_.ack_delta) return HystartExit::None;
  last_ack_ = now;
  Duration threshold = delay_min + hystart_ack_delay(tp);
  // The train is a flight's worth of back-to-back ACKs: once it lasts half
  // the base RTT (unpaced), the pipe is full. A paced flow's packets may be
  // spread over up to an RTT, hence no halving then.
  if (tp.pacing_status == PacingStatus::None) threshold = threshold / 2;
  if (now - round_start_ <= threshold) return HystartExit::None;
  found_ = true;
  mib.inc(Counter::TcpExtTCPHystartTrainDetect);
  mib.inc(Counter::TcpExtTCPHystartTrainCwnd, tp.snd_cwnd);
  tp.snd_ssthresh = tp.snd_cwnd;
  return HystartExit::AckTrain;
}

HystartExit Hystart::delay_increase(CcState& tp, Duration delay, Duration delay_min,
                                    Counters& mib) {
  // The round's RTT is the minimum of its first kMinSamples samples.
  curr_rtt_ = std::min(curr_rtt_, delay);
  if (sample_cnt_ < kMinSamples) {
    sample_cnt_++;
    return HystartExit::None;
  }
  Duration eta = std::clamp(delay_min / 8, kDelayMin, kDelayMax);
  if (curr_rtt_ <= delay_min + eta) return HystartExit::None;
  found_ = true;
  mib.inc(Counter::TcpExtTCPHystartDelayDetect);
  mib.inc(Counter::TcpExtTCPHystartDelayCwnd, tp.snd_cwnd);
  tp.snd_ssthresh = tp.snd_cwnd;
  return HystartExit::Delay;
}

// ------------------------------------------------------------- HyStart++

void HystartPlusPlus::init(const CcState& tp) {
  phase_ = Phase::SlowStart;
  last_round_min_rtt_ = Duration::infinite();
  css_baseline_ = Duration::infinite();
  css_rounds_ = 0;
  css_acked_ = 0;
  start_round(tp);
}

void HystartPlusPlus::start_round(const CcState& tp) {
  // RFC 9406 §4.2: at the start of each round.
  last_round_min_rtt_ = current_round_min_rtt_;
  current_round_min_rtt_ = Duration::infinite();
  rtt_sample_count_ = 0;
  window_end_ = tp.snd_nxt;
}

HystartExit HystartPlusPlus::on_rtt_sample(CcState& tp, Duration rtt) {
  if (phase_ == Phase::Done) return HystartExit::None;
  // RFC 9406 §4.2: a round ends once windowEnd is acknowledged. As Linux's
  // HyStart does (seed 004), the next round begins with the first ACK beyond
  // windowEnd, so that a round's samples are those of its own packets.
  if (tp.snd_una > window_end_) {
    start_round(tp);
    if (phase_ == Phase::Css && ++css_rounds_ >= kCssRounds) {
      // CSS_ROUNDS rounds of CSS without a return to the baseline: the
      // delay increase was real. Enter congestion avoidance.
      tp.snd_ssthresh = tp.snd_cwnd;
      phase_ = Phase::Done;
      return HystartExit::CssEnd;
    }
  }
  current_round_min_rtt_ = std::min(current_round_min_rtt_, rtt);
  rtt_sample_count_++;
  if (rtt_sample_count_ < kNRttSample || current_round_min_rtt_ == Duration::infinite())
    return HystartExit::None;
  if (phase_ == Phase::SlowStart) {
    if (last_round_min_rtt_ == Duration::infinite()) return HystartExit::None;
    Duration thresh =
        std::max(kMinRttThresh, std::min(last_round_min_rtt_ / kMinRttDivisor, kMaxRttThresh));
    if (current_round_min_rtt_ >= last_round_min_rtt_ + thresh) {
      // RFC 9406 §4.2: "exit slow start and enter CSS". This is the delay
      // detector's slow-start exit; ssthresh stays infinite until CSS ends.
      css_baseline_ = current_round_min_rtt_;
      phase_ = Phase::Css;
      css_rounds_ = 0;
      return HystartExit::Delay;
    }
  } else if (current_round_min_rtt_ < css_baseline_) {
    // RFC 9406 §4.2: the increase was spurious; resume slow start.
    css_baseline_ = Duration::infinite();
    phase_ = Phase::SlowStart;
    return HystartExit::None;
  }
  return HystartExit::None;
}

uint32_t HystartPlusPlus::grow(CcState& tp, uint32_t acked) {
  // RFC 9406 §4.2: L limits the burst an ACK may release when not paced.
  uint32_t n = tp.pacing_status == PacingStatus::Needed ? acked : std::min(acked, kUnpacedL);
  if (phase_ != Phase::Css) {
    // ACKed packets beyond L are not counted (they must not turn into
    // congestion-avoidance growth while still in slow start).
    return slow_start(tp, n);
  }
  // CSS: a quarter of slow start's growth, accumulated in whole packets.
  css_acked_ += n;
  uint32_t inc = css_acked_ / kCssGrowthDivisor;
  css_acked_ -= inc * kCssGrowthDivisor;
  tp.snd_cwnd = std::min(tp.snd_cwnd + inc, tp.snd_cwnd_clamp);
  return 0;
}

}  // namespace weir::cc
