#include "tcp/send_buffer.h"

#include <algorithm>
#include <cstring>

namespace weir::tcp {

void SendBuffer::grow(size_t need) {
  size_t cap = ring_.empty() ? 4096 : ring_.size();
  while (cap < need) cap *= 2;
  if (cap == ring_.size()) return;
  std::vector<uint8_t> bigger(cap);
  copy_out(0, std::span<uint8_t>(bigger.data(), size_));
  ring_.swap(bigger);
  head_ = 0;
}

size_t SendBuffer::append(std::span<const uint8_t> data, size_t limit) {
  const size_t room = limit > size_ ? limit - size_ : 0;
  const size_t n = std::min(room, data.size());
  if (n == 0) return 0;
  if (size_ + n > ring_.size()) grow(size_ + n);
  const size_t mask = ring_.size() - 1;
  size_t tail = (head_ + size_) & mask;
  const size_t first = std::min(n, ring_.size() - tail);
  std::memcpy(ring_.data() + tail, data.data(), first);
  std::memcpy(ring_.data(), data.data() + first, n - first);
  size_ += n;
  return n;
}

void SendBuffer::copy_out(size_t offset, std::span<uint8_t> out) const {
  if (out.empty()) return;
  const size_t mask = ring_.size() - 1;
  const size_t start = (head_ + offset) & mask;
  const size_t first = std::min(out.size(), ring_.size() - start);
  std::memcpy(out.data(), ring_.data() + start, first);
  std::memcpy(out.data() + first, ring_.data(), out.size() - first);
}

void SendBuffer::consume(size_t n) {
  n = std::min(n, size_);
  size_ -= n;
  head_ = size_ == 0 ? 0 : (head_ + n) & (ring_.size() - 1);
}

void SendBuffer::clear() {
  size_ = 0;
  head_ = 0;
}

}  // namespace weir::tcp
