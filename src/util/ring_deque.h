// A double-ended queue of trivially copyable values in one power-of-two
// ring: indexing is a mask, not std::deque's block arithmetic (the send
// path indexes the write queue's chunks several times per burst). The ring
// doubles when full and is never shrunk; the caller bounds its length.
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

namespace weir {

template <typename T>
class RingDeque {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  T& operator[](size_t i) { return ring_[(head_ + i) & mask_]; }
  const T& operator[](size_t i) const { return ring_[(head_ + i) & mask_]; }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[count_ - 1]; }
  const T& back() const { return (*this)[count_ - 1]; }

  void push_back(T v) {  // by value: `v` may be an element, and grow() moves them
    if (count_ == ring_.size()) grow();
    ring_[(head_ + count_) & mask_] = v;
    ++count_;
  }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --count_;
  }
  // Inserts `v` before element `i` (i <= size()), moving the later ones up.
  void insert(size_t i, T v) {
    push_back(v);
    for (size_t k = count_ - 1; k > i; --k) (*this)[k] = (*this)[k - 1];
    (*this)[i] = v;
  }
  void clear() { head_ = count_ = 0; }

 private:
  void grow() {
    std::vector<T> bigger(ring_.empty() ? 64 : ring_.size() * 2);
    for (size_t i = 0; i < count_; ++i) bigger[i] = (*this)[i];
    ring_.swap(bigger);
    mask_ = ring_.size() - 1;
    head_ = 0;
  }

  std::vector<T> ring_;  // power-of-two size (or empty)
  size_t mask_ = 0;
  size_t head_ = 0;
  size_t count_ = 0;
};

}  // namespace weir
