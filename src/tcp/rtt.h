// RTT estimation and the retransmission timeout (RFC 6298), with Linux's
// refinements (tcp_rtt_estimator): the variance term never drops below
// rto_min, and it decays at most once per round trip, so an RTO is
// srtt + max(4*rttvar, 200 ms) at least and 1 s before any sample.
#pragma once

#include <algorithm>
#include <cstdint>

#include "weir/seq.h"
#include "weir/time.h"

namespace weir::tcp {

class RttEstimator {
 public:
  RttEstimator(Duration rto_initial, Duration rto_min, Duration rto_max)
      : rto_(rto_initial), rto_min_(rto_min), rto_max_(rto_max) {}

  // One RTT measurement (Karn's rule is the caller's: never from a
  // retransmitted segment unless timestamps disambiguate, RFC 7323 §4).
  // `snd_una`/`snd_nxt` pace the variance decay to once per flight.
  void sample(Duration rtt, Seq32 snd_una, Seq32 snd_nxt, Time now);

  // The RTO before backoff, RFC 6298 (2.2)/(2.3), clamped to [min, max] (2.4)/(2.5).
  Duration rto() const { return rto_; }
  // RFC 6298 (5.5): the timer backs off by doubling, up to rto_max.
  Duration backed_off_rto(int backoff) const;

  bool has_sample() const { return srtt_us_ != 0; }
  // Linux's tcp_info units: srtt and rttvar in microseconds.
  uint32_t srtt_us() const { return static_cast<uint32_t>(srtt_us_ >> 3); }
  uint32_t rttvar_us() const { return static_cast<uint32_t>(rttvar_us_ >> 2); }
  uint32_t mdev_us() const { return static_cast<uint32_t>(mdev_us_ >> 2); }
  Duration srtt() const { return Duration::us(srtt_us_ >> 3); }
  // Windowed minimum (Linux tcp_min_rtt_wlen): the lowest sample in the window.
  Duration min_rtt() const { return min_rtt_; }
  void set_min_rtt_window(Duration w) { min_rtt_window_ = w; }
  Duration rto_min() const { return rto_min_; }
  Duration rto_max() const { return rto_max_; }
  void set_rto_min(Duration d) { rto_min_ = d; }
  // TCP_TX_DELAY changed on an established flow by `delta` (Linux
  // tcp_enable_tx_delay, best effort): SRTT moves by it at once, the RTO is
  // recomputed from it (tcp_set_rto, backoff not considered) and the
  // windowed minimum starts over (minmax_reset to ~0U).
  void shift_srtt(Duration delta);

 private:
  int64_t srtt_us_ = 0;     // scaled by 8, as Linux's srtt_us
  int64_t mdev_us_ = 0;     // scaled by 4
  int64_t mdev_max_us_ = 0;
  int64_t rttvar_us_ = 0;   // scaled by 4 (rto = srtt + rttvar)
  Seq32 rtt_seq_;
  Duration rto_;
  Duration rto_min_;
  Duration rto_max_;
  Duration min_rtt_ = Duration::infinite();
  Time min_rtt_stamp_;
  Duration min_rtt_window_ = Duration::s(300);
};

// Inline: Connection::set_xmit_timer asks twice per ACK.
inline Duration RttEstimator::backed_off_rto(int backoff) const {
  Duration d = rto_;
  for (int i = 0; i < backoff && d < rto_max_; ++i) d = d * 2;
  return std::min(d, rto_max_);
}

}  // namespace weir::tcp
