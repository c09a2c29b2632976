// The ACK field (RFC 9293 §3.10.7.4 "fifth"): SND.UNA, the send window,
// RTT samples, and loss detection by duplicate ACKs (RFC 5681 §3.2 with
// RFC 6675's SACK-based count; RACK-TLP and PRR live in recovery/).
#include <algorithm>
#include <array>

#include "tcp/connection.h"

namespace weir::tcp {

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

// RFC 5681 §2 "DUPLICATE ACKNOWLEDGMENT": outstanding data, no data in the
// segment, no SYN/FIN, same ACK, same window.
bool Connection::is_dupack(const InSegment& seg, Seq32 ack, uint32_t prior_wnd) const {
  return sb_.packets_out() > 0 && seg.payload.empty() && !seg.h.has(SYN) && !seg.h.has(FIN) &&
         ack == snd_.una && (uint32_t{seg.h.window} << snd_.wscale) == prior_wnd;
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

// Marks lost what RFC 6675 §4 IsLost() calls lost: an unSACKed packet with
// at least DupThresh SACKed packets above it. Without SACK, the head
// (Linux tcp_mark_head_lost for Reno).
static void mark_sack_losses(Scoreboard& sb, uint32_t dupthresh) {
  if (!sb.sack_enabled()) {
    if (!sb.empty() && !sb.at(0).lost()) sb.mark_lost(0);
    return;
  }
  uint32_t sacked_above = 0;
  for (size_t i = sb.size(); i-- > 0;) {
    const ScoreboardEntry& e = sb.at(i);
    if (e.sacked()) {
      ++sacked_above;
    } else if (sacked_above >= dupthresh && !e.lost()) {
      sb.mark_lost(i);
    }
  }
  if (!sb.empty() && sacked_above >= dupthresh && !sb.at(0).sacked() && !sb.at(0).lost())
    sb.mark_lost(0);
}

// RFC 5681 §3.2 steps 2-3 / RFC 6675 §5: enter fast recovery.
void Connection::enter_recovery(Time now) {
  Counters& c = env_.counters();
  c.inc(sack_ok_ ? Counter::TcpExtTCPSackRecovery : Counter::TcpExtTCPRenoRecovery);
  ccs_.prior_cwnd = ccs_.snd_cwnd;
  ccs_.prior_ssthresh = cc::current_ssthresh(ccs_);
  ccs_.snd_ssthresh = cc_->ssthresh(ccs_, now);
  high_seq_ = snd_.nxt;  // RFC 6582 "recover"
  cc_->set_state(ccs_, CaState::Recovery, now);
  ca_state_ = CaState::Recovery;
  ccs_.ca_state = ca_state_;
  // RFC 6675 §5 step 4.2 / RFC 5681 step 3: cwnd = ssthresh (PRR refines this).
  ccs_.snd_cwnd = std::max<uint32_t>(ccs_.snd_ssthresh, 2);
  c.inc(Counter::TcpExtTCPFastRetrans);
  trace_event(now, TraceEvent::kCaState, static_cast<uint64_t>(ca_state_));
}

void Connection::exit_recovery(Time now) {
  if (ca_state_ == CaState::Recovery) {
    ccs_.snd_cwnd = std::max<uint32_t>(ccs_.snd_ssthresh, 2);  // RFC 6582 §3.2 step 3
    cc_->cwnd_event(ccs_, cc::CaEvent::CompleteCwr, now);
  }
  cc_->set_state(ccs_, CaState::Open, now);
  ca_state_ = CaState::Open;
  ccs_.ca_state = ca_state_;
  sb_.reno_reset();
  trace_event(now, TraceEvent::kCaState, static_cast<uint64_t>(ca_state_));
}

void Connection::on_dupack(Time now, const InSegment& seg, const AckResult& r,
                           uint32_t prior_in_flight) {
  (void)seg, (void)prior_in_flight;
  const uint32_t dupthresh = static_cast<uint32_t>(std::max(env_.cfg().tcp_reordering, 1));
  if (!sack_ok_) sb_.reno_add_dupack();
  ++dupacks_;
  if (ca_state_ == CaState::Open && (sb_.sacked_out() > 0 || r.sacked_packets > 0)) {
    ca_state_ = CaState::Disorder;
    cc_->set_state(ccs_, CaState::Disorder, now);
    ccs_.ca_state = ca_state_;
  }
  if (ca_state_ != CaState::Recovery && ca_state_ != CaState::Loss &&
      sb_.sacked_out() >= dupthresh) {
    enter_recovery(now);
  }
  if (ca_state_ == CaState::Recovery || ca_state_ == CaState::Loss) mark_sack_losses(sb_, dupthresh);
}

void Connection::on_new_ack(Time now, const AckResult& r, uint32_t prior_in_flight) {
  (void)prior_in_flight;
  dupacks_ = 0;
  if (ca_state_ == CaState::Recovery || ca_state_ == CaState::Loss) {
    if (snd_.una >= high_seq_) {
      exit_recovery(now);
    } else if (ca_state_ == CaState::Recovery) {
      // RFC 6582 §3.2 step 5: a partial ACK means the next hole is lost too.
      const uint32_t dupthresh = static_cast<uint32_t>(std::max(env_.cfg().tcp_reordering, 1));
      if (!sack_ok_) sb_.reno_reset();
      mark_sack_losses(sb_, sack_ok_ ? dupthresh : 0);
    }
  } else if (ca_state_ == CaState::Disorder && sb_.sacked_out() == 0) {
    cc_->set_state(ccs_, CaState::Open, now);
    ca_state_ = CaState::Open;
    ccs_.ca_state = ca_state_;
  }
  (void)r;
}

// RFC 9293 §3.10.7.4 "fifth, check the ACK field" (ESTABLISHED and later).
// Returns false when the segment must be dropped.
bool Connection::process_ack(Time now, const InSegment& seg) {
  const Seq32 ack = seg.h.ack;
  Counters& c = env_.counters();
  // RFC 5961 §5.2: acceptable only within [SND.UNA - MAX.SND.WND, SND.NXT].
  if (ack > snd_.nxt || ack < snd_.una - snd_.max_wnd) {
    send_challenge_ack(now, false);
    return false;
  }
  last_ack_rcv_ = now;
  probes_out_ = 0;  // Linux tcp_ack: any acceptable ACK answers the probes
  const Seq32 prior_una = snd_.una;
  const uint32_t prior_wnd = snd_.wnd;
  const uint32_t prior_in_flight = sb_.in_flight();
  std::array<SeqRange, wire::kMaxSackBlocks> blocks{};
  size_t nblocks = 0;
  if (sack_ok_)
    for (size_t i = 0; i < seg.h.options.sack_count; ++i) blocks[nblocks++] = seg.h.options.sack[i];
  if (ack < prior_una) {
    // An old ACK: SACK information is still used (Linux old_ack), the rest not.
    if (nblocks && !sb_.empty())
      (void)sb_.on_ack(prior_una, std::span(blocks.data(), nblocks), now);
    return true;
  }
  const bool dup = is_dupack(seg, ack, prior_wnd);
  update_send_window(seg, ack);
  const Seq32 data_ack = seq_min(ack, sb_.high_data());
  AckResult r;
  if (!sb_.empty() || nblocks) r = sb_.on_ack(seq_max(data_ack, snd_.una), std::span(blocks.data(), nblocks), now);
  if (r.dsack) ++dsack_dups_;
  if (ack > prior_una) {
    const uint32_t acked_data = seq_len(prior_una, seq_min(ack, write_seq_));
    sndq_.consume(acked_data);
    bytes_acked_ += seq_len(prior_una, ack);
    snd_.una = ack;
    retransmits_ = 0;
    retrans_stamp_ = Time::never();
    delivered_ += r.acked_packets;
    events_ |= conn_event::kReadiness;
  }
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
  if (ack > prior_una) on_new_ack(now, r, prior_in_flight);
  else if (dup || r.sacked_packets > 0) on_dupack(now, seg, r, prior_in_flight);
  if (ack > prior_una && ca_state_ != CaState::Recovery) {
    cc::RateSample rs;
    rs.acked_sacked = r.acked_packets + r.sacked_packets;
    rs.prior_in_flight = prior_in_flight;
    if (r.rtt_newest) rs.rtt = *r.rtt_newest;
    ccs_.is_cwnd_limited = prior_in_flight + 1 >= ccs_.snd_cwnd || cc::is_cwnd_limited(ccs_);
    cc::AckEvent ae{ack, true};
    cc::cong_control(*cc_, ccs_, ae, rs, now, c, [] {}, env_.cfg().tcp_pacing_ss_ratio,
                     env_.cfg().tcp_pacing_ca_ratio);
    expand_sndbuf();
  }
  if (ack > prior_una) rearm_rto_after_ack(now);
  if (timers_.armed(TimerKind::kRetransmit) && timers_.retransmit_mode == RetransmitMode::kProbe0 &&
      usable_window() > 0) {
    // Linux tcp_ack_probe: the window opened; push() sends what it can.
    timers_.cancel(TimerKind::kRetransmit);
    backoff_ = 0;
  }
  ack_fin_state(now);
  trace_event(now, TraceEvent::kAck, ack.raw(), snd_.wnd);
  return state_ != State::kClosed;
}

// Our FIN acknowledged: FIN-WAIT-1 -> FIN-WAIT-2, CLOSING -> TIME-WAIT,
// LAST-ACK -> CLOSED (RFC 9293 §3.10.7.4 "fifth", per state).
void Connection::ack_fin_state(Time now) {
  if (!fin_queued_ || snd_.una != write_seq_ + 1) return;
  switch (state_) {
    case State::kFinWait1:
      set_state(now, State::kFinWait2);
      timers_.cancel(TimerKind::kRetransmit);
      // Linux tcp_fin_time: an orphan does not wait in FIN-WAIT-2 forever.
      if (orphan_) timers_.arm(TimerKind::kKeepalive, now + Duration::s(env_.cfg().tcp_fin_timeout_s));
      break;
    case State::kClosing: enter_time_wait(now); break;
    case State::kLastAck: done(now, Errc::kOk); break;
    default: break;
  }
}

}  // namespace weir::tcp
