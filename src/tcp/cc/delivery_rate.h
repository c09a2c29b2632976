// Delivery-rate estimation, as Linux net/ipv4/tcp_rate.c (after the IETF draft
// "Delivery Rate Estimation", draft-cheng-iccrg-delivery-rate-estimation).
//
// Every data packet carries a snapshot of the connection's delivery state taken
// when it is sent (TxRateSnapshot, stored per packet by the scoreboard). When an
// ACK (or SACK) delivers packets, the most recently sent of them gives the
// sample's start: the rate is (delivered now - delivered then) over the longer
// of the send phase and the ACK phase. Samples taken while the application had
// nothing to send are marked app-limited, so that a model of the bottleneck
// (BBR's max filter) can ignore them unless they are higher than what it has.
//
// Call sites (the engine, mirroring Linux):
//   on_packet_sent()       tcp_rate_skb_sent(): each data packet, new or
//                          retransmitted, as it is handed to the wire; the
//                          result is stored with the packet in the scoreboard.
//   count_delivered()      tcp_count_delivered(): each packet newly cumulatively
//                          ACKed or SACKed (not DSACKed) in this ACK.
//   on_packet_delivered()  tcp_rate_skb_delivered(): each such packet, with the
//                          snapshot it was sent with (its `valid` flag is cleared
//                          when SACKed so a later cumulative ACK skips it).
//   generate()             tcp_rate_gen(): once per ACK, after the above and
//                          before congestion control sees the sample.
//   check_app_limited()    tcp_rate_check_app_limited(): when the application
//                          asks to send (sendmsg) and at the end of a send attempt.
#pragma once

#include <cstdint>

#include "weir/seq.h"
#include "weir/tcp_info.h"
#include "weir/time.h"

namespace weir::cc {

// What a packet remembers about the connection at the moment it was sent
// (Linux: TCP_SKB_CB(skb)->tx). `valid` replaces Linux's "delivered_mstamp != 0"
// test, because in virtual time 0 is a legitimate timestamp.
struct TxRateSnapshot {
  uint64_t delivered = 0;     // tp->delivered when sent
  uint32_t delivered_ce = 0;  // tp->delivered_ce when sent
  Time delivered_time;        // tp->delivered_mstamp: when `delivered` last grew
  Time first_tx_time;         // tp->first_tx_mstamp: start of the send phase
  bool is_app_limited = false;
  bool valid = false;
};

// One ACK's delivery-rate sample (Linux struct rate_sample).
struct RateSample {
  // Filled from the packets delivered by this ACK (on_packet_delivered()).
  Time prior_time;               // rs->prior_mstamp: delivered_time of the chosen packet
  uint64_t prior_delivered = 0;  // rs->prior_delivered
  uint32_t prior_delivered_ce = 0;
  bool has_prior = false;        // a packet with a valid snapshot was delivered
  Seq32 last_end_seq;            // end_seq of the chosen packet (tie-break)
  bool is_app_limited = false;
  bool is_retrans = false;       // the chosen packet was a retransmission

  // Filled by generate().
  int64_t delivered = -1;        // packets delivered over `interval`; -1: invalid
  uint32_t delivered_ce = 0;
  Duration interval = Duration::ns(-1);  // max(snd, rcv); negative: invalid
  Duration snd_interval = Duration::ns(-1);
  Duration rcv_interval = Duration::ns(-1);
  uint32_t acked_sacked = 0;     // packets newly ACKed or SACKed by this ACK
  uint32_t losses = 0;           // packets newly marked lost by this ACK

  // Filled by the engine (Linux tcp_ack / tcp_clean_rtx_queue).
  Duration rtt = Duration::ns(-1);  // rs->rtt_us: RTT of the most recent (s)acked packet; <0 none
  uint32_t prior_in_flight = 0;     // tcp_packets_in_flight() before this ACK
  bool is_ack_delayed = false;      // FLAG_ACK_MAYBE_DELAYED

