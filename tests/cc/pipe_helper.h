// A tiny deterministic path for congestion-control unit tests: one sender with
// unlimited (or limited) data, one FIFO bottleneck of a given rate and buffer,
// a fixed base RTT, one ACK per packet, and a manual (virtual) clock. It plays
// the engine's part exactly as cc.h documents the call sequence, with a
// simplified loss recovery (RACK-style detection on FIFO order, cwnd cut to
// ssthresh at once instead of PRR, recovery ends when snd.una passes the
// recovery point). Windows and sequence numbers count whole packets.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <vector>

#include "tcp/cc/cc.h"

namespace weir::cc::test {

struct PathConfig {
  Duration rtt = Duration::ms(40);  // base (propagation) RTT
  uint64_t rate_pps = 0;            // bottleneck packets/s; 0: no bottleneck
  uint32_t buffer = 0;              // bottleneck queue limit, packets; 0: unbounded
  uint32_t mss = 1000;
  // A token-bucket policer in front of the bottleneck (0: none): packets
  // beyond `policer_pps` with a bucket of `policer_burst` packets are dropped.
  uint64_t policer_pps = 0;
  uint32_t policer_burst = 10;
};

class Pipe {
 public:
  Pipe(CongestionControl& cc, const PathConfig& cfg, Time start = Time::zero());

  // Runs events up to and including time `t`.
  void run_until(Time t);
  // Runs until `pred()` holds after an ACK, or time `limit`; true if it held.
  bool run_until(const std::function<bool()>& pred, Time limit);

  // Drops the next packet sent (and only it), whatever the buffer.
  void drop_next_send() { drop_next_ = true; }
  // The application stops after `n` more packets (0: app-limited now).
  void limit_app(uint64_t n) { app_left_ = n; }
  void unlimit_app() { app_left_ = UINT64_MAX; try_send(); }

  CcState tp;
  Counters mib;
  Time now;
  uint64_t acks = 0;
  uint64_t drops = 0;
  uint64_t recoveries = 0;
  uint64_t rtos = 0;
  RateSample last_rs;
  Duration last_rtt;
  std::function<void()> on_ack;  // called after each ACK is fully processed

 private:
  struct Pkt {
    Time sent;
    TxRateSnapshot snap;
    bool delivered = false;
    bool lost = false;
    bool retrans = false;      // latest transmission is a retransmission (Karn)
    bool rtx_counted = false;  // counted in retrans_out_
    bool in_order = false;     // latest transmission is in tx_order_
    uint32_t tx_count = 0;
  };
  struct Event {
    Time t;
    uint64_t order;
    bool is_send_timer;
    uint64_t pkt;
    uint32_t tx;  // which transmission of pkt this ACK is for
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : order > o.order; }
  };

  void process_ack(uint64_t k, uint32_t tx);
  uint32_t detect_losses(uint64_t k);
  void enter_recovery();
  void on_rto();
  void check_counts();
  Time rto_deadline() const;
  void try_send();
  void transmit(uint64_t k, bool retrans);
  void schedule(Time t, bool timer, uint64_t k, uint32_t tx);
  bool policed();
  Seq32 seq(uint64_t k) const { return Seq32(1000u) + static_cast<uint32_t>(k * cfg_.mss); }
  uint32_t in_flight() const {
    return static_cast<uint32_t>(packets_out_ - sacked_out_ - lost_out_ + retrans_out_);
  }

  CongestionControl& cc_;
  PathConfig cfg_;
  std::vector<Pkt> pkts_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::deque<uint64_t> tx_order_;   // outstanding transmissions in send order (RACK)
  std::deque<uint64_t> rtx_queue_;  // lost packets awaiting retransmission
  uint64_t order_ = 0;
  uint64_t una_ = 0;  // first packet not cumulatively ACKed
  uint64_t nxt_ = 0;  // next new packet
  uint64_t packets_out_ = 0, sacked_out_ = 0, lost_out_ = 0, retrans_out_ = 0;
  uint64_t recovery_point_ = 0;
  uint64_t app_left_ = UINT64_MAX;
  Time bottleneck_free_;
  std::deque<Time> queue_;  // service-end times of packets at the bottleneck
  Time next_send_;
  Time rto_base_;  // when the retransmission timer was last (re)started
  double tokens_ = 0;
  Time tokens_at_;
  bool timer_armed_ = false;
  bool drop_next_ = false;
  Duration srtt_;
};

}  // namespace weir::cc::test
