// A passive open before the handshake's ACK: Linux keeps it as a request
// sock and checks arriving segments in tcp_check_req's order, which is not
// RFC 9293 §3.10.7.4's: the ACK number first, then the window (RFC 793's
// tcp_in_window, not RFC 5961's tests), then RST and SYN, which end the
// request. Once a segment passes, Linux creates the full socket and "it
// will repeat all the tests" in tcp_rcv_state_process; weir's child is
// already that socket, so the segment goes on to input_synchronized.
#include "tcp/connection.h"

namespace weir::tcp {

using namespace wire::tcp_flag;

namespace {
constexpr Duration kPawsMsl = Duration::s(60);  // Linux TCP_PAWS_MSL
constexpr Duration kTimeoutInit = Duration::s(1);  // Linux TCP_TIMEOUT_INIT
}  // namespace

// Linux tcp_check_req's PAWS: tcp_paws_reject with no tolerance
// (tcp_paws_check(rx_opt, 0)); an empty TS.Recent never rejects. The
// request keeps no time for TS.Recent, so Linux estimates it as the SYN-ACK
// timer's current span ago: an RST is rejected only while that is under
// TCP_PAWS_MSL.
bool Connection::request_paws_reject(const InSegment& seg) const {
  if (!ts_ok_ || !seg.h.options.ts || ts_recent_ == 0) return false;
  if (static_cast<int32_t>(ts_recent_ - seg.h.options.ts->val) <= 0) return false;
  const Duration age = kTimeoutInit * (int64_t{1} << std::min<int>(req_timeouts_, 16));
  return !seg.h.has(RST) || age < kPawsMsl;
}

// Linux tcp_in_window over [rcv_nxt, rcv_nxt + the SYN-ACK's window]: SEG.SEQ
// at its left edge, or the segment (SYN and FIN counted) overlapping the
// window, or an empty segment at its right edge.
bool Connection::request_in_window(const InSegment& seg) const {
  const Seq32 left = rcv_.rcv_nxt();
  const Seq32 right = left + rcv_.rcv_wnd();
  const Seq32 end = seg.h.seq + seg.len();
  if (seg.h.seq == left) return true;
  if (end > left && seg.h.seq < right) return true;
  return seg.h.seq == right && end == right;
}

// Linux tcp_check_req. Returns true when the segment goes on to the full
// processing (it carries an acceptable ACK and no RST or SYN).
bool Connection::check_request(Time now, const InSegment& seg) {
  Counters& c = env_.counters();
  const bool paws = request_paws_reject(seg);
  // "Check for pure retransmitted SYN": the SYN-ACK again, at most one per
  // tcp_invalid_ratelimit, and the request's timer restarts.
  if (seg.h.has(SYN) && !seg.h.has(ACK) && !seg.h.has(RST) && seg.h.seq == rcv_.irs() && !paws) {
    if (oow_rate_limited(now)) c.inc(Counter::TcpExtTCPACKSkippedSynRecv);
    else resend_synack(now);
    return false;
  }
  // RFC 793 p. 36: "the incoming segment acknowledges something not yet
  // sent ... a reset is sent". Linux hands the segment back to the
  // listener, whose tcp_rcv_state_process answers any ACK with a reset
  // (none to an RST). The request lives on. A Fast Open child may have
  // sent data, so its ACK is checked later, against the socket.
  if (!fastopen_child_ && seg.h.has(ACK) && seg.h.ack != snd_.iss + 1) {
    send_reset_for(now, seg);
    return false;
  }
  if (paws || !request_in_window(seg)) {
    // "Out of window: send ACK and drop", through the control socket with
    // the segment's TOS (tcp_v4_reqsk_send_ack / tcp_v6_reqsk_send_ack).
    if (!seg.h.has(RST)) {
      if (oow_rate_limited(now)) c.inc(Counter::TcpExtTCPACKSkippedSynRecv);
      else send_request_ack(now, seg.tos);
    }
    if (paws) c.inc(Counter::TcpExtPAWSEstab);
    return false;
  }
  // In the window: TS.Recent follows a segment at or below RCV.NXT; a SYN
  // at IRS is the old SYN, "truncated" (its flag ignored).
  if (ts_ok_ && seg.h.options.ts && seg.h.seq <= rcv_.rcv_nxt()) ts_recent_ = seg.h.options.ts->val;
  const bool syn = seg.h.has(SYN) && seg.h.seq != rcv_.irs();
  if (seg.h.has(RST) || syn) {
    // "second check the RST bit", "fourth, check the SYN bit": either ends
    // the request (embryonic_reset); a SYN is answered with a reset.
    c.inc(Counter::TcpAttemptFails);
    if (!seg.h.has(RST)) send_reset_for(now, seg);
    if (fastopen_child_) {
      // "Received a bad SYN pkt - for TFO We try not to reset the local
      // connection"; a valid RST resets it (reqsk_fastopen_remove, whose
      // queue slot stays taken a while, then tcp_reset -> tcp_done).
      if (seg.h.has(RST)) fastopen_reset(now);
      return false;
    }
    c.inc(Counter::TcpExtEmbryonicRsts);
    done(now, Errc::kOk);
    return false;
  }
  return seg.h.has(ACK);  // "If ACK not set, just silently drop the packet."
}

// inet_rtx_syn_ack -> tcp_rtx_synack for a repeated SYN: a request draws a
// new transmit hash first, as for a timed-out SYN-ACK (tcp_txhash.cc); it
// is counted as a retransmission (TCP_MIB_RETRANSSEGS, TCPSynRetrans,
// req->num_retrans, so the handshake gives no RTT sample; a Fast Open
// child's total_retrans), and a request's timer restarts at its current
// span (mod_timer_pending(rsk_timer, reqsk_timeout(req))); a Fast Open
// child's SYN-ACK timer is the socket's retransmission timer, left as it is.
void Connection::resend_synack(Time now) {
  synack_rehash();
  if (send_synack(now) == XmitResult::kDropped) return;
  Counters& c = env_.counters();
  c.inc(Counter::TcpRetransSegs);
  c.inc(Counter::TcpExtTCPSynRetrans);
  synack_resent_ = true;
  if (fastopen_child_) {
    ++total_retrans_;
    return;
  }
  if (timers_.armed(TimerKind::kRetransmit)) arm_rto(now);
}

// A valid RST for a Fast Open child in SYN-RECEIVED: Linux tcp_reset ->
// tcp_done, which counts TcpAttemptFails in SYN_RECV; the child's error
// is ECONNRESET (it is a full socket, not a refused connect).
void Connection::fastopen_reset(Time now) {
  env_.fastopen_child_reset(id_, now);
  env_.counters().inc(Counter::TcpAttemptFails);
  reset_ = true;
  done(now, Errc::kConnReset);
}

// The request's out-of-window ACK: the segment's DSCP and the control
// socket's TTL (reply_ip_fields), not the socket's.
void Connection::send_request_ack(Time now, uint8_t seg_tos) {
  reply_tos_ = seg_tos;
  send_ack(now);
  reply_tos_ = -1;
}

}  // namespace weir::tcp
