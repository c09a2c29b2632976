#include "tcp/reassembly.h"

#include <algorithm>

namespace weir::tcp {

namespace {

// Index of the first block whose end is at or after `s` (a block that
// contains, touches or follows `s`). Blocks are sorted and disjoint, so the
// ends are increasing too.
size_t lower_block(const std::vector<OfoBlock>& blocks, Seq32 s) {
  auto it = std::partition_point(blocks.begin(), blocks.end(),
                                 [s](const OfoBlock& b) { return b.range.end < s; });
  return static_cast<size_t>(it - blocks.begin());
}

// The segment [seg_begin, ...) starts inside or right after blocks[first]
// and reaches blocks up to last - 1: grows blocks[first] in place to end at
// `hi`, lays the new bytes past its old end, then the held blocks over them
// (held bytes win), and erases the absorbed blocks (Linux likewise coalesces
// an arriving skb into the ofo skb before it, tcp_ooo_try_coalesce). A fresh
// buffer per fill copied the whole lower block each time: during loss recovery, with
// tens of thousands of holes and lost retransmissions below them, quadratic.
// Returns the number of bytes added.
uint64_t grow_in_place(std::vector<OfoBlock>& blocks, size_t first, size_t last, Seq32 seg_begin,
                       std::span<const uint8_t> data, Seq32 hi) {
  OfoBlock& b = blocks[first];
  const uint32_t skip = seq_len(seg_begin, b.range.end);
  const size_t old_size = b.data.size();
  b.data.resize(seq_len(b.range.begin, hi));
  if (skip < data.size()) std::copy(data.begin() + skip, data.end(), b.data.begin() + static_cast<std::ptrdiff_t>(old_size));
  uint64_t absorbed = 0;
  for (size_t i = first + 1; i < last; ++i) {
    const OfoBlock& o = blocks[i];
    std::copy(o.data.begin(), o.data.end(), b.data.begin() + seq_len(b.range.begin, o.range.begin));
    absorbed += o.data.size();
  }
  b.range = SeqRange{b.range.begin, hi};
  blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(first) + 1, blocks.begin() + static_cast<std::ptrdiff_t>(last));
  return b.data.size() - old_size - absorbed;
}

}  // namespace

// Merges [seq, seq+len) with every block it overlaps or touches. Linux keeps
// skbs and coalesces them; holding one buffer per contiguous range is the same
// set of bytes with less bookkeeping. The bytes already held win over the new
// copy (RFC 9293 §3.10.7.4 leaves the choice; Linux keeps the queued skb too).
OfoInsert Reassembly::insert(Seq32 seq, std::span<const uint8_t> data, uint64_t stamp) {
  OfoInsert r;
  const auto len = static_cast<uint32_t>(data.size());
  const SeqRange seg{seq, seq + len};
  r.block = seg;
  if (len == 0) return r;

  size_t first = lower_block(blocks_, seg.begin);
  size_t last = first;  // one past the last block that overlaps or touches
  while (last < blocks_.size() && blocks_[last].range.begin <= seg.end) ++last;

  // Account for the bytes already held, in order, for D-SACK and counters.
  uint32_t held = 0;
  for (size_t i = first; i < last; ++i) {
    const SeqRange& b = blocks_[i].range;
    const SeqRange ov{seq_max(b.begin, seg.begin), seq_min(b.end, seg.end)};
    if (!ov.empty()) {
      held += ov.len();
      if (!r.dup) r.dup = ov;
    }
    if (seg.covers(b)) ++r.absorbed;
  }
  r.dup_bytes = held;
  r.new_bytes = len - held;
  r.fully_dup = held == len;

  if (first == last) {  // touches nothing: a new range
    OfoBlock nb{seg, std::vector<uint8_t>(data.begin(), data.end()), stamp};
    blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(first), std::move(nb));
    bytes_ += len;
    return r;
  }

  const Seq32 hi = seq_max(seg.end, blocks_[last - 1].range.end);
  if (blocks_[first].range.begin <= seg.begin) {
    OfoBlock& b = blocks_[first];
    bytes_ += grow_in_place(blocks_, first, last, seg.begin, data, hi);
    b.stamp = stamp;
    r.block = b.range;
    return r;
  }

  // The segment extends the first block at its head: build the union
  // [lo, hi) from the held blocks plus the new bytes.
  const Seq32 lo = seq_min(seg.begin, blocks_[first].range.begin);
  std::vector<uint8_t> merged(seq_len(lo, hi));
  std::copy(data.begin(), data.end(), merged.begin() + seq_len(lo, seg.begin));
  uint64_t old_bytes = 0;
  for (size_t i = first; i < last; ++i) {
    const OfoBlock& b = blocks_[i];
    std::copy(b.data.begin(), b.data.end(), merged.begin() + seq_len(lo, b.range.begin));
    old_bytes += b.data.size();
  }
  blocks_[first] = OfoBlock{{lo, hi}, std::move(merged), stamp};
  blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(first) + 1,
                blocks_.begin() + static_cast<std::ptrdiff_t>(last));
  bytes_ = bytes_ - old_bytes + blocks_[first].data.size();
  r.block = blocks_[first].range;
  return r;
}

uint32_t Reassembly::pull(Seq32 rcv_nxt, RcvQueue& out) {
  // Whole blocks already below rcv.nxt (covered by in-order data) go first.
  size_t gone = 0;
  while (gone < blocks_.size() && blocks_[gone].range.end <= rcv_nxt) {
    bytes_ -= blocks_[gone].data.size();
    ++gone;
  }
  blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(gone));
  if (blocks_.empty() || rcv_nxt < blocks_.front().range.begin) return 0;

  OfoBlock& b = blocks_.front();
  const uint32_t skip = seq_len(b.range.begin, rcv_nxt);
  const auto moved = static_cast<uint32_t>(b.data.size() - skip);
  out.append(std::span<const uint8_t>(b.data).subspan(skip));
  bytes_ -= b.data.size();
  blocks_.erase(blocks_.begin());
  return moved;
}

uint32_t Reassembly::prune(uint64_t max_mem, std::optional<Seq32> floor) {
  uint32_t dropped = 0;
  while (!blocks_.empty() && mem() > max_mem) {
    const OfoBlock& b = blocks_.back();
    if (floor && b.range.begin <= *floor) break;
    dropped += static_cast<uint32_t>(b.data.size());
    bytes_ -= b.data.size();
    blocks_.pop_back();
  }
  return dropped;
}

uint32_t Reassembly::drop_from(Seq32 seq) {
  uint32_t dropped = 0;
  while (!blocks_.empty() && blocks_.back().range.end > seq) {
    OfoBlock& b = blocks_.back();
    if (b.range.begin >= seq) {
      dropped += static_cast<uint32_t>(b.data.size());
      bytes_ -= b.data.size();
      blocks_.pop_back();
      continue;
    }
    const uint32_t keep = seq_len(b.range.begin, seq);
    dropped += static_cast<uint32_t>(b.data.size() - keep);
    bytes_ -= b.data.size() - keep;
    b.data.resize(keep);
    b.range.end = seq;
    break;
  }
  return dropped;
}

const OfoBlock* Reassembly::find(Seq32 s) const {
  const size_t i = lower_block(blocks_, s);
  if (i < blocks_.size() && blocks_[i].range.contains(s)) return &blocks_[i];
  return nullptr;
}

void Reassembly::clear() {
  blocks_.clear();
  bytes_ = 0;
}

}  // namespace weir::tcp
