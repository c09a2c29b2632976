// NewReno loss recovery for peers without SACK (RFC 6582), as Linux's
// tcp_newreno_mark_lost() and its handling of high_seq ("recover").
#pragma once

#include <cstdint>

#include "tcp/scoreboard.h"
#include "weir/seq.h"
#include "weir/tcp_info.h"

namespace weir::tcp::recovery {

// RFC 6582 §3.2 step 5: an ACK that advances snd.una but not beyond
// `recover` (Linux high_seq) is a partial ACK.
inline bool is_partial_ack(Seq32 prior_snd_una, Seq32 snd_una, Seq32 high_seq) {
  return prior_snd_una < snd_una && snd_una < high_seq;
}

// RFC 6582 §3.2 step 1 "no new recovery while snd.una <= recover" meets
// Linux tcp_is_non_sack_preventing_reopen(): a non-SACK connection whose
// ACK reached exactly high_seq stays in its state until something above
// high_seq is acknowledged (a duplicate ACK for the last retransmission must
// not trigger a false fast retransmit).
inline bool hold_at_high_seq(bool sack, Seq32 snd_una, Seq32 high_seq) {
  return !sack && snd_una == high_seq;
}

// Linux tcp_newreno_mark_lost(): marks the first unacknowledged packet lost
// (so the engine retransmits it) when duplicate ACKs reached the reordering
// degree outside recovery (RFC 6582 §3.2 step 2, via RFC 5681 §3.2), or on a
// partial ACK in recovery (RFC 6582 §3.2 step 5). Returns true if marked.
bool newreno_mark_lost(Scoreboard& sb, CaState state, uint32_t reordering, bool snd_una_advanced);

}  // namespace weir::tcp::recovery
