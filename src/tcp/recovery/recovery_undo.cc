// RecoveryMachine: state changes, cwnd reductions and their undo, the RTO
// and RACK timer entries (Linux tcp_input.c / tcp_recovery.c).
#include <algorithm>

#include "tcp/recovery/recovery.h"

namespace weir::tcp::recovery {

void RecoveryMachine::set_state(CaState s, cc::CongestionControl& cc, cc::CcState& tp, Time now) {
  // Linux tcp_set_ca_state(): the algorithm hears first.
  cc.set_state(tp, s, now);
  tp.ca_state = s;
  ca_state_ = s;
}

UndoContext RecoveryMachine::undo_ctx(const RecoveryAck& in) const {
  return UndoContext{cfg_.sack, in.snd_una, high_seq_, in.ts_ecr, cfg_.fault_seed003};
}

// Linux tcp_init_cwnd_reduction(): RFC 6937 "on entering recovery".
void RecoveryMachine::init_cwnd_reduction(Seq32 snd_nxt, cc::CongestionControl& cc,
                                          cc::CcState& tp, Time now) {
  high_seq_ = snd_nxt;
  ++reductions_;  // Linux tcp_ecn_queue_cwr
  tlp_.reset();
  tp.snd_cwnd_cnt = 0;
  tp.prior_cwnd = tp.snd_cwnd;
  prr_.start(tp.snd_cwnd);
  tp.snd_ssthresh = cc.ssthresh(tp, now);
}

// Linux tcp_end_cwnd_reduction(): cwnd = ssthresh when leaving CWR or a
// recovery that was not undone.
void RecoveryMachine::end_cwnd_reduction(cc::CongestionControl& cc, cc::CcState& tp, Time now) {
  if (cc.has_cong_control()) return;
  if (tp.snd_ssthresh < cc::kInfiniteSsthresh &&
      (ca_state_ == CaState::CWR || undo_.marker().has_value())) {
    tp.snd_cwnd = tp.snd_ssthresh;
  }
  cc.cwnd_event(tp, cc::CaEvent::CompleteCwr, now);
}

// Linux tcp_enter_recovery(): RFC 6675 §5 step 4 / RFC 6582 §3.2 step 2.
void RecoveryMachine::enter_recovery(Ctx& c) {
  c.tp.prior_ssthresh = 0;
  undo_.init(c.in.snd_una, c.sb.retrans_out(), tlp_.outstanding() && tlp_.retransmitted());
  if (!in_cwnd_reduction()) {
    if (!c.in.ece) c.tp.prior_ssthresh = cc::current_ssthresh(c.tp);
    init_cwnd_reduction(c.in.snd_nxt, c.cc, c.tp, c.in.now);
  }
  set_state(CaState::Recovery, c.cc, c.tp, c.in.now);
  c.mib.inc(cfg_.sack ? Counter::TcpExtTCPSackRecovery : Counter::TcpExtTCPRenoRecovery);
}

// Linux tcp_try_keep_open(): Disorder while anything is SACKed, lost or
// retransmitted, otherwise Open; high_seq marks the change.
void RecoveryMachine::try_keep_open(const Scoreboard& sb, Seq32 snd_nxt, cc::CongestionControl& cc,
                                    cc::CcState& tp, Time now) {
  const bool left_out = sb.sacked_out() + sb.lost_out() > 0;
  const CaState s = (left_out || any_retrans_done(sb)) ? CaState::Disorder : CaState::Open;
  if (ca_state_ != s) {
    set_state(s, cc, tp, now);
    high_seq_ = snd_nxt;
  }
}

void RecoveryMachine::try_to_open(Ctx& c) {
  undo_.clear_retrans_stamp_if(!any_retrans_done(c.sb));
  if (c.in.ece) enter_cwr(c.in.now, c.in.snd_nxt, c.cc, c.tp);
  if (ca_state_ != CaState::CWR) try_keep_open(c.sb, c.in.snd_nxt, c.cc, c.tp, c.in.now);
}

void RecoveryMachine::enter_cwr(Time now, Seq32 snd_nxt, cc::CongestionControl& cc,
                                cc::CcState& tp) {
  // Linux tcp_enter_cwr(): a reduction that can never be undone.
  tp.prior_ssthresh = 0;
  if (ca_state_ < CaState::CWR) {
    undo_.clear_marker();
    init_cwnd_reduction(snd_nxt, cc, tp, now);
    set_state(CaState::CWR, cc, tp, now);
  }
}

// Linux tcp_undo_cwnd_reduction().
void RecoveryMachine::undo_cwnd_reduction(Ctx& c, bool unmark_loss) {
  if (unmark_loss) c.sb.clear_lost();
  if (c.tp.prior_ssthresh) {
    c.tp.snd_cwnd = c.cc.undo_cwnd(c.tp);
    if (c.tp.prior_ssthresh > c.tp.snd_ssthresh) {
      c.tp.snd_ssthresh = c.tp.prior_ssthresh;
      c.out.withdraw_cwr = true;  // Linux tcp_ecn_withdraw_cwr
    }
  }
  undo_.clear_marker();
  rack_.force_advanced();  // Linux: re-examine losses after an undo
  c.out.undone = true;
}

// Linux tcp_try_undo_recovery(): snd.una reached high_seq. True: hold the
// state (non-SACK at high_seq).
bool RecoveryMachine::try_undo_recovery(Ctx& c) {
  const UndoContext u = undo_ctx(c.in);
  if (undo_.may_undo(u)) {
    // Nothing retransmitted, or the originals arrived: a happy end.
    const bool loss = ca_state_ == CaState::Loss;
    undo_cwnd_reduction(c, false);
    c.mib.inc(loss ? Counter::TcpExtTCPLossUndo : Counter::TcpExtTCPFullUndo);
  } else {
    rack_.on_recovery_without_undo();
  }
  if (undo_.non_sack_preventing_reopen(u, any_retrans_done(c.sb))) return true;
  set_state(CaState::Open, c.cc, c.tp, c.in.now);
  is_sack_reneg_ = false;
  return false;
}

// Linux tcp_try_undo_dsack(): every retransmission was D-SACKed.
bool RecoveryMachine::try_undo_dsack(Ctx& c) {
  if (!undo_.dsack_undo_possible()) return false;
  rack_.on_dsack_undo();
  undo_cwnd_reduction(c, false);
  c.mib.inc(Counter::TcpExtTCPDSACKUndo);
  return true;
}

// Linux tcp_try_undo_partial(): a partial ACK in Recovery proved (by
// timestamp) that the hole was filled by a delayed original. True: stop.
bool RecoveryMachine::try_undo_partial(Ctx& c) {
  if (!undo_.marker() || !undo_.packet_delayed(undo_ctx(c.in))) return false;
  // Reordering, measured from the old snd.una to the highest SACK
  // (Linux tcp_check_sack_reordering(prior_snd_una, ts=1)).
  Seq32 fack = c.in.snd_una;
  if (auto hs = c.sb.highest_sacked_end()) fack = *hs;
  if (!cfg_.sack && c.sb.sacked_out()) fack = c.in.snd_nxt;
  reord_.on_sack_reordering(seq_len(c.in.prior_snd_una, fack), c.in.mss, true, c.mib);
  // Retransmissions still out: clock out new data, retransmit no more.
  if (c.sb.retrans_out()) return true;
  undo_.clear_retrans_stamp_if(!any_retrans_done(c.sb));
  undo_cwnd_reduction(c, true);
  c.mib.inc(Counter::TcpExtTCPPartialUndo);
  try_keep_open(c.sb, c.in.snd_nxt, c.cc, c.tp, c.in.now);
  return false;
}

// Linux tcp_try_undo_loss(): the RTO was spurious (timestamps, D-SACKs or
// F-RTO).
bool RecoveryMachine::try_undo_loss(Ctx& c, bool frto_undo) {
  const UndoContext u = undo_ctx(c.in);
  if (!frto_undo && !undo_.may_undo(u)) return false;
  undo_cwnd_reduction(c, true);
  c.mib.inc(Counter::TcpExtTCPLossUndo);
  if (frto_undo) c.mib.inc(Counter::TcpExtTCPSpuriousRTOs);
  c.out.reset_retransmits = true;
  if (undo_.non_sack_preventing_reopen(u, any_retrans_done(c.sb))) return true;
  if (frto_undo || cfg_.sack) {
    set_state(CaState::Open, c.cc, c.tp, c.in.now);
    is_sack_reneg_ = false;
  }
  return true;
}

// Linux tcp_enter_loss() with tcp_timeout_mark_lost().
void RecoveryMachine::on_rto(const RtoInput& in, Scoreboard& sb, cc::CongestionControl& cc,
                             cc::CcState& tp, Counters& mib) {
  const bool new_recovery = ca_state_ < CaState::Recovery;
  // A SACKed head means the receiver reneged: forget every SACK.
  const bool reneged = cfg_.sack && !sb.empty() && sb.at(0).sacked();
  if (reneged) {
    mib.inc(Counter::TcpExtTCPSACKReneging);
    is_sack_reneg_ = true;
  }
  // RACK: packets sent within RACK.rtt are not timed out yet (head excepted).
  const Time keep = rack_enabled() ? in.now - rack_.rtt() : Time::never();
  const uint64_t prior_lost_rtx = sb.lost_retransmits();
  sb.on_rto(reneged, keep);
  if (sb.lost_retransmits() > prior_lost_rtx) {
    mib.inc(Counter::TcpExtTCPLostRetransmit, sb.lost_retransmits() - prior_lost_rtx);
  }
  // Reduce ssthresh once per window (not again for a repeated timeout).
  if (ca_state_ <= CaState::Disorder || !(in.snd_una < high_seq_) ||
      (ca_state_ == CaState::Loss && in.retransmits == 0)) {
    tp.prior_ssthresh = cc::current_ssthresh(tp);
    tp.prior_cwnd = tp.snd_cwnd;
    tp.snd_ssthresh = cc.ssthresh(tp, in.now);
    cc.cwnd_event(tp, cc::CaEvent::Loss, in.now);
    undo_.init(in.snd_una, sb.retrans_out(), tlp_.outstanding() && tlp_.retransmitted());
  }
  tp.snd_cwnd = sb.in_flight() + 1;  // RFC 5681 §3.1: restart from one segment
  tp.snd_cwnd_cnt = 0;
  reord_.on_rto(ca_state_ <= CaState::Disorder, sb.sacked_out(),
                static_cast<uint32_t>(cfg_.tcp_reordering));
  set_state(CaState::Loss, cc, tp, in.now);
  high_seq_ = in.snd_nxt;
  ++reductions_;  // Linux tcp_enter_loss: tcp_ecn_queue_cwr
  tlp_.reset();
  // RFC 5682 §3.1 step 1 (SACK-enhanced F-RTO).
  frto_.on_rto(cfg_.tcp_frto, new_recovery, in.retransmits, in.mtu_probing);
}

// Linux tcp_simple_retransmit(), its state change: "Don't muck with the
// congestion window here" - the units changed, not the data in flight. Once
// per episode: a Loss already under way keeps its high_seq and ssthresh.
void RecoveryMachine::enter_simple_loss(Time now, Seq32 snd_nxt, cc::CongestionControl& cc,
                                        cc::CcState& tp) {
  if (ca_state_ == CaState::Loss) return;
  high_seq_ = snd_nxt;
  tp.snd_ssthresh = cc::current_ssthresh(tp);
  tp.prior_ssthresh = 0;
  undo_.clear_marker();  // tp->undo_marker = 0: no undo can follow
  set_state(CaState::Loss, cc, tp, now);
}

// Linux tcp_rack_reo_timeout().
RecoveryResult RecoveryMachine::on_reo_timeout(Time now, Seq32 snd_una, Seq32 snd_nxt,
                                               Duration rto, Duration min_rtt, Duration srtt,
                                               Scoreboard& sb, cc::CongestionControl& cc,
                                               cc::CcState& tp, Counters& mib) {
  RecoveryResult out;
  const uint32_t prior_in_flight = sb.in_flight();
  const RackDetectResult r = rack_.detect_loss(sb, now, current_reo_wnd(sb, min_rtt, srtt), rto);
  out.newly_lost = r.newly_lost;
  out.reo_timeout = r.reo_timeout;
  if (prior_in_flight != sb.in_flight()) {
    if (ca_state_ != CaState::Recovery) {
      const AckResult no_ack{};  // a timer, not an ACK: the scoreboard did nothing
      RecoveryAck in(no_ack);
      in.now = now;
      in.snd_una = in.prior_snd_una = snd_una;
      in.snd_nxt = snd_nxt;
      Ctx c{in, sb, cc, tp, mib, out, false, false, false, 0};
      enter_recovery(c);
      if (!cc.has_cong_control()) cwnd_reduction(tp, 1, r.newly_lost, false, sb.in_flight());
    }
    out.rexmit = Rexmit::kLost;
  }
  return out;
}

}  // namespace weir::tcp::recovery
