// Linux tcp_retrans_try_collapse (called by __tcp_retransmit_skb for every
// retransmission: the RTO's head, the lost queue, a loss probe): a packet
// retransmitted while shorter than what it could carry first absorbs the
// packets after it, so a flight of small writes (TCP_NODELAY, an
// interactive session) is repaired in full-sized packets instead of one
// retransmission per write. tcp_retrans_collapse = 0 turns it off.
#include "tcp/connection.h"

namespace weir::tcp {

// The room (__tcp_retransmit_skb's avail_wnd): what the peer's window still
// takes from the packet's start, at most one MSS (tcp_current_mss); at
// SND.UNA with no window left, one MSS (the head is always sent). The walk (tcp_retrans_try_collapse
// with tcp_can_collapse and tcp_skb_can_collapse) takes the next packet while
//  - it is a whole skb of one packet, as the first one is (tcp_skb_pcount()
//    == 1; a TSO burst is one skb and is not merged into),
//  - it is not SACKed ("some heuristics for collapsing over SACK'd could be
//    invented"),
//  - no record ends before it (MSG_EOR: tcp_skb_can_collapse_to) and both
//    hold the same kind of memory (skb_pure_zcopy_same),
//  - all of it fits in the room and ends inside the peer's window.
// The merged packet takes the others' flags (tcp_collapse_retrans: "this
// moves PSH/FIN etc. over"), so its PSH is any of theirs: the result, or
// nullopt when nothing was merged (the caller's PSH rule stands).
std::optional<bool> Connection::retrans_collapse(size_t index, Seq32 wnd_end, uint32_t cur_mss) {
  if (env_.cfg().tcp_retrans_collapse == 0) return std::nullopt;
  const ScoreboardEntry& first = sb_.at(index);
  const uint32_t avail = first.seq.begin < wnd_end ? seq_len(first.seq.begin, wnd_end) : 0;
  const uint32_t room = avail == 0 && first.seq.begin == snd_.una ? cur_mss : std::min(avail, cur_mss);
  if (first.seq.len() >= room || first.sacked() || !sb_.alone_in_skb(index)) return std::nullopt;
  int64_t space = static_cast<int64_t>(room) - first.seq.len();
  bool psh = psh_end(first.seq.end);
  bool merged = false;
  while (index + 1 < sb_.size()) {
    const ScoreboardEntry& to = sb_.at(index);
    const ScoreboardEntry& next = sb_.at(index + 1);
    if (next.sacked() || !sb_.alone_in_skb(index + 1)) break;
    if (record_end(to.seq.end) || zerocopy_at(to.seq.begin) != zerocopy_at(next.seq.begin)) break;
    space -= next.seq.len();
    if (space < 0 || next.seq.end > wnd_end) break;
    psh = psh || psh_end(next.seq.end);
    sb_.merge_next(index);
    merged = true;
  }
  if (!merged) return std::nullopt;
  return psh;
}

bool Connection::record_end(Seq32 seq) const {
  const size_t i = chunk_index(seq - 1);
  return i < chunks_.size() && chunks_[i].end == seq && chunks_[i].eor;
}

bool Connection::zerocopy_at(Seq32 seq) const {
  const size_t i = chunk_index(seq);
  return i < chunks_.size() && chunks_[i].frags > 0;
}

}  // namespace weir::tcp
