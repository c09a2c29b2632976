// The test path of pipe_helper.h.
#include "pipe_helper.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace weir::cc::test {

Pipe::Pipe(CongestionControl& cc, const PathConfig& cfg, Time start)
    : now(start), cc_(cc), cfg_(cfg), bottleneck_free_(start), next_send_(start),
      tokens_(cfg.policer_burst), tokens_at_(start) {
  tp.mss = cfg.mss;
  tp.snd_una = seq(0);
  tp.snd_nxt = seq(0);
  tp.lsndtime = start;
  cc_.init(tp, now);
  try_send();
}

void Pipe::schedule(Time t, bool timer, uint64_t k, uint32_t tx) {
  events_.push(Event{t, order_++, timer, k, tx});
}

void Pipe::run_until(Time t) {
  run_until([] { return false; }, t);
}

Time Pipe::rto_deadline() const {
  if (in_flight() == 0) return Time::never();
  // RFC 6298 (2.4)-like: at least 200 ms (Linux TCP_RTO_MIN), else 3 SRTT.
  return rto_base_ + max(Duration::ms(200), srtt_ * 3);
}

bool Pipe::run_until(const std::function<bool()>& pred, Time limit) {
  for (;;) {
    Time next = events_.empty() ? Time::never() : events_.top().t;
    Time rto = rto_deadline();
    if (rto < next && rto <= limit) {
      now = rto;
      on_rto();
      continue;
    }
    if (next > limit) break;
    Event e = events_.top();
    events_.pop();
    now = e.t;
    if (e.is_send_timer) {
      timer_armed_ = false;
      try_send();
      continue;
    }
    process_ack(e.pkt, e.tx);
    if (pred()) return true;
  }
  if (now < limit) now = limit;
  return false;
}

void Pipe::transmit(uint64_t k, bool retrans) {
  if (k == pkts_.size()) pkts_.emplace_back();
  Pkt& p = pkts_[k];
  // Linux tcp_event_data_sent(): TX_START when nothing was in flight.
  if (in_flight() == 0) {
    cc_.cwnd_event(tp, CaEvent::TxStart, now);
    rto_base_ = now;
  }
  tp.lsndtime = now;
  p.snap = tp.rate.on_packet_sent(now, static_cast<uint32_t>(packets_out_));
  p.sent = now;
  p.retrans = retrans;
  p.rtx_counted = retrans;
  p.tx_count++;
  p.in_order = true;
  tx_order_.push_back(k);
  // The bottleneck: FIFO, drop-tail.
  while (!queue_.empty() && queue_.front() <= now) queue_.pop_front();
  bool drop = drop_next_ || policed() || (cfg_.buffer != 0 && queue_.size() > cfg_.buffer);
  drop_next_ = false;
  if (drop) {
    drops++;
    return;
  }
  Time done = now;
  if (cfg_.rate_pps != 0) {
    done = max(now, bottleneck_free_) + Duration::ns(1000000000 / static_cast<int64_t>(cfg_.rate_pps));
    bottleneck_free_ = done;
    queue_.push_back(done);
  }
  schedule(done + cfg_.rtt, false, k, p.tx_count);
}

bool Pipe::policed() {
  if (cfg_.policer_pps == 0) return false;
  tokens_ += (now - tokens_at_).secs() * static_cast<double>(cfg_.policer_pps);
  tokens_ = std::min(tokens_, static_cast<double>(cfg_.policer_burst));
  tokens_at_ = now;
  if (tokens_ < 1) return true;
  tokens_ -= 1;
  return false;
}

