// The congestion-control registry and the helpers of Linux net/ipv4/tcp_cong.c
// and tcp_output.c that every algorithm and the engine share. See cc.h.
#include "tcp/cc/cc.h"
#include "tcp/cc/cc_info.h"

#include <algorithm>
#include <cstring>

#include "tcp/cc/bbr.h"
#include "tcp/cc/cubic.h"
#include "tcp/cc/dctcp.h"
#include "tcp/cc/reno.h"

namespace weir::cc {

std::unique_ptr<CongestionControl> make_cc(std::string_view name, const CcOptions& opts) {
  if (name == "reno") return std::make_unique<Reno>();
  if (name == "cubic") return std::make_unique<Cubic>(opts);
  if (name == "bbr") return std::make_unique<Bbr>(opts);
  if (name == "dctcp") return std::make_unique<Dctcp>(opts);
  return nullptr;
}

CcOptions options_from(const StackConfig& cfg) {
  CcOptions o;
  o.hystart = std::clamp(cfg.tcp_cubic_hystart, 0, 2);
  o.hystart_detect = cfg.tcp_cubic_hystart_detect & 3;
  o.hystart_low_window = cfg.tcp_cubic_hystart_low_window;
  o.hystart_ack_delta = Duration::us(cfg.tcp_cubic_hystart_ack_delta_us);
  o.fast_convergence = cfg.tcp_cubic_fast_convergence;
  if (cfg.tcp_cubic_beta > 0 && cfg.tcp_cubic_beta < 1024) o.beta = cfg.tcp_cubic_beta;
  if (cfg.tcp_cubic_bic_scale > 0) o.bic_scale = cfg.tcp_cubic_bic_scale;
  o.tcp_friendliness = cfg.tcp_cubic_tcp_friendliness;
  o.initial_ssthresh = cfg.tcp_cubic_initial_ssthresh;
  o.hystart_seed004_bug = cfg.fault_seed004_hystart_round_start;  // lab contrast only
  o.plb.enabled = cfg.tcp_plb_enabled != 0;
  o.plb.idle_rehash_rounds = static_cast<uint32_t>(cfg.tcp_plb_idle_rehash_rounds);
  o.plb.rehash_rounds = static_cast<uint32_t>(cfg.tcp_plb_rehash_rounds);
  o.plb.suspend_rto_sec = static_cast<uint32_t>(cfg.tcp_plb_suspend_rto_sec);
  o.plb.cong_thresh = static_cast<uint32_t>(cfg.tcp_plb_cong_thresh);
  return o;
}

size_t cc_info(const CongestionControl& cc, const CcState& tp, std::span<uint8_t> out) {
  // Linux: sz = ca_ops->get_info ? get_info(...) : 0; len = min(len, sz).
  if (const auto* d = dynamic_cast<const Dctcp*>(&cc)) {  // dctcp_get_info (also dctcp_reno's)
    const TcpDctcpInfo di = d->dctcp_info(tp);
    const size_t n = std::min(out.size(), sizeof di);
    std::memcpy(out.data(), &di, n);
    return n;
  }
  if (cc.name() != "bbr") return 0;  // tcp_cubic.c, tcp_cong.c (reno): no get_info
  TcpInfo i;
  cc.get_info(i);
  TcpBbrInfo b;  // bbr_get_info()
  b.bbr_bw_lo = static_cast<uint32_t>(i.bbr_bw);
  b.bbr_bw_hi = static_cast<uint32_t>(i.bbr_bw >> 32);
  b.bbr_min_rtt = i.bbr_min_rtt;
  b.bbr_pacing_gain = i.bbr_pacing_gain;
  b.bbr_cwnd_gain = i.bbr_cwnd_gain;
  const size_t n = std::min(out.size(), sizeof b);
  std::memcpy(out.data(), &b, n);
  return n;
}

bool cc_available(std::string_view name) {
  return name == "reno" || name == "cubic" || name == "bbr" || name == "dctcp";
}

void fill_trace(const CongestionControl& cc, const CcState& tp, TraceSample& s) {
  TcpInfo info;
  cc.get_info(info);
  s.pacing_rate = tp.pacing_rate;
  s.cubic_wmax = info.cubic_wmax;
  s.cubic_k_ms = info.cubic_k_ms;
  s.cubic_epoch_start_ms = info.cubic_epoch_start_ms;
  s.bbr_mode = info.bbr_mode;
  s.bbr_bw = info.bbr_bw;
  s.bbr_min_rtt_us = info.bbr_min_rtt;
}

bool is_cwnd_limited(const CcState& tp) {
  if (tp.is_cwnd_limited) return true;
  // In slow start, let cwnd grow to twice what was actually in flight, so a
  // flow that is briefly not cwnd-limited still doubles per round.
  if (in_slow_start(tp)) return tp.snd_cwnd < 2 * tp.max_packets_out;
  return false;
}

uint32_t slow_start(CcState& tp, uint32_t acked) {
  // RFC 5681 §3.1 / RFC 3465: grow by what was ACKed, but not past ssthresh;
  // the rest of the ACKed packets belong to congestion avoidance.
  uint32_t cwnd = std::min(tp.snd_cwnd + acked, tp.snd_ssthresh);
  acked -= cwnd - tp.snd_cwnd;
  tp.snd_cwnd = std::min(cwnd, tp.snd_cwnd_clamp);
  return acked;
}

void cong_avoid_ai(CcState& tp, uint32_t w, uint32_t acked) {
  w = std::max(w, 1u);
  // Credits accumulated while w was larger are applied gently now.
  if (tp.snd_cwnd_cnt >= w) {
    tp.snd_cwnd_cnt = 0;
    tp.snd_cwnd++;
  }
  tp.snd_cwnd_cnt += acked;
  if (tp.snd_cwnd_cnt >= w) {
    uint32_t delta = tp.snd_cwnd_cnt / w;
    tp.snd_cwnd_cnt -= delta * w;
    tp.snd_cwnd += delta;
  }
  tp.snd_cwnd = std::min(tp.snd_cwnd, tp.snd_cwnd_clamp);
}

uint32_t current_ssthresh(const CcState& tp) {
  if (in_cwnd_reduction(tp)) return tp.snd_ssthresh;
  return std::max(tp.snd_ssthresh, (tp.snd_cwnd >> 1) + (tp.snd_cwnd >> 2));
}

bool may_raise_cwnd(uint32_t reordering, uint32_t sysctl_reordering, bool data_acked,
                    bool forward_progress) {
  if (reordering > sysctl_reordering) return forward_progress;
  return data_acked;
}

void update_pacing_rate(CcState& tp, uint32_t ss_ratio, uint32_t ca_ratio) {
  // Near the end of slow start (cwnd >= ssthresh/2) Linux already slows to
  // the CA ratio.
  uint32_t ratio = tp.snd_cwnd < tp.snd_ssthresh / 2 ? ss_ratio : ca_ratio;
  // mss * ratio/100 * cwnd bytes per srtt, in bytes per second: the
  // 10^9 / 100 is exactly 10^7. In 64 bits when the product fits (always,
  // short of a cwnd in the millions), else in 128: the same quotient without
  // a 128-bit division on every ACK.
  const unsigned __int128 x = static_cast<unsigned __int128>(tp.mss) * ratio *
                              std::max(tp.snd_cwnd, tp.packets_out) * 10000000u;
  const uint64_t srtt = tp.srtt.ns() > 0 ? static_cast<uint64_t>(tp.srtt.ns()) : 1;
  // Before the first RTT sample Linux divides by nothing: the rate is only
  // bounded by max_pacing_rate.
  uint64_t r;
  if (x <= std::numeric_limits<uint64_t>::max()) {
    r = static_cast<uint64_t>(x) / srtt;
  } else {
    const unsigned __int128 rate = x / srtt;
    r = rate > std::numeric_limits<uint64_t>::max() ? std::numeric_limits<uint64_t>::max()
                                                    : static_cast<uint64_t>(rate);
  }
  tp.pacing_rate = std::min(r, tp.max_pacing_rate);
}

void cwnd_validate(const CongestionControl& cc, CcState& tp, const CwndValidateArgs& a, Time now) {
  // Remember for the current window whether it was cwnd-limited; if not, the
  // largest flight in it. A new window starts once snd.una passes the end of
  // the last one.
  if (tp.snd_una >= tp.cwnd_usage_seq || a.cwnd_limited ||
      (!tp.is_cwnd_limited && tp.packets_out > tp.max_packets_out)) {
    tp.is_cwnd_limited = a.cwnd_limited;
    tp.max_packets_out = tp.packets_out;
    tp.cwnd_usage_seq = tp.snd_nxt;
  }
  if (is_cwnd_limited(tp)) {
    tp.snd_cwnd_used = 0;  // the network is fed fully
    tp.snd_cwnd_stamp = now;
    return;
  }
  tp.snd_cwnd_used = std::max(tp.snd_cwnd_used, tp.packets_out);
  // RFC 7661 §4.4 as Linux (RFC 2861's "slow part"): after an RTO without
  // using the window, shrink cwnd halfway toward what was used.
  if (!a.slow_start_after_idle || cc.has_cong_control() || now - tp.snd_cwnd_stamp < a.rto) return;
  if (tp.ca_state == CaState::Open && !a.sndbuf_limited) {
    const uint32_t win_used = std::max(tp.snd_cwnd_used, a.init_cwnd);
    if (win_used < tp.snd_cwnd) {
      tp.snd_ssthresh = current_ssthresh(tp);
      tp.snd_cwnd = (tp.snd_cwnd + win_used) >> 1;
    }
    tp.snd_cwnd_used = 0;
  }
  tp.snd_cwnd_stamp = now;
}

void cwnd_restart(CongestionControl& cc, CcState& tp, Duration idle, Duration rto,
                  uint32_t init_cwnd, Time now) {
  cc.cwnd_event(tp, CaEvent::CwndRestart, now);
  tp.snd_ssthresh = current_ssthresh(tp);
  uint32_t restart_cwnd = std::min(init_cwnd, tp.snd_cwnd);
  uint32_t cwnd = tp.snd_cwnd;
  // RFC 5681 §4.1 says restart at the initial window; Linux (RFC 2861 spirit)
  // halves once per RTO of idleness, never below it.
  if (rto.ns() > 0) {
    for (idle -= rto; idle.ns() > 0 && cwnd > restart_cwnd; idle -= rto) cwnd >>= 1;
  }
  tp.snd_cwnd = std::max(cwnd, restart_cwnd);
  tp.snd_cwnd_stamp = now;
  tp.snd_cwnd_used = 0;
}

void slow_start_after_idle_check(CongestionControl& cc, CcState& tp, Duration rto,
                                 uint32_t init_cwnd, bool enabled, Time now) {
  if (!enabled || tp.packets_out != 0 || cc.has_cong_control()) return;
  Duration idle = now - tp.lsndtime;
  if (idle > rto) cwnd_restart(cc, tp, idle, rto, init_cwnd, now);
}

}  // namespace weir::cc
