// The handshake: options negotiated on SYN / SYN-ACK (RFC 9293 §3.7.1,
// RFC 7323 §2-§3, RFC 2018 §2) and SYN-SENT processing (RFC 9293 §3.10.7.3).
#include <algorithm>

#include "tcp/connection.h"

namespace weir::tcp {

using namespace wire::tcp_flag;

// The peer's SYN options. Ours were offered per the sysctls, so an option is
// on only when both sides carry it.
void Connection::parse_syn_options(const wire::TcpOptions& o) {
  const StackConfig& cfg = env_.cfg();
  // RFC 9293 §3.7.1: 536 when the option is absent; Linux ignores a zero MSS.
  peer_mss_ = (o.mss && *o.mss != 0) ? *o.mss : 536;
  if (opts_.user_mss) peer_mss_ = std::min<uint16_t>(peer_mss_, opts_.user_mss);
  wscale_ok_ = cfg.tcp_window_scaling && o.wscale.has_value();
  // RFC 7323 §2.3: a shift above 14 is used as 14.
  snd_.wscale = wscale_ok_ ? std::min<uint8_t>(*o.wscale, 14) : 0;
  sack_ok_ = cfg.tcp_sack && o.sack_permitted;
  ts_ok_ = cfg.tcp_timestamps && o.ts.has_value();
}

void Connection::finish_syn_negotiation(Time now, Seq32 irs) {
  RcvNegotiated n;
  n.irs = irs;
  n.wscale_ok = wscale_ok_;
  n.advmss = advmss_;
  n.peer_mss = peer_mss_;
  n.sack_ok = sack_ok_;
  n.timestamps = ts_ok_;
  rcv_.on_syn(now, n);
  synchronized_rcv_ = true;
  sb_.set_sack_enabled(sack_ok_);
  rec_.set_sack(sack_ok_);
  update_mss(pmtu_);
}

// RFC 9293 §3.10.7.1-style reply to an unacceptable segment where there is no
// synchronized state: <SEQ=SEG.ACK><CTL=RST>, or RST|ACK when no ACK was set.
void Connection::send_reset_for(Time now, const InSegment& seg) {
  if (seg.h.has(RST)) return;
  (void)now;
  wire::TcpHeader h = reset_reply(tuple_, seg);
  sign_md5(h);  // Linux tcp_v4_send_reset: a full socket's key for the peer signs it
  // Linux tcp_v4_send_reset / tcp_v6_send_reset: the segment's DSCP and
  // the control socket's TTL, never the socket's ("if a packet caused RST,
  // ... we build reply only basing on parameters arrived with segment").
  IpFields f = reply_ip_fields(env_.cfg(), tuple_.remote.addr.is_v4(), seg.tos);
  f.flow_label = reset_flow_label();
  env_.output(tuple_, h, {}, f);
  env_.counters().inc(Counter::TcpOutSegs);
  env_.counters().inc(Counter::TcpOutRsts);
}

// Our SYN acknowledged (SYN-SENT's SYN-ACK, or SYN-RECEIVED's ACK in a
// simultaneous open): SND.UNA moves past it, and SYN data the ACK covers
// leaves the write queue and counts in bytes_acked (Linux tcp_ack ->
// tcp_snd_una_update, tcp_clean_rtx_queue on the SYN-data skb); RFC 5961
// §5.2's old-ACK bound uses bytes_acked. A plain SYN acknowledges no data.
void Connection::ack_syn(Time now, Seq32 ack) {
  const uint32_t data_acked = seq_len(snd_.iss + 1, seq_max(ack, snd_.iss + 1));
  if (!zc_pending_.empty()) errq_on_ack(now, snd_.una, ack);  // a MSG_ZEROCOPY SYN's data
  if (data_acked > 0) {
    sndq_.consume(data_acked);
    bytes_acked_ += data_acked;
  }
  snd_.una = ack;
  sb_.reset(snd_.una);
  prune_chunks();
}

// RFC 9293 §3.10.7.3 (SYN-SENT).
void Connection::input_syn_sent(Time now, const InSegment& seg) {
  const wire::TcpHeader& h = seg.h;
  Counters& c = env_.counters();
  if (h.has(ACK)) {
    // "If SEG.ACK =< ISS or SEG.ACK > SND.NXT, send a reset (unless the RST
    // bit is set) and discard the segment."
    if (h.ack <= snd_.iss || h.ack > snd_.nxt) {
      send_reset_for(now, seg);
      return;
    }
    // Linux tcp_rcv_synsent_state_process: an echoed TSval from before our
    // SYN was sent is a stale SYN-ACK (PAWS on the handshake).
    if (h.options.ts && h.options.ts->ecr != 0 && env_.cfg().tcp_timestamps) {
      const uint32_t sent_ms = static_cast<uint32_t>(retrans_stamp_.ms()) + ts_offset_;
      const uint32_t now_ms = static_cast<uint32_t>(now.ms()) + ts_offset_;
      if (static_cast<int32_t>(h.options.ts->ecr - sent_ms) < 0 ||
          static_cast<int32_t>(now_ms - h.options.ts->ecr) < 0) {
        c.inc(Counter::TcpExtPAWSActive);
        send_reset_for(now, seg);
        return;
      }
    }
  }
  if (h.has(RST)) {
    // "If the ACK was acceptable, signal 'connection reset', enter CLOSED";
    // Linux reports ECONNREFUSED. An RST without ACK is dropped.
    if (h.has(ACK)) {
      c.inc(Counter::TcpAttemptFails);
      done(now, Errc::kConnRefused);
    }
    return;
  }
  if (!h.has(SYN)) return;  // "drop the segment and return"
  parse_syn_options(h.options);
  if (h.has(ACK)) ecn_rcv_synack(h);
  else ecn_rcv_syn(h);
  if (!wscale_ok_) snd_.wscale = 0;
  if (ts_ok_) {
    ts_recent_ = h.options.ts->val;
    ts_recent_stamp_ = now;
  }
  finish_syn_negotiation(now, h.seq);
  if (h.has(ACK)) {
    ack_syn(now, h.ack);
    // tcp_clean_rtx_queue delivers the SYN's skb; a wholly acknowledged
    // SYN-data skb is counted and taken back (tcp_rcv_fastopen_synack:
    // "SYN-data is counted as two separate packets in tcp_ack()").
    ++delivered_;
    ccs_.rate.count_delivered(1, false);
    // RFC 7323 §2.2: the SYN-ACK's window is not scaled.
    snd_.wnd = h.window;
    snd_.max_wnd = snd_.wnd;
    snd_.wl1 = h.seq;
    snd_.wl2 = h.ack;
    write_seq_ = seq_max(write_seq_, snd_.una);  // data queued behind the SYN stays
    snd_sml_ = snd_.una;
    // RFC 6298 (2): the handshake's RTT, from TSecr or, by Karn's rule, only
    // if the SYN was not retransmitted.
    if (ts_ok_ && h.options.ts->ecr != 0) {
      const uint32_t now_ms = static_cast<uint32_t>(now.ms()) + ts_offset_;
      rtt_.sample(Duration::ms(static_cast<int32_t>(now_ms - h.options.ts->ecr)), snd_.una, snd_.nxt, now);
    } else if (retransmits_ == 0) {
      rtt_.sample(now - retrans_stamp_, snd_.una, snd_.nxt, now);
    }
    become_established(now);
    const uint32_t segs_before = segs_out_;
    if (!seg.payload.empty() || h.has(FIN)) {
      process_data(now, seg);
      if (h.has(FIN)) process_fin(now);
    }
    // RFC 7413 §4.1.2 (Linux tcp_rcv_synsent_state_process): a Fast Open
    // SYN-ACK may leave the SYN's data to resend, which then carries the ACK.
    const bool fo = active_fo_.syn_fastopen || active_fo_.syn_data > 0;
    // An ACK the SYN-ACK's data drew already acknowledges the SYN-ACK.
    const bool acked = segs_out_ != segs_before;
    if (!(fo && rcv_fastopen_synack(now, seg)) && !acked) {
      if (now < active_fo_.write_pending_until || opts_.defer_accept) {
        // Linux: with a writer waiting (sk_write_pending), or TCP_DEFER_ACCEPT
        // set on the connecting socket, "save one ACK": data carries it, or
        // the delayed-ACK timer (TCP_DELACK_MAX) does.
        rcv_.schedule_ack(now, now + Duration::ms(200));
        arm_delack();
      } else {
        send_ack(now);
      }
    }
    active_fo_.write_pending_until = Time::zero();
    push(now, false);
    return;
  }
  // Simultaneous open (RFC 9293 §3.10.7.3, figure 7): SYN-RECEIVED and a SYN-ACK.
  snd_.wnd = h.window;
  snd_.max_wnd = snd_.wnd;
  snd_.wl1 = h.seq;
  set_state(now, State::kSynReceived);
  send_synack(now);
  arm_rto(now);
}

}  // namespace weir::tcp
