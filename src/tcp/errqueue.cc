#include "tcp/errqueue.h"

#include <utility>

namespace weir::tcp {

bool ErrQueue::push(ErrQueueEntry e, uint32_t limit) {
  const uint32_t truesize = e.payload.empty() ? kEmptySkbTruesize
                                              : kCloneOverhead + static_cast<uint32_t>(e.payload.size());
  // Linux sock_queue_err_skb: refused when rmem + truesize >= sk_rcvbuf.
  if (bytes_ + truesize >= limit) {
    ++drops_;
    return false;
  }
  bytes_ += truesize;
  q_.push_back(Item{std::move(e), truesize});
  ++reports_;
  return true;
}

void ErrQueue::push_zerocopy(uint32_t lo, uint32_t len, bool copied) {
  ++reports_;  // __msg_zerocopy_callback calls sk_error_report either way
  if (!q_.empty() && q_.back().e.ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY) {
    // skb_zerocopy_notify_extend: only a range that continues the tail,
    // and only while the merged range's length fits in 32 bits.
    SockExtendedErr& t = q_.back().e.ee;
    const uint64_t sum_len = uint64_t{t.ee_data} - t.ee_info + 1 + len;
    if (lo == t.ee_data + 1 && sum_len < (uint64_t{1} << 32)) {
      t.ee_data += len;
      return;
    }
  }
  ErrQueueEntry e;
  e.ee.ee_errno = 0;
  e.ee.ee_origin = SO_EE_ORIGIN_ZEROCOPY;
  e.ee.ee_info = lo;
  e.ee.ee_data = lo + len - 1;
  if (copied) e.ee.ee_code = SO_EE_CODE_ZEROCOPY_COPIED;
  // Charged to optmem when the send reserved it (Connection::zc_can_alloc),
  // not to the receive buffer: __skb_queue_tail, not sock_queue_err_skb.
  q_.push_back(Item{std::move(e), 0});
  ++zc_entries_;
}

std::optional<ErrQueueEntry> ErrQueue::pop() {
  if (q_.empty()) return std::nullopt;
  Item it = std::move(q_.front());
  q_.pop_front();
  bytes_ -= it.truesize;
  if (it.e.ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY) --zc_entries_;
  return std::move(it.e);
}

void ErrQueue::clear() {
  q_.clear();
  bytes_ = 0;
  zc_entries_ = 0;
}

}  // namespace weir::tcp
