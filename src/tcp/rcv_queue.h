// The receive queue: in-order bytes the application has not read yet
// (RFC 9293 §3.3.1, between the user's next read and RCV.NXT). One ring of
// contiguous storage that doubles when a segment does not fit, so a segment
// costs one copy in, a read one copy out, and the steady state allocates
// nothing. The owner bounds it (the receive buffer), so it never outgrows
// the next power of two above that bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace weir::tcp {

class RcvQueue {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }

  // Appends all of `data`, growing the ring if needed.
  void append(std::span<const uint8_t> data);
  // Copies min(out.size(), size()) bytes from the front; returns how many.
  size_t peek(std::span<uint8_t> out) const { return peek_at(0, out); }
  // The same from `off` bytes past the front (none if off >= size()).
  size_t peek_at(size_t off, std::span<uint8_t> out) const;
  // Drops `n` bytes (at most size()) from the front.
  void consume(size_t n);
  // Frees the storage if the queue is empty (nothing more will arrive).
  void release();

 private:
  void grow(size_t need);
  std::unique_ptr<uint8_t[]> buf_;
  size_t cap_ = 0;   // zero or a power of two
  size_t head_ = 0;  // index of the first byte
  size_t size_ = 0;
};

}  // namespace weir::tcp
