// Sequence-space arithmetic (RFC 1982 serial numbers, as Linux's before()/after()).
// All TCP sequence and acknowledgement numbers in weir are Seq32; raw uint32_t
// arithmetic on them is what seed 000 (Inferno's window underflow) costs.
#pragma once

#include <cstdint>

namespace weir {

class Seq32 {
 public:
  constexpr Seq32() = default;
  constexpr explicit Seq32(uint32_t v) : v_(v) {}
  constexpr uint32_t raw() const { return v_; }

  // Distance from `o` to this, as a signed 32-bit quantity (Linux: (s32)(a - b)).
  constexpr int32_t operator-(Seq32 o) const {
    return static_cast<int32_t>(v_ - o.v_);
  }
  constexpr Seq32 operator+(uint32_t n) const { return Seq32(v_ + n); }
  constexpr Seq32 operator-(uint32_t n) const { return Seq32(v_ - n); }
  constexpr Seq32& operator+=(uint32_t n) { v_ += n; return *this; }
  constexpr bool operator==(const Seq32&) const = default;

  // Wrap-aware order: a < b iff b is "after" a within half the space.
  constexpr bool operator<(Seq32 o) const { return (*this - o) < 0; }
  constexpr bool operator>(Seq32 o) const { return (*this - o) > 0; }
  constexpr bool operator<=(Seq32 o) const { return (*this - o) <= 0; }
  constexpr bool operator>=(Seq32 o) const { return (*this - o) >= 0; }

 private:
  uint32_t v_ = 0;
};

// Bytes from `from` up to `to`, or 0 when `to` is not after `from`.
// The only way to turn a sequence difference into a length: it cannot wrap.
constexpr uint32_t seq_len(Seq32 from, Seq32 to) {
  int32_t d = to - from;
  return d > 0 ? static_cast<uint32_t>(d) : 0;
}

constexpr Seq32 seq_max(Seq32 a, Seq32 b) { return a < b ? b : a; }
constexpr Seq32 seq_min(Seq32 a, Seq32 b) { return a < b ? a : b; }

// A half-open range [begin, end) in sequence space.
struct SeqRange {
  Seq32 begin;
  Seq32 end;
  constexpr uint32_t len() const { return seq_len(begin, end); }
  constexpr bool empty() const { return !(begin < end); }
  constexpr bool contains(Seq32 s) const { return begin <= s && s < end; }
  constexpr bool covers(SeqRange r) const { return begin <= r.begin && r.end <= end; }
  constexpr bool overlaps(SeqRange r) const { return begin < r.end && r.begin < end; }
  constexpr bool operator==(const SeqRange&) const = default;
};

// RFC 9293 §3.4: a <= b < c, with wrap (used for acceptability tests).
constexpr bool seq_in_window(Seq32 s, Seq32 lo, Seq32 hi_exclusive) {
  return lo <= s && s < hi_exclusive;
}

}  // namespace weir
