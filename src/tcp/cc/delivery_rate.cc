// Delivery-rate estimation (Linux net/ipv4/tcp_rate.c). See delivery_rate.h.
#include "tcp/cc/delivery_rate.h"

#include <algorithm>

namespace weir::cc {

void DeliveryRate::count_delivered(uint32_t pkts, bool ce) {
  delivered_ += pkts;
  if (ce) delivered_ce_ += pkts;
}

// Linux tcp_skb_sent_after(): later send time wins; a tie (packets sent in one
// burst) goes to the higher sequence.
static bool sent_after(Time t1, Time t2, Seq32 seq1, Seq32 seq2) {
  return t1 > t2 || (t1 == t2 && seq1 > seq2);
}

void DeliveryRate::on_packet_delivered(TxRateSnapshot& snap, Time tx_time, Seq32 end_seq,
                                       bool is_retrans, bool sacked, RateSample& rs) {
  if (!snap.valid) return;
  // The most recently sent packet delivered by this ACK starts the sample.
  // Linux tests `!rs->prior_delivered`; `has_prior` says the same without
  // treating a real delivered count of 0 as "none".
  if (!rs.has_prior || sent_after(tx_time, first_tx_time_, end_seq, rs.last_end_seq)) {
    rs.has_prior = true;
    rs.prior_delivered = snap.delivered;
    rs.prior_delivered_ce = snap.delivered_ce;
    rs.prior_time = snap.delivered_time;
    rs.is_app_limited = snap.is_app_limited;
    rs.is_retrans = is_retrans;
    rs.last_end_seq = end_seq;
    // The send phase: from the first send of this flight to this packet.
    first_tx_time_ = tx_time;
    rs.interval = tx_time - snap.first_tx_time;
  }
  // A SACKed packet must not start another sample when it is later
  // cumulatively ACKed.
  if (sacked) snap.valid = false;
}

void DeliveryRate::generate(RateSample& rs, uint32_t newly_delivered, uint32_t lost,
                            bool is_sack_reneg, Duration min_rtt, Time now) {
  // The app-limited bubble has been ACKed: samples are trustworthy again.
  if (app_limited_ != 0 && delivered_ > app_limited_) app_limited_ = 0;
  if (newly_delivered != 0) delivered_time_ = now;

  rs.acked_sacked = newly_delivered;
  rs.losses = lost;
  // No timing information, or SACK reneging (which could count packets SACKed
  // before the reneg twice): no sample.
  if (!rs.has_prior || is_sack_reneg) {
    rs.delivered = -1;
    rs.interval = Duration::ns(-1);
    return;
  }
  rs.delivered = static_cast<int64_t>(delivered_ - rs.prior_delivered);
  rs.delivered_ce = delivered_ce_ - rs.prior_delivered_ce;
  // Sending and ACKing are two pipeline phases of one flight; with ACK
  // compression the send phase can be the longer, so use the longer.
  Duration snd = rs.interval;
  Duration ack = now - rs.prior_time;
  rs.interval = max(snd, ack);
  rs.snd_interval = snd;
  rs.rcv_interval = ack;
  // An interval shorter than min RTT cannot be a real delivery rate.
  if (rs.interval < min_rtt) {
    rs.interval = Duration::ns(-1);
    return;
  }
  // Keep the last non-app-limited sample, or an app-limited one that is higher.
  bool higher = static_cast<unsigned __int128>(rs.delivered) * rate_interval_.ns() >=
                static_cast<unsigned __int128>(rate_delivered_) * rs.interval.ns();
  if (!rs.is_app_limited || higher) {
    rate_delivered_ = static_cast<uint64_t>(rs.delivered);
    rate_interval_ = rs.interval;
    rate_app_limited_ = rs.is_app_limited;
  }
}

void DeliveryRate::check_app_limited(uint32_t unsent_bytes, uint32_t mss, uint32_t in_flight,
                                     uint32_t cwnd, uint32_t lost_out, uint32_t retrans_out) {
  // Linux also requires empty qdisc/NIC queues; weir hands packets straight to
  // the Netif, so there is no host queue to check.
  if (unsent_bytes < mss && in_flight < cwnd && lost_out <= retrans_out) {
    uint64_t end = delivered_ + in_flight;
    app_limited_ = end != 0 ? end : 1;
  }
}

uint64_t DeliveryRate::delivery_rate_bytes_per_sec(uint32_t mss) const {
  if (rate_delivered_ == 0 || rate_interval_.ns() <= 0) return 0;
  unsigned __int128 r = static_cast<unsigned __int128>(rate_delivered_) * mss * 1000000000u;
  return static_cast<uint64_t>(r / static_cast<uint64_t>(rate_interval_.ns()));
}

void DeliveryRate::fill_info(TcpInfo& info, uint32_t mss) const {
  info.tcpi_delivery_rate = delivery_rate_bytes_per_sec(mss);
  info.tcpi_delivery_rate_app_limited = rate_app_limited_ ? 1 : 0;
  info.tcpi_delivered = static_cast<uint32_t>(delivered_);
  info.tcpi_delivered_ce = delivered_ce_;
}

}  // namespace weir::cc
