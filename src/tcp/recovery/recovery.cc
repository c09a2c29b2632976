// Linux tcp_fastretrans_alert() and the per-ACK bookkeeping around it.
// Undo paths and state changes are in recovery_undo.cc.
#include "tcp/recovery/recovery.h"

#include <algorithm>

#include "tcp/recovery/newreno.h"

namespace weir::tcp::recovery {

RecoveryMachine::RecoveryMachine(const RecoveryConfig& cfg)
    : cfg_(cfg),
      reord_(static_cast<uint32_t>(std::max(1, cfg.tcp_reordering)),
             static_cast<uint32_t>(std::max(1, cfg.tcp_max_reordering))) {}

bool RecoveryMachine::any_retrans_done(const Scoreboard& sb) {
  // Linux tcp_any_retrans_done().
  return sb.retrans_out() > 0 || (!sb.empty() && sb.at(0).ever_retrans());
}

bool RecoveryMachine::time_to_recover(const Scoreboard& sb) const {
  // Linux tcp_time_to_recover(): loss proven, or (without RACK) the
  // classic duplicate-ACK threshold (RFC 6675 §5).
  if (sb.lost_out() > 0) return true;
  return !rack_enabled() && dupthresh_reached(sb.sacked_out(), reord_.degree());
}

Duration RecoveryMachine::current_reo_wnd(const Scoreboard& sb, Duration min_rtt,
                                          Duration srtt) const {
  ReoWndInput w;
  w.reord_seen = reord_.seen();
  w.ca_state = ca_state_;
  w.sacked_out = sb.sacked_out();
  w.reordering = reord_.degree();
  w.tcp_recovery = cfg_.tcp_recovery;
  w.min_rtt = min_rtt;
  w.srtt = srtt;
  return rack_.reo_wnd(w);
}

RecoveryResult RecoveryMachine::on_ack(const RecoveryAck& in, Scoreboard& sb,
                                       cc::CongestionControl& cc, cc::CcState& tp,
                                       Counters& mib) {
  RecoveryResult out;
  Ctx c{in, sb, cc, tp, mib, out, in.sb.una_advanced, false, in.sb.sacked_packets > 0, 0};
  // Linux FLAG_NOT_DUP = FLAG_DATA | FLAG_WIN_UPDATE | FLAG_ACKED.
  c.not_dup = in.data || in.win_update || in.sb.una_advanced;
  bookkeeping(c);
  if (in.ece) tp.prior_ssthresh = 0;  // ECE: the reduction may not be undone
  // Linux tcp_ack_is_dubious(): a duplicate ACK, a SACK, ECE, a D-SACK, or
  // any state but Open.
  const bool ca_alert = c.data_sacked || in.ece || in.sb.dsack;
  if (c.not_dup && !ca_alert && ca_state_ == CaState::Open) return out;
  if (!c.una_advanced && !c.not_dup && !in.sb.dsack) c.num_dupack = std::max(1u, in.dupack_segs);
  fastretrans_alert(c);
  return out;
}

// What Linux does for every ACK before the state machine: D-SACK evidence,
// reordering, RACK's clock and window, the TLP outcome.
void RecoveryMachine::bookkeeping(Ctx& c) {
  const AckResult& r = c.in.sb;
  bool dsack_for_probe = false;
  if (r.dsack && dsack_seen(c, dsack_for_probe)) {
    dsack_validity(c);
    undo_.on_dsack(r.dsack_range, r.dsack_below_una, r.dsack_retrans_packets, c.in.mss);
    rack_.on_dsack(reord_.seen(), dsack_for_probe);
  }
  if (cfg_.sack && r.reordering_bytes) {
    reord_.on_sack_reordering(r.reordering_bytes, c.in.mss, false, c.mib);
  }
  if (cfg_.sack) rack_.advance(r);
  std::optional<uint64_t> prior_delivered;
  if (r.latest_delivered && r.latest_delivered->rate.valid) {
    prior_delivered = r.latest_delivered->rate.delivered;
  }
  rack_.update_reo_wnd(cfg_.tcp_recovery, prior_delivered, c.in.delivered);
  if (tlp_.outstanding()) {
    const TlpAckOutcome t =
        tlp_.on_ack(c.in.snd_una, c.una_advanced, c.not_dup, c.data_sacked, dsack_for_probe);
    if (t == TlpAckOutcome::kLossRepaired) {
      // RFC 8985 §7.4.2 / Linux tcp_process_tlp_ack(): the probe repaired
      // a loss: reduce once, as for an ECN signal.
      init_cwnd_reduction(c.in.snd_nxt, c.cc, c.tp, c.in.now);
      set_state(CaState::CWR, c.cc, c.tp, c.in.now);
      end_cwnd_reduction(c.cc, c.tp, c.in.now);
      try_keep_open(c.sb, c.in.snd_nxt, c.cc, c.tp, c.in.now);
      c.mib.inc(Counter::TcpExtTCPLossProbeRecovery);
    }
  }
}

// Linux tcp_check_dsack() / tcp_dsack_seen(): counts the D-SACK and judges
// whether it is plausible. True: it may count for undo and RACK.
bool RecoveryMachine::dsack_seen(Ctx& c, bool& for_probe) {
  const AckResult& r = c.in.sb;
  // Below the cumulative ACK, or inside the second block (RFC 2883 §4).
  c.mib.inc(r.dsack_below_una ? Counter::TcpExtTCPDSACKRecv : Counter::TcpExtTCPDSACKOfoRecv);
  const uint32_t len = r.dsack_range.len();
  // A duplicate wider than the largest window the peer ever offered cannot
  // be one: dubious, and not even counted in tcpi_dsack_dups.
  if (len == 0 || len > c.in.max_window) {
    c.mib.inc(Counter::TcpExtTCPDSACKIgnoredDubious);
    return false;
  }
  const uint32_t segs = (c.in.mss && len > c.in.mss) ? (len + c.in.mss - 1) / c.in.mss : 1;
  for_probe = tlp_.dsack_is_for_probe(r.dsack_range, c.in.mss);  // Linux FLAG_DSACK_TLP
  dsack_dups_ += segs;
  c.out.dsack_dups = segs;
  // More duplicates reported than we ever retransmitted: a broken or lying
  // receiver; the D-SACK proves nothing (no undo, no RACK window growth).
  if (dsack_dups_ > total_retrans_) {
    c.mib.inc(Counter::TcpExtTCPDSACKIgnoredDubious);
    for_probe = false;
    return false;
  }
  c.mib.inc(Counter::TcpExtTCPDSACKRecvSegs, segs);
  // "A spurious retransmission is delivered" (Linux state->sack_delivered):
  // the duplicates count in tp->delivered, hence in the rate sample and in
  // what PRR and the congestion controller see as delivered.
  c.out.dsack_delivered = segs;
  return true;
}

// Linux tcp_is_sackblock_valid() for a D-SACK at or below snd.una: only of
// use for undo, and only if it is about this episode (at or above
// undo_marker, or crossing it by less than max_window); otherwise counted
// as ignored.
void RecoveryMachine::dsack_validity(Ctx& c) {
  const AckResult& r = c.in.sb;
  const SeqRange d = r.dsack_range;
  if (!(d.begin < c.in.snd_una)) return;  // in the outstanding window: valid
  if (!undo_.marker()) {
    c.mib.inc(Counter::TcpExtTCPDSACKIgnoredNoUndo);
    return;
  }
  const Seq32 marker = *undo_.marker();
  bool valid = false;
  if (!r.dsack_below_una) {
    valid = false;  // straddles snd.una: ambiguous
  } else if (!(d.begin < marker)) {
    valid = true;
  } else if (d.end > marker) {
    valid = !(d.begin < d.end - c.in.max_window);  // crosses undo_marker
  }
  if (!valid) c.mib.inc(Counter::TcpExtTCPDSACKIgnoredOld);
}

void RecoveryMachine::fastretrans_alert(Ctx& c) {
  if (c.sb.packets_out() == 0 && c.sb.sacked_out() && !cfg_.sack) c.sb.reno_reset();
  // B. Linux tcp_check_sack_reneging(): the new head is SACKed although the
  // ACK moved: the receiver may have dropped SACKed data. Wait a little
  // (max(SRTT/2, 10 ms)) for an RTO instead of retransmitting now.
  if (cfg_.sack && c.una_advanced && !c.sb.empty() && c.sb.at(0).sacked()) {
    c.out.reneging_rto = c.in.now + max(c.in.srtt / 2, Duration::ms(10));
    return;
  }
  if (alert_exit_checks(c)) return;
  bool do_lost = c.num_dupack > 0;
  bool fast_rexmit = false;
  switch (ca_state_) {
    case CaState::Recovery:
      if (!alert_recovery(c, do_lost)) return;
      break;
    case CaState::Loss:
      if (!alert_loss(c)) return;
      [[fallthrough]];
    default:
      if (!alert_default(c, fast_rexmit)) return;
      break;
  }
  if (!rack_enabled() && do_lost && cfg_.sack) {
    c.out.newly_lost += update_scoreboard(c.sb, reord_.degree(), fast_rexmit);
  }
  c.out.rexmit = Rexmit::kLost;
}

// D. State exit when high_seq is acknowledged. True: stop processing.
bool RecoveryMachine::alert_exit_checks(Ctx& c) {
  if (ca_state_ == CaState::Open) {
    undo_.clear_retrans_stamp();
    return false;
  }
  if (c.in.snd_una < high_seq_) return false;
  if (ca_state_ == CaState::CWR) {
    // CWR is held until something above high_seq is ACKed, so that the CWR
    // flag reached the receiver.
    if (!(c.in.snd_una == high_seq_)) {
      end_cwnd_reduction(c.cc, c.tp, c.in.now);
      set_state(CaState::Open, c.cc, c.tp, c.in.now);
    }
  } else if (ca_state_ == CaState::Recovery) {
    if (!cfg_.sack) c.sb.reno_reset();
    if (try_undo_recovery(c)) return true;
    end_cwnd_reduction(c.cc, c.tp, c.in.now);
  }
  return false;
}

// E. in Recovery. False where Linux returns early.
bool RecoveryMachine::alert_recovery(Ctx& c, bool& do_lost) {
  if (!c.una_advanced) {
    if (!cfg_.sack) add_reno_sack(c);
  } else {
    if (try_undo_partial(c)) return false;
    // Linux tcp_force_fast_retransmit(): SACKs far beyond snd.una.
    const auto hs = c.sb.highest_sacked_end();
    do_lost = hs && *hs > c.in.snd_una + reord_.degree() * c.in.mss;
  }
  if (try_undo_dsack(c)) try_to_open(c);
  identify_packet_loss(c);
  if (ca_state_ != CaState::Recovery) {
    // Undone: start a new recovery only if loss is evident.
    if (!time_to_recover(c.sb)) return false;
    enter_recovery(c);
  }
  return true;
}

// True: continue with the Open/Disorder handling (undone, or a
// retransmission was lost).
bool RecoveryMachine::alert_loss(Ctx& c) {
  process_loss(c);
  identify_packet_loss(c);
  return ca_state_ == CaState::Open || c.out.lost_retrans;
}

// E. in Open, Disorder, CWR (and Loss once undone). False: no recovery.
bool RecoveryMachine::alert_default(Ctx& c, bool& fast_rexmit) {
  if (!cfg_.sack) {
    if (c.una_advanced) c.sb.reno_reset();
    add_reno_sack(c);
  }
  if (ca_state_ <= CaState::Disorder) try_undo_dsack(c);
  identify_packet_loss(c);
  if (!time_to_recover(c.sb)) {
    try_to_open(c);
    return false;
  }
  // Linux: "MTU probe failure: don't reduce cwnd" (RFC 4821 §7.6.3); the
  // connection lowers the search and resends the probe at the MSS.
  if (ca_state_ < CaState::CWR && c.in.mtu_probe_at_una) {
    c.out.mtu_probe_lost = true;
    return false;
  }
  enter_recovery(c);
  fast_rexmit = true;
  return true;
}

void RecoveryMachine::add_reno_sack(Ctx& c) {
  for (uint32_t i = 0; i < c.num_dupack; ++i) {
    const auto d = c.sb.reno_add_dupack();
    c.out.reno_delivered += d.delivered;
    if (d.limited) reord_.on_reno_reordering(c.sb.packets_out(), 0, c.mib);
  }
}

// Linux tcp_identify_packet_loss().
void RecoveryMachine::identify_packet_loss(Ctx& c) {
  if (c.sb.empty()) return;
  if (!cfg_.sack) {
    if (newreno_mark_lost(c.sb, ca_state_, reord_.degree(), c.una_advanced)) ++c.out.newly_lost;
    return;
  }
  if (!rack_enabled()) return;
  const uint32_t prior_retrans = c.sb.retrans_out();
  const uint64_t prior_lost_rtx = c.sb.lost_retransmits();
  const RackDetectResult r =
      rack_.mark_lost(c.sb, c.in.now, current_reo_wnd(c.sb, c.in.min_rtt, c.in.srtt), c.in.rto);
  c.out.newly_lost += r.newly_lost;
  c.out.reo_timeout = r.reo_timeout;
  if (c.sb.lost_retransmits() > prior_lost_rtx) {
    c.mib.inc(Counter::TcpExtTCPLostRetransmit, c.sb.lost_retransmits() - prior_lost_rtx);
  }
  if (prior_retrans > c.sb.retrans_out()) c.out.lost_retrans = true;
}

// Linux tcp_process_loss(): an ACK in Loss (after an RTO).
void RecoveryMachine::process_loss(Ctx& c) {
  const bool recovered = !(c.in.snd_una < high_seq_);
  if (c.una_advanced && try_undo_loss(c, false)) return;
  if (frto_.active()) {
    FrtoAck f;
    // Non-SACK: a retransmission among the ACKed packets leaves it unclear
    // which copy arrived (Linux clears FLAG_ORIG_SACK_ACKED).
    // Linux FLAG_ORIG_SACK_ACKED: original data sent before high_seq.
    f.orig_data_delivered = c.in.sb.orig_delivered_low_end &&
                            *c.in.sb.orig_delivered_low_end <= high_seq_ &&
                            (cfg_.sack || !c.in.sb.retrans_data_acked);
    f.data_sacked = c.data_sacked;
    f.num_dupack = c.num_dupack;
    f.snd_una_advanced = c.una_advanced;
    f.recovered = recovered;
    f.snd_nxt = c.in.snd_nxt;
    f.high_seq = high_seq_;
    f.can_send_new_data = c.in.can_send_new_data;
    const FrtoAction a = frto_.on_ack(f, high_seq_);
    if (a == FrtoAction::kSpuriousUndo && try_undo_loss(c, true)) return;
    if (a == FrtoAction::kSendNewData) {
      c.out.rexmit = Rexmit::kNew;
      return;
    }
  }
  if (recovered) {
    // RFC 5682 §3.1 step 2.a / 3.a: everything sent before the RTO is ACKed.
    try_undo_recovery(c);
    return;
  }
  if (!cfg_.sack) {
    if (c.in.snd_nxt > high_seq_ && c.num_dupack) {
      add_reno_sack(c);
    } else if (c.una_advanced) {
      c.sb.reno_reset();
    }
  }
  c.out.rexmit = Rexmit::kLost;
}

void RecoveryMachine::cwnd_reduction(cc::CcState& tp, uint32_t newly_acked_sacked,
                                     uint32_t newly_lost, bool snd_una_advanced,
                                     uint32_t in_flight) {
  tp.snd_cwnd = prr_.cwnd_reduction(tp.snd_cwnd, tp.snd_ssthresh, in_flight, newly_acked_sacked,
                                    newly_lost, snd_una_advanced);
}

void RecoveryMachine::on_retransmit(uint32_t packets, uint32_t tsval) {
  total_retrans_ += packets;
  undo_.on_retransmit(packets, tsval);
  if (in_cwnd_reduction()) prr_.on_sent(packets);
}

}  // namespace weir::tcp::recovery
