// DCTCP (RFC 8257) as Linux net/ipv4/tcp_dctcp.c. See dctcp.h.
#include "tcp/cc/dctcp.h"

#include <algorithm>

#include "tcp/cc/reno.h"
#include "util/splitmix.h"

namespace weir::cc {

// dctcp_init: with ECN agreed, a fresh alpha and observation window; without
// it, Linux swaps in dctcp_reno and stops marking packets ECT
// (INET_ECN_dontxmit), which needs_ecn() now reports to the engine.
void Dctcp::init(CcState& tp, Time now) {
  (void)now;
  fallback_ = !tp.ecn_ok;
  tp.snd_cwnd_cnt = 0;
  if (fallback_) return;
  alpha_ = kMaxAlpha;  // dctcp_alpha_on_init: react fully until alpha is learnt
  loss_cwnd_ = 0;
  reset(tp);
  plb_ = PlbState{};  // tcp_plb_init
}

void Dctcp::reset(const CcState& tp) {
  next_seq_ = tp.snd_nxt;
  old_delivered_ = tp.rate.delivered();
  old_delivered_ce_ = tp.rate.delivered_ce();
}

// RFC 8257 §3.3: cwnd = cwnd * (1 - alpha/2); alpha is in 1/1024, so
// cwnd * alpha >> 11. Never below 2 packets (Linux).
uint32_t Dctcp::ssthresh(CcState& tp, Time now) {
  (void)now;
  if (fallback_) return reno_ssthresh(tp);
  loss_cwnd_ = tp.snd_cwnd;
  const uint64_t cut = (uint64_t{tp.snd_cwnd} * alpha_) >> 11;
  return std::max(tp.snd_cwnd - static_cast<uint32_t>(cut), 2u);
}

void Dctcp::cong_avoid(CcState& tp, Seq32 ack, uint32_t acked, Time now, Counters& mib) {
  (void)ack, (void)now, (void)mib;
  reno_cong_avoid(tp, acked);  // Linux .cong_avoid = tcp_reno_cong_avoid
}

// dctcp_update_alpha (ops->in_ack_event): once SND.UNA passes the end of the
// observation window (about one RTT), RFC 8257 §3.3 step 3:
// alpha = (1 - g) * alpha + g * F, F the fraction of the window's delivered
// packets that came back ECE. The subtraction never takes a positive alpha
// to zero in one step (min_not_zero), as in Linux.
void Dctcp::in_ack_event(CcState& tp, Time now) {
  if (fallback_ || tp.snd_una < next_seq_) return;
  const uint64_t delivered = tp.rate.delivered() - old_delivered_;
  uint64_t delivered_ce = static_cast<uint32_t>(tp.rate.delivered_ce() - old_delivered_ce_);
  if (delivered > 0) plb_round(tp, delivered, delivered_ce, now);
  uint32_t alpha = alpha_;
  const uint32_t decay = alpha >> kShiftG;
  alpha -= decay != 0 ? decay : alpha;
  if (delivered_ce != 0) {
    delivered_ce <<= (10 - kShiftG);  // g * F in units of 1/1024
    delivered_ce /= std::max<uint64_t>(1, delivered);
    alpha = static_cast<uint32_t>(std::min<uint64_t>(alpha + delivered_ce, kMaxAlpha));
  }
  alpha_ = alpha;
  reset(tp);
}

// dctcp_update_alpha's PLB step: the round's CE share itself (alpha's EWMA
// would make PLB slow to react), in 1/256, then the rehash check.
void Dctcp::plb_round(CcState& tp, uint64_t delivered, uint64_t delivered_ce, Time now) {
  const uint64_t ratio = (delivered_ce << kPlbScaleShift) / delivered;
  plb_update_state(plb_params_, plb_, static_cast<int>(ratio));
  if (plb_check_rehash(plb_params_, plb_, tp.packets_out, now)) tp.plb_rehash = true;
}

uint32_t Dctcp::random_u32() {
  return static_cast<uint32_t>(splitmix64(rng_));  // reproducible runs
}

// dctcp_react_to_loss: a loss halves cwnd like Reno (RFC 8257 §3.5).
void Dctcp::react_to_loss(CcState& tp) {
  loss_cwnd_ = tp.snd_cwnd;
  tp.snd_ssthresh = std::max(tp.snd_cwnd >> 1, 2u);
}

// dctcp_state: entering fast recovery is a loss (the ssthresh hook already
// ran with alpha; Linux overrides it here with the halving).
void Dctcp::set_state(CcState& tp, CaState new_state, Time now) {
  (void)now;
  if (fallback_) return;
  if (new_state == CaState::Recovery && new_state != tp.ca_state) react_to_loss(tp);
}

// dctcp_cwnd_event: an RTO is one loss reaction (CA_EVENT_LOSS), which also
// pauses PLB; the first transmission with nothing in flight (TX_START) is
// PLB's chance to move an idle connection. The CE events of Linux's
// receiver echo are handled by the engine (tcp_ecn.cc).
void Dctcp::cwnd_event(CcState& tp, CaEvent ev, Time now) {
  if (fallback_) return;
  if (ev == CaEvent::Loss) {
    plb_update_state_upon_rto(plb_params_, plb_, now, random_u32());
    react_to_loss(tp);
  } else if (ev == CaEvent::TxStart && plb_check_rehash(plb_params_, plb_, tp.packets_out, now)) {
    tp.plb_rehash = true;
  }
}

// dctcp_cwnd_undo: back to the cwnd before the reduction.
uint32_t Dctcp::undo_cwnd(CcState& tp) {
  if (fallback_) return reno_undo_cwnd(tp);
  return std::max(tp.snd_cwnd, loss_cwnd_);
}

void Dctcp::get_info(TcpInfo& info) const { info.ca_name = std::string(name()); }

TcpDctcpInfo Dctcp::dctcp_info(const CcState& tp) const {
  TcpDctcpInfo d;
  if (fallback_) return d;  // dctcp_get_info: all zero for dctcp_reno
  d.dctcp_enabled = 1;
  d.dctcp_ce_state = tp.ce_state;
  d.dctcp_alpha = alpha_;
  d.dctcp_ab_ecn = static_cast<uint32_t>(tp.mss * static_cast<uint32_t>(tp.rate.delivered_ce() - old_delivered_ce_));
  d.dctcp_ab_tot = static_cast<uint32_t>(tp.mss * (tp.rate.delivered() - old_delivered_));
  return d;
}

}  // namespace weir::cc
