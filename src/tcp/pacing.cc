// Internal pacing (Linux tcp_output.c). See pacing.h.
#include "tcp/pacing.h"

#include <algorithm>
#include <limits>

namespace weir::tcp {

bool Pacer::hold_paced(const cc::CcState& tp, Time now) {
  // tcp_pacing_check: the departure time of the next packet has come.
  if (tp.wstamp <= now) return false;
  if (timer_.is_never() || timer_ > tp.wstamp) timer_ = tp.wstamp;
  return true;
}

// `prior` is the stamp before on_sent moved it up to now.
void Pacer::advance_stamp(cc::CcState& tp, uint32_t bytes, uint32_t data_segs_out, Time prior) {
  const uint64_t rate = tp.pacing_rate;
  if (rate == 0 || rate == std::numeric_limits<uint64_t>::max() || data_segs_out < kUnpacedSegs) return;
  // tcp_update_skb_after_send: the next departure is len/rate later, less up
  // to half of that as credit for time the sender sat idle past its stamp
  // (Linux: "take into account OS jitter").
  int64_t len_ns = static_cast<int64_t>(uint64_t{bytes} * 1000000000ull / rate);
  const int64_t credit = (tp.wstamp - prior).ns();
  len_ns -= std::min(len_ns / 2, std::max<int64_t>(credit, 0));
  tp.wstamp = tp.wstamp + Duration::ns(len_ns);
}

bool Pacer::fire(Time now) {
  if (timer_.is_never() || timer_ > now) return false;
  timer_ = Time::never();
  return true;
}

void set_max_pacing_rate(cc::CcState& tp, uint64_t rate) {
  // Linux: ~0U means unlimited; any other value turns pacing on.
  if (rate != std::numeric_limits<uint64_t>::max() && tp.pacing_status == cc::PacingStatus::None)
    tp.pacing_status = cc::PacingStatus::Needed;
  tp.max_pacing_rate = rate;
  tp.pacing_rate = std::min(tp.pacing_rate, rate);
}

}  // namespace weir::tcp
