// CUBIC congestion control (RFC 9438) as Linux net/ipv4/tcp_cubic.c: beta
// 717/1024, C = bic_scale*10/1024 (~0.4), fast convergence, the Reno-friendly
// region, cwnd in packets, time in jiffies of 1 ms (HZ=1000), with HyStart
// (Linux) or HyStart++ (RFC 9406) to leave the initial slow start.
#pragma once

#include <cstdint>

#include "tcp/cc/cc.h"
#include "tcp/cc/hystart.h"

namespace weir::cc {

class Cubic final : public CongestionControl {
 public:
  static constexpr uint32_t kBetaScale = 1024;  // BICTCP_BETA_SCALE
  static constexpr int kBicHzShift = 10;        // BICTCP_HZ: time unit 1/1024 s
  static constexpr int64_t kHz = 1000;          // jiffies per second

  // Linux struct bictcp (the CUBIC part), exposed for tcp_info and tests.
  struct State {
    uint32_t cnt = 0;             // ACKed packets per +1 cwnd
    uint32_t last_max_cwnd = 0;   // RFC 9438 W_max
    uint32_t last_cwnd = 0;
    int64_t last_time = 0;        // jiffies
    uint32_t origin_point = 0;    // bic_origin_point: W_max of the curve
    uint64_t k = 0;               // bic_K: RFC 9438 K, in 1/1024 s
    Duration delay_min;           // minimum RTT seen (zero: none)
    bool epoch_valid = false;     // Linux: epoch_start != 0
    int64_t epoch_start = 0;      // jiffies
    uint32_t ack_cnt = 0;         // ACKed packets since the last W_est step
    uint32_t tcp_cwnd = 0;        // RFC 9438 W_est (Reno-friendly estimate)
  };

  explicit Cubic(const CcOptions& opts = {});

  std::string_view name() const override { return "cubic"; }
  void init(CcState& tp, Time now) override;
  uint32_t ssthresh(CcState& tp, Time now) override;
  void cong_avoid(CcState& tp, Seq32 ack, uint32_t acked, Time now, Counters& mib) override;
  void pkts_acked(CcState& tp, const AckSample& s, Time now, Counters& mib) override;
  void set_state(CcState& tp, CaState new_state, Time now) override;
  void cwnd_event(CcState& tp, CaEvent ev, Time now) override;
  uint32_t undo_cwnd(CcState& tp) override;
  void get_info(TcpInfo& info) const override;

  const State& state() const { return s_; }
  const Hystart& hystart() const { return hystart_; }
  const HystartPlusPlus& hystart_pp() const { return hspp_; }
  uint8_t hystart_exit_reason() const { return static_cast<uint8_t>(exit_reason_); }
  uint32_t hystart_exit_cwnd() const { return exit_cwnd_; }

  // The integer cube root Linux's cubic_root() approximates (here exact: floor).
  static uint32_t cube_root(uint64_t a);

 private:
  void update(uint32_t cwnd, uint32_t acked, Time now);  // bictcp_update
  void start_epoch(uint32_t cwnd, uint32_t acked, int64_t jiffies);
  void reno_friendly(uint32_t cwnd);
  void reset();                                          // bictcp_reset
  void note_exit(CcState& tp, HystartExit why);
  void on_hspp_sample(CcState& tp, Duration delay);  // HyStart++ per-ACK step

  CcOptions o_;
  uint32_t beta_scale_;     // 8 * (1024 + beta) / 3 / (1024 - beta)
  uint32_t cube_rtt_scale_; // bic_scale * 10
  uint64_t cube_factor_;    // 2^40 / (bic_scale * 10)
  State s_;
  Hystart hystart_;
  HystartPlusPlus hspp_;
  HystartExit exit_reason_ = HystartExit::None;
  uint32_t exit_cwnd_ = 0;
};

}  // namespace weir::cc
