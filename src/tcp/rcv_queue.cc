#include "tcp/rcv_queue.h"

#include <algorithm>
#include <cstring>

namespace weir::tcp {

namespace {
constexpr size_t kMinCapacity = 4096;
}  // namespace

// The new storage is not zeroed: every byte is written before it is read.
void RcvQueue::grow(size_t need) {
  size_t cap = std::max(cap_, kMinCapacity);
  while (cap < need) cap *= 2;
  if (cap == cap_) return;
  auto bigger = std::make_unique_for_overwrite<uint8_t[]>(cap);
  peek(std::span<uint8_t>(bigger.get(), size_));
  buf_ = std::move(bigger);
  cap_ = cap;
  head_ = 0;
}

void RcvQueue::append(std::span<const uint8_t> data) {
  const size_t n = data.size();
  if (n == 0) return;
  if (size_ + n > cap_) grow(size_ + n);
  const size_t tail = (head_ + size_) & (cap_ - 1);
  const size_t first = std::min(n, cap_ - tail);
  std::memcpy(buf_.get() + tail, data.data(), first);
  std::memcpy(buf_.get(), data.data() + first, n - first);
  size_ += n;
}

size_t RcvQueue::peek_at(size_t off, std::span<uint8_t> out) const {
  if (off >= size_) return 0;
  const size_t n = std::min(out.size(), size_ - off);
  if (n == 0) return 0;
  const size_t start = (head_ + off) & (cap_ - 1);
  const size_t first = std::min(n, cap_ - start);
  std::memcpy(out.data(), buf_.get() + start, first);
  std::memcpy(out.data() + first, buf_.get(), n - first);
  return n;
}

void RcvQueue::consume(size_t n) {
  n = std::min(n, size_);
  size_ -= n;
  // An empty ring restarts at the front, so the next segment's copy does not wrap.
  head_ = size_ == 0 ? 0 : (head_ + n) & (cap_ - 1);
}

void RcvQueue::release() {
  if (size_ != 0) return;
  buf_.reset();
  cap_ = 0;
  head_ = 0;
}

}  // namespace weir::tcp
