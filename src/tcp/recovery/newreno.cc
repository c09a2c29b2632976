#include "tcp/recovery/newreno.h"

namespace weir::tcp::recovery {

bool newreno_mark_lost(Scoreboard& sb, CaState state, uint32_t reordering, bool snd_una_advanced) {
  const bool dupthresh = state < CaState::Recovery && sb.sacked_out() >= reordering;
  const bool partial = state == CaState::Recovery && snd_una_advanced;
  if (!(dupthresh || partial) || sb.empty()) return false;
  if (sb.at(0).lost()) return false;  // already marked (and maybe retransmitted)
  sb.mark_lost(0);
  return true;
}

}  // namespace weir::tcp::recovery
