// The ACK field (RFC 9293 §3.10.7.4 "fifth"): SND.UNA, the send window,
// RTT samples, and loss detection by duplicate ACKs (RFC 5681 §3.2 with
// RFC 6675's SACK-based count; RACK-TLP and PRR live in recovery/).
#include <algorithm>
#include <array>

#include "tcp/connection.h"

namespace weir::tcp {
namespace {

// Linux tcp_ack: with data outstanding (the no_queue path confirms
// nothing), an ACK that made forward progress (FLAG_FORWARD_PROGRESS: SND.UNA
// advanced or new data SACKed) or a pure duplicate (!FLAG_NOT_DUP: no data,
// no window update, nothing acked) shows the peer hears us: sk_dst_confirm.
// The confirmation rides on the next packet out (Netif::confirm_neighbor),
// RFC 4861 §7.3.1's upper-layer hint, so a busy connection's next hop is
// not probed every reachable time.
bool confirms_neighbor(bool had_packets_out, bool forward_progress, bool not_dup) {
  return had_packets_out && (forward_progress || !not_dup);
}

}  // namespace

using namespace wire::tcp_flag;

// Linux tcp_may_update_window: a newer segment (by SEG.SEQ, then SEG.ACK)
// may set the window; RFC 9293's SND.WL1/SND.WL2 test in Linux's form.
void Connection::update_send_window(const InSegment& seg, Seq32 ack) {
  uint32_t nwin = uint32_t{seg.h.window} << snd_.wscale;
  const bool may = ack > snd_.una || seg.h.seq > snd_.wl1 ||
                   (seg.h.seq == snd_.wl1 && (nwin > snd_.wnd || nwin == 0));
  if (!may) return;
  snd_.wl1 = seg.h.seq;
  snd_.wl2 = ack;
  if (nwin != snd_.wnd) {
    snd_.wnd = nwin;
    if (nwin > snd_.max_wnd) {
      snd_.max_wnd = nwin;
      update_mss(pmtu_);  // Linux tcp_sync_mss: MSS bounded by half the largest window
    }
  }
}

void Connection::rtt_from_ack(Time now, const InSegment& seg, const AckResult& r) {
  std::optional<Duration> sample = r.rtt_oldest;
  // RFC 7323 §4.1: with timestamps every ACK of new data gives a sample,
  // also for retransmitted data (the echo disambiguates); Linux prefers the
  // scoreboard's Karn-safe sample and falls back to TSecr.
  if (!sample && r.una_advanced && ts_ok_ && seg.h.options.ts && seg.h.options.ts->ecr != 0) {
    const uint32_t now_ms = static_cast<uint32_t>(now.ms()) + ts_offset_;
    const int32_t ms = static_cast<int32_t>(now_ms - seg.h.options.ts->ecr);
    if (ms >= 0) sample = Duration::ms(std::max(ms, 1) );
  }
  if (!sample) return;
  rtt_.sample(*sample, snd_.una, snd_.nxt, now);
  backoff_ = 0;  // RFC 6298 (5.7): a fresh sample replaces the backed-off RTO
  ccs_.srtt = rtt_.srtt();
  ccs_.min_rtt = rtt_.min_rtt();
}

// Loss detection and recovery for one ACK (Linux tcp_fastretrans_alert via
// the RecoveryMachine: RACK-TLP, RFC 6675 dupthresh, NewReno, F-RTO, undo).
recovery::RecoveryResult Connection::run_recovery(Time now, const InSegment& seg, const AckResult& r,
                                                  Seq32 prior_una, bool win_update) {
  recovery::RecoveryAck ra(r);
  ra.now = now;
  ra.prior_snd_una = prior_una;
  ra.snd_una = snd_.una;
  ra.snd_nxt = snd_.nxt;
  ra.data = !seg.payload.empty();
  ra.win_update = win_update;
  ra.ece = ecn_echo(seg.h);
  if (ts_ok_ && seg.h.options.ts && seg.h.options.ts->ecr != 0) ra.ts_ecr = seg.h.options.ts->ecr;
  ra.mss = mss_cache_;
  ra.min_rtt = rtt_.min_rtt();
  ra.srtt = rtt_.srtt();
  ra.rto = rtt_.rto();
  ra.delivered = delivered_;
  ra.can_send_new_data = seq_len(snd_.nxt, write_seq_) > 0 && usable_window() > 0;
  ra.max_window = snd_.max_wnd;
  ra.mtu_probe_at_una = mtup_.lost_at(snd_.una);
  const uint32_t prior_reductions = rec_.reductions();
  recovery::RecoveryResult out = rec_.on_ack(ra, sb_, *cc_, ccs_, env_.counters());
  // Linux tcp_dsack_seen: tp->dsack_dups counts D-SACKed segments, and a
  // plausible D-SACK's segments were delivered (state->sack_delivered).
  dsack_dups_ += out.dsack_dups;
  delivered_ += out.dsack_delivered;
  ecn_after_recovery(prior_reductions, out.withdraw_cwr);
  if (rec_.ca_state() != ca_state_) {
    ca_state_ = rec_.ca_state();
    trace_event(now, TraceEvent::kCaState, static_cast<uint64_t>(ca_state_));
  }
  if (out.undone) trace_event(now, TraceEvent::kUndo, ccs_.snd_cwnd);
  if (out.reset_retransmits) retransmits_ = 0;
  if (out.mtu_probe_lost) mtu_probe_failed(now);
  return out;
}

// Linux tcp_cong_control: PRR while reducing, else the algorithm's growth.
void Connection::congestion_step(Time now, Seq32 ack, const AckResult& r,
                                 const recovery::RecoveryResult& out, Seq32 prior_una,
                                 uint32_t prior_in_flight, bool ece) {
  Counters& c = env_.counters();
  cc::RateSample rs;
  // Linux tcp_count_delivered / tcp_rate_skb_delivered / tcp_rate_gen: the
  // delivery-rate sample of this ACK, from the most recently sent packet it
  // delivered (the scoreboard picks it).
  // (the scoreboard's part was counted before recovery, in process_ack;
  // recovery adds a non-SACK peer's dupacks and D-SACKed packets)
  const uint32_t newly_delivered = r.delivered_packets + out.reno_delivered + out.dsack_delivered;
  ccs_.rate.count_delivered(out.reno_delivered + out.dsack_delivered, ece);
  // Linux tcp_newly_delivered.
  c.inc(Counter::TcpExtTCPDelivered, newly_delivered);
  if (ece) c.inc(Counter::TcpExtTCPDeliveredCE, newly_delivered);
  if (r.latest_delivered) {
    cc::TxRateSnapshot snap = r.latest_delivered->rate;
    ccs_.rate.on_packet_delivered(snap, r.latest_delivered->xmit_time, r.latest_delivered->end_seq,
                                  r.latest_delivered->retransmitted, false, rs);
  }
  ccs_.rate.generate(rs, newly_delivered, out.newly_lost, false, rtt_.min_rtt(), now);
  rs.acked_sacked = newly_delivered;
  rs.losses = out.newly_lost;
  rs.prior_in_flight = prior_in_flight;
  if (r.rtt_newest) rs.rtt = *r.rtt_newest;
  const bool una_advanced = ack > prior_una;
  ccs_.lost += out.newly_lost;  // tp->lost (BBR's long-term sampling reads it)
  // The three sysctls read per ACK, looked up once (TcpEnv::cfg).
  const StackConfig& cfg = env_.cfg();
  cc::AckEvent ae;
  ae.ack = ack;
  ae.may_raise_cwnd = cc::may_raise_cwnd(rec_.reordering(), static_cast<uint32_t>(cfg.tcp_reordering),
                                         una_advanced, una_advanced || r.sacked_packets > 0);
  const uint32_t in_flight = sb_.in_flight();
  cc::cong_control(*cc_, ccs_, ae, rs, now, c,
                   [&] { rec_.cwnd_reduction(ccs_, rs.acked_sacked, out.newly_lost, una_advanced, in_flight); },
                   cfg.tcp_pacing_ss_ratio, cfg.tcp_pacing_ca_ratio);
}

void Connection::apply_recovery_timers(Time now, const recovery::RecoveryResult& out) {
  if (!out.reo_timeout.is_never()) {
    // RFC 8985 §6.2 step 6: RACK's reordering timer takes the transmit slot.
    timers_.retransmit_mode = RetransmitMode::kReorder;
    timers_.arm(TimerKind::kRetransmit, out.reo_timeout);
  } else if (!out.reneging_rto.is_never()) {
    timers_.retransmit_mode = RetransmitMode::kRto;
    timers_.arm(TimerKind::kRetransmit, out.reneging_rto);
  }
  (void)now;
}

// RFC 5961 §5.2: an ACK is acceptable within [SND.UNA - MAX.SND.WND, SND.NXT]
// and anything else is dropped with a challenge ACK. Linux (tcp_ack) bounds
// the old side by min(max_window, bytes_acked) and challenges there in every
// state; for an ACK above SND.NXT it deviates from §5.2: ESTABLISHED
// (tcp_rcv_established) discards it silently, the other synchronized states
// (tcp_rcv_state_process) challenge it. Weir follows Linux.
bool Connection::ack_acceptable(Time now, Seq32 ack) {
  const auto max_window = static_cast<uint32_t>(std::min<uint64_t>(snd_.max_wnd, bytes_acked_));
  if (ack < snd_.una && ack < snd_.una - max_window) {
    send_challenge_ack(now, false);  // SKB_DROP_REASON_TCP_TOO_OLD_ACK
    return false;
  }
  if (ack > snd_.nxt) {
    // SKB_DROP_REASON_TCP_ACK_UNSENT_DATA
    if (state_ != State::kEstablished) send_challenge_ack(now, false);
    return false;
  }
  return true;
}

// RFC 9293 §3.10.7.4 "fifth, check the ACK field" (ESTABLISHED and later).
// Returns false when the segment must be dropped.
bool Connection::process_ack(Time now, const InSegment& seg) {
  const Seq32 ack = seg.h.ack;
  Counters& c = env_.counters();
  if (!ack_acceptable(now, ack)) return false;
  last_ack_rcv_ = now;
  probes_out_ = 0;  // Linux tcp_ack: any acceptable ACK answers the probes
  const Seq32 prior_una = snd_.una;
  const uint32_t prior_in_flight = sb_.in_flight();
  std::array<SeqRange, wire::kMaxSackBlocks> blocks{};
  size_t nblocks = 0;
  if (sack_ok_)
    for (size_t i = 0; i < seg.h.options.sack_count; ++i) blocks[nblocks++] = seg.h.options.sack[i];
  if (ack < prior_una) {
    // An old ACK (Linux tcp_ack old_ack): its SACK blocks still count and
    // go through loss recovery (tcp_fastretrans_alert); the cumulative ACK,
    // the window and congestion control are left alone.
    if (nblocks && !sb_.empty()) {
      sb_.set_rack_min_rtt(rtt_.min_rtt());
      const AckResult r = sb_.on_ack(prior_una, std::span(blocks.data(), nblocks), now);
      delivered_ += r.delivered_packets;
      apply_recovery_timers(now, run_recovery(now, seg, r, prior_una, false));
    }
    return true;
  }
  const bool had_packets_out = sb_.packets_out() > 0;
  const uint32_t wnd_before = snd_.wnd;
  const Seq32 wl1_before = snd_.wl1;
  update_send_window(seg, ack);
  const bool win_update = snd_.wnd != wnd_before || snd_.wl1 != wl1_before;
  // Linux tcp_ack_update_window: a changed window with data waiting to be
  // sent checks for an idle restart (tcp_slow_start_after_idle_check, RFC
  // 5681 §4.1) before anything goes out; packets_out is still pre-ACK.
  if (snd_.wnd != wnd_before && seq_len(snd_.nxt, write_seq_) > 0)
    cc::slow_start_after_idle_check(*cc_, ccs_, rtt_.rto(), init_cwnd_,
                                    env_.cfg().tcp_slow_start_after_idle != 0, now);
  const Seq32 data_ack = seq_min(ack, sb_.high_data());
  sb_.set_rack_min_rtt(rtt_.min_rtt());  // Linux tcp_rack_advance: min_rtt before this ACK
  // Initialised from the call, not assigned after a default construction:
  // one copy of the result less on every ACK.
  const std::span<const SeqRange> sacks(blocks.data(), nblocks);
  const AckResult r =
      (!sb_.empty() || nblocks) ? sb_.on_ack(seq_max(data_ack, snd_.una), sacks, now) : AckResult{};
  // Seed 002's bug, the lab's contrast only (Scoreboard::leak_phantoms):
  // outside recovery, SACKed packets the cumulative ACK frees stay counted.
  const bool seed002 = env_.cfg().fault_seed002_sacked_acked_leak;
  if (seed002 && ca_state_ != CaState::Recovery && ca_state_ != CaState::Loss)
    sb_.leak_phantoms(r.acked_sacked_packets);
  if (ack > prior_una) {
    const uint32_t acked_data = seq_len(prior_una, seq_min(ack, write_seq_));
    if (!zc_pending_.empty() || !tx_stamps_.empty()) errq_on_ack(now, prior_una, ack);
    sndq_.consume(acked_data);
    bytes_acked_ += seq_len(prior_una, ack);
    snd_.una = ack;
    urg_acked();
    retransmits_ = 0;
    retrans_stamp_ = Time::never();
    events_ |= conn_event::kReadiness;
    // Linux tcp_clean_rtx_queue: the probe is acknowledged (RFC 4821 §7.6.2).
    if (mtup_.acked_by(snd_.una)) mtu_probe_success(now);
  }
  if (confirms_neighbor(had_packets_out, ack > prior_una || r.sacked_packets > 0,
                        !seg.payload.empty() || win_update || ack > prior_una))
    dst_pending_confirm_ = true;
  delivered_ += r.delivered_packets;
  ccs_.snd_una = snd_.una;
  ccs_.snd_nxt = snd_.nxt;
  ccs_.packets_out = sb_.packets_out();
  ccs_.packets_in_flight = sb_.in_flight();
  rtt_from_ack(now, seg, r);
  if (r.acked_packets > 0 || r.rtt_newest) {
    cc::AckSample s;
    s.pkts_acked = r.acked_packets;
    if (r.rtt_newest) s.rtt = *r.rtt_newest;
    s.in_flight = prior_in_flight;
    cc_->pkts_acked(ccs_, s, now, c);
  }
  // Linux tcp_count_delivered in tcp_clean_rtx_queue / tcp_sacktag, then
  // tcp_in_ack_event before tcp_fastretrans_alert: the algorithm (DCTCP)
  // sees this ACK's deliveries before recovery asks it for ssthresh.
  const bool ece = ecn_echo(seg.h);
  ccs_.rate.count_delivered(r.delivered_packets, ece);
  cc_->in_ack_event(ccs_, now);
  take_plb_rehash();
  const recovery::RecoveryResult out = run_recovery(now, seg, r, prior_una, win_update);
  // gVisor recounted Outstanding on entering recovery and on an empty queue.
  if (seed002 && (ca_state_ == CaState::Recovery || sb_.packets_out() == 0)) sb_.clear_phantoms();
  congestion_step(now, ack, r, out, prior_una, prior_in_flight, ece);
  if (ccs_.slow_start_exit_reason != 0) {
    // cc.h contract: report the end of slow start once, then clear it. The
    // cwnd is the one at the exit (a loss exit has reduced it since).
    TcpInfo info;
    cc_->get_info(info);
    const uint32_t cwnd = info.hystart_exit_cwnd ? info.hystart_exit_cwnd : ccs_.snd_cwnd;
    trace_event(now, TraceEvent::kHystartExit, cwnd, ccs_.slow_start_exit_reason);
    ccs_.slow_start_exit_reason = 0;
  }
  if (ack > prior_una) rearm_rto_after_ack(now);
  apply_recovery_timers(now, out);
  if (timers_.armed(TimerKind::kRetransmit) && timers_.retransmit_mode == RetransmitMode::kProbe0 &&
      usable_window() > 0) {
    // Linux tcp_ack_probe: the window opened; push() sends what it can.
    timers_.cancel(TimerKind::kRetransmit);
    backoff_ = 0;
    probes_tstamp_ = Time::never();
  }
  ack_fin_state(now, seg);
  trace_event(now, TraceEvent::kAck, ack.raw(), snd_.wnd);
  return state_ != State::kClosed;
}

// Our FIN acknowledged: FIN-WAIT-1 -> FIN-WAIT-2, CLOSING -> TIME-WAIT,
// LAST-ACK -> CLOSED (RFC 9293 §3.10.7.4 "fifth", per state).
void Connection::ack_fin_state(Time now, const InSegment& seg) {
  if (!fin_queued_ || snd_.una != write_seq_ + 1) return;
  switch (state_) {
    case State::kFinWait1:
      set_state(now, State::kFinWait2);
      timers_.cancel(TimerKind::kRetransmit);
      if (orphan_) orphan_fin_wait2(now, &seg);
      break;
    case State::kClosing: enter_time_wait(now); break;
    case State::kLastAck: done(now, Errc::kOk); break;
    default: break;
  }
}

}  // namespace weir::tcp
