// tcp_info with Linux's meanings (tcp_get_info in net/ipv4/tcp.c), and the
// ICMP-driven events (tcp_v4_err / tcp_v6_err).
#include <algorithm>

#include "tcp/connection.h"

namespace weir::tcp {

TcpInfo Connection::info(Time now) const {
  TcpInfo i;
  // TIME-WAIT is the timewait sock's; the socket itself is CLOSED
  // (tcp_time_wait -> tcp_done), which is what its holder reads.
  i.tcpi_state = linux_state(state_ == State::kTimeWait ? State::kClosed : state_);
  i.tcpi_ca_state = static_cast<uint8_t>(ca_state_);
  i.tcpi_retransmits = static_cast<uint8_t>(std::min(retransmits_, 255));
  i.tcpi_probes = probes_out_;
  i.tcpi_backoff = static_cast<uint8_t>(std::min(backoff_, 255));
  if (ts_ok_) i.tcpi_options |= 1;    // TCPI_OPT_TIMESTAMPS
  if (sack_ok_) i.tcpi_options |= 2;  // TCPI_OPT_SACK
  if (wscale_ok_) {
    i.tcpi_options |= 4;              // TCPI_OPT_WSCALE
    i.tcpi_snd_wscale = snd_.wscale;
  }
  if (ecn_.ok) i.tcpi_options |= 8;     // TCPI_OPT_ECN
  if (ecn_.seen) i.tcpi_options |= 16;  // TCPI_OPT_ECN_SEEN
  if (syn_data_acked_) i.tcpi_options |= 32;  // TCPI_OPT_SYN_DATA (RFC 7413)
  rcv_.fill_info(i);
  if (!wscale_ok_) i.tcpi_rcv_wscale = 0;
  const Duration rto = timers_.retransmit_mode == RetransmitMode::kRto ? rtt_.backed_off_rto(backoff_) : rtt_.rto();
  i.tcpi_rto = static_cast<uint32_t>(rto.us());
  i.tcpi_snd_mss = mss_cache_;
  i.tcpi_unacked = sb_.packets_out();
  i.tcpi_sacked = sb_.sacked_out();
  i.tcpi_lost = sb_.lost_out();
  i.tcpi_retrans = sb_.retrans_out();
  auto since_ms = [now](Time t) { return static_cast<uint32_t>(std::max<int64_t>((now - t).ms(), 0)); };
  i.tcpi_last_data_sent = since_ms(last_snd_data_);
  i.tcpi_last_data_recv = since_ms(last_rcv_data_);
  i.tcpi_last_ack_recv = since_ms(last_ack_rcv_);
  i.tcpi_pmtu = pmtu_;
  i.tcpi_rtt = rtt_.srtt_us();
  i.tcpi_rttvar = rtt_.rttvar_us();
  i.tcpi_snd_ssthresh = ccs_.snd_ssthresh;
  i.tcpi_snd_cwnd = ccs_.snd_cwnd;
  i.tcpi_advmss = advmss_;
  i.tcpi_reordering = rec_.reordering();
  i.tcpi_reord_seen = rec_.reord_seen();
  i.tcpi_total_retrans = total_retrans_;
  i.tcpi_pacing_rate = ccs_.pacing_rate;
  i.tcpi_max_pacing_rate = ccs_.max_pacing_rate;
  i.tcpi_bytes_acked = bytes_acked_;
  i.tcpi_segs_out = segs_out_;
  i.tcpi_segs_in = segs_in_;
  i.tcpi_notsent_bytes = seq_len(snd_.nxt, write_seq_);
  i.tcpi_min_rtt = rtt_.min_rtt() == Duration::infinite() ? ~0u : static_cast<uint32_t>(rtt_.min_rtt().us());
  i.tcpi_data_segs_out = data_segs_out_;
  i.tcpi_delivered = delivered_;
  i.tcpi_bytes_sent = bytes_sent_;
  i.tcpi_bytes_retrans = bytes_retrans_;
  i.tcpi_dsack_dups = dsack_dups_;
  i.tcpi_snd_wnd = snd_.wnd;
  i.tcpi_total_rto = total_rto_;
  // Linux tcp_get_info: "tcpi_rehash = tp->plb_rehash + tp->timeout_rehash";
  // weir has no PLB (tcp_plb), so only the timeouts'.
  i.tcpi_rehash = plb_rehash_ + timeout_rehash_;
  // Linux tcp_get_info_chrono_stats: busy time is all three clocks together.
  const auto us = [&](Chrono c) { return static_cast<uint64_t>(std::max<int64_t>(chrono_.total(now, c).us(), 0)); };
  i.tcpi_rwnd_limited = us(Chrono::kRwndLimited);
  i.tcpi_sndbuf_limited = us(Chrono::kSndbufLimited);
  i.tcpi_busy_time = us(Chrono::kBusy) + i.tcpi_rwnd_limited + i.tcpi_sndbuf_limited;
  cc_->get_info(i);
  ccs_.rate.fill_info(i, mss_cache_);  // tcpi_delivery_rate, tcpi_delivered (Linux tcp_get_info)
  ccs_.rate.fill_info(i, mss_cache_);
  return i;
}

// Destination unreachable (RFC 1122 §4.2.3.9, RFC 5461): fatal while
// connecting (Linux tcp_v4_err), otherwise a soft error that SO_ERROR and a
// later timeout report.
void Connection::on_icmp_unreach(Time now, Errc err, bool hard, Seq32 quoted_seq) {
  if (!icmp_quote_in_window(quoted_seq)) return;  // Linux: OUTOFWINDOWICMPS
  if (fastopen_pending()) {
    // Linux tcp_v4_err / tcp_v6_err, TCP_SYN_RECV with tp->fastopen_rsk:
    // not accepted yet (req->sk still set), the child ends at once with
    // sk_err = err and tcp_done, staying in the accept queue so that
    // accept() returns it and its calls report the error; once accepted it
    // is "treated as a connected one" (the soft error below).
    if (listener_) {
      env_.counters().inc(Counter::TcpAttemptFails);  // tcp_done in SYN_RECV
      done(now, err);
      return;
    }
  } else if (state_ == State::kSynSent || state_ == State::kSynReceived) {
    if (quoted_seq != snd_.iss) return;
    if (listener_) {
      done(now, Errc::kOk);
      return;
    }
    env_.counters().inc(Counter::TcpAttemptFails);
    done(now, err);
    return;
  }
  if (hard) {
    error_ = err;
    events_ |= conn_event::kReadiness;
  } else {
    soft_error_ = err;
  }
}

// Fragmentation needed / packet too big (RFC 1191, RFC 8201): lower the MSS
// and resend what no longer fits (Linux tcp_v4_mtu_reduced + tcp_simple_retransmit).
void Connection::on_pmtu(Time now, uint32_t mtu, Seq32 quoted_seq) {
  if (!synchronized() && state_ != State::kSynSent) return;
  if (!icmp_quote_in_window(quoted_seq)) return;
  const bool v4 = tuple_.remote.addr.is_v4();
  // Linux ip_rt_min_pmtu (552) for IPv4; IPv6's minimum link MTU is 1280 (RFC 8200 §5).
  mtu = std::max<uint32_t>(mtu, v4 ? 552 : 1280);
  if (mtu >= pmtu_) return;
  update_mss(mtu);
  if (state_ == State::kSynSent) {
    fastopen_syn_pmtu(now, mtu);
    return;
  }
  if (!synchronized()) return;
  simple_retransmit(now);
}

// Linux tcp_simple_retransmit (the ICMP PMTU path and a lost MTU probe):
// what no longer fits is marked lost and resent in pieces, and the
// connection enters Loss with no cut to cwnd ("we do not increase amount
// of _data_ in network, but units changed"): ssthresh keeps the current
// window (tcp_current_ssthresh) and undo is disarmed, as nothing here
// could prove the loss spurious.
void Connection::simple_retransmit(Time now) {
  const uint64_t prior_lost_rtx = sb_.lost_retransmits();
  mark_oversized_lost();
  if (sb_.lost_retransmits() > prior_lost_rtx) {
    env_.counters().inc(Counter::TcpExtTCPLostRetransmit, sb_.lost_retransmits() - prior_lost_rtx);
  }
  if (sb_.lost_out() == 0) return;  // Linux: `if (!tp->lost_out) return;`
  rec_.enter_simple_loss(now, snd_.nxt, *cc_, ccs_);
  if (rec_.ca_state() != ca_state_) {
    ca_state_ = rec_.ca_state();
    trace_event(now, TraceEvent::kCaState, static_cast<uint64_t>(ca_state_));
  }
  retransmit_lost(now);
}

// Linux tcp_simple_retransmit's walk: every unSACKed segment longer than
// the (lowered) MSS is marked lost (tcp_mark_skb_lost: one already lost and
// retransmitted counts as a lost retransmission and goes again).
void Connection::mark_oversized_lost() {
  for (size_t i = 0; i < sb_.size(); ++i) {
    const ScoreboardEntry& e = sb_.at(i);
    if (e.seq.len() > mss_cache_ && !e.sacked() && !(e.lost() && !e.retrans())) sb_.mark_lost(i);
  }
}

}  // namespace weir::tcp

namespace weir::tcp {

Connection::ProcTimer Connection::proc_timer() const {
  if (timers_.armed(TimerKind::kRetransmit)) {
    const bool probe0 = timers_.retransmit_mode == RetransmitMode::kProbe0;
    return {probe0 ? 4 : 1, timers_.deadline(TimerKind::kRetransmit)};
  }
  if (timers_.armed(TimerKind::kKeepalive)) return {2, timers_.deadline(TimerKind::kKeepalive)};
  return {};
}

}  // namespace weir::tcp
