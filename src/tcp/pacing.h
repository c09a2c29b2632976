// Sender pacing as Linux's internal pacing (net/ipv4/tcp_output.c:
// tcp_pacing_check, tcp_update_skb_after_send, the pacing hrtimer) in its
// Earliest Departure Time form: every data packet advances the connection's
// departure stamp (CcState::wstamp) by its length at sk_pacing_rate, and the
// sender holds the next packet until the stamp is reached. The engine asks
// hold() before each new or lost-segment transmission, calls on_sent() after
// each data packet, and runs its transmit path again when the pacing timer
// (deadline()) expires.
//
// When pacing applies (Linux tcp_needs_internal_pacing / sch_fq):
//  * the algorithm needs it (BBR sets PacingStatus::Needed in init),
//  * the application capped the rate with SO_MAX_PACING_RATE, or
//  * the stack paces every socket, as Linux does with net.core.default_qdisc=fq
//    (enable_for_all(); weir has no qdisc below TCP, so the EDT stamps are
//    honoured in the sender instead).
// The rate is cwnd * mss / srtt * tcp_pacing_ss_ratio (200 %) in slow start and
// tcp_pacing_ca_ratio (120 %) after it (cc::update_pacing_rate); BBR sets its own.
#pragma once

#include <algorithm>
#include <cstdint>

#include "tcp/cc/cc.h"
#include "weir/time.h"

namespace weir::tcp {

class Pacer {
 public:
  // Linux sch_fq and internal pacing let the first 10 data packets of a
  // connection leave unpaced ("Original sch_fq does not pace first 10 MSS").
  static constexpr uint32_t kUnpacedSegs = 10;

  // net.core.default_qdisc = fq: pace every socket at its pacing rate.
  void enable_for_all(bool on) { all_ = on; }

  // True if packets of this connection get departure times.
  bool active(const cc::CcState& tp) const { return all_ || tp.pacing_status == cc::PacingStatus::Needed; }

  // tcp_pacing_check(): true if the next packet must wait until tp.wstamp;
  // the pacing timer is then armed for that time. Inline up to the test
  // that settles an unpaced connection: it runs before every transmission.
  bool hold(const cc::CcState& tp, Time now) { return active(tp) && hold_paced(tp, now); }

  // __tcp_transmit_skb + tcp_update_skb_after_send(): a data packet of `bytes`
  // left now; `data_segs_out` counts data packets sent, this one included.
  // Inline up to the test that settles an unpaced connection: it runs for
  // every data packet sent.
  void on_sent(cc::CcState& tp, uint32_t bytes, uint32_t data_segs_out, Time now) const {
    // __tcp_transmit_skb: the packet departs no earlier than now.
    const Time prior = tp.wstamp;
    tp.wstamp = std::max(tp.wstamp, now);
    if (active(tp)) advance_stamp(tp, bytes, data_segs_out, prior);
  }

  // The pacing timer (Time::never() when not armed).
  Time deadline() const { return timer_; }
  // The timer is due: disarms it and returns true (tcp_pace_kick).
  bool fire(Time now);

 private:
  bool hold_paced(const cc::CcState& tp, Time now);  // hold, for a paced connection
  // tcp_update_skb_after_send: the next departure, for a paced connection.
  static void advance_stamp(cc::CcState& tp, uint32_t bytes, uint32_t data_segs_out, Time prior);

  bool all_ = false;
  Time timer_ = Time::never();
};

// SO_MAX_PACING_RATE (Linux sk_setsockopt): caps the rate and, unless
// unlimited (~0U), asks for pacing.
void set_max_pacing_rate(cc::CcState& tp, uint64_t rate);

}  // namespace weir::tcp
