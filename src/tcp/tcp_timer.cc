// Timer expiry (Linux tcp_timer.c): retransmission (RFC 6298 §5), zero-window
// probes (RFC 9293 §3.8.6.1), delayed ACK, keepalive (RFC 1122 §4.2.3.6),
// FIN-WAIT-2 and TIME-WAIT (RFC 9293 §3.10.8).
#include <algorithm>
#include <bit>

#include "tcp/connection.h"

namespace weir::tcp {

using namespace wire::tcp_flag;

void Connection::on_timers(Time now) {
  for (int guard = 0; guard < 16; ++guard) {
    const TimerKind k = timers_.due(now);
    if (k == TimerKind::kCount) break;
    timers_.cancel(k);
    switch (k) {
      case TimerKind::kRetransmit: on_retransmit_timer(now); break;
      case TimerKind::kDelAck: on_delack(now); break;
      case TimerKind::kKeepalive: on_keepalive(now); break;
      case TimerKind::kTimeWait:
        env_.counters().inc(Counter::TcpExtTW);
        done(now, Errc::kOk);
        break;
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

// RFC 6298 (5.2)/(5.3): all data acknowledged stops the timer; new data
// acknowledged restarts it.
void Connection::rearm_rto_after_ack(Time now) {
  const bool fin_out = fin_queued_ && snd_max_ == write_seq_ + 1 && snd_.una != snd_max_;
  if (sb_.packets_out() == 0 && !fin_out) {
    if (timers_.retransmit_mode != RetransmitMode::kProbe0) timers_.cancel(TimerKind::kRetransmit);
    return;
  }
  arm_rto(now);
}

void Connection::arm_persist(Time now) {
  timers_.retransmit_mode = RetransmitMode::kProbe0;
  // Linux tcp_probe0_when: max(RTO, 200 ms) doubled per probe, at most rto_max.
  Duration base = std::max(rtt_.rto(), rtt_.rto_min());
  Duration d = base;
  for (int i = 0; i < backoff_ && d < rtt_.rto_max(); ++i) d = d * 2;
  timers_.arm(TimerKind::kRetransmit, now + std::min(d, rtt_.rto_max()));
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
    default:
      if (state_ == State::kSynSent || state_ == State::kSynReceived) on_syn_rto(now);
      else on_rto(now);
      break;
  }
}

// SYN / SYN-ACK retransmission: tcp_syn_retries (6) or tcp_synack_retries (5).
void Connection::on_syn_rto(Time now) {
  const StackConfig& cfg = env_.cfg();
  int limit = listener_ ? cfg.tcp_synack_retries : (opts_.syncnt ? opts_.syncnt : cfg.tcp_syn_retries);
  if (retransmits_ >= limit) {
    Counters& c = env_.counters();
    if (!listener_) c.inc(Counter::TcpAttemptFails);
    done(now, soft_error_ != Errc::kOk ? soft_error_ : Errc::kTimedOut);
    return;
  }
  ++retransmits_;
  ++backoff_;
  ++total_retrans_;
  env_.counters().inc(Counter::TcpExtTCPSynRetrans);
  retransmit_head(now);
  arm_rto(now);
}

// RFC 6298 (5.4)-(5.6) and Linux tcp_retransmit_timer/tcp_enter_loss.
void Connection::on_rto(Time now) {
  const bool fin_out = fin_queued_ && snd_max_ == write_seq_ + 1 && snd_.una != snd_max_;
  if (sb_.packets_out() == 0 && !fin_out) return;
  Counters& c = env_.counters();
  const int limit = orphan_ ? (env_.cfg().tcp_orphan_retries ? env_.cfg().tcp_orphan_retries : 8)
                            : env_.cfg().tcp_retries2;
  if (retries_exhausted(now, limit, Duration::ms(opts_.user_timeout_ms))) {
    c.inc(Counter::TcpExtTCPAbortOnTimeout);
    done(now, soft_error_ != Errc::kOk ? soft_error_ : Errc::kTimedOut);
    return;
  }
  c.inc(Counter::TcpExtTCPTimeouts);
  ++total_rto_;
  trace_event(now, TraceEvent::kRto, backoff_);
  if (ca_state_ != CaState::Loss) {
    ccs_.prior_ssthresh = cc::current_ssthresh(ccs_);
    ccs_.prior_cwnd = ccs_.snd_cwnd;
    ccs_.snd_ssthresh = cc_->ssthresh(ccs_, now);
    cc_->cwnd_event(ccs_, cc::CaEvent::Loss, now);
    cc_->set_state(ccs_, CaState::Loss, now);
    ca_state_ = CaState::Loss;
    ccs_.ca_state = ca_state_;
  }
  sb_.on_rto(false);
  high_seq_ = snd_.nxt;
  dupacks_ = 0;
  ccs_.snd_cwnd = sb_.in_flight() + 1;  // Linux tcp_enter_loss: RFC 5681 §3.1 loss window
  // Linux retrans_stamp: when the head was last sent before this episode,
  // so the give-up time counts from the original transmission.
  if (retrans_stamp_.is_never()) retrans_stamp_ = sb_.empty() ? last_snd_data_ : sb_.at(0).xmit_time;
  if (!sb_.empty()) retransmit_lost(now);
  else retransmit_head(now);
  ++retransmits_;
  ++backoff_;
  arm_rto(now);
}

// The zero-window probe (Linux tcp_probe_timer / tcp_send_probe0).
void Connection::on_probe0(Time now) {
  const bool unsent = seq_len(snd_.nxt, write_seq_) > 0 || (fin_queued_ && snd_max_ != write_seq_ + 1);
  if (sb_.packets_out() > 0 || !unsent) {
    probes_out_ = 0;
    backoff_ = 0;
    return;
  }
  int max_probes = env_.cfg().tcp_retries2;
  if (orphan_) max_probes = env_.cfg().tcp_orphan_retries ? env_.cfg().tcp_orphan_retries : 8;
  bool expired = probes_out_ >= max_probes;
  if (opts_.user_timeout_ms && probes_out_ > 0)
    expired = now - last_ack_rcv_ >= Duration::ms(opts_.user_timeout_ms);
  if (expired) {
    env_.counters().inc(Counter::TcpExtTCPAbortOnTimeout);
    done(now, soft_error_ != Errc::kOk ? soft_error_ : Errc::kTimedOut);
    return;
  }
  send_probe(now);
  ++probes_out_;
  if (backoff_ < env_.cfg().tcp_retries2) ++backoff_;
  env_.counters().inc(Counter::TcpExtTCPWinProbe);
  if (snd_.nxt == snd_.una) arm_persist(now);
}

// Linux tcp_write_wakeup: data up to the window if it has opened, else a
// segment the peer must ACK: SEG.SEQ = SND.UNA - 1, no data.
void Connection::send_probe(Time now) {
  const uint32_t room = usable_window();
  const uint32_t unsent = seq_len(snd_.nxt, write_seq_);
  if (room > 0 && unsent > 0) {
    const uint32_t len = std::min({room, unsent, mss_cache_});
    send_one(now, snd_.nxt, len, false, false);
    return;
  }
  wire::TcpHeader h = header(ACK, snd_.una - 1);
  add_ts(h, now);
  emit(now, h, {});
}

void Connection::on_delack(Time now) {
  if (!synchronized_rcv_) return;
  if (rcv_.on_delack_timer(now, rtt_.rto(), env_.counters())) send_ack(now);
  if (rcv_.ack_pending()) arm_delack();
}

// Linux tcp_keepalive_timer; the same slot times an orphan's FIN-WAIT-2.
void Connection::on_keepalive(Time now) {
  if (state_ == State::kFinWait2 && orphan_) {
    done(now, Errc::kOk);  // Linux: the FIN-WAIT-2 timewait socket simply expires
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
  send_probe(now);
  ++probes_out_;
  env_.counters().inc(Counter::TcpExtTCPKeepAlive);
  timers_.arm(TimerKind::kKeepalive, now + keepalive_intvl());
}

void Connection::enter_time_wait(Time now) {
  set_state(now, State::kTimeWait);
  timers_.cancel_all();
  sndq_.clear();
  // RFC 9293 §3.10.8: 2 MSL; Linux's TCP_TIMEWAIT_LEN is 60 s.
  timers_.arm(TimerKind::kTimeWait, now + Duration::s(env_.cfg().tcp_fin_timeout_s));
}

}  // namespace weir::tcp
