// The connection's side of TCP Fast Open (RFC 7413): the passive child that
// takes the SYN's data (Linux tcp_fastopen_create_child and
// tcp_fastopen_add_skb). The listener's decision is tcp/fastopen.h's.
#include "tcp/connection.h"

namespace weir::tcp {

using namespace wire::tcp_flag;

// RFC 7413 §4.2.2: "the server ... MAY ... deliver the data to the
// application" before the handshake completes. The child is readable and
// writable from now on (Linux tp->fastopen_rsk) and its SYN-ACK acks the data.
void Connection::accept_syn_data(Time now, const InSegment& syn) {
  fastopen_child_ = true;
  if (syn.payload.empty() && !syn.h.has(FIN)) return;
  // The data is in order at RCV.NXT (Linux tcp_fastopen_add_skb, not
  // tcp_data_queue); the SYN-ACK about to go out is its ACK.
  const DataOutcome out = rcv_.on_syn_data(syn.payload, syn.h.has(FIN));
  rcv_.announce_from_rcv_nxt();
  if (!syn.payload.empty()) {
    syn_data_acked_ = true;
    last_rcv_data_ = now;
  }
  if (out.fin) process_fin(now);  // Linux tcp_fastopen_add_skb -> tcp_fin: CLOSE-WAIT
}

// Linux tcp_create_openreq_child: the child's SND.UNA starts past the SYN;
// its SYN-ACK belongs to the request (retransmitted by the SYN-ACK timer),
// so data written before the handshake completes is sent and tracked as
// ordinary data.
void Connection::fastopen_child_sent_synack() {
  snd_.una = snd_.iss + 1;
  sb_.reset(snd_.una);
  snd_sml_ = snd_.una;
}

// The ACK that completes a Fast Open child's handshake (Linux
// tcp_rcv_state_process, SYN_RECV with tp->fastopen_rsk): acceptable when
// it acknowledges at least the SYN-ACK and no more than was sent; it may
// also acknowledge data sent since. False: the segment drew a reset.
bool Connection::fastopen_ack(Time now, const InSegment& seg) {
  if (seg.h.ack < snd_.una || seg.h.ack > snd_.nxt) {
    send_reset_for(now, seg);  // tcp_ack's old or unsent ACK: not acceptable
    return false;
  }
  if (ts_ok_ && seg.h.options.ts && seg.h.options.ts->ecr != 0) {
    const uint32_t now_ms = static_cast<uint32_t>(now.ms()) + ts_offset_;
    rtt_.sample(Duration::ms(static_cast<int32_t>(now_ms - seg.h.options.ts->ecr)), seg.h.ack, snd_.nxt, now);
  }
  ++delivered_;  // the SYN-ACK (tcp_rcv_state_process counts it by hand)
  ccs_.rate.count_delivered(1, false);
  become_established(now);
  // Data sent in SYN-RECEIVED is acknowledged the ordinary way; what is
  // still in flight keeps a retransmission timer (tcp_rearm_rto).
  if (!process_ack(now, seg)) return false;
  if (sb_.packets_out() > 0 && !timers_.armed(TimerKind::kRetransmit)) arm_rto(now);
  return true;
}

// Linux tcp_fastopen_synack_timer: the SYN-ACK timer of a Fast Open child
// (armed at TCP_TIMEOUT_INIT when the child is made, doubled per retry; the
// data sent meanwhile does not move it, set_xmit_timer). The child is a
// full socket that may already be accepted, so it gets one retry more than
// a request: icsk_syn_retries (TCP_SYNCNT) or tcp_synack_retries + 1,
// whether accepted or not. Giving up is tcp_write_err: sk_err = the soft
// error or ETIMEDOUT, tcp_done (TcpAttemptFails in SYN_RECV), no reset,
// TcpExtTCPAbortOnTimeout.
void Connection::on_fastopen_synack_rto(Time now) {
  const int limit = opts_.syncnt ? opts_.syncnt : env_.cfg().tcp_synack_retries + 1;
  Counters& c = env_.counters();
  if (retransmits_ >= limit) {
    c.inc(Counter::TcpAttemptFails);
    c.inc(Counter::TcpExtTCPAbortOnTimeout);
    done(now, soft_error_ != Errc::kOk ? soft_error_ : Errc::kTimedOut);
    return;
  }
  // "Lower cwnd after certain SYNACK timeout like tcp_init_transfer()": at
  // the second timeout (icsk_retransmits == 1) what was sent in
  // SYN-RECEIVED is marked lost and cwnd drops (tcp_enter_loss), so the
  // ACK that completes the handshake resends it at once.
  if (retransmits_ == 1) enter_loss(now);
  synack_rehash();  // inet_rtx_syn_ack -> tcp_rtx_synack: the request's hash
  retransmit_syn(now);
}

}  // namespace weir::tcp
