// DCTCP (RFC 8257) as Linux's "dctcp" module (net/ipv4/tcp_dctcp.c): the
// sender keeps alpha, an EWMA of the fraction of its packets the receiver
// reported CE-marked, and on ECE cuts cwnd by alpha/2 instead of half; loss
// still halves. Growth is Reno's. It needs ECN (TCP_CONG_NEEDS_ECN): the
// engine then negotiates ECN whatever tcp_ecn says, marks every packet
// ECT(0) and runs DCTCP's receiver echo (one ECE per CE-marked packet, RFC
// 8257 §3.2; tcp_ecn.cc). A connection whose peer did not agree to ECN falls
// back to Reno and reports "dctcp-reno", as Linux does. With
// net.ipv4.tcp_plb_enabled, each observation window's CE share feeds
// Protective Load Balancing (plb.h), as in Linux >= 6.2.
#pragma once

#include "tcp/cc/cc.h"

namespace weir::cc {

// Linux struct tcp_dctcp_info (uapi inet_diag.h), union tcp_cc_info's DCTCP
// member, as getsockopt(TCP_CC_INFO) returns it.
struct TcpDctcpInfo {
  uint16_t dctcp_enabled = 0;
  uint16_t dctcp_ce_state = 0;
  uint32_t dctcp_alpha = 0;
  uint32_t dctcp_ab_ecn = 0;  // bytes ECE-acknowledged in the current observation window
  uint32_t dctcp_ab_tot = 0;  // bytes acknowledged in it
};
static_assert(sizeof(TcpDctcpInfo) == 16, "Linux struct tcp_dctcp_info is 16 bytes");

class Dctcp final : public CongestionControl {
 public:
  // Linux DCTCP_MAX_ALPHA: alpha is a fraction of 1024.
  static constexpr uint32_t kMaxAlpha = 1024;
  // Linux dctcp_shift_g: g = 1/16 (RFC 8257 §3.3 suggests 1/16).
  static constexpr uint32_t kShiftG = 4;

  explicit Dctcp(const CcOptions& opts = {}) : plb_params_(opts.plb), rng_(opts.rng_seed) {}
  std::string_view name() const override { return fallback_ ? "dctcp-reno" : "dctcp"; }
  bool needs_ecn() const override { return !fallback_; }
  void init(CcState& tp, Time now) override;
  uint32_t ssthresh(CcState& tp, Time now) override;
  void cong_avoid(CcState& tp, Seq32 ack, uint32_t acked, Time now, Counters& mib) override;
  void in_ack_event(CcState& tp, Time now) override;
  void set_state(CcState& tp, CaState new_state, Time now) override;
  void cwnd_event(CcState& tp, CaEvent ev, Time now) override;
  uint32_t undo_cwnd(CcState& tp) override;
  void get_info(TcpInfo& info) const override;

  // dctcp_get_info: the TCP_CC_INFO record (zeros but the size when fallen back).
  TcpDctcpInfo dctcp_info(const CcState& tp) const;
  uint32_t alpha() const { return alpha_; }
  bool fallen_back() const { return fallback_; }

 private:
  void reset(const CcState& tp);      // dctcp_reset: a new observation window
  void react_to_loss(CcState& tp);    // dctcp_react_to_loss
  void plb_round(CcState& tp, uint64_t delivered, uint64_t delivered_ce, Time now);
  uint32_t random_u32();

  uint32_t alpha_ = kMaxAlpha;        // dctcp_alpha_on_init
  Seq32 next_seq_;                    // end of the observation window (one RTT of data)
  uint64_t old_delivered_ = 0;
  uint32_t old_delivered_ce_ = 0;  // tp->delivered_ce is 32 bits (wraps)
  uint32_t loss_cwnd_ = 0;            // cwnd before the last reduction, for undo
  bool fallback_ = false;             // dctcp_reno: ECN not negotiated
  PlbParams plb_params_;
  PlbState plb_;
  uint64_t rng_;                      // splitmix64 state (PLB's pause after an RTO)
};

}  // namespace weir::cc
