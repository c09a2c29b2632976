// Segment arrival in synchronized states (RFC 9293 §3.10.7.4), with RFC 5961's
// defences and RFC 7323's PAWS, in Linux's order (tcp_validate_incoming,
// tcp_rcv_state_process).
#include <algorithm>

#include "tcp/connection.h"

namespace weir::tcp {

using namespace wire::tcp_flag;

namespace {
// Linux tcp_in_window (tcp_minisocks.c): [seq, end) starts at the window's
// left edge, reaches into the window, or is empty at its right edge.
bool tw_in_window(Seq32 seq, Seq32 end, Seq32 s_win, Seq32 e_win) {
  if (seq == s_win) return true;
  if (end > s_win && seq < e_win) return true;
  return seq == e_win && seq == end;
}

constexpr Duration kPaws24Days = Duration::s(24 * 24 * 3600);  // RFC 7323 §5.5, Linux TCP_PAWS_24DAYS
constexpr int32_t kPawsWindow = 1;  // Linux TCP_PAWS_WINDOW: tolerate one tick of reordering
}  // namespace

void Connection::input(Time now, const InSegment& seg) {
  if (state_ == State::kTimeWait) {
    // Linux tcp_v4_rcv do_time_wait: the timewait sock answers; the full
    // socket's tcpi_segs_in and receive stamps are left as they were.
    input_time_wait(now, seg);
    events_ |= conn_event::kReadiness;
    return;
  }
  if (fin_wait2_timewait()) {
    input_fin_wait2_timewait(now, seg);
    return;
  }
  ++segs_in_;
  last_rcv_ = now;
  in_ttl_ = seg.ttl;
  switch (state_) {
    case State::kClosed:
    case State::kListen: send_reset_for(now, seg); break;
    case State::kSynSent: input_syn_sent(now, seg); break;
    default: input_synchronized(now, seg); break;
  }
  events_ |= conn_event::kReadiness;
}

// RFC 7323 §5.3 R1 / Linux tcp_paws_discard: a TSval older than TS.Recent
// (by more than one tick) is a segment from an earlier incarnation of the
// sequence space, unless TS.Recent itself is more than 24 days old.
bool Connection::paws_reject(Time now, const InSegment& seg) const {
  if (!ts_ok_ || !seg.h.options.ts) return false;
  const int32_t d = static_cast<int32_t>(ts_recent_ - seg.h.options.ts->val);
  if (d <= kPawsWindow) return false;
  return now - ts_recent_stamp_ <= kPaws24Days;
}

// Linux __tcp_oow_rate_limited (tcp_invalid_ratelimit, 500 ms): at most one
// ACK per interval in answer to out-of-window or invalid segments.
bool Connection::oow_rate_limited(Time now) {
  const Duration gap = Duration::ms(env_.cfg().tcp_invalid_ratelimit_ms);
  if (!last_oow_ack_.is_never() && now - last_oow_ack_ < gap) return true;
  last_oow_ack_ = now;
  return false;
}

// RFC 5961 §3.2, §4.2, §5.2: a challenge ACK, limited per socket and per stack.
void Connection::send_challenge_ack(Time now, bool syn) {
  Counters& c = env_.counters();
  if (syn) c.inc(Counter::TcpExtTCPSYNChallenge);
  if (oow_rate_limited(now)) {
    c.inc(Counter::TcpExtTCPACKSkippedChallenge);
    return;
  }
  if (!env_.take_global_challenge_ack(now)) return;
  c.inc(Counter::TcpExtTCPChallengeACK);
  send_ack(now);
}

// RFC 7323 §4.3 (3), Linux tcp_replace_ts_recent: TS.Recent takes the TSval
// of a segment that covers Last.ACK.sent (rcv_wup) and is not older.
void Connection::update_ts_recent(Time now, const InSegment& seg) {
  if (!ts_ok_ || !seg.h.options.ts) return;
  const Seq32 rcv_wup = rcv_.right_edge() - rcv_.rcv_wnd();
  if (seg.h.seq > rcv_wup) return;
  if (static_cast<int32_t>(seg.h.options.ts->val - ts_recent_) >= 0 ||
      now - ts_recent_stamp_ > kPaws24Days) {
    ts_recent_ = seg.h.options.ts->val;
    ts_recent_stamp_ = now;
  }
}

// RFC 9293 §3.10.7.4 "first, check sequence number" with PAWS before it.
bool Connection::check_sequence(Time now, const InSegment& seg) {
  Counters& c = env_.counters();
  const bool pure_data = !seg.payload.empty() && !seg.h.has(SYN);
  if (paws_reject(now, seg) && !seg.h.has(RST)) {
    c.inc(Counter::TcpExtPAWSEstab);
    dupack_rehash(seg);  // Linux tcp_validate_incoming -> tcp_send_dupack
    if (pure_data || !oow_rate_limited(now)) send_ack(now);  // RFC 7323 §5.3 R1
    else c.inc(Counter::TcpExtTCPACKSkippedPAWS);
    return false;
  }
  if (!rcv_.acceptable(seg.h.seq, seg.len())) {
    // "If an incoming segment is not acceptable, an acknowledgment should be
    // sent in reply (unless the RST bit is set)."
    if (seg.h.has(RST)) return false;
    if (seg.h.has(SYN)) {
      send_challenge_ack(now, true);  // RFC 5961 §4.2
      return false;
    }
    // Linux tcp_send_dupack: old data (a retransmission below RCV.NXT) gets
    // a D-SACK (RFC 2883 §4) and quick ACKs; the receiver decides.
    dupack_rehash(seg);
    rcv_.on_unacceptable(seg.h.seq, seg.len(), c);
    if (pure_data || !oow_rate_limited(now)) send_ack(now);
    else c.inc(Counter::TcpExtTCPACKSkippedSeq);
    return false;
  }
  return true;
}

// RFC 9293 §3.10.7.4 "second, check the RST bit", RFC 5961 §3.2: only an RST
// at exactly RCV.NXT resets; elsewhere in the window it draws a challenge ACK.
bool Connection::check_rst(Time now, const InSegment& seg) {
  if (!seg.h.has(RST)) return true;
  const bool exact = seg.h.seq == rcv_.rcv_nxt() ||
                     // Linux tcp_reset_check: after our FIN was ACKed the peer may
                     // reset at rcv.nxt - 1 in the closing states.
                     (seg.h.seq == rcv_.rcv_nxt() - 1 &&
                      (state_ == State::kCloseWait || state_ == State::kLastAck ||
                       state_ == State::kClosing));
  if (!exact) {
    // Linux tcp_validate_incoming: an out-of-place RST on an active Fast
    // Open connection that has received nothing smells of a middlebox.
    if (active_fo_.syn_fastopen && rcv_.data_segs_in() == 0 && state_ == State::kEstablished)
      env_.fastopen_active_disable(now);
    send_challenge_ack(now, false);
    return false;
  }
  Counters& c = env_.counters();
  // A passive open in SYN-RECEIVED met its RSTs in check_request.
  if (state_ == State::kEstablished || state_ == State::kCloseWait)
    c.inc(Counter::TcpEstabResets);
  // Linux tcp_reset: which error the user sees.
  Errc err = Errc::kConnReset;
  // Only a simultaneous open is still in SYN-RECEIVED here: a full socket,
  // reset (ECONNRESET) and counted by tcp_done as a failed attempt.
  if (state_ == State::kSynReceived) c.inc(Counter::TcpAttemptFails);
  if (state_ == State::kCloseWait) err = Errc::kPipe;
  reset_ = true;
  done(now, err);
  return false;
}

// RFC 9293 §3.10.7.4 "fourth, check the SYN bit", RFC 5961 §4.2.
bool Connection::check_syn(Time now, const InSegment& seg) {
  if (!seg.h.has(SYN)) return true;
  // A passive open's repeated SYN drew its SYN-ACK in check_request; a
  // simultaneous open's full socket challenges it (tcp_validate_incoming).
  send_challenge_ack(now, true);
  return false;
}

void Connection::input_synchronized(Time now, const InSegment& seg) {
  if (is_request() && !check_request(now, seg)) return;
  // Linux tcp_validate_incoming: in a simultaneous open the peer's SYN-ACK
  // (its SYN again, now acking ours) completes the handshake.
  const bool simopen_synack = state_ == State::kSynReceived && seg.h.has(SYN) &&
                              seg.h.has(ACK) && !seg.h.has(RST) && seg.h.seq + 1 == rcv_.rcv_nxt() &&
                              seg.h.ack == snd_.nxt;
  if (!simopen_synack) {
    if (!check_sequence(now, seg)) return;
    if (!check_rst(now, seg)) return;
    if (!check_syn(now, seg)) return;
  }
  // "fifth, check the ACK field": if off, drop the segment.
  if (!seg.h.has(ACK)) return;
  if (fastopen_pending()) {
    if (!fastopen_ack(now, seg)) return;
  } else if (state_ == State::kSynReceived) {
    if (seg.h.ack <= snd_.una || seg.h.ack > snd_.nxt) {
      send_reset_for(now, seg);  // RFC 9293: <SEQ=SEG.ACK><CTL=RST>
      return;
    }
    if (defer_bare_ack(seg)) return;
    // RFC 6298 (2): the handshake RTT, when the SYN-ACK was sent once.
    if (ts_ok_ && seg.h.options.ts && seg.h.options.ts->ecr != 0) {
      const uint32_t now_ms = static_cast<uint32_t>(now.ms()) + ts_offset_;
      rtt_.sample(Duration::ms(static_cast<int32_t>(now_ms - seg.h.options.ts->ecr)), seg.h.ack, snd_.nxt, now);
    } else if (retransmits_ == 0 && !synack_resent_ && !retrans_stamp_.is_never()) {
      rtt_.sample(now - retrans_stamp_, seg.h.ack, snd_.nxt, now);
    }
    // A simultaneous open's SYN data, acknowledged by the peer's SYN-ACK,
    // is acknowledged as in SYN-SENT. A passive open has no SYN data.
    ack_syn(now, seg.h.ack);
    write_seq_ = seq_max(write_seq_, snd_.una);
    snd_sml_ = snd_.una;
    snd_.wnd = uint32_t{seg.h.window} << snd_.wscale;
    snd_.max_wnd = std::max(snd_.max_wnd, snd_.wnd);
    snd_.wl1 = seg.h.seq;
    snd_.wl2 = seg.h.ack;
    // Linux tcp_rcv_state_process (SYN_RECV): the SYN-ACK's delivery is
    // counted here, as tcp_ack does not track it.
    ++delivered_;
    ccs_.rate.count_delivered(1, false);
    become_established(now);
  } else if (!process_ack(now, seg)) {
    return;
  }
  update_ts_recent(now, seg);
  if (state_ == State::kClosed || state_ == State::kTimeWait) return;
  // "sixth, check the URG bit" (Linux tcp_urg, before the text is queued).
  urg_input(seg);
  // "seventh, process the segment text"
  const bool has_text = !seg.payload.empty() || seg.h.has(FIN);
  if (has_text) {
    if (rd_shut_ && orphan_ && !seg.payload.empty() &&
        (state_ == State::kFinWait1 || state_ == State::kFinWait2)) {
      // Linux tcp_rcv_state_process: data for a closed socket draws a reset,
      // sent by the caller as the answer to this segment (tcp_v4_do_rcv ->
      // tcp_v4_send_reset: <SEQ=SEG.ACK><CTL=RST>), not one at SND.NXT.
      env_.counters().inc(Counter::TcpExtTCPAbortOnData);
      // Linux tcp_rcv_state_process: "receive out of order FIN after close()".
      if (active_fo_.syn_fastopen && seg.h.has(FIN)) env_.fastopen_active_disable(now);
      send_reset_for(now, seg);
      done(now, Errc::kOk);
      return;
    }
    if (state_ == State::kEstablished || state_ == State::kFinWait1 ||
        state_ == State::kFinWait2) {
      process_data(now, seg);
    } else if (seg.h.seq + seg.len() > rcv_.rcv_nxt()) {
      // CLOSE-WAIT, CLOSING, LAST-ACK: the FIN was received; new text is ignored.
    }
  }
  // Linux tcp_rcv_state_process hands the simultaneous-open SYN-ACK to
  // tcp_data_queue once ESTABLISHED: its SYN lies wholly below rcv_nxt, so
  // it is an old retransmission (DELAYEDACKLOST, a D-SACK of the SYN per
  // RFC 2883 §4, quick-ACK mode) and tcp_ack_snd_check ACKs it at once
  // unless tcp_data_snd_check's data already carried the ACK.
  if (simopen_synack && state_ == State::kEstablished) {
    duplicate_data_rehash(seg);  // tcp_data_queue: old data -> tcp_rcv_spurious_retrans
    rcv_.on_unacceptable(seg.h.seq, seg.len(), env_.counters());
  }
  const Seq32 nxt_before = snd_.nxt;
  data_snd_check(now);  // Linux tcp_data_snd_check: push, then tcp_check_space
  if (simopen_synack && state_ == State::kEstablished && snd_.nxt == nxt_before) send_ack(now);
}

void Connection::process_data(Time now, const InSegment& seg) {
  DataSegment d;
  d.seq = seg.h.seq + (seg.h.has(SYN) ? 1 : 0);
  d.payload = seg.payload;
  d.fin = seg.h.has(FIN);
  d.gso_size = seg.gso_size;
  bool cwr_ack = false;
  // The receiver's quick-ACK flag for ECN (Linux tcp_ecn_check_ce decides
  // when a mark deserves quick ACKs; a non-ECN connection ignores marks).
  d.ce = ecn_rcv_data(now, seg, &cwr_ack);
  if (ts_ok_ && seg.h.options.ts && seg.h.options.ts->ecr != 0) {
    const uint32_t now_ms = static_cast<uint32_t>(now.ms()) + ts_offset_;
    d.tsecr_age = Duration::ms(static_cast<int32_t>(now_ms - seg.h.options.ts->ecr));
    d.tsecr = seg.h.options.ts->ecr;  // a repeated echo is sampled once (Linux rcv_rtt_last_tsecr)
  }
  const bool had_fin = rcv_.fin_received();
  // Linux bounds the delayed-ACK and SACK-compression delays by SRTT.
  DataOutcome out = rcv_.on_data(now, d, rtt_.rto(), rtt_.srtt(), env_.counters());
  // Linux tcp_data_queue: wholly old data -> tcp_rcv_spurious_retrans
  // (before the ACK it draws goes out); in-order data -> tcp_event_data_recv,
  // which remembers its label.
  if (out.drop == RcvDrop::kDuplicate) duplicate_data_rehash(seg);
  else if (out.in_order > 0) save_lrcv_flowlabel(seg);
  if (!seg.payload.empty()) last_rcv_data_ = now;
  if (out.fin && !had_fin) process_fin(now);
  // tcp_fin -> tcp_time_wait -> tcp_done: the FIN's ACK went out in
  // process_fin and a CLOSEd socket sends nothing more (tcp_rcv_state_process
  // skips tcp_ack_snd_check for TCP_CLOSE).
  if (state_ == State::kClosed || state_ == State::kTimeWait) return;
  if (out.ack_now || (cwr_ack && rcv_.ack_pending())) {  // Linux tcp_ecn_accept_cwr: ICSK_ACK_NOW
    send_ack(now);
  } else if (rcv_.ack_pending()) {
    arm_delack();
  }
}

// RFC 9293 §3.10.7.4 "eighth, check the FIN bit".
void Connection::process_fin(Time now) {
  switch (state_) {
    case State::kSynReceived:
    case State::kEstablished: set_state(now, State::kCloseWait); break;
    case State::kFinWait1:
      // Our FIN not yet acknowledged (else we would be in FIN-WAIT-2).
      set_state(now, State::kClosing);
      break;
    case State::kFinWait2:
      // Linux tcp_fin (TCP_FIN_WAIT2): "send ACK and enter TIME_WAIT", in
      // that order: the full socket ACKs the FIN with a window it selects,
      // and tcp_time_wait freezes what is left of it (freeze_tw_window).
      // A FIN-WAIT-2 timewait sock's ACK already carries its frozen window.
      send_ack(now);
      enter_time_wait(now);
      break;
    default: break;
  }
  events_ |= conn_event::kReadiness;
}

bool Connection::timewait_accepts_syn(const InSegment& syn) const {
  // Linux tcp_timewait_state_process: a SYN beyond rcv.nxt, or with a newer
  // timestamp, starts a new incarnation (RFC 6191 with timestamps).
  if (!syn.h.has(SYN) || syn.h.has(ACK) || syn.h.has(RST)) return false;
  if (ts_ok_ && syn.h.options.ts) return static_cast<int32_t>(syn.h.options.ts->val - ts_recent_) > 0;
  return syn.h.seq > rcv_.rcv_nxt();
}

// Linux tcp_timewait_state_process, for what the stack did not take as a new SYN.
void Connection::input_time_wait(Time now, const InSegment& seg) {
  const bool paws = paws_reject(now, seg);
  const Duration tw = kTimeWaitLen;
  if (!paws && seg.h.seq == rcv_.rcv_nxt() && (seg.len() == 0 || seg.h.has(RST))) {
    if (seg.h.has(RST)) {
      // RFC 1337 leaves it open; Linux (tcp_rfc1337 = 0) lets the RST end TIME-WAIT.
      end_time_wait(now);
      return;
    }
    timers_.arm(TimerKind::kTimeWait, now + tw);
    return;
  }
  if (paws) env_.counters().inc(Counter::TcpExtPAWSEstab);
  if (seg.h.has(RST)) return;
  if (paws || seg.h.has(ACK)) timers_.arm(TimerKind::kTimeWait, now + tw);
  // A retransmitted FIN, or anything out of window: ACK it (RFC 9293 §3.10.7.4).
  if (!seg.payload.empty() || seg.h.has(FIN) || !oow_rate_limited(now)) send_ack(now);
  else env_.counters().inc(Counter::TcpExtTCPACKSkippedTimeWait);
}

// Linux tcp_timewait_state_process for tw_substate FIN_WAIT2 ("just repeat
// all the checks of tcp_rcv_state_process", in short). PAWS-old or outside
// [RCV.NXT, RCV.NXT + RCV.WND) (tw_rcv_wnd): an ACK, rate-limited as
// TCPACKSkippedFinWait2 unless the segment carries data and no SYN
// (tcp_oow_rate_limited). In the window: an RST ends it; a SYN at or past
// RCV.NXT draws a reset and ends it (TCP_TW_RST, no RFC 5961 challenge);
// a segment without ACK, a duplicate or an empty one is dropped silently
// (the ACK field is not looked at); anything else but the FIN alone is new
// data after the half-close: a reset (TCP_TW_RST, not counted as
// TCPAbortOnData). The FIN alone is acknowledged and TIME-WAIT begins.
void Connection::input_fin_wait2_timewait(Time now, const InSegment& seg) {
  const Seq32 nxt = rcv_.rcv_nxt();
  const Seq32 end = seg.h.seq + seg.len();
  // tcp_in_window(seq, end_seq, tw_rcv_nxt, tw_rcv_nxt + tw_rcv_wnd): the
  // frozen window, measured from RCV.NXT.
  if (paws_reject(now, seg) || !tw_in_window(seg.h.seq, end, nxt, nxt + tw_rcv_wnd_)) {
    if ((seg.len() > 0 && !seg.h.has(SYN)) || !oow_rate_limited(now)) send_ack(now);
    else env_.counters().inc(Counter::TcpExtTCPACKSkippedFinWait2);
    return;
  }
  if (seg.h.has(RST)) {
    done(now, Errc::kOk);
    return;
  }
  const bool syn = seg.h.has(SYN) && !(seg.h.seq < nxt);
  if (!syn && (!seg.h.has(ACK) || !(end > nxt) || end == seg.h.seq)) return;
  if (syn || !seg.h.has(FIN) || end != nxt + 1) {
    send_reset_for(now, seg);
    done(now, Errc::kOk);
    return;
  }
  fin_wait2_timewait_fin(now, seg);
}

// tcp_timewait_state_process, FIN_WAIT2 substate, "FIN arrived, enter true
// time-wait state": the ACK flag was checked, never its value (no
// tcp_ack(), so an ACK of unsent data or an old one does not matter); the
// FIN moves RCV.NXT (tw_rcv_nxt = end_seq), its TSval becomes TS.Recent
// without tcp_replace_ts_recent's checks (PAWS passed), and TCP_TW_ACK
// answers with the frozen window. The timer restarts at TCP_TIMEWAIT_LEN
// (inet_twsk_reschedule), as enter_time_wait does.
void Connection::fin_wait2_timewait_fin(Time now, const InSegment& seg) {
  if (ts_ok_ && seg.h.options.ts) {
    ts_recent_ = seg.h.options.ts->val;
    ts_recent_stamp_ = now;
  }
  process_data(now, seg);  // the FIN: process_fin -> ACK and enter_time_wait
}

}  // namespace weir::tcp
