// The send queue's bytes: everything written by the application from
// SND.UNA onward (RFC 9293 §3.3.1: sent-unacknowledged, then not yet sent),
// in one ring that grows by doubling up to the socket's limit. Bounded by
// the caller (SO_SNDBUF); the scoreboard keeps per-packet metadata.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace weir::tcp {

class SendBuffer {
 public:
  size_t size() const { return size_; }
  // Appends up to `data.size()` bytes, never past `limit` bytes held.
  size_t append(std::span<const uint8_t> data, size_t limit);
  // Copies `out.size()` bytes starting `offset` bytes after the front.
  void copy_out(size_t offset, std::span<uint8_t> out) const;
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

}  // namespace weir::tcp
