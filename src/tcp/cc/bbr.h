// BBR v1 congestion control as Linux net/ipv4/tcp_bbr.c (Cardwell et al.,
// "BBR: Congestion-Based Congestion Control", ACM Queue 2016;
// draft-cardwell-iccrg-bbr-congestion-control-00): a model of the path from
// the delivery-rate samples (windowed max bandwidth over 10 rounds, windowed
// min RTT over 10 s) drives the pacing rate and cwnd through four modes:
// STARTUP, DRAIN, PROBE_BW (an 8-phase gain cycle) and PROBE_RTT.
#pragma once

#include <cstdint>

#include "tcp/cc/cc.h"
#include "tcp/cc/win_minmax.h"

namespace weir::cc {

class Bbr final : public CongestionControl {
 public:
  enum class Mode : uint8_t { Startup = 0, Drain = 1, ProbeBw = 2, ProbeRtt = 3 };

  // Fixed point as Linux: bandwidth in packets per microsecond << 24, gains << 8.
  static constexpr int kBwScale = 24;
  static constexpr uint64_t kBwUnit = uint64_t{1} << kBwScale;
  static constexpr int kScale = 8;
  static constexpr uint32_t kUnit = 1u << kScale;
  static constexpr uint32_t kHighGain = kUnit * 2885 / 1000 + 1;  // 2/ln(2)
  static constexpr uint32_t kDrainGain = kUnit * 1000 / 2885;     // its inverse
  static constexpr uint32_t kCwndGain = kUnit * 2;
  static constexpr uint32_t kCycleLen = 8;
  static constexpr uint32_t kBwRtts = kCycleLen + 2;  // max-bw filter window, rounds
  static constexpr Duration kMinRttWin = Duration::s(10);
  static constexpr Duration kProbeRttMode = Duration::ms(200);
  static constexpr uint32_t kCwndMinTarget = 4;
  static constexpr uint32_t kFullBwThresh = kUnit * 5 / 4;  // +25% per round
  static constexpr uint32_t kFullBwCnt = 3;

  // Linux struct bbr, exposed for tcp_info, the lab and tests.
  struct State {
    Mode mode = Mode::Startup;
    Duration min_rtt = Duration::infinite();  // min_rtt_us (~0U: none)
    Time min_rtt_stamp;
    bool probe_rtt_done_valid = false;        // Linux: probe_rtt_done_stamp != 0
    Time probe_rtt_done_stamp;
    bool probe_rtt_round_done = false;
    uint64_t rtt_cnt = 0;                     // round trips so far
    uint64_t next_rtt_delivered = 0;          // delivered count ending this round
    Time cycle_stamp;                         // start of the current gain phase
    CaState prev_ca_state = CaState::Open;
    bool packet_conservation = false;
    bool round_start = false;
    bool idle_restart = false;
    // Long-term (policer) bandwidth sampling.
    bool lt_is_sampling = false;
    uint32_t lt_rtt_cnt = 0;
    bool lt_use_bw = false;
    uint64_t lt_bw = 0;
    uint64_t lt_last_delivered = 0;
    int64_t lt_last_stamp_ms = 0;
    uint64_t lt_last_lost = 0;
    uint32_t pacing_gain = kHighGain;
    uint32_t cwnd_gain = kHighGain;
    bool full_bw_reached = false;
    uint32_t full_bw_cnt = 0;
    uint32_t cycle_idx = 0;
    bool has_seen_rtt = false;
    uint32_t prior_cwnd = 0;
    uint64_t full_bw = 0;
    // ACK aggregation estimate.
    Time ack_epoch_stamp;
    uint32_t ack_epoch_acked = 0;
    uint32_t extra_acked[2] = {0, 0};
    uint32_t extra_acked_win_rtts = 0;
    uint32_t extra_acked_win_idx = 0;
  };

  explicit Bbr(const CcOptions& opts = {}) : rng_(opts.rng_seed) {}

  std::string_view name() const override { return "bbr"; }
  bool has_cong_control() const override { return true; }
  void init(CcState& tp, Time now) override;
  uint32_t ssthresh(CcState& tp, Time now) override;
  void cong_control(CcState& tp, const RateSample& rs, Time now, Counters& mib) override;
  void set_state(CcState& tp, CaState new_state, Time now) override;
  void cwnd_event(CcState& tp, CaEvent ev, Time now) override;
  uint32_t undo_cwnd(CcState& tp) override;
  void get_info(TcpInfo& info) const override;

  const State& state() const { return s_; }
  uint64_t max_bw() const { return bw_.get(); }  // packets/us << 24
  uint64_t bw() const { return s_.lt_use_bw ? s_.lt_bw : bw_.get(); }
  // A bandwidth in packets/us << 24 as bytes/s with `gain` and the 1% margin.
  static uint64_t rate_bytes_per_sec(uint64_t bw, uint32_t mss, uint32_t gain);

 private:
  // Model updates (bbr_update_model), in Linux's order.
  void update_bw(const CcState& tp, const RateSample& rs);
  void update_ack_aggregation(const CcState& tp, const RateSample& rs);
  void update_cycle_phase(const CcState& tp, const RateSample& rs, Time now);
  void check_full_bw_reached(const RateSample& rs);
  void check_drain(CcState& tp, Time now);
  void update_min_rtt(CcState& tp, const RateSample& rs, Time now);
  void update_gains();
  // Long-term bandwidth (token-bucket policer detection).
  void lt_bw_sampling(const CcState& tp, const RateSample& rs);
  void lt_bw_interval_done(const CcState& tp, uint64_t bw);
  void reset_lt_bw_sampling_interval(const CcState& tp);
  void reset_lt_bw_sampling(const CcState& tp);
  // Outputs.
  void set_pacing_rate(CcState& tp, uint64_t bw, uint32_t gain);
  void init_pacing_rate_from_rtt(CcState& tp);
  void set_cwnd(CcState& tp, const RateSample& rs, uint32_t acked, uint64_t bw, uint32_t gain);
  bool recover_or_restore(CcState& tp, const RateSample& rs, uint32_t acked, uint32_t& cwnd);
  // Helpers.
  uint32_t bdp(uint64_t bw, uint32_t gain) const;
  uint32_t quantization_budget(const CcState& tp, uint32_t cwnd) const;
  uint32_t inflight(const CcState& tp, uint64_t bw, uint32_t gain) const;
  uint32_t packets_in_net_at_edt(const CcState& tp, uint32_t inflight_now, Time now) const;
  uint32_t tso_segs_goal(const CcState& tp) const;
  uint32_t ack_aggregation_cwnd() const;
  void save_cwnd(const CcState& tp);
  void reset_mode(const CcState& tp);
  void reset_probe_bw_mode(const CcState& tp);
  void advance_cycle_phase(const CcState& tp);
  void check_probe_rtt_done(CcState& tp, Time now);
  uint32_t random_below(uint32_t n);

  State s_;
  WindowedMax bw_;
  uint64_t rng_;
  uint32_t mss_for_info_ = 1460;  // tp.mss at the last call, for get_info()
};

}  // namespace weir::cc
