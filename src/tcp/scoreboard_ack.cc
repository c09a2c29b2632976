// Scoreboard: ACK processing (SACK tagging, D-SACK, cumulative ACK) and the
// invariant checker.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "tcp/scoreboard.h"

namespace weir::tcp {

namespace {
// RFC 8985 §6.2 RACK_sent_after(t1, seq1, t2, seq2).
bool sent_after(Time t1, Seq32 seq1, Time t2, Seq32 seq2) {
  return t1 > t2 || (t1 == t2 && seq1 > seq2);
}
}  // namespace

AckResult Scoreboard::on_ack(Seq32 ack, std::span<const SeqRange> blocks, Time now) {
  AckResult r;
  scratch_ = {};
  scratch_.now = now;
  // Linux prior_fack: tcp_highest_sack_seq() before this ACK, which is the
  // END of the highest SACKed packet (Linux keeps a pointer to the packet
  // after it, tcp_advance_highest_sack()).
  const Seq32 prior_fack = fack();
  const bool ack_ok = high_ack_ <= ack && ack <= high_data_;
  const Seq32 eff_ack = ack_ok ? ack : high_ack_;
  if (sack_enabled_ && !blocks.empty()) {
    check_dsack(eff_ack, blocks, r);
    for (size_t i = 0; i < blocks.size(); ++i) {
      const SeqRange b = blocks[i];
      if (i == 0 && r.dsack) {
        dsack_block(b, r);
        if (b.begin < eff_ack) continue;  // below SND.UNA: nothing more to tag
      }
      // Linux tcp_is_sackblock_valid(): non-empty, not beyond SND.NXT, and
      // starting above SND.UNA as this ACK leaves it (tcp_ack moves snd_una
      // before tcp_sacktag_write_queue; a start at SND.UNA is "non-sensical").
      // So the front-trimmed rest of a partially ACKed packet, which begins
      // at SND.UNA, is never covered whole and never credited (issue 6).
      if (b.empty() || !(eff_ack < b.begin) || b.end > high_data_) {
        if (!(i == 0 && r.dsack)) ++r.discarded_blocks;
        continue;
      }
      sack_block(b, r, now, prior_fack);
    }
  }
  if (ack_ok) cum_ack(ack, r, now);
  // Linux tcp_check_sack_reordering(): the distance from the lowest packet
  // delivered out of order (below prior_fack) to tcp_highest_sack_seq()
  // after this ACK (SND.UNA once nothing is SACKed any more).
  if (scratch_.have_reord && scratch_.reord_low < prior_fack) {
    const Seq32 now_fack = fack();
    if (scratch_.reord_low < now_fack) r.reordering_bytes = seq_len(scratch_.reord_low, now_fack);
  }
  finish_rtt(r, now);
  r.highest_sacked_end = highest_sacked_end();
#if !defined(NDEBUG) || defined(WEIR_SCOREBOARD_CHECKS)
  // Debug and test builds: recount everything after every ACK.
  if (std::string err = check_invariants(); !err.empty()) {
    std::fprintf(stderr, "weir scoreboard invariant broken: %s\n", err.c_str());
    std::abort();
  }
#endif
  return r;
}

// RFC 2883 §4 / Linux tcp_check_dsack(): the first block is a D-SACK if it
// lies below the cumulative ACK or inside the second block.
void Scoreboard::check_dsack(Seq32 ack, std::span<const SeqRange> blocks, AckResult& r) const {
  const SeqRange b0 = blocks[0];
  if (b0.empty()) return;
  if (b0.begin < ack) {
    r.dsack = true;
  } else if (blocks.size() > 1 && blocks[1].covers(b0)) {
    r.dsack = true;
  }
  if (r.dsack) {
    r.dsack_range = b0;
    r.dsack_below_una = b0.end <= ack;
  }
}

// Linux tcp_sacktag_one(dup_sack): a duplicate of a retransmitted packet
// proves that retransmission is not in flight any more and counts towards
// undo (RFC 3708 / Linux undo_retrans).
void Scoreboard::dsack_block(SeqRange block, AckResult& r) {
  const Seq32 lo = seq_max(block.begin, high_ack_);
  if (!(lo < block.end)) return;
  for (size_t i = lower_bound_end(lo); i < size() && at(i).seq.begin < block.end; ++i) {
    const uint32_t n = ring_at(i);
    ScoreboardEntry& e = slab_[n].e;
    if (!block.covers(e.seq)) continue;
    if (e.ever_retrans()) ++r.dsack_retrans_packets;
    if (e.retrans()) {
      remove_flags(e, sb_flag::kRetrans);
      note_lost_candidate(e);
      ts_update(n);
    }
  }
}

// Inserts `block` into the known-SACKed set, appending to `fresh` the parts
// of it that were not known; returns the merged range that contains it.
SeqRange Scoreboard::known_insert(SeqRange block, std::vector<SeqRange>& fresh) {
  // First known range that ends at or after block.begin (touching merges).
  auto it = std::lower_bound(known_.begin(), known_.end(), block.begin,
                             [](const SeqRange& k, Seq32 s) { return k.end < s; });
  SeqRange merged = block;
  Seq32 cursor = block.begin;
  auto last = it;
  while (last != known_.end() && last->begin <= block.end) {
    if (cursor < last->begin) fresh.push_back({cursor, last->begin});
    cursor = seq_max(cursor, last->end);
    merged.begin = seq_min(merged.begin, last->begin);
    merged.end = seq_max(merged.end, last->end);
    ++last;
  }
  if (cursor < block.end) fresh.push_back({cursor, block.end});
  if (it == last) {
    known_.insert(it, merged);
  } else {
    *it = merged;
    known_.erase(it + 1, last);
  }
  return merged;
}

void Scoreboard::known_trim(Seq32 una) {
  size_t drop = 0;
  while (drop < known_.size() && known_[drop].end <= una) ++drop;
  if (drop) known_.erase(known_.begin(), known_.begin() + static_cast<ptrdiff_t>(drop));
  if (!known_.empty() && known_[0].begin < una) known_[0].begin = una;
}

// Linux tcp_match_skb_to_sack(): a block tags the packets it covers whole;
// a packet it covers only in part is left as it is (Linux splits only
// multi-packet skbs, at MSS multiples; every entry here is one packet). Only
// that run of whole packets enters the SACKed ranges, so they stay
// packet-granular: a peer SACKing single bytes inside packets (CVE-2019-11478
// pattern) adds nothing, and a packet is never credited from pieces of
// several blocks.
void Scoreboard::sack_block(SeqRange block, AckResult& r, Time now, Seq32 prior_fack) {
  size_t first = lower_bound_end(block.begin);
  if (first < size() && at(first).seq.begin < block.begin) ++first;
  // The packets ending at or before block.end, found by binary search like
  // `first` (ends ascend): a scan to there walked every packet the block
  // covers on every ACK, known or not, so a repeated block over the flight
  // cost O(flight) instead of O(log flight).
  const size_t last = std::max(first, lower_bound_end(block.end));
  if (last == first) return;
  const SeqRange whole{at(first).seq.begin, at(last - 1).seq.end};
  fresh_.clear();
  const SeqRange merged = known_insert(whole, fresh_);
  for (const SeqRange& part : fresh_) sack_walk(part, merged, r, now, prior_fack);
}

// Tags every not-yet-SACKed packet overlapping `part` that the merged SACKed
// range now covers completely (Linux tcp_match_skb_to_sack(): whole packets).
void Scoreboard::sack_walk(SeqRange part, SeqRange merged, AckResult& r, Time, Seq32 prior_fack) {
  for (size_t i = lower_bound_end(part.begin); i < size() && at(i).seq.begin < part.end; ++i) {
    const ScoreboardEntry& e = at(i);
    if (!e.sacked() && merged.covers(e.seq)) mark_sacked(ring_at(i), r, prior_fack);
  }
}

// Linux tcp_sacktag_one() for a packet not SACKed before.
void Scoreboard::mark_sacked(uint32_t n, AckResult& r, Seq32 prior_fack) {
  ScoreboardEntry& e = slab_[n].e;
  uint8_t clear = 0;
  if (e.retrans()) {
    // A SACKed retransmission of a lost packet is no longer in flight; one
    // of a packet never marked lost may still be (Linux keeps it counted).
    if (e.lost()) clear = sb_flag::kLost | sb_flag::kRetrans;
  } else {
    if (!e.ever_retrans()) {
      // New SACK for a never-retransmitted packet in a hole: reordering.
      if (e.seq.begin < prior_fack &&
          (!scratch_.have_reord || e.seq.begin < scratch_.reord_low)) {
        scratch_.have_reord = true;
        scratch_.reord_low = e.seq.begin;
      }
      if (!scratch_.have_sack_rtt || e.xmit_time < scratch_.sack_first) scratch_.sack_first = e.xmit_time;
      if (!scratch_.have_sack_rtt || e.xmit_time > scratch_.sack_last) scratch_.sack_last = e.xmit_time;
      scratch_.have_sack_rtt = true;
    }
    if (e.lost()) clear = sb_flag::kLost;
  }
  account(e, -1);
  e.flags = static_cast<uint8_t>((e.flags & ~clear) | sb_flag::kSacked);
  account(e, +1);
  ts_update(n);
  ++r.sacked_packets;
  r.sacked_bytes += e.seq.len();
  ++r.delivered_packets;
  note_delivered(e, r, true);
  note_rack(e, r, scratch_.now, true);
  if (!have_highest_sack_ || counts_.sacked_out == 1 || highest_sack_ < e.seq.begin) {
    have_highest_sack_ = true;
    highest_sack_ = e.seq.begin;
    highest_sack_end_ = e.seq.end;
  }
}

void Scoreboard::note_delivered(const ScoreboardEntry& e, AckResult& r, bool) {
  if (!e.ever_retrans()) {
    r.orig_data_delivered = true;
    if (!r.orig_delivered_low_end || e.seq.end < *r.orig_delivered_low_end) {
      r.orig_delivered_low_end = e.seq.end;
    }
  }
  if (!r.latest_delivered ||
      sent_after(e.xmit_time, e.seq.end, r.latest_delivered->xmit_time,
                 r.latest_delivered->end_seq)) {
    r.latest_delivered = DeliveredPacket{e.xmit_time, e.seq.end, e.ever_retrans(), e.rate};
  }
}

// Linux tcp_rack_advance() for one delivered packet, in Linux's order
// (newly SACKed by ascending sequence, then cumulatively ACKed).
void Scoreboard::note_rack(const ScoreboardEntry& e, AckResult& r, Time now, bool by_sack) {
  const Duration rtt = now - e.xmit_time;
  // RFC 8985 §6.2 step 2: a retransmission delivered sooner than min_rtt
  // may be the original's delivery; it proves nothing.
  if (e.ever_retrans() && rtt < rack_min_rtt_) return;
  if (!r.rack_latest || sent_after(e.xmit_time, e.seq.end, r.rack_latest->xmit_time,
                                   r.rack_latest->end_seq)) {
    r.rack_latest = DeliveredPacket{e.xmit_time, e.seq.end, e.ever_retrans(), e.rate};
  }
  // The blocks may come in any order; Linux walks them sorted, so among
  // SACKed packets the highest sequence is processed last, and every
  // cumulatively ACKed one after those.
  if (by_sack && (scratch_.rack_by_cum || (r.rack_rtt && e.seq.end < scratch_.rack_rtt_end))) return;
  r.rack_rtt = rtt;
  scratch_.rack_by_cum = !by_sack;
  scratch_.rack_rtt_end = e.seq.end;
}

// Linux tcp_clean_rtx_queue(): free every packet the ACK covers entirely;
// a packet it covers in part stays (and still counts as one packet).
void Scoreboard::cum_ack(Seq32 ack, AckResult& r, Time) {
  if (!(high_ack_ < ack)) return;
  r.una_advanced = true;
  r.acked_bytes = seq_len(high_ack_, ack);
  while (!empty()) {
    const uint32_t n = ring_at(0);
    ScoreboardEntry& e = slab_[n].e;
    if (ack <= e.seq.begin) break;
    if (ack < e.seq.end) {
      account(e, -1);
      e.seq.begin = ack;
      account(e, +1);
      break;
    }
    if (e.ever_retrans()) {
      r.retrans_data_acked = true;
    } else if (!e.sacked()) {
      if (!scratch_.have_cum_rtt) scratch_.cum_first = e.xmit_time;
      scratch_.cum_last = std::max(scratch_.cum_last, e.xmit_time);
      scratch_.have_cum_rtt = true;
      if (!scratch_.have_reord || e.seq.begin < scratch_.reord_low) {
        scratch_.have_reord = true;
        scratch_.reord_low = e.seq.begin;
      }
    }
    if (!e.sacked()) {
      ++r.delivered_packets;
      note_delivered(e, r, false);
      note_rack(e, r, scratch_.now, false);
    } else {
      ++r.acked_sacked_packets;
    }
    account(e, -1);
    ++r.acked_packets;
    free_node(n);
    ring_pop_front();
  }
  high_ack_ = ack;
  known_trim(ack);
  if (high_rxt_ < ack) high_rxt_ = ack;
  if (rescue_rxt_ < ack) rescue_rxt_ = ack;
  if (counts_.sacked_out == 0 && sack_enabled_) have_highest_sack_ = false;
  if (!sack_enabled_ && r.acked_packets > 0) {
    // Linux tcp_remove_reno_sacks(): the first freed packet is the hole,
    // the others were the duplicate ACKs' deliveries.
    const uint32_t dup = r.acked_packets - 1;
    const uint32_t prior = counts_.sacked_out;
    counts_.sacked_out = dup >= prior ? 0 : prior - dup;
    reno_sacked_ = counts_.sacked_out;
    r.delivered_packets -= std::min(r.delivered_packets, prior - counts_.sacked_out);
    reno_limit();
  }
}

void Scoreboard::finish_rtt(AckResult& r, Time now) const {
  // Karn (RFC 6298 §3), Linux tcp_clean_rtx_queue(): an ACK that also
  // covers retransmitted data gives no cumulative sample, even from the
  // never-retransmitted packets behind it (their wait includes the RTO).
  const bool cum = scratch_.have_cum_rtt && !r.retrans_data_acked;
  // Linux tcp_ack_update_rtt(): the cumulative sample wins over the SACK one.
  if (cum) {
    r.rtt_oldest = now - scratch_.cum_first;
  } else if (scratch_.have_sack_rtt) {
    r.rtt_oldest = now - scratch_.sack_first;
  }
  if (cum || scratch_.have_sack_rtt) {
    Time last = cum ? scratch_.cum_last : scratch_.sack_last;
    if (cum && scratch_.have_sack_rtt) last = std::max(last, scratch_.sack_last);
    r.rtt_newest = now - last;
  }
}

// --- invariant checker ----------------------------------------------------

std::string Scoreboard::check_invariants() const {
  ScoreboardCounts c;
  std::string err;
  auto fail = [&err](std::string s) { if (err.empty()) err = std::move(s); };
  size_t ts_expected = 0;
  for (size_t i = 0; i < size(); ++i) {
    const ScoreboardEntry& e = at(i);
    const Node& node = slab_[ring_at(i)];
    if (e.seq.empty()) fail(fmt::format("entry {} empty", i));
    if (index_of(ring_at(i)) != i) fail(fmt::format("entry {} position number says {}", i, index_of(ring_at(i))));
    if (i == 0 && !(e.seq.begin == high_ack_)) fail("first entry does not start at HighACK");
    if (i > 0 && !(at(i - 1).seq.end == e.seq.begin)) fail(fmt::format("gap before entry {}", i));
    if (e.sacked() && e.lost()) fail(fmt::format("entry {} both SACKed and lost", i));
    if (!sack_enabled_ && e.sacked()) fail("SACK flag on a non-SACK connection");
    if (e.lost() && !e.retrans() && !e.sacked() && e.seq.begin < lost_hint_) {
      fail(fmt::format("lost entry {} below the retransmit hint", i));
    }
    const bool want_ts = !e.sacked() && !(e.lost() && !e.retrans());
    if (want_ts != node.in_ts) fail(fmt::format("entry {} tsorted membership wrong", i));
    ts_expected += want_ts;
    ++c.packets_out;
    c.bytes_out += e.seq.len();
    if (e.sacked()) { ++c.sacked_out; c.sacked_bytes += e.seq.len(); }
    if (e.lost()) { ++c.lost_out; c.lost_bytes += e.seq.len(); }
    if (e.retrans()) { ++c.retrans_out; c.retrans_bytes += e.seq.len(); }
    if (sack_enabled_) {
      auto k = std::lower_bound(known_.begin(), known_.end(), e.seq.begin,
                                [](const SeqRange& r, Seq32 s) { return r.end <= s; });
      const bool covered = k != known_.end() && k->covers(e.seq);
      if (covered != e.sacked()) fail(fmt::format("entry {} SACK flag disagrees with SACKed ranges", i));
    }
  }
  if (!empty() && !(at(size() - 1).seq.end == high_data_)) fail("last entry does not end at HighData");
  if (empty() && !(high_ack_ == high_data_)) fail("empty scoreboard but HighACK != HighData");
  if (!sack_enabled_) c.sacked_out = reno_sacked_;
  if (!(c == counts_)) {
    fail(fmt::format("counts differ: kept out={} sacked={} lost={} retrans={} bytes={}/{}/{}/{}; "
                     "walk out={} sacked={} lost={} retrans={} bytes={}/{}/{}/{}",
                     counts_.packets_out, counts_.sacked_out, counts_.lost_out, counts_.retrans_out,
                     counts_.bytes_out, counts_.sacked_bytes, counts_.lost_bytes,
                     counts_.retrans_bytes, c.packets_out, c.sacked_out, c.lost_out, c.retrans_out,
                     c.bytes_out, c.sacked_bytes, c.lost_bytes, c.retrans_bytes));
  }
  if (c.sacked_out + c.lost_out > c.packets_out + 0u) fail("left_out exceeds packets_out");
  size_t ts_count = 0;
  Time prev = Time::from_ns(INT64_MIN);
  for (uint32_t n = ts_head_; n != kNil && ts_count <= size(); n = slab_[n].ts_next, ++ts_count) {
    if (slab_[n].e.xmit_time < prev) fail("tsorted list out of order");
    prev = slab_[n].e.xmit_time;
  }
  if (ts_count != ts_expected) fail(fmt::format("tsorted list has {} want {}", ts_count, ts_expected));
  for (size_t i = 0; i < known_.size(); ++i) {
    if (known_[i].empty() || known_[i].begin < high_ack_ || known_[i].end > high_data_) fail("bad SACKed range");
    if (i > 0 && !(known_[i - 1].end < known_[i].begin)) fail("SACKed ranges overlap or touch");
  }
  return err;
}

}  // namespace weir::tcp
