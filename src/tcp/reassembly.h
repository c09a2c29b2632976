// Out-of-order reassembly: an ordered set of non-overlapping sequence ranges
// with their bytes (RFC 9293 §3.10.7.4: "segments with higher beginning
// sequence numbers ... may be held for later processing"). Adjacent and
// overlapping ranges merge on insert. Memory is charged per byte plus a fixed
// per-range overhead (like Linux's skb truesize), so a peer sending many tiny
// segments is charged for them; the owner prunes with `prune()` when over its
// budget, highest sequence numbers first (Linux tcp_prune_ofo_queue).
//
// All ranges lie within one window (< 2^31 bytes) of each other, so Seq32's
// wrap-aware order is a total order over them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tcp/rcv_queue.h"
#include "weir/seq.h"

namespace weir::tcp {

struct OfoBlock {
  SeqRange range;
  std::vector<uint8_t> data;  // range.len() bytes
  uint64_t stamp = 0;         // recency of the latest arrival touching it (RFC 2018 §4 order)
};

struct OfoInsert {
  uint32_t new_bytes = 0;        // bytes not held before
  uint32_t dup_bytes = 0;        // bytes already held
  std::optional<SeqRange> dup;   // first already-held part, for D-SACK (RFC 2883 §4)
  bool fully_dup = false;        // every byte was already held (Linux counts TCPOFOMerge)
  uint32_t absorbed = 0;         // held ranges the segment covered whole (TCPOFOMerge each)
  SeqRange block;                // the block now containing the segment
};

class Reassembly {
 public:
  // Per-range charge on top of the bytes, in bytes (an skb's overhead, roughly).
  static constexpr uint32_t kRangeOverhead = 256;

  // Holds [seq, seq + data.size()). `stamp` marks the arrival's recency.
  OfoInsert insert(Seq32 seq, std::span<const uint8_t> data, uint64_t stamp);

  // Drops everything below `rcv_nxt`, then moves the bytes that start at
  // `rcv_nxt` and are contiguous into `out`. Returns how many moved.
  uint32_t pull(Seq32 rcv_nxt, RcvQueue& out);

  // Drops whole ranges, highest sequence first, until mem() <= max_mem,
  // but never a range that begins at or below `floor` (Linux
  // tcp_prune_ofo_queue stops where the incoming segment would land).
  // Returns the number of bytes dropped.
  uint32_t prune(uint64_t max_mem, std::optional<Seq32> floor = std::nullopt);

  // Drops bytes at or above `seq` (e.g. beyond a FIN). Returns bytes dropped.
  uint32_t drop_from(Seq32 seq);

  uint64_t bytes() const { return bytes_; }
  uint64_t mem() const { return bytes_ + blocks_.size() * uint64_t{kRangeOverhead}; }
  size_t size() const { return blocks_.size(); }
  bool empty() const { return blocks_.empty(); }
  const std::vector<OfoBlock>& blocks() const { return blocks_; }  // ascending
  // The block containing `s`, if any.
  const OfoBlock* find(Seq32 s) const;
  void clear();

 private:
  std::vector<OfoBlock> blocks_;  // sorted by range.begin, non-overlapping, non-adjacent
  uint64_t bytes_ = 0;
};

}  // namespace weir::tcp
