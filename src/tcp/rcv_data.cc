// Segment arrival, the in-order and out-of-order queues, D-SACK/SACK blocks
// and application reads (RFC 9293 §3.10.7.4 "seventh, process the segment
// text"; Linux tcp_data_queue, tcp_data_queue_ofo, tcp_ofo_queue).
#include <algorithm>
#include <vector>

#include "tcp/receiver.h"

namespace weir::tcp {

// Linux tcp_sequence: SEG.SEQ/SEG.LEN overlap [RCV.WUP, RCV.NXT + window].
// It is RFC 9293 §3.10.7.4's test widened on both sides: the left edge is the
// ACKed point of the last window announcement (rcv.wup) rather than rcv.nxt,
// and a segment starting exactly at the right edge (a zero-window probe) is
// let through so its ACK field is processed; the text is trimmed in on_data().
bool Receiver::acceptable(Seq32 seq, uint32_t seg_len) const {
  if (!synced_) return false;
  const Seq32 end = seq + seg_len;
  return end >= rcv_wup_ && seq <= rcv_nxt_ + receive_window();
}

DataOutcome Receiver::on_data(Time now, const DataSegment& seg, Duration rto, Counters& c) {
  return on_data(now, seg, rto, Duration::zero(), c);
}

DataOutcome Receiver::on_data(Time now, const DataSegment& seg, Duration rto, Duration srtt,
                              Counters& c) {
  DataOutcome out;
  flush_counters(c);
  const auto len = static_cast<uint32_t>(seg.payload.size());
  if (!synced_) {
    out.drop = RcvDrop::kOutOfWindow;
    return out;
  }
  if (len == 0 && !seg.fin) return out;
  if (len > 0) ++data_segs_in_;
  if (seg.ce) enter_quickack(2);  // Linux tcp_ecn_check_ce: don't delay ACKs of CE marks
  if (seg.tsecr_age && timestamps_ && (seg.tsecr == 0 || seg.tsecr != last_tsecr_)) {
    last_tsecr_ = seg.tsecr;
    rcv_rtt_measure_ts(len, *seg.tsecr_age);
  }

  const Seq32 end = seg.seq + len + (seg.fin ? 1u : 0u);
  if (end <= rcv_nxt_) return on_old_data(seg.seq, len, end, c);
  if (fin_in_order_) {  // RFC 9293 §3.10.7.4: nothing after the FIN exists
    out.drop = RcvDrop::kAfterFin;
    out.trimmed = len;
    enter_quickack(kMaxQuickAcks);
    ack_pending_ = true;
    out.ack_now = true;
    return out;
  }

  const uint32_t rwin = receive_window();
  const bool beyond = seg.seq >= rcv_nxt_ && seq_len(rcv_nxt_, seg.seq) >= rwin;
  const bool bare_fin_at_edge = len == 0 && seg.fin && seg.seq == rcv_nxt_;
  // Linux tcp_data_queue: a bare FIN is taken even into a zero window (some
  // stacks resend it forever otherwise); other text at or past the right
  // edge is dropped and ACKed at once (RFC 9293 §3.10.7.4).
  if (beyond && !bare_fin_at_edge) {
    const bool zero = rwin == 0 && seg.seq == rcv_nxt_;
    if (zero) c.inc(Counter::TcpExtTCPZeroWindowDrop);
    out.drop = zero ? RcvDrop::kZeroWindow : RcvDrop::kOutOfWindow;
    out.trimmed = len;
    enter_quickack(kMaxQuickAcks);
    ack_pending_ = true;
    out.ack_now = true;
    return out;
  }

  Seq32 seq = seg.seq;
  std::span<const uint8_t> data = seg.payload;
  bool fin = seg.fin;
  if (seq < rcv_nxt_) {
    // Partly old: D-SACK the old head (RFC 2883 §4.1), keep the new tail.
    const uint32_t dup = std::min(seq_len(seq, rcv_nxt_), len);
    dsack_set({seq, rcv_nxt_}, c);
    out.duplicate = dup;
    if (rwin == 0 && len > dup) {
      c.inc(Counter::TcpExtTCPZeroWindowDrop);
      out.drop = RcvDrop::kZeroWindow;
      out.trimmed = len - dup;
      enter_quickack(kMaxQuickAcks);
      ack_pending_ = true;
      out.ack_now = true;
      return out;
    }
    data = data.subspan(dup);
    seq = rcv_nxt_;
  }
  // RFC 9293 §3.10.7.4: trim text beyond the window. Linux keeps such bytes
  // when memory allows; trimming keeps the buffer bounded by what we
  // announced. A FIN right after the last byte that fits is kept (it needs
  // no buffer).
  const uint32_t room = seq_len(seq, right_edge());
  if (data.size() > room) {
    out.trimmed = static_cast<uint32_t>(data.size() - room);
    data = data.first(room);
    fin = false;
  }
  if (seq == rcv_nxt_) {
    queue_in_order(now, data, fin, rto, seg.gso_size, out, c);
  } else {
    queue_ofo(seq, data, fin, out, c);
  }
  if (out.drop == RcvDrop::kNone || out.drop == RcvDrop::kNoMemory) {
    out.ack_now = ack_snd_check(now, srtt);
  }
  flush_counters(c);
  return out;
}

// Linux tcp_fastopen_add_skb queues the SYN's skb straight onto the receive
// queue, charged whatever the buffer's room (sk_forced_mem_schedule). It
// runs no tcp_event_data_recv: no receive-MSS estimate, no delayed-ACK
// state and no tcp_grow_window, so rcv_ssthresh keeps its initial value and
// the windows announced after the handshake are those of a connection that
// has received nothing (gtests fastopen/server/client-ack-dropped-then-
// recovery-ms-timestamps.pkt: win 256, not 268). The SYN-ACK acks the data.
DataOutcome Receiver::on_syn_data(std::span<const uint8_t> data, bool fin) {
  DataOutcome out;
  if (!synced_) return out;
  const auto len = static_cast<uint32_t>(data.size());
  if (len > 0) {
    rcvq_.append(data);
    rcv_nxt_ += len;
    bytes_received_ += len;  // tp->bytes_received = skb->len
    ++data_segs_in_;         // tcp_segs_in
    out.in_order = len;
  }
  if (fin) {  // tcp_fin: the FIN is in sequence
    rcv_nxt_ += 1;
    fin_in_order_ = true;
    out.fin = true;
  }
  ack_pending_ = true;  // cleared by the SYN-ACK (on_ack_sent)
  return out;
}

// A segment wholly below rcv.nxt: a retransmission of data we have. Linux
// tcp_data_queue(): D-SACK it (RFC 2883 §4), leave delayed-ACK mode so the
// sender hears at once (RFC 9293 §3.10.7.4 "send an acknowledgment"), and
// count TcpExtDelayedACKLost (our ACK was probably lost). Linux counts every
// such text-bearing duplicate that passed tcp_sequence(), i.e. one ending at
// or after rcv.wup (ending exactly at the last advertised point included);
// one ending before rcv.wup is unacceptable and counted the same way by
// tcp_send_dupack() (on_unacceptable()).
DataOutcome Receiver::on_old_data(Seq32 seq, uint32_t len, Seq32 end, Counters& c) {
  DataOutcome out;
  out.drop = RcvDrop::kDuplicate;
  out.duplicate = len;
  if (len > 0) c.inc(Counter::TcpExtDelayedACKLost);
  dsack_set({seq, end}, c);
  enter_quickack(kMaxQuickAcks);
  ack_pending_ = true;
  out.ack_now = true;
  return out;
}

void Receiver::on_unacceptable(Seq32 seq, uint32_t seg_len, Counters& c) {
  if (!synced_ || seg_len == 0 || !(seq < rcv_nxt_)) return;
  c.inc(Counter::TcpExtDelayedACKLost);
  enter_quickack(kMaxQuickAcks);
  const Seq32 end = seq_min(seq + seg_len, rcv_nxt_);
  dsack_set({seq, end}, c);
}

void Receiver::queue_in_order(Time now, std::span<const uint8_t> data, bool fin, Duration rto,
                              uint32_t gso_size, DataOutcome& out, Counters& c) {
  const auto len = static_cast<uint32_t>(data.size());
  if (len > 0) {
    // Linux tcp_try_rmem_schedule: make room by pruning out-of-order data
    // (highest first); if the buffer still cannot hold the segment (the
    // buffer shrank under an announced window) drop it: TcpExtTCPRcvQDrop.
    if (charged() + len > rcvbuf_) {
      c.inc(Counter::TcpExtPruneCalled);  // Linux tcp_prune_queue
      const uint64_t keep = rcvbuf_ > rcvq_.size() + len ? rcvbuf_ - rcvq_.size() - len : 0;
      if (ofo_.prune(keep) > 0) {
        c.inc(Counter::TcpExtOfoPruned);  // Linux tcp_prune_ofo_queue: once per call that dropped
        ofo_fin_.reset();
      }
    }
    if (rcvq_.size() + len > rcvbuf_) {
      // Linux tcp_prune_queue: still no room after pruning (TcpExtRcvPruned),
      // then tcp_data_queue's drop (TcpExtTCPRcvQDrop).
      c.inc(Counter::TcpExtRcvPruned);
      c.inc(Counter::TcpExtTCPRcvQDrop);
      out.drop = RcvDrop::kNoMemory;
      out.trimmed += len;
      ack_now_flag_ = true;
      ack_pending_ = true;
      return;
    }
    rcvq_.append(data);
    rcv_nxt_ += len;
    bytes_received_ += len;
    out.in_order += len;
    event_data_recv(now, len, rto, gso_size);
  }
  ack_pending_ = true;
  if (fin) {
    rcv_nxt_ += 1;
    fin_in_order_ = true;
    out.fin = true;
    // Linux tcp_fin: nothing can follow a FIN; what was held past it goes.
    ofo_.clear();
    ofo_fin_.reset();
    ack_now_flag_ = true;  // ACK the FIN at once, as Linux does on the wire
    return;
  }
  if (ofo_.empty() && !ofo_fin_) return;
  const uint32_t pulled = ofo_.pull(rcv_nxt_, rcvq_);
  if (pulled > 0) {
    rcv_nxt_ += pulled;
    bytes_received_ += pulled;
    out.in_order += pulled;
    out.filled_hole = true;
  }
  if (ofo_fin_ && *ofo_fin_ == rcv_nxt_) {
    rcv_nxt_ += 1;
    fin_in_order_ = true;
    out.fin = true;
    ofo_fin_.reset();
    ofo_.clear();
  }
  // RFC 5681 §4.2: ACK at once when a segment fills the gap in the queue.
  if (ofo_.empty() && !ofo_fin_) ack_now_flag_ = true;
}

// Linux tcp_data_queue_ofo: hold, merge, D-SACK what we already had, and
// grow the window for SACK flows only (without SACK a steady window keeps the
// duplicate ACKs that trigger fast retransmit, RFC 5681 §3.2).
void Receiver::queue_ofo(Seq32 seq, std::span<const uint8_t> data, bool fin, DataOutcome& out,
                         Counters& c) {
  out.out_of_order = true;
  const auto len = static_cast<uint32_t>(data.size());
  // A segment that joins a held range costs no new range overhead.
  const bool joins = len > 0 && (ofo_.find(seq - 1) || ofo_.find(seq) || ofo_.find(seq + len));
  const uint64_t need = uint64_t{len} + (joins ? 0 : Reassembly::kRangeOverhead);
  if (charged() + need > rcvbuf_) {
    c.inc(Counter::TcpExtPruneCalled);  // Linux tcp_try_rmem_schedule -> tcp_prune_queue
    // Linux tcp_prune_ofo_queue: drop the highest ranges, but only those
    // above where this segment lands; else drop the segment itself.
    const uint64_t keep = rcvbuf_ > rcvq_.size() + need ? rcvbuf_ - rcvq_.size() - need : 0;
    if (ofo_.prune(keep, seq) > 0) {
      c.inc(Counter::TcpExtOfoPruned);
      ofo_fin_.reset();
    }
    if (charged() + need > rcvbuf_) {
      c.inc(Counter::TcpExtRcvPruned);
      c.inc(Counter::TcpExtTCPOFODrop);
      out.drop = RcvDrop::kNoMemory;
      out.trimmed += len;
      return;
    }
  }
  ack_pending_ = true;
  ++rcv_ooopack_;
  c.inc(Counter::TcpExtTCPOFOQueue);
  ++stamp_;
  if (len > 0) {
    const OfoInsert r = ofo_.insert(seq, data, stamp_);
    if (r.dup) dsack_set(*r.dup, c);
    if (r.fully_dup) c.inc(Counter::TcpExtTCPOFOMerge);
    if (r.absorbed) c.inc(Counter::TcpExtTCPOFOMerge, r.absorbed);
    out.ofo_queued = r.new_bytes;
    out.duplicate += r.dup_bytes;
  }
  if (fin && (!ofo_fin_ || seq + len < *ofo_fin_)) {
    ofo_fin_ = seq + len;
    ofo_fin_stamp_ = stamp_;
  } else if (fin && ofo_fin_ && *ofo_fin_ == seq + len) {
    ofo_fin_stamp_ = stamp_;
  }
  if (ofo_fin_) out.trimmed += ofo_.drop_from(*ofo_fin_);  // nothing exists past a FIN
  if (sack_ok_ && len > 0) grow_window(len);
}

// RFC 2883 §4: the first block of the next SACK option reports the
// duplicate. Linux tcp_dsack_set: counted as "old" when below rcv.nxt, else as
// a duplicate of held out-of-order data.
void Receiver::dsack_set(SeqRange r, Counters& c) {
  if (!sack_ok_ || !cfg_.tcp_dsack || r.empty()) return;
  c.inc(r.begin < rcv_nxt_ ? Counter::TcpExtTCPDSACKOldSent : Counter::TcpExtTCPDSACKOfoSent);
  dsack_ = r;
}

// RFC 2018 §4: the first block holds the most recent arrival; the rest are
// the other held ranges, most recently reported (here: most recently grown)
// first, so each range is repeated in several ACKs. A D-SACK block goes
// before them all (RFC 2883 §4). An out-of-order FIN counts as one sequence
// number at the end of its range, as Linux reports it (its skb includes it).
size_t Receiver::sack_block_count() const {
  if (!sack_ok_) return 0;
  size_t n = (dsack_ ? 1 : 0) + ofo_.size();
  if (ofo_fin_) {  // a FIN out of order rides on the block it ends, else is its own
    bool placed = false;
    for (const OfoBlock& b : ofo_.blocks()) placed = placed || b.range.end == *ofo_fin_;
    n += placed ? 0 : 1;
  }
  return n;
}

size_t Receiver::sack_blocks(std::span<SeqRange> out, size_t max_blocks) const {
  const size_t cap = std::min(out.size(), max_blocks);
  if (!sack_ok_ || cap == 0) return 0;
  size_t n = 0;
  if (dsack_) out[n++] = *dsack_;
  if (ofo_.empty() && !ofo_fin_) return n;  // in-order flow: no list to build (no allocation)
  struct Item {
    SeqRange r;
    uint64_t stamp;
  };
  std::vector<Item> items;
  items.reserve(ofo_.size() + 1);
  bool fin_placed = !ofo_fin_.has_value();
  for (const OfoBlock& b : ofo_.blocks()) {
    Item it{b.range, b.stamp};
    if (!fin_placed && b.range.end == *ofo_fin_) {
      it.r.end = it.r.end + 1;
      it.stamp = std::max(it.stamp, ofo_fin_stamp_);
      fin_placed = true;
    }
    items.push_back(it);
  }
  if (!fin_placed) items.push_back({{*ofo_fin_, *ofo_fin_ + 1}, ofo_fin_stamp_});
  const size_t want = std::min(items.size(), cap - n);
  std::partial_sort(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(want), items.end(),
                    [](const Item& a, const Item& b) { return a.stamp > b.stamp; });
  for (size_t i = 0; i < want; ++i) out[n++] = items[i].r;
  return n;
}

}  // namespace weir::tcp
