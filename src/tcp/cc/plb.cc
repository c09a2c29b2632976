// Protective Load Balancing as Linux net/ipv4/tcp_plb.c. See plb.h.
#include "tcp/cc/plb.h"

namespace weir::cc {

void plb_update_state(const PlbParams& p, PlbState& s, int cong_ratio) {
  if (!p.enabled || cong_ratio < 0) return;
  if (static_cast<uint32_t>(cong_ratio) < p.cong_thresh) s.consec_cong_rounds = 0;
  else if (s.consec_cong_rounds < p.rehash_rounds) ++s.consec_cong_rounds;
}

bool plb_check_rehash(const PlbParams& p, PlbState& s, uint32_t packets_out, Time now) {
  if (!p.enabled) return false;
  const bool forced = s.consec_cong_rounds >= p.rehash_rounds;
  // "If sender goes idle then we check whether to rehash": moving with
  // nothing in flight cannot reorder anything.
  const bool idle = p.idle_rehash_rounds != 0 && packets_out == 0 && s.consec_cong_rounds >= p.idle_rehash_rounds;
  if (!forced && !idle) return false;
  // Linux also clears a pause whose end lies more than 2 * suspend_rto_sec
  // ahead (tcp_jiffies32 wrapped); weir's 64-bit clock does not wrap.
  if (s.pause_until != Time::zero() && now >= s.pause_until) s.pause_until = Time::zero();
  if (s.pause_until != Time::zero()) return false;
  s.consec_cong_rounds = 0;
  return true;
}

void plb_update_state_upon_rto(const PlbParams& p, PlbState& s, Time now, uint32_t random) {
  if (!p.enabled) return;
  // "pause += get_random_u32_below(pause)": [suspend, 2 * suspend).
  // In microseconds (at most 255 s: the product fits 64 bits).
  const uint64_t pause_us = uint64_t{p.suspend_rto_sec} * 1'000'000;
  const uint64_t extra_us = (pause_us * random) >> 32;
  s.pause_until = now + Duration::us(static_cast<int64_t>(pause_us + extra_us));
  // The RTO's own rehash may have moved the connection to a path with other
  // congestion: count rounds afresh.
  s.consec_cong_rounds = 0;
}

}  // namespace weir::cc
