// The send queue's bytes: everything written by the application from
// SND.UNA onward (RFC 9293 §3.3.1: sent-unacknowledged, then not yet sent),
// in one ring that grows by doubling up to the socket's limit. Bounded by
// the caller (SO_SNDBUF); the scoreboard keeps per-packet metadata.
//
// Also here: the two pieces of send-side bookkeeping Linux keeps per socket
// beside the bytes: how many skbs the queue is cut into (sk_wmem_queued
// charges each one a fixed overhead) and the tcp_info chronographs.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "weir/seq.h"
#include "weir/time.h"

namespace weir::tcp {

class SendBuffer {
 public:
  size_t size() const { return size_; }
  // Appends up to `data.size()` bytes, never past `limit` bytes held.
  size_t append(std::span<const uint8_t> data, size_t limit);
  // Copies `out.size()` bytes starting `offset` bytes after the front.
  void copy_out(size_t offset, std::span<uint8_t> out) const;
  // The `len` bytes starting `offset` bytes after the front, in place: one
  // piece, or two where the ring wraps (`offset + len <= size()`).
  std::array<std::span<const uint8_t>, 2> view(size_t offset, size_t len) const;
  // Drops `n` bytes from the front (they were acknowledged).
  void consume(size_t n);
  void clear();
  size_t capacity() const { return ring_.size(); }

 private:
  void grow(size_t need);
  std::vector<uint8_t> ring_;  // power-of-two size
  size_t head_ = 0;
  size_t size_ = 0;
};

// Linux sk_wmem_queued charges every skb on the write and retransmit queues
// its truesize: the payload plus the sk_buff, its head and skb_shared_info.
// weir cuts the unsent queue like Linux (Connection::Chunk); this ledger
// remembers where each transmitted skb ends, since Linux's tso_fragment
// splits an skb at the end of every burst that leaves part of it behind.
// Bounded: past kMaxSkbs the two oldest are counted as one.
class SkbLedger {
 public:
  // Per-skb overhead: Linux's skb->truesize of an skb with no payload,
  // SKB_TRUESIZE of the MAX_TCP_HEADER (320) head once kmalloc rounded head
  // plus skb_shared_info up to 1 KB: 704 + sk_buff 256 + shared info 320 on
  // x86_64. gtests pin it: blocking-write.pkt wakes the writer at the ACK of
  // 36001, not 30001 (< 2000), epoll_out_edge.pkt's EPOLLOUT at ACK 42001
  // and its 112000-byte write (1115..1749).
  static constexpr uint32_t kSkbOverhead = 1280;
  static constexpr size_t kMaxSkbs = 4096;

  // A burst of new data [.., end) left as one skb (tcp_event_new_data_sent).
  void on_sent(Seq32 end);
  // The same, with SND.UNA now (never decreasing between clear()s): the
  // skbs it covers whole are set aside first (see stale_), which changes
  // no answer of sent_skbs() or live().
  void on_sent(Seq32 end, Seq32 una);
  // Skbs wholly below `una` are freed (tcp_clean_rtx_queue).
  void on_acked(Seq32 una);
  void clear() {
    ends_.clear();
    stale_ = 0;
  }
  size_t sent_skbs() const { return stale_ + ends_.size(); }
  // Skbs not yet wholly acknowledged at `una` (on_acked may lag behind).
  size_t live(Seq32 una) const;

 private:
  // The ledger is `stale_` skbs already wholly acknowledged when on_sent
  // last saw SND.UNA (on_acked has not freed them yet; only their number
  // matters: they end at or below every later SND.UNA), then `ends_`. So a
  // sender whose writer never waits for space (on_acked is only called
  // then) neither keeps nor rescans them, and the bound's merge of the two
  // oldest is a decrement instead of a deque erase on every burst.
  size_t stale_ = 0;
  Seq32 stale_back_;  // end of the newest stale skb (for the ordering check)
  // The ends, oldest first, in a ring that doubles and is never shrunk (a
  // std::deque allocated and freed a block every 128 skbs in steady state).
  // Inline, with the mask kept: on_sent runs once per burst sent.
  class EndRing {
   public:
    bool empty() const { return count_ == 0; }
    size_t size() const { return count_; }
    Seq32 operator[](size_t i) const { return ring_[(head_ + i) & mask_]; }
    Seq32 front() const { return (*this)[0]; }
    Seq32 back() const { return (*this)[count_ - 1]; }
    void push_back(Seq32 s) {
      if (count_ == ring_.size()) grow();
      ring_[(head_ + count_) & mask_] = s;
      ++count_;
    }
    void pop_front() {
      head_ = (head_ + 1) & mask_;
      --count_;
    }
    void erase_second();  // drops element 1
    void clear() { head_ = count_ = 0; }

   private:
    void grow();               // doubles the ring (first: 64 entries)
    std::vector<Seq32> ring_;  // power-of-two size
    size_t mask_ = 0;          // ring_.size() - 1 once allocated
    size_t head_ = 0;
    size_t count_ = 0;
  };
  void merge_oldest();  // past kMaxSkbs: the two oldest become one
  EndRing ends_;
};

// Linux's tcp_info chronographs (tcp_chrono_start/stop, tcp_output.c): the
// time the sender was busy, and the parts of it limited by the peer's
// window or by the send buffer. One clock runs at a time; the higher type
// takes over (sndbuf > rwnd > busy).
enum class Chrono : uint8_t { kUnspec = 0, kBusy = 1, kRwndLimited = 2, kSndbufLimited = 3 };

class ChronoStats {
 public:
  // tcp_chrono_start: only a more interesting condition replaces the clock.
  void start(Time now, Chrono type);
  // tcp_chrono_stop: with both queues empty nothing runs; else, if `type`
  // was the running clock, busy time resumes.
  void stop(Time now, Chrono type, bool queues_empty);
  Chrono running() const { return type_; }
  // Accumulated time of `type` up to `now` (tcp_get_info_chrono_stats).
  Duration total(Time now, Chrono type) const;

 private:
  void set(Time now, Chrono type);  // tcp_chrono_set
  Chrono type_ = Chrono::kUnspec;
  Time since_;
  std::array<Duration, 3> stat_{};
};

// Inline: every segment sent asks for its payload (Connection::send_one).
inline std::array<std::span<const uint8_t>, 2> SendBuffer::view(size_t offset, size_t len) const {
  if (len == 0) return {};
  const size_t mask = ring_.size() - 1;
  const size_t start = (head_ + offset) & mask;
  const size_t first = std::min(len, ring_.size() - start);
  return {std::span<const uint8_t>(ring_.data() + start, first),
          std::span<const uint8_t>(ring_.data(), len - first)};
}

}  // namespace weir::tcp
