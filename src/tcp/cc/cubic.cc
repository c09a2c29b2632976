// CUBIC (RFC 9438) with Linux's constants and integer arithmetic
// (net/ipv4/tcp_cubic.c). See cubic.h.
#include "tcp/cc/cubic.h"

#include <algorithm>
#include <cmath>

#include "tcp/cc/reno.h"

namespace weir::cc {

static int64_t jiffies(Time now) { return now.ns() / (1000000000 / Cubic::kHz); }

// usecs_to_jiffies() rounds up.
static int64_t to_jiffies_ceil(Duration d) {
  int64_t per = 1000000000 / Cubic::kHz;
  return (d.ns() + per - 1) / per;
}

Cubic::Cubic(const CcOptions& opts)
    : o_(opts),
      beta_scale_(8 * (kBetaScale + opts.beta) / 3 / (kBetaScale - opts.beta)),
      cube_rtt_scale_(opts.bic_scale * 10),
      cube_factor_((uint64_t{1} << (10 + 3 * kBicHzShift)) / (opts.bic_scale * 10)),
      hystart_(Hystart::Params{opts.hystart_detect, opts.hystart_low_window,
                               opts.hystart_ack_delta, opts.hystart_seed004_bug}) {}

uint32_t Cubic::cube_root(uint64_t a) {
  auto x = static_cast<uint64_t>(std::cbrt(static_cast<double>(a)));
  // Correct the floating-point estimate to the exact integer floor.
  while (x > 0 && x * x * x > a) x--;
  while ((x + 1) * (x + 1) * (x + 1) <= a) x++;
  return static_cast<uint32_t>(x);
}

void Cubic::reset() {
  s_ = State{};
  hystart_.clear_found();
}

void Cubic::init(CcState& tp, Time now) {
  reset();
  if (o_.hystart == 1) hystart_.reset_round(tp, now);
  if (o_.hystart == 2) hspp_.init(tp);
  // Linux applies initial_ssthresh only without HyStart.
  if (o_.hystart == 0 && o_.initial_ssthresh != 0) tp.snd_ssthresh = o_.initial_ssthresh;
}

void Cubic::note_exit(CcState& tp, HystartExit why) {
  exit_reason_ = why;
  exit_cwnd_ = tp.snd_cwnd;
  tp.slow_start_exit_reason = static_cast<uint8_t>(why);
}

uint32_t Cubic::ssthresh(CcState& tp, Time now) {
  (void)now;
  // A loss ends the initial slow start when HyStart did not (lab reporting;
  // RFC 9406 §4.2: HyStart++ also ends on loss).
  if (in_slow_start(tp) && exit_reason_ == HystartExit::None && o_.hystart != 0)
    note_exit(tp, HystartExit::Loss);
  if (o_.hystart == 2) hspp_.on_congestion();
  s_.epoch_valid = false;  // RFC 9438 §4.6: a new epoch starts after the reduction
  // RFC 9438 §4.7 fast convergence: a flow whose W_max shrank releases
  // bandwidth faster by remembering a smaller W_max, cwnd * (1 + beta) / 2.
  if (tp.snd_cwnd < s_.last_max_cwnd && o_.fast_convergence)
    s_.last_max_cwnd = tp.snd_cwnd * (kBetaScale + o_.beta) / (2 * kBetaScale);
  else
    s_.last_max_cwnd = tp.snd_cwnd;
  // RFC 9438 §4.6: ssthresh = cwnd * beta_cubic.
  return std::max(tp.snd_cwnd * o_.beta / kBetaScale, 2u);
}

void Cubic::cong_avoid(CcState& tp, Seq32 ack, uint32_t acked, Time now, Counters& mib) {
  (void)ack, (void)mib;
  if (!is_cwnd_limited(tp)) return;
  if (in_slow_start(tp)) {
    bool plusplus = o_.hystart == 2 && hspp_.phase() != HystartPlusPlus::Phase::Done;
    acked = plusplus ? hspp_.grow(tp, acked) : slow_start(tp, acked);
    if (acked == 0) return;
  }
  update(tp.snd_cwnd, acked, now);
  cong_avoid_ai(tp, s_.cnt, acked);
}

void Cubic::start_epoch(uint32_t cwnd, uint32_t acked, int64_t j) {
  s_.epoch_valid = true;
  s_.epoch_start = j;
  s_.ack_cnt = acked;
  s_.tcp_cwnd = cwnd;  // W_est starts at the window of the epoch start
  if (s_.last_max_cwnd <= cwnd) {
    s_.k = 0;
    s_.origin_point = cwnd;
  } else {
    // RFC 9438 (2): K = cbrt((W_max - cwnd_epoch) / C), in 1/1024 s.
    s_.k = cube_root(cube_factor_ * (s_.last_max_cwnd - cwnd));
    s_.origin_point = s_.last_max_cwnd;
  }
}

void Cubic::update(uint32_t cwnd, uint32_t acked, Time now) {
  int64_t j = jiffies(now);
  s_.ack_cnt += acked;
  // Linux recomputes the target at most every HZ/32 while cwnd is unchanged,
  // and at most once per jiffy.
  if (s_.last_cwnd == cwnd && j - s_.last_time <= kHz / 32) return;
  if (!(s_.epoch_valid && j == s_.last_time)) {
    s_.last_cwnd = cwnd;
    s_.last_time = j;
    if (!s_.epoch_valid) start_epoch(cwnd, acked, j);
    // RFC 9438 §4.2: the target is W_cubic(t + RTT), t since the epoch.
    int64_t tj = std::max<int64_t>(j - s_.epoch_start, 0) + to_jiffies_ceil(s_.delay_min);
    uint64_t t = (static_cast<uint64_t>(tj) << kBicHzShift) / kHz;
    uint64_t offs = t < s_.k ? s_.k - t : t - s_.k;
    // RFC 9438 (1): C * (t - K)^3, C = cube_rtt_scale / 2^10, time in 2^-10 s.
    auto delta = static_cast<int64_t>((cube_rtt_scale_ * offs * offs * offs) >>
                                      (10 + 3 * kBicHzShift));
    int64_t target = t < s_.k ? int64_t{s_.origin_point} - delta : int64_t{s_.origin_point} + delta;
    // RFC 9438 §4.4/4.5: grow by (target - cwnd) / cwnd per ACK.
    if (target > cwnd)
      s_.cnt = static_cast<uint32_t>(cwnd / static_cast<uint64_t>(target - cwnd));
    else
      s_.cnt = 100 * cwnd;  // at or above the target: very slow growth
    // Before any loss (no W_max), grow at least 5% per RTT.
    if (s_.last_max_cwnd == 0 && s_.cnt > 20) s_.cnt = 20;
  }
  if (o_.tcp_friendliness) reno_friendly(cwnd);
  // Linux: never faster than +1 per 2 ACKed packets (1.5x per RTT).
  s_.cnt = std::max(s_.cnt, 2u);
}

void Cubic::reno_friendly(uint32_t cwnd) {
  // RFC 9438 §4.3: W_est grows by alpha_cubic = 3(1-beta)/(1+beta) per
  // window; Linux counts cwnd * beta_scale / 8 ACKed packets per +1.
  uint32_t delta = (cwnd * beta_scale_) >> 3;
  if (delta != 0 && s_.ack_cnt > delta) {
    uint32_t n = (s_.ack_cnt - 1) / delta;  // Linux's "while (ack_cnt > delta)"
    s_.ack_cnt -= n * delta;
    s_.tcp_cwnd += n;
  }
  // RFC 9438 §4.3: in the Reno-friendly region use W_est's growth.
  if (s_.tcp_cwnd > cwnd) {
    uint32_t max_cnt = cwnd / (s_.tcp_cwnd - cwnd);
    s_.cnt = std::min(s_.cnt, max_cnt);
  }
}

void Cubic::pkts_acked(CcState& tp, const AckSample& sample, Time now, Counters& mib) {
  if (sample.rtt.ns() < 0) return;  // duplicate without a (Karn-safe) RTT
  // Delay samples right after a reduction are skewed by the recovery queue.
  if (s_.epoch_valid && jiffies(now) - s_.epoch_start < kHz) return;
  Duration delay = std::max(sample.rtt, Duration::us(1));
  if (s_.delay_min.ns() == 0 || s_.delay_min > delay) s_.delay_min = delay;
  if (!in_slow_start(tp)) return;
  if (o_.hystart == 1 && !hystart_.found()) {
    HystartExit why = hystart_.update(tp, delay, s_.delay_min, now, mib);
    if (why != HystartExit::None) note_exit(tp, why);
  } else if (o_.hystart == 2 && hspp_.phase() != HystartPlusPlus::Phase::Done) {
    on_hspp_sample(tp, delay);
  }
}

void Cubic::on_hspp_sample(CcState& tp, Duration delay) {
  const bool was_css = hspp_.phase() == HystartPlusPlus::Phase::Css;
  HystartExit why = hspp_.on_rtt_sample(tp, delay);
  if (why == HystartExit::Delay) {
    // RFC 9406 §4.2: entering CSS is the end of slow start; report it with
    // the cwnd of that moment (CSS growth and a later loss do not move it).
    note_exit(tp, why);
  } else if (why == HystartExit::CssEnd) {
    // CSS_ROUNDS done: congestion avoidance. The exit cwnd stays the CSS
    // entry's; the reason says CSS ran to its end (a loss in CSS leaves it
    // at Delay).
    exit_reason_ = why;
    tp.slow_start_exit_reason = static_cast<uint8_t>(why);
  } else if (was_css && hspp_.phase() == HystartPlusPlus::Phase::SlowStart) {
    // RFC 9406 §4.2: the increase was spurious and slow start resumes: the
    // exit did not happen after all.
    exit_reason_ = HystartExit::None;
    exit_cwnd_ = 0;
  }
}

void Cubic::set_state(CcState& tp, CaState new_state, Time now) {
  if (new_state != CaState::Loss) return;
  // After an RTO everything CUBIC learnt is stale: start over, HyStart
  // included (RFC 9406 §4.2: HyStart++ only in the initial slow start; later
  // slow starts are standard and exit at the ssthresh already discovered).
  reset();
  if (o_.hystart == 1) hystart_.reset_round(tp, now);
}

void Cubic::cwnd_event(CcState& tp, CaEvent ev, Time now) {
  if (ev != CaEvent::TxStart) return;
  // RFC 9438 §5.8 / Linux: after an application-limited idle period, shift
  // the epoch so the curve does not jump by the idle time.
  int64_t j = jiffies(now);
  int64_t idle = j - jiffies(tp.lsndtime);
  if (s_.epoch_valid && idle > 0) {
    s_.epoch_start = std::min(s_.epoch_start + idle, j);
  }
}

uint32_t Cubic::undo_cwnd(CcState& tp) { return reno_undo_cwnd(tp); }

void Cubic::get_info(TcpInfo& info) const {
  info.ca_name = "cubic";
  info.cubic_wmax = s_.last_max_cwnd;
  info.cubic_k_ms = static_cast<uint32_t>(s_.k * 1000 / 1024);
  info.cubic_epoch_start_ms = s_.epoch_valid ? static_cast<uint64_t>(s_.epoch_start) : 0;
  info.hystart_exit_cwnd = exit_cwnd_;
  info.hystart_exit_reason = static_cast<uint8_t>(exit_reason_);
}

}  // namespace weir::cc