  bool valid() const { return delivered >= 0 && interval.ns() > 0; }
};

// The connection's delivery-rate state (Linux: tp->delivered, delivered_ce,
// delivered_mstamp, first_tx_mstamp, app_limited, rate_delivered,
// rate_interval_us, rate_app_limited). Owned by value inside CcState.
class DeliveryRate {
 public:
  // tcp_rate_skb_sent(). `packets_out` is the number of packets outstanding
  // before this one (Linux uses packets_out, not in-flight, so that spurious
  // loss marks cannot shorten the interval).
  TxRateSnapshot on_packet_sent(Time tx_time, uint32_t packets_out);

  // tcp_count_delivered(): `pkts` newly delivered; `ce` when the ACK carried ECE.
  void count_delivered(uint32_t pkts, bool ce);

  // tcp_rate_skb_delivered(). `snap` is the packet's snapshot (its validity is
  // cleared when `sacked`, so the cumulative ACK that later covers it does not
  // count it twice); `tx_time` is when the packet was (last) sent.
  void on_packet_delivered(TxRateSnapshot& snap, Time tx_time, Seq32 end_seq,
                           bool is_retrans, bool sacked, RateSample& rs);

  // tcp_rate_gen(): completes `rs`. `newly_delivered` is how much delivered()
  // grew during this ACK, `lost` how many packets this ACK marked lost,
  // `min_rtt` the connection's windowed min RTT (a sample shorter than it is
  // discarded as ACK compression or a spurious retransmission's artefact;
  // zero means no RTT measured yet, and then nothing is discarded, where
  // Linux's ~0U "none" would discard every sample).
  void generate(RateSample& rs, uint32_t newly_delivered, uint32_t lost,
                bool is_sack_reneg, Duration min_rtt, Time now);

  // tcp_rate_check_app_limited(): the sender has less than one MSS to send, is
  // not cwnd-limited and has retransmitted everything lost: mark the bubble.
  void check_app_limited(uint32_t unsent_bytes, uint32_t mss, uint32_t in_flight,
                         uint32_t cwnd, uint32_t lost_out, uint32_t retrans_out);

  // Marks the current flight app-limited (BBR's PROBE_RTT does this so its
  // deliberately low rate samples do not lower the bandwidth model).
  void mark_app_limited(uint32_t in_flight) {
    uint64_t end = delivered_ + in_flight;
    app_limited_ = end != 0 ? end : 1;
  }

  uint64_t delivered() const { return delivered_; }
  uint32_t delivered_ce() const { return delivered_ce_; }
  // tp->app_limited: 0 when not app-limited, else the `delivered` value that
  // ends the app-limited phase.
  uint64_t app_limited() const { return app_limited_; }
  Time delivered_time() const { return delivered_time_; }

  // tcpi_delivery_rate (bytes/s) and tcpi_delivery_rate_app_limited.
  uint64_t delivery_rate_bytes_per_sec(uint32_t mss) const;
  bool rate_app_limited() const { return rate_app_limited_; }
  void fill_info(TcpInfo& info, uint32_t mss) const;

 private:
  uint64_t delivered_ = 0;
  uint32_t delivered_ce_ = 0;
  Time delivered_time_;
  Time first_tx_time_;
  uint64_t app_limited_ = 0;
  // The last non-app-limited sample, or the highest app-limited one.
  uint64_t rate_delivered_ = 0;
  Duration rate_interval_;
  bool rate_app_limited_ = false;
};

// Inline: called for every data packet sent (Linux tcp_rate_skb_sent is
// likewise a few stores per skb).
inline TxRateSnapshot DeliveryRate::on_packet_sent(Time tx_time, uint32_t packets_out) {
  // With nothing outstanding, the sample interval starts now: any ACK after
  // this shows the network delivered those packets within the interval.
  if (packets_out == 0) {
    first_tx_time_ = tx_time;
    delivered_time_ = tx_time;
  }
  TxRateSnapshot s;
  s.delivered = delivered_;
  s.delivered_ce = delivered_ce_;
  s.delivered_time = delivered_time_;
  s.first_tx_time = first_tx_time_;
  s.is_app_limited = app_limited_ != 0;
  s.valid = true;
  return s;
}

}  // namespace weir::cc
