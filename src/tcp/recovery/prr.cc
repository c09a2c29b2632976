#include "tcp/recovery/prr.h"

#include <algorithm>

namespace weir::tcp::recovery {

uint32_t Prr::cwnd_reduction(uint32_t cwnd, uint32_t ssthresh, uint32_t in_flight,
                             uint32_t newly_acked_sacked, uint32_t newly_lost,
                             bool snd_una_advanced) {
  // Linux returns without a RecoverFS (a reduction never started) too.
  if (newly_acked_sacked == 0 || recover_fs_ == 0) return cwnd;
  prr_delivered_ += newly_acked_sacked;
  const int64_t delta = static_cast<int64_t>(ssthresh) - in_flight;
  int64_t sndcnt;
  if (delta < 0) {
    // RFC 6937: proportional part, rounded up as Linux does.
    const uint64_t dividend =
        static_cast<uint64_t>(ssthresh) * prr_delivered_ + recover_fs_ - 1;
    sndcnt = static_cast<int64_t>(dividend / recover_fs_) - prr_out_;
  } else {
    // RFC 6937 SSRB: at most one more than delivered, not beyond ssthresh.
    sndcnt = std::max<int64_t>(static_cast<int64_t>(prr_delivered_) - prr_out_,
                               newly_acked_sacked);
    if (snd_una_advanced && newly_lost == 0) ++sndcnt;
    sndcnt = std::min(delta, sndcnt);
  }
  // Linux: force the fast retransmit on entering recovery.
  sndcnt = std::max<int64_t>(sndcnt, prr_out_ ? 0 : 1);
  return static_cast<uint32_t>(std::max<int64_t>(0, static_cast<int64_t>(in_flight) + sndcnt));
}

}  // namespace weir::tcp::recovery
