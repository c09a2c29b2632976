// Scoreboard bookkeeping. Every flag change goes through add_flags() /
// remove_flags(), which take the packet's contribution out of the counts and
// put it back, so the counts cannot drift from the flags (seed 002).
#include "tcp/scoreboard.h"

#include <algorithm>
#include <cassert>
#include <fmt/format.h>

namespace weir::tcp {

const char* to_string(ScoreboardError e) {
  switch (e) {
    case ScoreboardError::kNotAtHighData: return "send does not start at HighData";
    case ScoreboardError::kOutsideWindow: return "range outside [HighACK, HighData)";
    case ScoreboardError::kNotEntryStart: return "retransmission not on a packet boundary";
    case ScoreboardError::kZeroMss: return "zero MSS";
  }
  return "?";
}

Scoreboard::Scoreboard(Seq32 snd_una, bool sack_enabled) : sack_enabled_(sack_enabled) {
  ring_.resize(16);
  ring_mask_ = ring_.size() - 1;
  reset(snd_una);
}

void Scoreboard::reset(Seq32 snd_una) {
  while (!empty()) {
    free_node(ring_at(0));
    ring_pop_front();
  }
  ring_head_ = 0;
  ts_head_ = ts_tail_ = kNil;
  known_.clear();
  counts_ = {};
  reno_sacked_ = 0;
  phantoms_ = 0;
  high_ack_ = high_data_ = high_rxt_ = rescue_rxt_ = lost_hint_ = snd_una;
  have_highest_sack_ = false;
}

// --- storage --------------------------------------------------------------

void Scoreboard::ring_grow() {
  std::vector<uint32_t> bigger(ring_.size() * 2);
  for (size_t i = 0; i < ring_count_; ++i) bigger[i] = ring_at(i);
  ring_.swap(bigger);
  ring_mask_ = ring_.size() - 1;
  ring_head_ = 0;
}

void Scoreboard::ring_push_back(uint32_t node) {
  if (ring_count_ == ring_.size()) ring_grow();
  ring_[(ring_head_ + ring_count_) & ring_mask_] = node;
  slab_[node].pos = head_pos_ + static_cast<uint32_t>(ring_count_);
  ++ring_count_;
}

void Scoreboard::ring_pop_front() {
  ring_head_ = (ring_head_ + 1) & ring_mask_;
  ++head_pos_;
  --ring_count_;
}

// Only splits insert in the middle (PMTU drop): O(n) there is acceptable.
void Scoreboard::ring_insert(size_t pos, uint32_t node) {
  if (ring_count_ == ring_.size()) ring_grow();
  const size_t mask = ring_mask_;
  for (size_t i = ring_count_; i > pos; --i) {
    const uint32_t moved = ring_[(ring_head_ + i - 1) & mask];
    ring_[(ring_head_ + i) & mask] = moved;
    ++slab_[moved].pos;
  }
  ring_[(ring_head_ + pos) & mask] = node;
  slab_[node].pos = head_pos_ + static_cast<uint32_t>(pos);
  ++ring_count_;
}

// The ring's nodes after `pos` move one place towards it (a merge; rare:
// only retransmissions of small packets collapse, so O(n) is fine).
void Scoreboard::ring_erase(size_t pos) {
  const size_t mask = ring_mask_;
  for (size_t i = pos; i + 1 < ring_count_; ++i) {
    const uint32_t moved = ring_[(ring_head_ + i + 1) & mask];
    ring_[(ring_head_ + i) & mask] = moved;
    --slab_[moved].pos;
  }
  --ring_count_;
}

// The node's entry is left as it was: both callers write all of it (a reset
// here cost ~40 instructions per packet sent). A freed node is out of the
// tsorted list (free_node unlinked it), so its links are already kNil.
uint32_t Scoreboard::alloc_node() {
  if (free_.empty()) {
    slab_.emplace_back();
    return static_cast<uint32_t>(slab_.size() - 1);
  }
  const uint32_t n = free_.back();
  free_.pop_back();
  return n;
}

void Scoreboard::free_node(uint32_t n) {
  if (slab_[n].in_ts) ts_unlink(n);
  free_.push_back(n);
}

void Scoreboard::ts_unlink(uint32_t n) {
  Node& x = slab_[n];
  if (x.ts_prev != kNil) slab_[x.ts_prev].ts_next = x.ts_next; else ts_head_ = x.ts_next;
  if (x.ts_next != kNil) slab_[x.ts_next].ts_prev = x.ts_prev; else ts_tail_ = x.ts_prev;
  x.ts_prev = x.ts_next = kNil;
  x.in_ts = false;
}

void Scoreboard::ts_push_back(uint32_t n) {
  Node& x = slab_[n];
  x.ts_prev = ts_tail_;
  x.ts_next = kNil;
  if (ts_tail_ != kNil) slab_[ts_tail_].ts_next = n; else ts_head_ = n;
  ts_tail_ = n;
  x.in_ts = true;
}

void Scoreboard::ts_insert_after(uint32_t at, uint32_t n) {
  Node& x = slab_[n];
  x.ts_prev = at;
  x.ts_next = slab_[at].ts_next;
  if (x.ts_next != kNil) slab_[x.ts_next].ts_prev = n; else ts_tail_ = n;
  slab_[at].ts_next = n;
  x.in_ts = true;
}

// Linux keeps SACKed and lost-not-yet-retransmitted skbs off the
// tsorted_sent_queue: RACK has nothing to learn from them.
void Scoreboard::ts_update(uint32_t n) {
  const ScoreboardEntry& e = slab_[n].e;
  const bool want = !e.sacked() && !(e.lost() && !e.retrans());
  if (!want && slab_[n].in_ts) ts_unlink(n);
  if (want && !slab_[n].in_ts) {
    // Usually the newest (a retransmission just sent); after an undo an old
    // packet comes back and goes to its place by transmission time.
    uint32_t at = ts_tail_;
    while (at != kNil && e.xmit_time < slab_[at].e.xmit_time) at = slab_[at].ts_prev;
    if (at == ts_tail_) {
      ts_push_back(n);
    } else if (at == kNil) {
      Node& x = slab_[n];
      x.ts_prev = kNil;
      x.ts_next = ts_head_;
      slab_[ts_head_].ts_prev = n;
      ts_head_ = n;
      x.in_ts = true;
    } else {
      ts_insert_after(at, n);
    }
  }
}

// --- counting -------------------------------------------------------------

void Scoreboard::account(const ScoreboardEntry& e, int sign) {
  const uint32_t len = e.seq.len();
  auto apply32 = [sign](uint32_t& c) { c = sign > 0 ? c + 1 : c - 1; };
  auto apply64 = [sign, len](uint64_t& c) { c = sign > 0 ? c + len : c - len; };
  apply32(counts_.packets_out);
  apply64(counts_.bytes_out);
  if (e.sacked()) { apply32(counts_.sacked_out); apply64(counts_.sacked_bytes); }
  if (e.lost()) { apply32(counts_.lost_out); apply64(counts_.lost_bytes); }
  if (e.retrans()) { apply32(counts_.retrans_out); apply64(counts_.retrans_bytes); }
}

void Scoreboard::add_flags(ScoreboardEntry& e, uint8_t f) {
  account(e, -1);
  e.flags |= f;
  account(e, +1);
}

void Scoreboard::remove_flags(ScoreboardEntry& e, uint8_t f) {
  account(e, -1);
  e.flags &= static_cast<uint8_t>(~f);
  account(e, +1);
}

// --- transmission ---------------------------------------------------------

Expected<uint32_t, ScoreboardError> Scoreboard::on_send(SeqRange range, uint32_t mss, Time now,
                                                        const PacketRateSnapshot& rate) {
  if (mss == 0) return Unexpected{ScoreboardError::kZeroMss};
  if (!(range.begin == high_data_)) return Unexpected{ScoreboardError::kNotAtHighData};
  uint32_t added = 0;
  Seq32 s = range.begin;
  while (s < range.end) {
    const uint32_t n = alloc_node();
    ScoreboardEntry& e = slab_[n].e;
    // Every field written once (no flags, no retransmissions, its own skb
    // end until join_skb): what account(e, +1) adds for a new packet.
    const Seq32 end = s + std::min(mss, seq_len(s, range.end));
    e = ScoreboardEntry{{s, end}, s, now, now, mss, 0, 0, true, rate};
    ring_push_back(n);
    ts_push_back(n);
    ++counts_.packets_out;
    counts_.bytes_out += seq_len(s, end);
    s = end;
    ++added;
  }
  high_data_ = seq_max(high_data_, range.end);
  return added;
}

// Linux tcp_fragment(): the tail becomes its own packet with the same
// history; both count. Returns the new node.
uint32_t Scoreboard::split(size_t index, Seq32 at) {
  const uint32_t n = ring_at(index);
  const uint32_t m = alloc_node();  // may reallocate slab_: no references across
  account(slab_[n].e, -1);
  slab_[m].e = slab_[n].e;
  slab_[m].e.seq = {at, slab_[n].e.seq.end};
  slab_[m].e.sent_begin = at;
  slab_[n].e.seq.end = at;
  slab_[n].e.skb_end = true;  // tcp_fragment: two skbs
  account(slab_[n].e, +1);
  account(slab_[m].e, +1);
  ring_insert(index + 1, m);
  if (slab_[n].in_ts) ts_insert_after(n, m);
  return m;
}

void Scoreboard::merge_next(size_t index) {
  const uint32_t a = ring_at(index);
  const uint32_t b = ring_at(index + 1);
  account(slab_[b].e, -1);
  account(slab_[a].e, -1);
  slab_[a].e.seq.end = slab_[b].e.seq.end;
  slab_[a].e.flags |= slab_[b].e.flags & sb_flag::kEverRetrans;
  slab_[a].e.skb_end = slab_[b].e.skb_end;
  account(slab_[a].e, +1);
  // tcp_adjust_pcount: "if (tcp_is_reno(tp) && decr > 0) tp->sacked_out -=
  // min_t(u32, tp->sacked_out, decr)".
  if (!sack_enabled_ && counts_.sacked_out > 0) reno_sacked_ = --counts_.sacked_out;
  ring_erase(index + 1);
  free_node(b);  // out of the tsorted list too
}

void Scoreboard::join_skb(SeqRange burst) {
  // A burst of new data was just sent: its packets are the newest, so the
  // walk back from the tail finds its first packet in as many steps as the
  // burst has packets (the binary search took ~90 instructions per burst).
  // Otherwise (not called so today) search.
  std::optional<size_t> first;
  if (burst.end == high_data_) {
    size_t i = size();
    while (i > 0 && burst.begin < at(i - 1).seq.end) --i;
    if (i < size() && at(i).seq.contains(burst.begin)) first = i;
  } else {
    first = find(burst.begin);
  }
  if (!first) return;
  for (size_t i = *first; i < size() && slab_[ring_at(i)].e.seq.end < burst.end; ++i)
    slab_[ring_at(i)].e.skb_end = false;
}

void Scoreboard::set_skb_end(size_t index) {
  if (index < size()) slab_[ring_at(index)].e.skb_end = true;
}

size_t Scoreboard::lost_run(size_t index, size_t max) const {
  size_t n = 0;
  for (size_t i = index; i < size() && n < max; ++i) {
    const ScoreboardEntry& e = at(i);
    if (!e.lost() || e.retrans() || e.sacked()) break;
    if (n > 0 && !(at(i - 1).seq.end == e.seq.begin)) break;
    ++n;
    if (e.skb_end) break;
  }
  return n;
}

Expected<uint32_t, ScoreboardError> Scoreboard::on_retransmit(SeqRange range, uint32_t mss,
                                                              Time now,
                                                              const PacketRateSnapshot& rate,
                                                              RetransmitKind kind) {
  if (mss == 0) return Unexpected{ScoreboardError::kZeroMss};
  if (range.empty() || range.begin < high_ack_ || range.end > high_data_) {
    return Unexpected{ScoreboardError::kOutsideWindow};
  }
  auto first = find(range.begin);
  if (!first || !(at(*first).seq.begin == range.begin)) {
    return Unexpected{ScoreboardError::kNotEntryStart};
  }
  uint32_t marked = 0;
  for (size_t i = *first; i < size() && at(i).seq.begin < range.end; ++i) {
    if (range.end < at(i).seq.end) {
      // Both pieces keep the packet's marks: the SACKed ranges hold whole
      // packets, so a piece of an unSACKed packet is never already held.
      split(i, range.end);
    }
    const uint32_t n = ring_at(i);
    ScoreboardEntry& e = slab_[n].e;
    if (e.sacked()) continue;
    if (kind == RetransmitKind::kFailed) {  // never left the host: no time, no HighRxt
      add_flags(e, sb_flag::kEverRetrans);
      ++marked;
      continue;
    }
    e.xmit_time = now;
    e.rate = rate;
    e.mss = mss;
    if (e.retrans_count < UINT16_MAX) ++e.retrans_count;
    add_flags(e, kind == RetransmitKind::kNormal ? (sb_flag::kRetrans | sb_flag::kEverRetrans)
                                                 : sb_flag::kEverRetrans);
    // Linux tcp_update_skb_after_send(): a retransmission goes to the tail
    // of the time-sorted queue.
    if (slab_[n].in_ts) ts_unlink(n);
    ts_update(n);
    if (high_rxt_ < e.seq.end) high_rxt_ = e.seq.end;  // RFC 6675 §4 NextSeg: HighRxt
    ++marked;
  }
  return marked;
}

// --- loss marking ---------------------------------------------------------

void Scoreboard::mark_lost(size_t index) {
  const uint32_t n = ring_at(index);
  ScoreboardEntry& e = slab_[n].e;
  if (e.sacked()) return;
  if (e.lost()) {
    if (e.retrans()) {
      // Linux tcp_mark_skb_lost(): the retransmission was lost too
      // (TcpExtTCPLostRetransmit).
      remove_flags(e, sb_flag::kRetrans);
      ++lost_retransmits_;
    }
  } else {
    add_flags(e, sb_flag::kLost);
  }
  note_lost_candidate(e);
  ts_update(n);
}

void Scoreboard::on_rto(bool reneged, Time keep_if_sent_after) {
  // Linux tcp_timeout_mark_lost(): a non-SACK peer's duplicate-ACK count is
  // forgotten along with everything else.
  reno_reset();
  if (reneged) {
    // Linux tcp_timeout_mark_lost(): SACK reneging forgets every SACK.
    for (size_t i = 0; i < size(); ++i) remove_flags(slab_[ring_at(i)].e, sb_flag::kSacked);
    known_.clear();
    have_highest_sack_ = false;
  }
  for (size_t i = 0; i < size(); ++i) {
    const ScoreboardEntry& e = at(i);
    if (!reneged && i != 0 && e.xmit_time > keep_if_sent_after) continue;
    mark_lost(i);
  }
  high_rxt_ = high_ack_;
  rescue_rxt_ = high_ack_;
}

void Scoreboard::clear_lost() {
  for (size_t i = 0; i < size(); ++i) {
    const uint32_t n = ring_at(i);
    if (slab_[n].e.lost()) {
      remove_flags(slab_[n].e, sb_flag::kLost);
      ts_update(n);
    }
  }
}

void Scoreboard::clear_marks() {
  for (size_t i = 0; i < size(); ++i) {
    const uint32_t n = ring_at(i);
    remove_flags(slab_[n].e, sb_flag::kSacked | sb_flag::kLost | sb_flag::kRetrans);
    ts_update(n);
  }
  known_.clear();
  have_highest_sack_ = false;
  reno_reset();
}

// --- queries --------------------------------------------------------------

// Packets are nearly always the head packet's MSS, so the index of `s` is
// first guessed from its distance to where the head packet was sent (exact
// when they all are), then the answer is bracketed by steps doubling away
// from the guess and found by binary search inside the bracket: O(1) when the
// guess is right or close, O(log n) at worst (a flight of mixed sizes after a
// PMTU change). RACK recovery at 65,536 packets in flight made ~8 plain
// binary searches per ACK, ~17 probes each, most of them cache misses
// (session 9); Linux finds the place from a hint the same way
// (tcp_sacktag_skip walks on from the skb the previous block ended at and
// searches the rb-tree only when far).
size_t Scoreboard::lower_bound_end(Seq32 s) const {
  const size_t n = size();
  // pred(i): packet i ends at or before s; true for a prefix of the ring.
  auto pred = [&](size_t i) { return at(i).seq.end <= s; };
  if (n == 0 || !pred(0)) return 0;
  if (pred(n - 1)) return n;
  // Here 0 < answer < n, and pred(0) says s >= head's end > head's sent_begin.
  const ScoreboardEntry& head = at(0);
  const size_t guess = std::min<size_t>(seq_len(head.sent_begin, s) / head.mss, n - 1);
  size_t lo, hi;  // answer in [lo, hi]
  if (pred(guess)) {
    lo = guess + 1;
    size_t step = 1;
    size_t probe = lo;
    while (probe < n - 1 && pred(probe)) {
      lo = probe + 1;
      probe += step;
      step <<= 1;
    }
    hi = std::min(probe, n - 1);
  } else {
    hi = guess;
    size_t step = 1;
    lo = 1;  // pred(0) holds
    while (hi > 1) {
      const size_t probe = hi > step ? hi - step : 1;
      if (pred(probe)) {
        lo = probe + 1;
        break;
      }
      hi = probe;
      step <<= 1;
    }
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (pred(mid)) lo = mid + 1; else hi = mid;
  }
  return lo;
}

std::optional<size_t> Scoreboard::find(Seq32 s) const {
  if (s < high_ack_ || !(s < high_data_)) return std::nullopt;
  const size_t i = lower_bound_end(s);
  if (i >= size() || !at(i).seq.contains(s)) return std::nullopt;
  return i;
}

// Linux tcp_xmit_retransmit_queue keeps retransmit_skb_hint past what it
// has resent. A caller asking from above the hint (the retransmission loop,
// after resending the packets at the hint) first moves the hint over the
// packets below `from` that are no longer lost-and-unsent, so neither this
// walk nor the next ACK's rescans them: each packet is passed once per time
// the hint moves back (note_lost_candidate), not once per call.
void Scoreboard::advance_lost_hint(Seq32 from) const {
  size_t i = lower_bound_end(lost_hint_);
  for (; i < size() && at(i).seq.begin < from; ++i) {
    const ScoreboardEntry& e = at(i);
    if (e.lost() && !e.retrans() && !e.sacked()) {
      lost_hint_ = e.seq.begin;
      return;
    }
  }
  lost_hint_ = i < size() ? at(i).seq.begin : high_data_;
}

std::optional<size_t> Scoreboard::next_lost(Seq32 from) const {
  if (lost_hint_ < from) advance_lost_hint(from);
  const bool from_hint = from <= lost_hint_;
  for (size_t i = lower_bound_end(seq_max(from, lost_hint_)); i < size(); ++i) {
    const ScoreboardEntry& e = at(i);
    if (e.lost() && !e.retrans() && !e.sacked()) {
      if (from_hint) lost_hint_ = e.seq.begin;
      return i;
    }
  }
  if (from_hint) lost_hint_ = high_data_;
  return std::nullopt;
}

std::optional<Seq32> Scoreboard::highest_sacked_end() const {
  if (!have_highest_sack_ || counts_.sacked_out == 0 || !sack_enabled_) return std::nullopt;
  return highest_sack_end_;
}

// --- non-SACK peers -------------------------------------------------------

// Linux tcp_limit_reno_sacked(): at most packets_out - max(lost_out, 1)
// duplicate ACKs can stand for delivered packets; more means reordering.
bool Scoreboard::reno_limit() {
  uint32_t holes = std::max<uint32_t>(counts_.lost_out, 1);
  holes = std::min(holes, counts_.packets_out);
  if (counts_.sacked_out + holes > counts_.packets_out) {
    counts_.sacked_out = counts_.packets_out - holes;
    reno_sacked_ = counts_.sacked_out;
    return true;
  }
  return false;
}

Scoreboard::RenoDupack Scoreboard::reno_add_dupack() {
  RenoDupack r;
  if (sack_enabled_) return r;
  const uint32_t prior = counts_.sacked_out;
  ++counts_.sacked_out;
  ++reno_sacked_;
  r.limited = reno_limit();
  r.delivered = counts_.sacked_out > prior ? counts_.sacked_out - prior : 0;
  return r;
}

void Scoreboard::reno_reset() {
  if (sack_enabled_) return;
  counts_.sacked_out = 0;
  reno_sacked_ = 0;
}

}  // namespace weir::tcp
