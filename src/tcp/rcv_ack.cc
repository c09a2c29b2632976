// When to ACK: Linux's delayed-ACK engine (quick-ACK mode, ATO estimation,
// ping-pong detection, SACK compression) and receive-buffer autotuning with
// the receiver RTT estimate. RFC 9293 §3.8.6.3 / RFC 1122 §4.2.3.2 bound the
// delay (< 0.5 s, an ACK for at least every second full-sized segment); Linux
// fills in the rest and is followed here.
#include <algorithm>

#include "tcp/receiver.h"

namespace weir::tcp {

// Linux tcp_event_data_recv: in-order data arrived.
void Receiver::event_data_recv(Time now, uint32_t len, Duration rto, uint32_t gso_size) {
  ack_pending_ = true;
  // Linux tcp_measure_rcv_mss: an aggregate's segments are gso_size long.
  measure_rcv_mss(gso_size ? gso_size : len);
  rcv_rtt_measure(now);
  const Duration ato_min = cfg_.ato_min;
  if (ato_ == Duration::zero()) {
    // The first data: start in quick-ACK mode so slow start is not slowed.
    incr_quickack(kMaxQuickAcks);
    ato_ = ato_min;
  } else {
    const Duration m = now - lrcvtime_;  // inter-arrival time
    if (m <= ato_min / 2) {
      ato_ = ato_ / 2 + ato_min / 2;
    } else if (m < ato_) {
      ato_ = ato_ / 2 + m;
      if (ato_ > rto) ato_ = rto;
    } else if (m > rto) {
      // A gap longer than the RTO: the sender restarts; ACK quickly again.
      incr_quickack(kMaxQuickAcks);
    }
  }
  lrcvtime_ = now;
  if (len >= 128) grow_window(len);
}

// Linux tcp_measure_rcv_mss: the peer's segment size, as seen. Segments at
// least as large as the estimate raise it (up to our advertised MSS); two
// equal segments of at least 536 bytes set it; smaller ones mark the ACK
// state "pushed" (tcp_cleanup_rbuf then ACKs when the reader drains them).
void Receiver::measure_rcv_mss(uint32_t len) {
  const uint32_t lss = last_seg_size_;
  last_seg_size_ = 0;
  if (len >= rcv_mss_) {
    rcv_mss_ = std::min(len, advmss_);
    return;
  }
  // Linux compares the segment with its TCP header against 536 + 20; the
  // fixed header cancels out, the timestamp option does not.
  if (len + (timestamps_ ? 12u : 0u) >= kMssDefault) {
    last_seg_size_ = len;
    if (len == lss) {
      rcv_mss_ = len;
      return;
    }
  }
  if (pushed_) pushed2_ = true;
  pushed_ = true;
}

// Linux tcp_grow_window: open rcv_ssthresh (the SWS-avoiding limit on the
// window) by two segments per data segment, while the buffer has room, and
// ACK the next segment at once so the sender learns of it.
void Receiver::grow_window(uint32_t len) {
  const int64_t limit = std::min(window_clamp_, free_space());
  const int64_t room = limit - int64_t{rcv_ssthresh_};
  if (room <= 0) return;
  const int64_t incr = std::max<int64_t>(2 * int64_t{advmss_}, 2 * int64_t{len});
  rcv_ssthresh_ += static_cast<uint32_t>(std::min(room, incr));
  quick_ |= 1;
}

void Receiver::incr_quickack(uint32_t max_quickacks) {
  uint32_t q = rcv_mss_ ? rcv_wnd_ / (2 * rcv_mss_) : 0;
  if (q == 0) q = 2;
  q = std::min(q, max_quickacks);
  if (q > quick_) quick_ = q;
}

void Receiver::enter_quickack(uint32_t max_quickacks) {
  incr_quickack(max_quickacks);
  pingpong_ = 0;
  ato_ = cfg_.ato_min;
}

void Receiver::enter_quickack_mode() { enter_quickack(kMaxQuickAcks); }

void Receiver::schedule_ack(Time now, Time deadline) {
  ack_pending_ = true;
  lrcvtime_ = now;
  enter_quickack(kMaxQuickAcks);
  ack_timer_ = true;
  delack_deadline_ = deadline;
}

// Linux tcp_in_quickack_mode: a route's quickack metric, or quick-ACK credit
// outside ping-pong mode.
bool Receiver::in_quickack_mode() const {
  return cfg_.route_quickack || (quick_ > 0 && !in_pingpong_mode());
}

// Linux __tcp_ack_snd_check, after the segment is queued. ACK now when more
// than one full-sized segment is unacknowledged and the window the peer will
// see is no smaller than the one it has (seed 001: with rcv.wnd kept within
// 65535 << shift the comparison is fair, so every second segment is ACKed
// even with a big unscaled buffer); in quick-ACK mode; or when a state change
// requires it. Otherwise delay, except that out-of-order arrivals with SACK
// get three immediate duplicate ACKs and are then compressed (Linux 4.18+;
// RFC 5681 §4.2 asks for an immediate duplicate ACK, Linux coalesces beyond
// the three that trigger fast retransmit).
bool Receiver::ack_snd_check(Time now, Duration srtt) {
  if (!ack_pending_) return false;
  bool over = false;
  if (seq_len(rcv_wup_, rcv_nxt_) > rcv_mss_) {
    if (seq_len(copied_seq_, rcv_nxt_) < rcvlowat_) {
      over = true;  // SO_RCVLOWAT not yet met: keep the data coming
    } else {
      damp_quickack();
      over = compute_window() >= rcv_wnd_;
    }
  }
  if (over || in_quickack_mode() || ack_now_flag_) return true;
  if (ofo_.empty() && !ofo_fin_) return send_delayed_ack(now, srtt);
  if (!sack_ok_ || compressed_ack_ >= kCompSackNr) return true;
  if (compressed_ack_rcv_nxt_ != rcv_nxt_) {
    compressed_ack_rcv_nxt_ = rcv_nxt_;
    dup_ack_counter_ = 0;
  }
  if (dup_ack_counter_ < 3) {  // TCP_FASTRETRANS_THRESH
    ++dup_ack_counter_;
    return true;
  }
  ++compressed_ack_;
  if (!comp_deadline_.is_never()) return false;
  // 5% of the RTT, at most tcp_comp_sack_delay_ns.
  int64_t rtt8 = rcv_rtt8_us_;
  const int64_t srtt8 = srtt.us() * 8;
  if (srtt8 > 0 && (rtt8 == 0 || srtt8 < rtt8)) rtt8 = srtt8;
  const Duration delay = std::min(kCompSackDelay, Duration::ns(rtt8 * 1000 / 8 / 20));
  comp_deadline_ = now + delay;
  return false;
}

// Linux tcp_send_delayed_ack: the timer runs ATO, bounded by the smoothed
// RTT (no point waiting longer than the sender does) and by TCP_DELACK_MAX.
// An already armed timer is kept if earlier; one about to fire means ACK now.
bool Receiver::send_delayed_ack(Time now, Duration srtt) {
  Duration ato = ato_;
  if (ato > cfg_.delack_min) {
    Duration max_ato = (in_pingpong_mode() || pushed_) ? cfg_.delack_max : Duration::ms(500);
    if (srtt > Duration::zero()) {
      const Duration rtt = std::max(srtt, cfg_.delack_min);
      if (rtt < max_ato) max_ato = rtt;
    }
    ato = std::min(ato, max_ato);
  }
  ato = std::min(ato, cfg_.delack_max);
  Time timeout = now + ato;
  if (ack_timer_) {
    if (delack_deadline_ <= now + ato / 4) return true;
    if (!(timeout < delack_deadline_)) timeout = delack_deadline_;
  }
  ack_timer_ = true;
  delack_deadline_ = timeout;
  return false;
}

Time Receiver::delack_deadline() const {
  const Time d = (ack_pending_ && ack_timer_) ? delack_deadline_ : Time::never();
  return min(d, comp_deadline_);
}

// Linux tcp_delack_timer_handler and tcp_compressed_ack_kick.
bool Receiver::on_delack_timer(Time now, Duration rto, Counters& c) {
  flush_counters(c);
  bool send = false;
  if (!comp_deadline_.is_never() && comp_deadline_ <= now) {
    comp_deadline_ = Time::never();
    if (compressed_ack_ > 0) {
      --compressed_ack_;  // the ACK about to go is not a compressed one
      send = true;
    }
  }
  if (ack_timer_ && delack_deadline_ <= now) {
    ack_timer_ = false;
    delack_deadline_ = Time::never();
    if (ack_pending_) {
      if (!in_pingpong_mode()) {
        ato_ = std::min(ato_ * 2, rto);  // the delay was too short: inflate
      } else {
        pingpong_ = 0;  // interactive guess was wrong: back to bulk mode
        ato_ = cfg_.ato_min;
      }
      c.inc(Counter::TcpExtDelayedACKs);
      send = true;
    }
  }
  return send;
}

// Linux __tcp_sock_set_quickack.
bool Receiver::set_quickack(bool on) {
  if (!on) {
    pingpong_ = kPingpongThresh;
    return false;
  }
  pingpong_ = 0;
  if (synced_ && ack_pending_) {
    pushed_ = true;
    return cleanup_rbuf(1);
  }
  return false;
}

// Linux tcp_cleanup_rbuf: after a read, ACK if one is owed and either more
// than a segment is unacknowledged or the reader drained small pushed
// segments; or announce the window if it at least doubles (RFC 9293
// §3.8.6.2.2: only a significant increase is worth a segment).
bool Receiver::cleanup_rbuf(size_t copied) const {
  bool time_to_ack = false;
  if (ack_pending_) {
    const bool drained = rcvq_.empty() && ofo_.empty();
    if (seq_len(rcv_wup_, rcv_nxt_) > rcv_mss_ ||
        (copied > 0 && (pushed2_ || (pushed_ && !in_pingpong_mode())) && drained)) {
      time_to_ack = true;
    }
  }
  if (copied > 0 && !time_to_ack && !fin_in_order_) {
    const uint64_t now_win = receive_window();
    if (2 * now_win <= window_clamp_) {
      const uint32_t nw = compute_window();
      if (nw != 0 && nw >= 2 * now_win) time_to_ack = true;
    }
  }
  return time_to_ack;
}

bool Receiver::window_update_needed() const { return synced_ && cleanup_rbuf(1); }

// ---- receiver RTT and autotuning ----------------------------------------------

// Linux tcp_rcv_rtt_measure: without timestamps, the time to receive one
// window's worth of data bounds the RTT from above; keep the minimum.
void Receiver::rcv_rtt_measure(Time now) {
  if (!rtt_time_.is_never()) {
    if (rcv_nxt_ < rtt_seq_) return;
    Duration d = now - rtt_time_;
    if (d <= Duration::zero()) d = Duration::us(1);
    rcv_rtt_update(d, true);
  }
  rtt_seq_ = rcv_nxt_ + rcv_wnd_;
  rtt_time_ = now;
}

// Linux tcp_rcv_rtt_measure_ts: a full-sized segment echoing our timestamp
// gives a direct sample (the caller passes one only for a new TSecr).
void Receiver::rcv_rtt_measure_ts(uint32_t len, Duration age) {
  if (len < rcv_mss_ || age < Duration::zero()) return;
  rcv_rtt_update(age, false);
}

// Linux tcp_rcv_rtt_update: smoothed (1/8 gain) for timestamp samples, the
// minimum for per-window samples; kept in microseconds << 3 as Linux does.
void Receiver::rcv_rtt_update(Duration sample, bool win_dep) {
  int64_t m = std::max<int64_t>(sample.us(), 1);
  int64_t est = rcv_rtt8_us_;
  if (est != 0) {
    if (!win_dep) {
      m -= est >> 3;
      est += m;
    } else {
      m <<= 3;
      if (m < est) est = m;
    }
  } else {
    est = m << 3;
  }
  rcv_rtt8_us_ = std::max<int64_t>(est, 1);
}

// Linux tcp_rcv_space_adjust (dynamic right-sizing): once per receiver RTT,
// if the application read more than last time, size the buffer for twice
// that plus slow-start growth, up to tcp_rmem[2], and let the clamp follow
// (never above 65535 << shift: the seed-001 fix).
void Receiver::rcv_space_adjust(Time now) {
  if (rcv_rtt8_us_ == 0) return;
  if ((now - space_time_).us() < (rcv_rtt8_us_ >> 3)) return;
  const uint32_t copied = seq_len(space_seq_, copied_seq_);
  if (copied > rcv_space_) {
    if (cfg_.tcp_moderate_rcvbuf && !rcvbuf_locked_ && rcv_space_ > 0) {
      uint64_t rcvwin = 2 * uint64_t{copied} + 16 * uint64_t{advmss_};
      const uint64_t grow = rcvwin * (copied - rcv_space_) / rcv_space_;
      rcvwin += grow << 1;
      const uint64_t rcvbuf = std::min<uint64_t>(space_from_win(rcvwin), cfg_.tcp_rmem[2]);
      if (rcvbuf > rcvbuf_) {
        rcvbuf_ = static_cast<uint32_t>(rcvbuf);
        window_clamp_ = win_from_space(rcvbuf_);
        if (!cfg_.fault_seed001) window_clamp_ = std::min(window_clamp_, max_window());
      }
    }
    rcv_space_ = copied;
  }
  space_seq_ = copied_seq_;
  space_time_ = now;
}

}  // namespace weir::tcp
