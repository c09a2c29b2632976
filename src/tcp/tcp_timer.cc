// Timer expiry (Linux tcp_timer.c): retransmission (RFC 6298 §5), zero-window
// probes (RFC 9293 §3.8.6.1), delayed ACK, keepalive (RFC 1122 §4.2.3.6),
// FIN-WAIT-2 and TIME-WAIT (RFC 9293 §3.10.8).
#include <algorithm>
#include <bit>

#include "tcp/connection.h"

namespace weir::tcp {

using namespace wire::tcp_flag;

void Connection::on_timers(Time now) {
  // Linux tcp_pace_kick: the paced packet's departure time has come.
  if (pacer_.fire(now)) push(now, false);
  for (int guard = 0; guard < 16; ++guard) {
    const TimerKind k = timers_.due(now);
    if (k == TimerKind::kCount) break;
    timers_.cancel(k);
    switch (k) {
      case TimerKind::kRetransmit: on_retransmit_timer(now); break;
      case TimerKind::kDelAck: on_delack(now); break;
      case TimerKind::kKeepalive: on_keepalive(now); break;
      case TimerKind::kTimeWait: end_time_wait(now); break;
      case TimerKind::kCount: break;
    }
    if (state_ == State::kClosed) break;
  }
  events_ |= conn_event::kReadiness;
}

void Connection::arm_rto(Time now) {
  timers_.retransmit_mode = RetransmitMode::kRto;
  Duration rto = rtt_.backed_off_rto(backoff_);
  if (state_ == State::kSynSent || state_ == State::kSynReceived) {
    // RFC 6298 (2.1) / Linux TCP_TIMEOUT_INIT, doubled per retry up to rto_max.
    rto = env_.cfg().rto_initial;
    for (int i = 0; i < backoff_ && rto < rtt_.rto_max(); ++i) rto = rto * 2;
    rto = std::min(rto, rtt_.rto_max());
  }
  // Linux tcp_clamp_rto_to_user_timeout: never sleep past TCP_USER_TIMEOUT.
  if (opts_.user_timeout_ms && !retrans_stamp_.is_never() && synchronized()) {
    const Duration left = Duration::ms(opts_.user_timeout_ms) - (now - retrans_stamp_);
    rto = std::max(std::min(rto, left), Duration::ms(1));
  }
  timers_.arm(TimerKind::kRetransmit, now + rto);
}

// Our FIN went out on its own and is not acknowledged yet: Linux keeps it
// as an skb of its own in the retransmission queue.
bool Connection::lone_fin_in_flight() const {
  return fin_queued_ && fin_alone_ && snd_max_ == write_seq_ + 1 && snd_.una != snd_max_ &&
         sb_.packets_out() == 0;
}

// RFC 6298 (5.2)/(5.3): all data acknowledged stops the timer; new data
// acknowledged restarts it (or a loss probe, RFC 8985 §7.2).
void Connection::rearm_rto_after_ack(Time now) {
  const bool fin_out = fin_queued_ && snd_max_ == write_seq_ + 1 && snd_.una != snd_max_;
  if (sb_.packets_out() == 0 && !fin_out) {
    if (timers_.retransmit_mode != RetransmitMode::kProbe0) timers_.cancel(TimerKind::kRetransmit);
    return;
  }
  set_xmit_timer(now, false);
}

// Linux tcp_set_xmit_timer / tcp_schedule_loss_probe: a tail loss probe
// (RFC 8985 §7.2) if allowed, never later than the RTO, else the RTO.
void Connection::set_xmit_timer(Time now, bool after_send) {
  // Linux tcp_rearm_rto and tcp_schedule_loss_probe: while a Fast Open
  // child's SYN-ACK is unacknowledged (tp->fastopen_rsk) the timer is the
  // SYN-ACK's (tcp_fastopen_synack_timer); data sent meanwhile neither
  // moves it nor gets a loss probe.
  if (fastopen_pending()) {
    if (!timers_.armed(TimerKind::kRetransmit)) arm_rto(now);
    return;
  }
  // A FIN sent on its own is a packet in flight (Linux tcp_send_fin queues
  // it as an skb of its own and counts it in packets_out), so it can be
  // probed like data (gtests user_timeout/user_timeout.pkt).
  const uint32_t packets_out = sb_.packets_out() + (lone_fin_in_flight() ? 1 : 0);
  if (packets_out == 0) {
    if (!timers_.armed(TimerKind::kRetransmit)) arm_rto(now);
    return;
  }
  Duration rto_left = rtt_.backed_off_rto(backoff_);
  if (after_send && timers_.armed(TimerKind::kRetransmit) && timers_.retransmit_mode == RetransmitMode::kRto)
    rto_left = timers_.deadline(TimerKind::kRetransmit) - now;
  std::optional<Duration> srtt;
  if (rtt_.has_sample()) srtt = rtt_.srtt();
  const auto pto = rec_.loss_probe_timeout(packets_out, srtt, rtt_.rto_min(), rto_left);
  if (pto && backoff_ == 0) {
    timers_.retransmit_mode = RetransmitMode::kLossProbe;
    timers_.arm(TimerKind::kRetransmit, now + *pto);
    return;
  }
  if (after_send && timers_.armed(TimerKind::kRetransmit)) return;
  arm_rto(now);
}

// RFC 8985 §7.3 / Linux tcp_send_loss_probe: new data if the window allows,
// else the last packet again; one probe outstanding at a time.
void Connection::on_loss_probe(Time now) {
  if (sb_.packets_out() == 0 && !lone_fin_in_flight()) return;
  if (rec_.tlp().outstanding()) {
    arm_rto(now);
    return;
  }
  const uint32_t unsent = seq_len(snd_.nxt, write_seq_);
  const uint32_t mss = current_mss();  // tcp_send_loss_probe
  const uint32_t len = std::min(unsent, mss);
  bool sent = false;
  bool retrans = false;
  if (len > 0 && len <= usable_window()) {
    sent = send_one(now, snd_.nxt, len, fin_queued_ && snd_.nxt + len == write_seq_, false);
  } else {
    // Linux tcp_send_loss_probe: the last skb again, cut to one MSS from its
    // tail; a FIN that went out on its own is that last skb (tcp_send_fin).
    const bool fin_out = fin_queued_ && snd_max_ == write_seq_ + 1;
    if (fin_out && fin_alone_) {
      sent = send_one(now, write_seq_, 0, true, true, true);
      retrans = true;
    } else if (!sb_.empty()) {
      const ScoreboardEntry& last = sb_.at(sb_.size() - 1);
      const uint32_t plen = std::min(last.seq.len(), mss);
      const Seq32 from = last.seq.end - plen;
      if (sb_.find(from) && sb_.at(*sb_.find(from)).seq.begin == from) {
        sent = send_one(now, from, plen, fin_out && last.seq.end == write_seq_, true, true);
        retrans = true;
      }
    }
  }
  if (sent) {
    rec_.on_probe_sent(snd_.nxt, retrans);
    env_.counters().inc(Counter::TcpExtTCPLossProbes);
  }
  // Linux tcp_send_loss_probe -> tcp_rearm_rto: once a probe went out
  // (icsk_pending cleared) the RTO runs in full from now; when none could be
  // sent it counts from the head's latest transmission (tcp_rto_delta_us).
  if (sent) {
    arm_rto(now);
    return;
  }
  timers_.retransmit_mode = RetransmitMode::kRto;
  const Time head_rto = sb_.empty() ? now + rtt_.rto() : sb_.at(0).xmit_time + rtt_.backed_off_rto(backoff_);
  timers_.arm(TimerKind::kRetransmit, max(head_rto, now + Duration::us(1)));
}

// RFC 8985 §6.3 / Linux tcp_rack_reo_timeout.
void Connection::on_reorder_timer(Time now) {
  const uint32_t prior_reductions = rec_.reductions();
  const recovery::RecoveryResult out =
      rec_.on_reo_timeout(now, snd_.una, snd_.nxt, rtt_.rto(), rtt_.min_rtt(), rtt_.srtt(), sb_, *cc_, ccs_,
                          env_.counters());
  ecn_after_recovery(prior_reductions, out.withdraw_cwr);
  ca_state_ = rec_.ca_state();
  push(now, false);
  if (!out.reo_timeout.is_never()) {
    apply_recovery_timers(now, out);
  } else if (!timers_.armed(TimerKind::kRetransmit) && sb_.packets_out() > 0) {
    arm_rto(now);
  }
}

void Connection::arm_persist(Time now, std::optional<Duration> when) {
  timers_.retransmit_mode = RetransmitMode::kProbe0;
  // Linux tcp_probe0_when: max(RTO, 200 ms) doubled per probe, at most rto_max.
  Duration base = std::max(rtt_.rto(), rtt_.rto_min());
  Duration d = base;
  for (int i = 0; i < backoff_ && d < rtt_.rto_max(); ++i) d = d * 2;
  d = std::min(d, rtt_.rto_max());
  if (when) d = *when;
  // Linux tcp_clamp_probe0_to_user_timeout: wake when TCP_USER_TIMEOUT runs
  // out (at least TCP_TIMEOUT_MIN, 2 jiffies ~ 2 ms, later).
  if (opts_.user_timeout_ms && !probes_tstamp_.is_never()) {
    const Duration left = Duration::ms(opts_.user_timeout_ms) - (now - probes_tstamp_);
    d = std::min(d, std::max(left, Duration::ms(2)));
  }
  timers_.arm(TimerKind::kRetransmit, now + d);
}

void Connection::arm_delack() {
  timers_.arm(TimerKind::kDelAck, rcv_.delack_deadline());
}

Duration Connection::keepalive_idle() const {
  return Duration::s(opts_.keepidle_s ? opts_.keepidle_s : env_.cfg().tcp_keepalive_time_s);
}
Duration Connection::keepalive_intvl() const {
  return Duration::s(opts_.keepintvl_s ? opts_.keepintvl_s : env_.cfg().tcp_keepalive_intvl_s);
}
int Connection::keepalive_probes() const {
  return opts_.keepcnt ? opts_.keepcnt : env_.cfg().tcp_keepalive_probes;
}

void Connection::arm_keepalive(Time now) {
  if (!opts_.keepalive || !synchronized() || state_ == State::kTimeWait) return;
  timers_.arm(TimerKind::kKeepalive, now + keepalive_idle());
}

// Linux tcp_model_timeout/retransmits_timed_out: `limit` retries of a
// backed-off RTO starting at 200 ms, as a span of time since the first
// retransmission; TCP_USER_TIMEOUT replaces it when set.
bool Connection::retries_exhausted(Time now, int limit, Duration user_timeout) const {
  if (retransmits_ == 0 || retrans_stamp_.is_never()) return false;
  Duration timeout = user_timeout;
  if (timeout == Duration::zero()) {
    const int64_t base = rtt_.rto_min().ns();
    const int thresh = std::bit_width(static_cast<uint64_t>(rtt_.rto_max().ns() / base)) - 1;
    if (limit <= thresh)
      timeout = Duration::ns(((int64_t{2} << limit) - 1) * base);
    else
      timeout = Duration::ns(((int64_t{2} << thresh) - 1) * base) + rtt_.rto_max() * (limit - thresh);
  }
  return now - retrans_stamp_ >= timeout;
}

void Connection::on_retransmit_timer(Time now) {
  switch (timers_.retransmit_mode) {
    case RetransmitMode::kProbe0: on_probe0(now); break;
    case RetransmitMode::kLossProbe: on_loss_probe(now); break;
    case RetransmitMode::kReorder: on_reorder_timer(now); break;
    default:
      if (state_ == State::kSynSent || state_ == State::kSynReceived) on_syn_rto(now);
      else on_rto(now);
      break;
  }
}

// SYN / SYN-ACK retransmission. Every expiry counts in TcpExtTCPTimeouts,
// the last one too: Linux tcp_retransmit_timer counts before
// tcp_write_timeout, and a request's timer calls tcp_syn_ack_timeout.
// The limit is TCP_SYNCNT (icsk_syn_retries) when set, inherited by a
// listener's child as reqsk_timer_handler takes the listener's, else
// tcp_syn_retries (6) for SYN-SENT, tcp_synack_retries (5) for a child.
void Connection::on_syn_rto(Time now) {
  Counters& c = env_.counters();
  c.inc(Counter::TcpExtTCPTimeouts);
  if (fastopen_pending()) {
    on_fastopen_synack_rto(now);
    return;
  }
  const StackConfig& cfg = env_.cfg();
  const int limit = opts_.syncnt ? opts_.syncnt : (listener_ ? cfg.tcp_synack_retries : cfg.tcp_syn_retries);
  bool expired = retransmits_ >= limit;
  const bool resend = !(listener_ && opts_.defer_accept) || req_timeout_resends(limit, expired);
  if (!expired && !resend) {
    // Linux reqsk_timer_handler: a deferred request waits for data without
    // resending; its timer still backs off (reqsk_timeout).
    ++backoff_;
    arm_rto(now);
    return;
  }
  // A child's SYN-ACK timer is a request's (reqsk_timer_handler), not
  // tcp_write_timeout: no black-hole check there.
  if (!listener_) fastopen_detect_blackhole(now, expired);
  if (expired) {
    // A child dies as Linux drops a request (inet_csk_reqsk_queue_drop):
    // no counter. SYN-SENT gives up through tcp_write_err: tcp_done
    // (TcpAttemptFails) and TcpExtTCPAbortOnTimeout.
    if (!listener_) {
      c.inc(Counter::TcpAttemptFails);
      c.inc(Counter::TcpExtTCPAbortOnTimeout);
    }
    done(now, soft_error_ != Errc::kOk ? soft_error_ : Errc::kTimedOut);
    return;
  }
  // A new path for the retransmission (tcp_txhash.cc): SYN-SENT through
  // tcp_write_timeout, a child's SYN-ACK through tcp_rtx_synack.
  if (listener_) synack_rehash();
  else timeout_rehash();
  retransmit_syn(now);
}

// Linux tcp_check_req: while TCP_DEFER_ACCEPT lasts (fewer SYN-ACK
// timeouts than it allows), the handshake's bare ACK - no data, no FIN - is
// dropped and remembered (inet_rsk(req)->acked); the child waits in
// SYN-RECEIVED for data, which completes it as usual.
bool Connection::defer_bare_ack(const InSegment& seg) {
  if (!listener_ || fastopen_child_ || req_timeouts_ >= opts_.defer_accept) return false;
  if (!seg.payload.empty() || seg.h.has(FIN)) return false;
  req_acked_ = true;
  env_.counters().inc(Counter::TcpExtTCPDeferAcceptDrop);
  return true;
}

// Linux syn_ack_recalc() for a deferring request, at one expiry of its
// timer: it expires only past the SYN-ACK retries and, once acked, past
// the deferral too; an acked request resends only in the last deferred
// period, "to give last chance for data or ACK to create established
// socket". Counts the expiry (req->num_timeout) and returns `resend`.
bool Connection::req_timeout_resends(int limit, bool& expire) {
  const uint8_t n = req_timeouts_;
  if (req_timeouts_ < 255) ++req_timeouts_;
  expire = n >= limit && (!req_acked_ || n >= opts_.defer_accept);
  return !req_acked_ || n + 1 >= opts_.defer_accept;
}

// One SYN or SYN-ACK retransmission and the doubled timer (RFC 6298 (5.5)).
void Connection::retransmit_syn(Time now) {
  ++retransmits_;
  ++total_retrans_;
  env_.counters().inc(Counter::TcpExtTCPSynRetrans);
  if (retransmit_head(now) == XmitResult::kDropped) {
    // Linux gives up on a SYN by time (retransmits_timed_out over
    // tcp_syn_retries' backed-off span), weir by count: a failed attempt is
    // not counted, so a dropping device cannot exhaust the retries in 3 s.
    --retransmits_;
    rearm_after_local_drop(now);
    return;
  }
  ++backoff_;
  arm_rto(now);
}

// Linux tcp_retransmit_timer: tcp_retransmit_skb() > 0 means local
// congestion (the device dropped the retransmission): no backoff, and the
// timer retries in TCP_RESOURCE_PROBE_INTERVAL (HZ/2), "let senders fight
// for local resources conservatively". icsk_retransmits still counted the
// attempt (tcp_update_rto_stats, Linux >= 6.3), so TCP_USER_TIMEOUT and
// tcp_retries2 run on.
void Connection::rearm_after_local_drop(Time now) {
  timers_.retransmit_mode = RetransmitMode::kRto;
  timers_.arm(TimerKind::kRetransmit, now + kResourceProbeInterval);
}

// RFC 6298 (5.4)-(5.6) and Linux tcp_retransmit_timer/tcp_enter_loss.
void Connection::on_rto(Time now) {
  const bool fin_out = fin_queued_ && snd_max_ == write_seq_ + 1 && snd_.una != snd_max_;
  if (sb_.packets_out() == 0 && !fin_out) return;
  Counters& c = env_.counters();
  const int limit = orphan_ ? (env_.cfg().tcp_orphan_retries ? env_.cfg().tcp_orphan_retries : 8)
                            : env_.cfg().tcp_retries2;
  // Linux tcp_retransmit_timer counts the expiry before tcp_write_timeout
  // decides to give up, so the last one counts too.
  c.inc(Counter::TcpExtTCPTimeouts);
  // Linux tcp_write_timeout: past tcp_retries1, black-hole detection
  // (tcp_mtu_probing; RFC 4821 §7.8), before the give-up test.
  if (retries_exhausted(now, env_.cfg().tcp_retries1, Duration::zero())) mtu_blackhole(now);
  const bool expired = retries_exhausted(now, limit, Duration::ms(opts_.user_timeout_ms));
  fastopen_detect_blackhole(now, expired);  // tcp_write_timeout, before it gives up
  if (expired) {
    c.inc(Counter::TcpExtTCPAbortOnTimeout);
    done(now, soft_error_ != Errc::kOk ? soft_error_ : Errc::kTimedOut);
    return;
  }
  timeout_rehash();  // tcp_write_timeout's last step (tcp_txhash.cc)
  ++total_rto_;
  trace_event(now, TraceEvent::kRto, backoff_);
  enter_loss(now);
  // Linux retrans_stamp: when the head was last sent before this episode,
  // so the give-up time counts from the original transmission.
  // A lone FIN was last sent one (backed-off) RTO ago: this timer was armed
  // in full when it went out (on_loss_probe / send_one -> arm_rto).
  if (retrans_stamp_.is_never())
    retrans_stamp_ = !sb_.empty()            ? sb_.at(0).xmit_time
                     : lone_fin_in_flight() ? now - rtt_.backed_off_rto(backoff_)
                                            : last_snd_data_;
  // Linux tcp_retransmit_timer: tcp_retransmit_skb(head) whatever cwnd and
  // pacing say; the rest of the lost queue follows on ACKs. (Packets RACK
  // kept unmarked can fill cwnd 1, and a timeout that sends nothing would
  // only back off, up to 120 s, with the hole never repaired.)
  ++retransmits_;  // Linux tcp_update_rto_stats, before the attempt
  if (retransmit_head(now) == XmitResult::kDropped) {
    rearm_after_local_drop(now);
    return;
  }
  // Linux tcp_retransmit_timer: a thin stream's first TCP_THIN_LINEAR_RETRIES
  // timeouts do not back off (icsk_backoff = 0, icsk_rto = __tcp_set_rto).
  if (thin_linear_timeout()) backoff_ = 0;
  else ++backoff_;
  arm_rto(now);
}

// Linux tcp_retransmit_timer's linear case: TCP_THIN_LINEAR_TIMEOUTS or the
// sysctl, ESTABLISHED, a thin stream (tcp_stream_is_thin: fewer than 4
// packets out and past initial slow start), and at most
// TCP_THIN_LINEAR_RETRIES (6) timeouts so far, "to avoid continue
// hammering linear-timeout retransmissions into a black hole".
bool Connection::thin_linear_timeout() const {
  constexpr int kThinLinearRetries = 6;
  if (!opts_.thin_lto && !env_.cfg().tcp_thin_linear_timeouts) return false;
  if (state_ != State::kEstablished || retransmits_ > kThinLinearRetries) return false;
  return sb_.packets_out() < 4 && !cc::in_initial_slow_start(ccs_);
}

// Linux tcp_enter_loss: mark what timed out lost, ssthresh, cwnd = 1, Loss.
void Connection::enter_loss(Time now) {
  Counters& c = env_.counters();
  recovery::RtoInput in;
  in.now = now;
  in.snd_una = snd_.una;
  in.snd_nxt = snd_.nxt;
  in.retransmits = static_cast<uint32_t>(retransmits_);
  const uint32_t prior_reductions = rec_.reductions();
  rec_.on_rto(in, sb_, *cc_, ccs_, c);
  sb_.clear_phantoms();  // seed 002's fault: an RTO recounts (Scoreboard::leak_phantoms)
  ecn_after_recovery(prior_reductions, false);
  if (ca_state_ != rec_.ca_state()) {
    ca_state_ = rec_.ca_state();
    trace_event(now, TraceEvent::kCaState, static_cast<uint64_t>(ca_state_));
  }
}

// The zero-window probe (Linux tcp_probe_timer / tcp_send_probe0).
void Connection::on_probe0(Time now) {
  const bool unsent = seq_len(snd_.nxt, write_seq_) > 0 || (fin_queued_ && snd_max_ != write_seq_ + 1);
  if (sb_.packets_out() > 0 || !unsent) {
    probes_out_ = 0;
    backoff_ = 0;
    probes_tstamp_ = Time::never();
    return;
  }
  int max_probes = env_.cfg().tcp_retries2;
  if (orphan_) max_probes = env_.cfg().tcp_orphan_retries ? env_.cfg().tcp_orphan_retries : 8;
  bool expired = probes_out_ >= max_probes;
  // Linux >= 5.11 tcp_probe_timer: TCP_USER_TIMEOUT counts from the first
  // probe of the stall (icsk_probes_tstamp), so a peer that answers every
  // probe with a zero window cannot hold the connection forever; without
  // it RFC 1122 §4.2.2.17 keeps probing as long as probes are answered.
  if (probes_tstamp_.is_never()) {
    probes_tstamp_ = now;
  } else if (opts_.user_timeout_ms && now - probes_tstamp_ >= Duration::ms(opts_.user_timeout_ms)) {
    expired = true;
  }
  if (expired) {
    env_.counters().inc(Counter::TcpExtTCPAbortOnTimeout);
    done(now, soft_error_ != Errc::kOk ? soft_error_ : Errc::kTimedOut);
    return;
  }
  const XmitResult r = send_probe(now);
  // Linux tcp_send_probe0: a probe the device dropped still counts in
  // icsk_probes_out (so tcp_retries2 and TCP_USER_TIMEOUT run on), but does
  // not back off: the next try comes after TCP_RESOURCE_PROBE_INTERVAL,
  // clamped to what is left of the user timeout.
  ++probes_out_;
  if (r == XmitResult::kSent && backoff_ < env_.cfg().tcp_retries2) ++backoff_;
  env_.counters().inc(Counter::TcpExtTCPWinProbe);
  if (snd_.nxt == snd_.una)
    arm_persist(now, r == XmitResult::kDropped ? std::optional(kResourceProbeInterval) : std::nullopt);
}

// Linux tcp_write_wakeup: data up to the window if it has opened, else a
// segment the peer must ACK: SEG.SEQ = SND.UNA - 1, no data.
XmitResult Connection::send_probe(Time now) {
  const uint32_t room = usable_window();
  const uint32_t unsent = seq_len(snd_.nxt, write_seq_);
  if (room > 0 && unsent > 0) {
    // A probe never spans two chunks and always carries PSH (Linux
    // tcp_write_wakeup sets TCPHDR_PSH): this is how corked or MSG_MORE data
    // leaves after max(RTO, 200 ms) with nothing in flight.
    const size_t ci = chunk_index(snd_.nxt);
    const uint32_t to_end = ci < chunks_.size() ? seq_len(snd_.nxt, chunks_[ci].end) : unsent;
    const uint32_t len = std::min({room, unsent, current_mss(), std::max<uint32_t>(to_end, 1)});  // tcp_write_wakeup
    return send_one(now, snd_.nxt, len, false, false, false, true) ? XmitResult::kSent : XmitResult::kDropped;
  }
  wire::TcpHeader h = header(ACK, snd_.una - 1);
  add_ts(h, now);
  return emit(now, h, {});
}

void Connection::on_delack(Time now) {
  if (!synchronized_rcv_) return;
  if (rcv_.on_delack_timer(now, rtt_.rto(), env_.counters())) send_ack(now);
  if (rcv_.ack_pending()) arm_delack();
}

// Linux tcp_fin_time(): TCP_LINGER2, else tcp_fin_timeout, and never less
// than 3.5 RTO, so a FIN the peer retransmits still finds the socket.
Duration Connection::fin_time() const {
  const Duration base = Duration::s(opts_.linger2_s > 0 ? opts_.linger2_s : env_.cfg().tcp_fin_timeout_s);
  const Duration rto = rtt_.backed_off_rto(backoff_);
  return std::max(base, rto * 4 - rto / 2);
}

// An orphan reaches FIN-WAIT-2 (`ack`: the ACK of our FIN; null: close()
// found the socket there). Linux tcp_rcv_state_process (TCP_FIN_WAIT1) and
// __tcp_close: with TCP_LINGER2 < 0 it does not wait at all; otherwise it
// waits tcp_fin_time(). Past TCP_TIMEWAIT_LEN the full socket first waits
// the excess on the keepalive slot; within it the socket becomes a
// FIN-WAIT-2 timewait entry (tcp_time_wait(sk, TCP_FIN_WAIT2, tmo)) that
// expires silently. weir keeps the full socket for both stages; the
// keepalive slot times each and fw2_timewait_ tells them apart (the
// timewait stage answers segments as the timewait sock does:
// input_fin_wait2_timewait).
void Connection::orphan_fin_wait2(Time now, const InSegment* ack) {
  if (opts_.linger2_s < 0) {
    if (ack) {
      // The caller answers the segment with a reset (tcp_v4_do_rcv).
      env_.counters().inc(Counter::TcpExtTCPAbortOnData);
      send_reset_for(now, *ack);
      done(now, Errc::kOk);
    } else {
      env_.counters().inc(Counter::TcpExtTCPAbortOnLinger);
      abort(now, Errc::kOk);  // tcp_send_active_reset
    }
    return;
  }
  const Duration tmo = fin_time();
  if (tmo > kTimeWaitLen) {
    timers_.arm(TimerKind::kKeepalive, now + (tmo - kTimeWaitLen));
  } else if (ack && (ack->h.has(FIN) || ack->h.seq + static_cast<uint32_t>(ack->payload.size()) > rcv_.rcv_nxt())) {
    // "Bad case. We could lose such FIN otherwise": an ACK carrying the
    // peer's FIN keeps the full socket (the FIN moves it to TIME-WAIT).
    // New data on it is reset by the caller (tcp_rcv_state_process checks
    // it before tcp_time_wait), so no timewait sock is made for it either.
    fw2_timewait_ = false;
    timers_.arm(TimerKind::kKeepalive, now + tmo);
  } else {
    enter_fin_wait2_timewait(now, tmo);
  }
}

// tcp_time_wait(sk, TCP_FIN_WAIT2, tmo): the timewait stage, for `tmo`.
// It is counted when scheduled, as __inet_twsk_schedule does for every
// timewait sock: TIMEWAITKILLED for a wait of 4 s or less, else TIMEWAITED.
void Connection::enter_fin_wait2_timewait(Time now, Duration tmo) {
  if (!env_.timewait_room()) {
    time_wait_overflow(now);
    return;
  }
  fw2_timewait_ = true;
  tw_entry_ = now;
  freeze_tw_window();
  env_.counters().inc(tmo <= Duration::s(4) ? Counter::TcpExtTWKilled : Counter::TcpExtTW);
  timers_.arm(TimerKind::kKeepalive, now + tmo);
}

// Linux tcp_keepalive_timer; the same slot times an orphan's FIN-WAIT-2.
void Connection::on_keepalive(Time now) {
  if (state_ == State::kFinWait2 && orphan_) {
    if (fw2_timewait_) {
      done(now, Errc::kOk);  // the FIN-WAIT-2 timewait entry simply expires
      return;
    }
    // tcp_keepalive_timer: the excess over TCP_TIMEWAIT_LEN has passed;
    // what is left is spent as a timewait entry, or the peer is reset.
    const Duration left = fin_time() - kTimeWaitLen;
    if (opts_.linger2_s >= 0 && left > Duration::zero()) {
      enter_fin_wait2_timewait(now, left);
      return;
    }
    send_rst(now, snd_.nxt);
    done(now, Errc::kOk);
    return;
  }
  if (!opts_.keepalive || !synchronized() || state_ == State::kTimeWait) return;
  if (sb_.packets_out() > 0 || seq_len(snd_.nxt, write_seq_) > 0) {
    timers_.arm(TimerKind::kKeepalive, now + keepalive_idle());
    return;
  }
  const Duration elapsed = now - std::max(last_rcv_, last_ack_rcv_);
  if (elapsed < keepalive_idle()) {
    timers_.arm(TimerKind::kKeepalive, now + (keepalive_idle() - elapsed));
    return;
  }
  const Duration ut = Duration::ms(opts_.user_timeout_ms);
  if ((opts_.user_timeout_ms && elapsed >= ut && probes_out_ > 0) ||
      (!opts_.user_timeout_ms && probes_out_ >= keepalive_probes())) {
    send_rst(now, snd_.nxt);
    env_.counters().inc(Counter::TcpExtTCPAbortOnTimeout);
    done(now, Errc::kTimedOut);
    return;
  }
  // Linux tcp_keepalive_timer: a keepalive the device dropped is neither
  // counted as unanswered nor waited for: "try harder" after
  // TCP_RESOURCE_PROBE_INTERVAL.
  // (tcp_xmit_probe_skb counts TCPKeepAlive before the transmit.)
  env_.counters().inc(Counter::TcpExtTCPKeepAlive);
  if (send_probe(now) == XmitResult::kDropped) {
    timers_.arm(TimerKind::kKeepalive, now + kResourceProbeInterval);
    return;
  }
  ++probes_out_;
  timers_.arm(TimerKind::kKeepalive, now + keepalive_intvl());
}

void Connection::enter_time_wait(Time now) {
  if (!fin_wait2_timewait() && !env_.timewait_room()) {
    time_wait_overflow(now);
    return;
  }
  // A FIN-WAIT-2 timewait entry that takes the peer's FIN stays the same
  // timewait sock, rescheduled (inet_twsk_reschedule): not counted again,
  // its entry stamp kept. Otherwise tcp_time_wait schedules a new one for
  // TCP_TIMEWAIT_LEN: __inet_twsk_schedule counts LINUX_MIB_TIMEWAITED.
  if (!fin_wait2_timewait()) {
    tw_entry_ = now;
    env_.counters().inc(Counter::TcpExtTW);
    freeze_tw_window();
  }
  set_state(now, State::kTimeWait);
  // tcp_time_wait -> tcp_done: "sk->sk_shutdown = SHUTDOWN_MASK". To a
  // holder the socket is CLOSED from here on: reads return what is left,
  // then 0; writes fail with EPIPE; poll reports IN, RDHUP, HUP and OUT.
  rd_shut_ = true;
  wr_shut_ = true;
  timers_.cancel_all();
  sndq_.clear();
  // RFC 9293 §3.10.8: 2 MSL; Linux's TCP_TIMEWAIT_LEN is a fixed 60 s
  // (tcp_fin_timeout sets FIN-WAIT-2's lifetime, not TIME-WAIT's).
  timers_.arm(TimerKind::kTimeWait, now + kTimeWaitLen);
}

// Linux tcp_time_wait: "tcptw->tw_rcv_wnd = tcp_receive_window(tp)", what
// is left of the last window advertised (rcv_wup + rcv_wnd - rcv_nxt). A
// FIN-WAIT-2 timewait sock that takes the FIN keeps it (tcp_timewait_state_process
// changes only tw_rcv_nxt), hence not called again on that step.
void Connection::freeze_tw_window() { tw_rcv_wnd_ = rcv_.receive_window(); }

// Linux tcp_time_wait when inet_twsk_alloc found tcp_max_tw_buckets
// timewait socks already: "just CLOSE this socket up", counted as
// TCPTimeWaitOverflow (not TIMEWAITED: nothing is scheduled), then tcp_done.
// The tuple and the port go at once; a holder sees CLOSE as it would have
// from TIME-WAIT (both directions shut, unread data kept).
void Connection::time_wait_overflow(Time now) {
  env_.counters().inc(Counter::TcpExtTCPTimeWaitOverflow);
  fw2_timewait_ = false;
  rd_shut_ = true;
  wr_shut_ = true;
  sndq_.clear();
  end_time_wait(now);
}

// Linux inet_twsk_kill. An orphan goes with its timewait sock; a socket
// still held was CLOSED to its holder when TIME-WAIT began (tcp_done) and
// keeps what it has (unread data, its error queue); only the tuple and the
// port go (conn_event::kClosed).
void Connection::end_time_wait(Time now) {
  if (orphan_) done(now, Errc::kOk);
  else set_state(now, State::kClosed);
}

}  // namespace weir::tcp
