#include "tcp/rtt.h"

#include <algorithm>
#include <cstdint>

namespace weir::tcp {

void RttEstimator::sample(Duration rtt, Seq32 snd_una, Seq32 snd_nxt, Time now) {
  int64_t m = std::max<int64_t>(rtt.us(), 1);
  if (min_rtt_ == Duration::infinite() || rtt <= min_rtt_ || now - min_rtt_stamp_ > min_rtt_window_) {
    min_rtt_ = Duration::us(m);
    min_rtt_stamp_ = now;
  }
  const int64_t min_var = rto_min_.us();  // rttvar floor (Linux tcp_rto_min_us)
  if (srtt_us_ != 0) {
    // RFC 6298 (2.3) in Linux's fixed point: SRTT += (R' - SRTT)/8,
    // RTTVAR += (|SRTT - R'| - RTTVAR)/4, with a smaller gain for RTTs
    // that fall (Linux: "mdev" shrinks slowly so a dip does not cut the RTO).
    m -= (srtt_us_ >> 3);
    srtt_us_ += m;
    if (m < 0) {
      m = -m;
      m -= (mdev_us_ >> 2);
      if (m > 0) m >>= 3;
    } else {
      m -= (mdev_us_ >> 2);
    }
    mdev_us_ += m;
    if (mdev_us_ > mdev_max_us_) {
      mdev_max_us_ = mdev_us_;
      rttvar_us_ = std::max(rttvar_us_, mdev_max_us_);
    }
    if (snd_una > rtt_seq_) {  // once per flight, let rttvar decay toward mdev_max
      if (mdev_max_us_ < rttvar_us_) rttvar_us_ -= (rttvar_us_ - mdev_max_us_) >> 2;
      rtt_seq_ = snd_nxt;
      mdev_max_us_ = min_var;
    }
  } else {
    // RFC 6298 (2.2): SRTT = R, RTTVAR = R/2.
    srtt_us_ = m << 3;
    mdev_us_ = m << 1;
    rttvar_us_ = std::max(mdev_us_, min_var);
    mdev_max_us_ = rttvar_us_;
    rtt_seq_ = snd_nxt;
  }
  // Linux __tcp_set_rto: RTO = SRTT + RTTVAR-term (the term already holds 4*rttvar).
  Duration rto = Duration::us((srtt_us_ >> 3) + rttvar_us_);
  rto_ = std::clamp(rto, rto_min_, rto_max_);  // RFC 6298 (2.4), (2.5)
}

void RttEstimator::shift_srtt(Duration delta) {
  // tp->srtt_us is a u32 scaled by 8: clamp_t(s64, srtt, 1, ~0U).
  srtt_us_ = std::clamp<int64_t>(srtt_us_ + (delta.us() << 3), 1, UINT32_MAX);
  rto_ = std::clamp(Duration::us((srtt_us_ >> 3) + rttvar_us_), rto_min_, rto_max_);
  min_rtt_ = Duration::infinite();
}

}  // namespace weir::tcp