void Pipe::try_send() {
  for (;;) {
    bool have_rtx = !rtx_queue_.empty();
    bool have_new = app_left_ > 0;
    if (!have_rtx && !have_new) {
      tp.is_cwnd_limited = false;
      tp.rate.check_app_limited(0, cfg_.mss, in_flight(), tp.snd_cwnd,
                                static_cast<uint32_t>(lost_out_), static_cast<uint32_t>(retrans_out_));
      return;
    }
    if (in_flight() >= tp.snd_cwnd) {
      tp.is_cwnd_limited = true;
      return;
    }
    if (tp.pacing_status == PacingStatus::Needed && tp.pacing_rate != 0) {
      if (now < next_send_) {
        if (!timer_armed_) schedule(next_send_, true, 0, 0);
        timer_armed_ = true;
        return;
      }
      int64_t gap = static_cast<int64_t>(uint64_t{cfg_.mss} * 1000000000u / tp.pacing_rate);
      next_send_ = max(now, next_send_) + Duration::ns(gap);
      tp.wstamp = next_send_;
    }
    if (have_rtx) {
      uint64_t k = rtx_queue_.front();
      rtx_queue_.pop_front();
      if (pkts_[k].delivered) continue;  // a late original arrived meanwhile
      retrans_out_++;
      transmit(k, true);
    } else {
      if (app_left_ != UINT64_MAX) app_left_--;
      transmit(nxt_++, false);
      packets_out_++;
      tp.snd_nxt = seq(nxt_);
    }
    tp.packets_out = static_cast<uint32_t>(packets_out_);
    tp.max_packets_out = std::max(tp.max_packets_out, tp.packets_out);
    tp.packets_in_flight = in_flight();
  }
}

uint32_t Pipe::detect_losses(uint64_t k) {
  // RACK on a FIFO path: every transmission sent before the one just
  // delivered and still undelivered is lost.
  uint32_t lost = 0;
  if (!pkts_[k].in_order) return 0;  // a late copy from before an RTO
  while (!tx_order_.empty()) {
    uint64_t j = tx_order_.front();
    tx_order_.pop_front();
    Pkt& p = pkts_[j];
    p.in_order = false;
    if (j == k) break;
    if (p.delivered) continue;
    if (p.lost) {
      // A lost retransmission (Linux tcp_mark_skb_lost on a retransmitted
      // packet): it leaves retrans_out and is queued again; lost_out keeps it.
      if (!p.rtx_counted) continue;
      retrans_out_--;
      p.rtx_counted = false;
    } else {
      p.lost = true;
      lost_out_++;
      lost++;
    }
    rtx_queue_.push_back(j);
  }
  return lost;
}

void Pipe::on_rto() {
  // Linux tcp_enter_loss(): everything outstanding is lost; cwnd = in flight + 1.
  rtos++;
  tp.prior_ssthresh = current_ssthresh(tp);
  tp.prior_cwnd = tp.snd_cwnd;
  tp.snd_ssthresh = cc_.ssthresh(tp, now);
  cc_.cwnd_event(tp, CaEvent::Loss, now);
  rtx_queue_.clear();
  for (uint64_t k = una_; k < nxt_; ++k) {
    Pkt& p = pkts_[k];
    if (p.delivered) continue;
    if (!p.lost) lost_out_++;
    p.lost = true;
    p.rtx_counted = false;
    p.in_order = false;
    rtx_queue_.push_back(k);
  }
  tx_order_.clear();
  retrans_out_ = 0;
  tp.lost += rtx_queue_.size();
  tp.snd_cwnd = in_flight() + 1;
  cc_.set_state(tp, CaState::Loss, now);
  tp.ca_state = CaState::Loss;
  recovery_point_ = nxt_;
  rto_base_ = now;
  try_send();
}

void Pipe::enter_recovery() {
  recoveries++;
  tp.prior_cwnd = tp.snd_cwnd;
  tp.prior_ssthresh = current_ssthresh(tp);
  tp.snd_ssthresh = cc_.ssthresh(tp, now);  // tcp_init_cwnd_reduction
  cc_.set_state(tp, CaState::Recovery, now);
  tp.ca_state = CaState::Recovery;
  recovery_point_ = nxt_;
}

