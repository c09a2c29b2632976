// BBR v1 as Linux net/ipv4/tcp_bbr.c. See bbr.h.
#include "tcp/cc/bbr.h"

#include <algorithm>

#include "util/splitmix.h"

namespace weir::cc {

namespace {

// The PROBE_BW gain cycle: probe at 5/4, drain at 3/4, cruise at 1 for six phases.
constexpr uint32_t kPacingGain[Bbr::kCycleLen] = {
    Bbr::kUnit * 5 / 4, Bbr::kUnit * 3 / 4, Bbr::kUnit, Bbr::kUnit,
    Bbr::kUnit,         Bbr::kUnit,         Bbr::kUnit, Bbr::kUnit};
constexpr uint32_t kCycleRand = 7;                  // random start among the phases after probing
constexpr uint32_t kPacingMarginPercent = 1;        // pace 1% below the estimate
constexpr uint64_t kMinTsoRate = 1200000;           // bits/s: below, 1 packet per TSO burst
constexpr uint32_t kInitCwnd = 10;                  // TCP_INIT_CWND
constexpr uint32_t kGsoLegacyMaxSize = 65536;
constexpr uint32_t kMaxTcpHeader = 320;             // Linux MAX_TCP_HEADER (approximately)
// Long-term bandwidth (policer) sampling.
constexpr uint32_t kLtIntvlMinRtts = 4;
constexpr uint32_t kLtLossThresh = 50;              // lost/delivered >= 50/256 (~20%)
constexpr uint32_t kLtBwRatio = Bbr::kUnit / 8;     // two intervals within 1/8 ...
constexpr uint64_t kLtBwDiff = 4000 / 8;            // ... or within 4 kbit/s
constexpr uint32_t kLtBwMaxRtts = 48;
// ACK aggregation.
constexpr uint32_t kExtraAckedGain = Bbr::kUnit;
constexpr uint32_t kExtraAckedWinRtts = 5;
constexpr uint32_t kAckEpochAckedResetThresh = 1u << 20;
constexpr int64_t kExtraAckedMaxUs = 100 * 1000;

int64_t us(Duration d) { return d.ns() / 1000; }

}  // namespace

uint32_t Bbr::random_below(uint32_t n) {
  // Deterministic per connection (seeded by the driver).
  return static_cast<uint32_t>(splitmix64(rng_) % n);
}

uint64_t Bbr::rate_bytes_per_sec(uint64_t bw, uint32_t mss, uint32_t gain) {
  unsigned __int128 rate = static_cast<unsigned __int128>(bw) * mss * gain;
  rate >>= kScale;
  rate *= 1000000 / 100 * (100 - kPacingMarginPercent);
  rate >>= kBwScale;
  return static_cast<uint64_t>(rate);
}

// ------------------------------------------------------------ lifecycle

void Bbr::init(CcState& tp, Time now) {
  s_ = State{};
  tp.snd_ssthresh = kInfiniteSsthresh;
  s_.next_rtt_delivered = tp.rate.delivered();
  s_.min_rtt = tp.min_rtt.ns() > 0 ? tp.min_rtt : Duration::infinite();
  s_.min_rtt_stamp = now;
  bw_.reset(s_.rtt_cnt, 0);
  init_pacing_rate_from_rtt(tp);
  reset_lt_bw_sampling(tp);
  s_.mode = Mode::Startup;
  s_.ack_epoch_stamp = now;
  mss_for_info_ = tp.mss;
  // BBR's model assumes the stack paces (Linux: SK_PACING_NEEDED).
  tp.pacing_status = PacingStatus::Needed;
}

uint32_t Bbr::ssthresh(CcState& tp, Time now) {
  (void)now;
  // Entering recovery: remember cwnd for when it ends; BBR does not use ssthresh.
  save_cwnd(tp);
  return tp.snd_ssthresh;
}

uint32_t Bbr::undo_cwnd(CcState& tp) {
  // A spurious slow-down: restart full-pipe detection and policer sampling.
  s_.full_bw = 0;
  s_.full_bw_cnt = 0;
  reset_lt_bw_sampling(tp);
  return tp.snd_cwnd;
}

void Bbr::set_state(CcState& tp, CaState new_state, Time now) {
  (void)now;
  if (new_state != CaState::Loss) return;
  RateSample rs;
  rs.losses = 1;
  s_.prev_ca_state = CaState::Loss;
  s_.full_bw = 0;
  s_.round_start = true;  // an RTO ends the round
  lt_bw_sampling(tp, rs);
}

void Bbr::cwnd_event(CcState& tp, CaEvent ev, Time now) {
  if (ev != CaEvent::TxStart || tp.rate.app_limited() == 0) return;
  // Restarting from idle: keep the model, re-seed ACK aggregation.
  s_.idle_restart = true;
  s_.ack_epoch_stamp = now;
  s_.ack_epoch_acked = 0;
  // Already in PROBE_BW and sure of the rate: avoid a pointless burst.
  if (s_.mode == Mode::ProbeBw)
    set_pacing_rate(tp, bw(), kUnit);
  else if (s_.mode == Mode::ProbeRtt)
    check_probe_rtt_done(tp, now);
}

void Bbr::get_info(TcpInfo& info) const {
  info.ca_name = "bbr";
  info.bbr_mode = static_cast<uint8_t>(s_.mode);
  info.bbr_bw = static_cast<uint64_t>(
      (static_cast<unsigned __int128>(bw()) * mss_for_info_ * 1000000) >> kBwScale);
  info.bbr_min_rtt = s_.min_rtt == Duration::infinite() ? ~0u : static_cast<uint32_t>(us(s_.min_rtt));
  info.bbr_pacing_gain = s_.pacing_gain;
  info.bbr_cwnd_gain = s_.cwnd_gain;
}

// ------------------------------------------------------------- per ACK

void Bbr::cong_control(CcState& tp, const RateSample& rs, Time now, Counters& mib) {
  (void)mib;
  mss_for_info_ = tp.mss;
  // bbr_update_model()
  update_bw(tp, rs);
  update_ack_aggregation(tp, rs);
  update_cycle_phase(tp, rs, now);
  check_full_bw_reached(rs);
  check_drain(tp, now);
  update_min_rtt(tp, rs, now);
  update_gains();
  uint64_t b = bw();
  set_pacing_rate(tp, b, s_.pacing_gain);
  set_cwnd(tp, rs, rs.acked_sacked, b, s_.cwnd_gain);
}

void Bbr::update_bw(const CcState& tp, const RateSample& rs) {
  s_.round_start = false;
  if (rs.delivered < 0 || rs.interval.ns() <= 0) return;  // not a valid sample
  // A round ends when a packet sent after the round began is delivered.
  if (rs.prior_delivered >= s_.next_rtt_delivered) {
    s_.next_rtt_delivered = tp.rate.delivered();
    s_.rtt_cnt++;
    s_.round_start = true;
    s_.packet_conservation = false;
  }
  lt_bw_sampling(tp, rs);
  // Delivered packets over the interval: a lower bound on the bottleneck bw.
  int64_t interval_us = std::max<int64_t>(us(rs.interval), 1);
  uint64_t sample = static_cast<uint64_t>(rs.delivered) * kBwUnit / static_cast<uint64_t>(interval_us);
  // App-limited samples say little about the path unless they beat the model.
  if (!rs.is_app_limited || sample >= max_bw()) bw_.update(kBwRtts, s_.rtt_cnt, sample);
}

void Bbr::update_ack_aggregation(const CcState& tp, const RateSample& rs) {
  if (kExtraAckedGain == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval.ns() <= 0)
    return;
  if (s_.round_start) {
    s_.extra_acked_win_rtts = std::min(0x1Fu, s_.extra_acked_win_rtts + 1);
    if (s_.extra_acked_win_rtts >= kExtraAckedWinRtts) {
      s_.extra_acked_win_rtts = 0;
      s_.extra_acked_win_idx ^= 1;
      s_.extra_acked[s_.extra_acked_win_idx] = 0;
    }
  }
  // Packets the model expected over this ACK epoch.
  int64_t epoch_us = std::max<int64_t>(us(tp.rate.delivered_time() - s_.ack_epoch_stamp), 0);
  uint64_t expected = bw() * static_cast<uint64_t>(epoch_us) / kBwUnit;
  // ACKs slower than the model, or a very old epoch: start a new one.
  if (s_.ack_epoch_acked <= expected ||
      s_.ack_epoch_acked + rs.acked_sacked >= kAckEpochAckedResetThresh) {
    s_.ack_epoch_acked = 0;
    s_.ack_epoch_stamp = tp.rate.delivered_time();
    expected = 0;
  }
  s_.ack_epoch_acked = std::min(0xFFFFFu, s_.ack_epoch_acked + rs.acked_sacked);
  auto extra = static_cast<uint32_t>(std::min<uint64_t>(s_.ack_epoch_acked - expected, tp.snd_cwnd));
  uint32_t& slot = s_.extra_acked[s_.extra_acked_win_idx];
  slot = std::max(slot, extra);
}

void Bbr::update_cycle_phase(const CcState& tp, const RateSample& rs, Time now) {
  if (s_.mode != Mode::ProbeBw) return;
  bool full_length = tp.rate.delivered_time() - s_.cycle_stamp > s_.min_rtt;
  bool next = false;
  if (s_.pacing_gain == kUnit) {
    next = full_length;  // cruising: just use time
  } else {
    uint32_t in_net = packets_in_net_at_edt(tp, rs.prior_in_flight, now);
    uint64_t b = max_bw();
    if (s_.pacing_gain > kUnit) {
      // Probing: until inflight reaches gain*BDP (at least min_rtt), or loss.
      next = full_length && (rs.losses > 0 || in_net >= inflight(tp, b, s_.pacing_gain));
    } else {
      // Draining: until the queue we added is gone, or min_rtt passed.
      next = full_length || in_net <= inflight(tp, b, kUnit);
    }
  }
  if (next) advance_cycle_phase(tp);
}

void Bbr::check_full_bw_reached(const RateSample& rs) {
  if (s_.full_bw_reached || !s_.round_start || rs.is_app_limited) return;
  // The pipe is full when three non-app-limited rounds grew bw by < 25%.
  uint64_t thresh = (s_.full_bw * kFullBwThresh) >> kScale;
  if (max_bw() >= thresh) {
    s_.full_bw = max_bw();
    s_.full_bw_cnt = 0;
    return;
  }
  ++s_.full_bw_cnt;
  s_.full_bw_reached = s_.full_bw_cnt >= kFullBwCnt;
}

void Bbr::check_drain(CcState& tp, Time now) {
  if (s_.mode == Mode::Startup && s_.full_bw_reached) {
    s_.mode = Mode::Drain;
    tp.snd_ssthresh = inflight(tp, max_bw(), kUnit);
  }
  if (s_.mode == Mode::Drain &&
      packets_in_net_at_edt(tp, tp.packets_in_flight, now) <= inflight(tp, max_bw(), kUnit))
    reset_probe_bw_mode(tp);  // the queue STARTUP built is drained
}

void Bbr::update_min_rtt(CcState& tp, const RateSample& rs, Time now) {
  bool expired = now > s_.min_rtt_stamp + kMinRttWin;
  if (rs.rtt.ns() >= 0 && (rs.rtt < s_.min_rtt || (expired && !rs.is_ack_delayed))) {
    s_.min_rtt = rs.rtt;
    s_.min_rtt_stamp = now;
  }
  // No new min RTT for 10 s: dip to 4 packets to drain the queue and measure.
  if (expired && !s_.idle_restart && s_.mode != Mode::ProbeRtt) {
    s_.mode = Mode::ProbeRtt;
    save_cwnd(tp);
    s_.probe_rtt_done_valid = false;
  }
  if (s_.mode == Mode::ProbeRtt) {
    // The deliberately low rate of this mode must not lower the bw model.
    tp.rate.mark_app_limited(tp.packets_in_flight);
    // Hold the low inflight for max(200 ms, one round).
    if (!s_.probe_rtt_done_valid && tp.packets_in_flight <= kCwndMinTarget) {
      s_.probe_rtt_done_valid = true;
      s_.probe_rtt_done_stamp = now + kProbeRttMode;
      s_.probe_rtt_round_done = false;
      s_.next_rtt_delivered = tp.rate.delivered();
    } else if (s_.probe_rtt_done_valid) {
      if (s_.round_start) s_.probe_rtt_round_done = true;
      if (s_.probe_rtt_round_done) check_probe_rtt_done(tp, now);
    }
  }
  if (rs.delivered > 0) s_.idle_restart = false;
}

void Bbr::update_gains() {
  switch (s_.mode) {
    case Mode::Startup:
      s_.pacing_gain = kHighGain;
      s_.cwnd_gain = kHighGain;
      break;
    case Mode::Drain:
      s_.pacing_gain = kDrainGain;  // slow, to drain
      s_.cwnd_gain = kHighGain;     // keep cwnd
      break;
    case Mode::ProbeBw:
      s_.pacing_gain = s_.lt_use_bw ? kUnit : kPacingGain[s_.cycle_idx];
      s_.cwnd_gain = kCwndGain;
      break;
    case Mode::ProbeRtt:
      s_.pacing_gain = kUnit;
      s_.cwnd_gain = kUnit;
      break;
  }
}

// ------------------------------------------------------ long-term bw

void Bbr::reset_lt_bw_sampling_interval(const CcState& tp) {
  s_.lt_last_stamp_ms = tp.rate.delivered_time().ms();
  s_.lt_last_delivered = tp.rate.delivered();
  s_.lt_last_lost = tp.lost;
  s_.lt_rtt_cnt = 0;
}

void Bbr::reset_lt_bw_sampling(const CcState& tp) {
  s_.lt_bw = 0;
  s_.lt_use_bw = false;
  s_.lt_is_sampling = false;
  reset_lt_bw_sampling_interval(tp);
}

void Bbr::lt_bw_interval_done(const CcState& tp, uint64_t bw) {
  if (s_.lt_bw != 0) {
    uint64_t diff = bw > s_.lt_bw ? bw - s_.lt_bw : s_.lt_bw - bw;
    // Two consistent intervals with heavy loss: a token-bucket policer.
    // Use the average of both intervals' rates.
    if (diff * kUnit <= kLtBwRatio * s_.lt_bw ||
        rate_bytes_per_sec(diff, tp.mss, kUnit) <= kLtBwDiff) {
      s_.lt_bw = (bw + s_.lt_bw) >> 1;
      s_.lt_use_bw = true;
      s_.pacing_gain = kUnit;  // try to avoid drops
      s_.lt_rtt_cnt = 0;
      return;
    }
  }
  s_.lt_bw = bw;
  reset_lt_bw_sampling_interval(tp);
}

void Bbr::lt_bw_sampling(const CcState& tp, const RateSample& rs) {
  if (s_.lt_use_bw) {
    // Policed for 48 rounds: try the real path again.
    if (s_.mode == Mode::ProbeBw && s_.round_start && ++s_.lt_rtt_cnt >= kLtBwMaxRtts) {
      reset_lt_bw_sampling(tp);
      reset_probe_bw_mode(tp);
    }
    return;
  }
  // Start at the first loss, when a policer has exhausted its tokens.
  if (!s_.lt_is_sampling) {
    if (rs.losses == 0) return;
    reset_lt_bw_sampling_interval(tp);
    s_.lt_is_sampling = true;
  }
  if (rs.is_app_limited) {
    reset_lt_bw_sampling(tp);  // running out of data would underestimate
    return;
  }
  if (s_.round_start) s_.lt_rtt_cnt++;
  if (s_.lt_rtt_cnt < kLtIntvlMinRtts) return;
  if (s_.lt_rtt_cnt > 4 * kLtIntvlMinRtts) {
    reset_lt_bw_sampling(tp);
    return;
  }
  if (rs.losses == 0) return;  // end intervals on a loss
  uint64_t lost = tp.lost - s_.lt_last_lost;
  uint64_t delivered = tp.rate.delivered() - s_.lt_last_delivered;
  if (delivered == 0 || (lost << kScale) < kLtLossThresh * delivered) return;
  int64_t t_ms = tp.rate.delivered_time().ms() - s_.lt_last_stamp_ms;
  if (t_ms < 1) return;
  uint64_t b = delivered * kBwUnit / static_cast<uint64_t>(t_ms * 1000);
  lt_bw_interval_done(tp, b);
}

// -------------------------------------------------------------- outputs

void Bbr::init_pacing_rate_from_rtt(CcState& tp) {
  int64_t rtt_us = 1000;  // nominal 1 ms before any RTT sample
  if (tp.srtt.ns() > 0) {
    rtt_us = std::max<int64_t>(us(tp.srtt), 1);
    s_.has_seen_rtt = true;
  }
  uint64_t b = uint64_t{tp.snd_cwnd} * kBwUnit / static_cast<uint64_t>(rtt_us);
  tp.pacing_rate = std::min(rate_bytes_per_sec(b, tp.mss, kHighGain), tp.max_pacing_rate);
}

void Bbr::set_pacing_rate(CcState& tp, uint64_t b, uint32_t gain) {
  uint64_t rate = std::min(rate_bytes_per_sec(b, tp.mss, gain), tp.max_pacing_rate);
  if (!s_.has_seen_rtt && tp.srtt.ns() > 0) init_pacing_rate_from_rtt(tp);
  // Until the pipe is full, never lower the rate (early samples are low).
  if (s_.full_bw_reached || rate > tp.pacing_rate) tp.pacing_rate = rate;
}

bool Bbr::recover_or_restore(CcState& tp, const RateSample& rs, uint32_t acked, uint32_t& cwnd) {
  CaState prev = s_.prev_ca_state;
  CaState state = tp.ca_state;
  // An ACK for P packets releases at most 2P: first deduct the losses.
  if (rs.losses > 0) cwnd = static_cast<uint32_t>(std::max<int64_t>(int64_t{cwnd} - rs.losses, 1));
  if (state == CaState::Recovery && prev != CaState::Recovery) {
    // First round of recovery: packet conservation (RFC 6675 spirit).
    s_.packet_conservation = true;
    s_.next_rtt_delivered = tp.rate.delivered();
    cwnd = tp.packets_in_flight + acked;
  } else if (prev >= CaState::Recovery && state < CaState::Recovery) {
    cwnd = std::max(cwnd, s_.prior_cwnd);  // leaving recovery: restore
    s_.packet_conservation = false;
  }
  s_.prev_ca_state = state;
  if (s_.packet_conservation) {
    cwnd = std::max(cwnd, tp.packets_in_flight + acked);
    return true;
  }
  return false;
}

void Bbr::set_cwnd(CcState& tp, const RateSample& rs, uint32_t acked, uint64_t b, uint32_t gain) {
  uint32_t cwnd = tp.snd_cwnd;
  if (acked != 0 && !recover_or_restore(tp, rs, acked, cwnd)) {
    uint32_t target = bdp(b, gain) + ack_aggregation_cwnd();
    target = quantization_budget(tp, target);
    // Slow start toward the target; only cut once the pipe was filled.
    if (s_.full_bw_reached)
      cwnd = std::min(cwnd + acked, target);
    else if (cwnd < target || tp.rate.delivered() < kInitCwnd)
      cwnd = cwnd + acked;
    cwnd = std::max(cwnd, kCwndMinTarget);
  }
  tp.snd_cwnd = std::min(cwnd, tp.snd_cwnd_clamp);
  if (s_.mode == Mode::ProbeRtt) tp.snd_cwnd = std::min(tp.snd_cwnd, kCwndMinTarget);
}

// -------------------------------------------------------------- helpers

uint32_t Bbr::bdp(uint64_t b, uint32_t gain) const {
  if (s_.min_rtt == Duration::infinite()) return kInitCwnd;  // no RTT yet: be safe
  unsigned __int128 w = static_cast<unsigned __int128>(b) * static_cast<uint64_t>(us(s_.min_rtt));
  return static_cast<uint32_t>((((w * gain) >> kScale) + kBwUnit - 1) / kBwUnit);
}

uint32_t Bbr::tso_segs_goal(const CcState& tp) const {
  uint64_t bytes = std::min<uint64_t>(tp.pacing_rate >> tp.pacing_shift,
                                      kGsoLegacyMaxSize - 1 - kMaxTcpHeader);
  uint32_t min_segs = tp.pacing_rate < (kMinTsoRate >> 3) ? 1 : 2;
  uint64_t segs = std::max<uint64_t>(bytes / std::max(tp.mss, 1u), min_segs);
  return static_cast<uint32_t>(std::min<uint64_t>(segs, 0x7F));
}

uint32_t Bbr::quantization_budget(const CcState& tp, uint32_t cwnd) const {
  cwnd += 3 * tso_segs_goal(tp);  // enough full-size bursts in flight
  cwnd = (cwnd + 1) & ~1u;        // even, to suit delayed ACKs
  if (s_.mode == Mode::ProbeBw && s_.cycle_idx == 0) cwnd += 2;  // probe above small BDPs
  return cwnd;
}

uint32_t Bbr::inflight(const CcState& tp, uint64_t b, uint32_t gain) const {
  return quantization_budget(tp, bdp(b, gain));
}

uint32_t Bbr::packets_in_net_at_edt(const CcState& tp, uint32_t inflight_now, Time now) const {
  // Packets still in the network when the next (paced) packet departs.
  Time edt = max(tp.wstamp, now);
  auto interval_us = static_cast<uint64_t>(us(edt - now));
  uint64_t delivered_by_then = bw() * interval_us >> kBwScale;
  uint64_t at_edt = inflight_now;
  if (s_.pacing_gain > kUnit) at_edt += tso_segs_goal(tp);
  if (delivered_by_then >= at_edt) return 0;
  return static_cast<uint32_t>(at_edt - delivered_by_then);
}

uint32_t Bbr::ack_aggregation_cwnd() const {
  if (kExtraAckedGain == 0 || !s_.full_bw_reached) return 0;
  uint64_t max_aggr = bw() * kExtraAckedMaxUs / kBwUnit;
  uint64_t aggr = (uint64_t{kExtraAckedGain} * std::max(s_.extra_acked[0], s_.extra_acked[1])) >> kScale;
  return static_cast<uint32_t>(std::min(aggr, max_aggr));
}

void Bbr::save_cwnd(const CcState& tp) {
  if (s_.prev_ca_state < CaState::Recovery && s_.mode != Mode::ProbeRtt)
    s_.prior_cwnd = tp.snd_cwnd;  // a good cwnd
  else  // recovery or PROBE_RTT cut it temporarily
    s_.prior_cwnd = std::max(s_.prior_cwnd, tp.snd_cwnd);
}

void Bbr::reset_mode(const CcState& tp) {
  if (!s_.full_bw_reached)
    s_.mode = Mode::Startup;
  else
    reset_probe_bw_mode(tp);
}

void Bbr::reset_probe_bw_mode(const CcState& tp) {
  s_.mode = Mode::ProbeBw;
  // Start at a random phase other than the 3/4 drain phase, then step.
  s_.cycle_idx = kCycleLen - 1 - random_below(kCycleRand);
  advance_cycle_phase(tp);
}

void Bbr::advance_cycle_phase(const CcState& tp) {
  s_.cycle_idx = (s_.cycle_idx + 1) & (kCycleLen - 1);
  s_.cycle_stamp = tp.rate.delivered_time();
}

void Bbr::check_probe_rtt_done(CcState& tp, Time now) {
  if (!(s_.probe_rtt_done_valid && now > s_.probe_rtt_done_stamp)) return;
  s_.min_rtt_stamp = now;  // wait another 10 s before the next PROBE_RTT
  tp.snd_cwnd = std::max(tp.snd_cwnd, s_.prior_cwnd);
  reset_mode(tp);
}

}  // namespace weir::cc
