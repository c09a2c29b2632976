// A socket's error queue (Linux sk_error_queue), bounded. Two kinds of
// entry reach it, with two bounds, as in Linux:
//  - MSG_ZEROCOPY notifications: their memory is taken when the send
//    reserves its notification (sock_omalloc against optmem_max: the send
//    fails with ENOBUFS instead), so queueing one never fails; a completion
//    that follows the tail's range extends it (skb_zerocopy_notify_extend).
//  - transmit timestamps: each entry is charged its truesize and one that
//    would reach the limit (the socket's receive buffer) is dropped and
//    counted (sock_queue_err_skb -> -ENOMEM). weir charges the error queue
//    on its own, not together with the receive queue as sk_rmem_alloc does.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "weir/errqueue.h"

namespace weir::tcp {

class ErrQueue {
 public:
  // SKB_TRUESIZE(0) on x86_64: the sk_buff (256) and skb_shared_info (320)
  // of a notification or OPT_TSONLY timestamp (alloc_skb(0)).
  static constexpr uint32_t kEmptySkbTruesize = 576;
  // A timestamp that carries the packet is a clone of a TCP skb: its
  // truesize is the original's (tcp/send_buffer.h SkbLedger::kSkbOverhead).
  static constexpr uint32_t kCloneOverhead = 1280;

  // Queues a timestamp entry unless its truesize would take the queue to
  // `limit` bytes; false (and a drop counted) if it did not fit.
  bool push(ErrQueueEntry e, uint32_t limit);
  // __msg_zerocopy_callback: the range [lo, lo + len) of notification ids
  // completed; it extends the tail entry when that is a zerocopy range
  // ending at lo - 1 whose length stays below 2^32, else a new entry.
  void push_zerocopy(uint32_t lo, uint32_t len, bool copied);
  std::optional<ErrQueueEntry> pop();

  bool empty() const { return q_.empty(); }
  size_t size() const { return q_.size(); }
  uint64_t bytes() const { return bytes_; }  // timestamps' truesize charged
  size_t zerocopy_entries() const { return zc_entries_; }
  uint64_t drops() const { return drops_; }
  // sk_error_report() calls: one per entry queued or extended. A wake-up
  // for pollers (EPOLLERR is reported again per report under EPOLLET).
  uint64_t reports() const { return reports_; }
  void clear();

 private:
  struct Item {
    ErrQueueEntry e;
    uint32_t truesize = 0;
  };
  std::deque<Item> q_;
  uint64_t bytes_ = 0;
  size_t zc_entries_ = 0;
  uint64_t drops_ = 0;
  uint64_t reports_ = 0;
};

}  // namespace weir::tcp