void Pipe::process_ack(uint64_t k, uint32_t tx) {
  Pkt& p = pkts_[k];
  if (p.delivered || tx != p.tx_count) return;  // a stale copy
  acks++;
  RateSample rs;
  rs.prior_in_flight = in_flight();
  p.delivered = true;
  if (p.lost) lost_out_--;  // a late copy of a packet already marked lost
  if (p.rtx_counted) retrans_out_--;
  p.rtx_counted = false;
  bool sacked = k != una_;
  tp.rate.count_delivered(1, false);
  tp.rate.on_packet_delivered(p.snap, p.sent, seq(k + 1), p.retrans, sacked, rs);
  uint64_t old_una = una_;
  if (sacked) sacked_out_++;
  while (una_ < nxt_ && pkts_[una_].delivered) {
    if (una_ != k) sacked_out_--;
    una_++;
  }
  packets_out_ -= una_ - old_una;
  if (una_ > old_una) rto_base_ = now;  // RFC 6298 (5.3): restart on new data ACKed
  tp.snd_una = seq(una_);
  tp.packets_out = static_cast<uint32_t>(packets_out_);
  // Karn: no RTT from a retransmission.
  Duration rtt = p.retrans ? Duration::ns(-1) : now - p.sent;
  rs.rtt = rtt;
  if (rtt.ns() >= 0) {
    last_rtt = rtt;
    srtt_ = srtt_.ns() == 0 ? rtt : srtt_ + (rtt - srtt_) / 8;  // RFC 6298 (2.3)
    tp.srtt = srtt_;
    if (tp.min_rtt.ns() == 0 || rtt < tp.min_rtt) tp.min_rtt = rtt;
  }
  uint32_t lost = detect_losses(k);
  tp.lost += lost;
  tp.packets_in_flight = in_flight();
  cc_.pkts_acked(tp, AckSample{static_cast<uint32_t>(una_ - old_una), rtt, 0}, now, mib);
  if (lost > 0 && tp.ca_state == CaState::Open) enter_recovery();
  if (tp.ca_state == CaState::Loss && una_ >= recovery_point_) {
    cc_.set_state(tp, CaState::Open, now);
    tp.ca_state = CaState::Open;
  }
  if (tp.ca_state == CaState::Recovery && una_ >= recovery_point_) {
    // tcp_end_cwnd_reduction(), then back to Open.
    if (!cc_.has_cong_control()) {
      tp.snd_cwnd = tp.snd_ssthresh;
      cc_.cwnd_event(tp, CaEvent::CompleteCwr, now);
    }
    cc_.set_state(tp, CaState::Open, now);
    tp.ca_state = CaState::Open;
  }
  tp.rate.generate(rs, 1, lost, false, tp.min_rtt, now);
  last_rs = rs;
  AckEvent ev{tp.snd_una, una_ > old_una};
  cong_control(cc_, tp, ev, rs, now, mib, [&] {
    // Stand-in for PRR: cut straight to ssthresh.
    tp.snd_cwnd = std::min(tp.snd_cwnd, std::max(tp.snd_ssthresh, 1u));
  });
  try_send();
  check_counts();
  if (on_ack) on_ack();
}

void Pipe::check_counts() {
  uint64_t sacked = 0, lost = 0, rtx = 0;
  for (uint64_t k = una_; k < nxt_; ++k) {
    if (pkts_[k].delivered) sacked++;
    else if (pkts_[k].lost) lost++;
    if (!pkts_[k].delivered && pkts_[k].rtx_counted) rtx++;
  }
  // The harness's own bookkeeping must match a recount, or its in-flight
  // figure (and everything cc is fed) would be wrong.
  if (sacked != sacked_out_ || lost != lost_out_ || rtx != retrans_out_)
    ADD_FAILURE() << "pipe accounting at t=" << now.secs() << ": sacked " << sacked << "/"
                  << sacked_out_ << " lost " << lost << "/" << lost_out_ << " rtx " << rtx << "/"
                  << retrans_out_;
}

}  // namespace weir::cc::test
