// Reno (RFC 5681) as Linux tcp_reno_cong_avoid / tcp_reno_ssthresh /
// tcp_reno_undo_cwnd.
#include "tcp/cc/reno.h"

#include <algorithm>

namespace weir::cc {

uint32_t reno_ssthresh(const CcState& tp) {
  // RFC 5681 (4) says max(FlightSize/2, 2*SMSS); Linux halves cwnd (in
  // packets) instead of the flight size.
  return std::max(tp.snd_cwnd >> 1, 2u);
}

uint32_t reno_undo_cwnd(const CcState& tp) { return std::max(tp.snd_cwnd, tp.prior_cwnd); }

void Reno::init(CcState& tp, Time now) {
  (void)now;
  tp.snd_cwnd_cnt = 0;
}

uint32_t Reno::ssthresh(CcState& tp, Time now) {
  (void)now;
  return reno_ssthresh(tp);
}

void Reno::cong_avoid(CcState& tp, Seq32 ack, uint32_t acked, Time now, Counters& mib) {
  (void)ack, (void)now, (void)mib;
  reno_cong_avoid(tp, acked);
}

void reno_cong_avoid(CcState& tp, uint32_t acked) {
  // RFC 7661 / Linux: a window the sender does not use is not grown.
  if (!is_cwnd_limited(tp)) return;
  if (in_slow_start(tp)) {
    acked = slow_start(tp, acked);  // RFC 5681 §3.1
    if (acked == 0) return;
  }
  // RFC 5681 §3.1 (3): about one packet per window of ACKed packets.
  cong_avoid_ai(tp, tp.snd_cwnd, acked);
}

uint32_t Reno::undo_cwnd(CcState& tp) { return reno_undo_cwnd(tp); }

void Reno::get_info(TcpInfo& info) const { info.ca_name = "reno"; }

}  // namespace weir::cc
