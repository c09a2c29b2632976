// Virtual and real time for weir: integer nanoseconds, strongly typed.
// The engine never reads a clock; drivers pass `Time now` in.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace weir {

// A span of time in nanoseconds. Signed so that differences are natural.
class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration ns(int64_t v) { return Duration(v); }
  static constexpr Duration us(int64_t v) { return Duration(v * 1000); }
  static constexpr Duration ms(int64_t v) { return Duration(v * 1000000); }
  static constexpr Duration s(int64_t v) { return Duration(v * 1000000000); }
  static constexpr Duration zero() { return Duration(0); }
  static constexpr Duration infinite() { return Duration(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ns() const { return v_; }
  constexpr int64_t us() const { return v_ / 1000; }
  constexpr int64_t ms() const { return v_ / 1000000; }
  constexpr double secs() const { return static_cast<double>(v_) / 1e9; }

  constexpr auto operator<=>(const Duration&) const = default;
  constexpr Duration operator+(Duration o) const { return Duration(v_ + o.v_); }
  constexpr Duration operator-(Duration o) const { return Duration(v_ - o.v_); }
  constexpr Duration operator-() const { return Duration(-v_); }
  constexpr Duration operator*(int64_t k) const { return Duration(v_ * k); }
  constexpr Duration operator/(int64_t k) const { return Duration(v_ / k); }
  constexpr int64_t operator/(Duration o) const { return v_ / o.v_; }
  constexpr Duration& operator+=(Duration o) { v_ += o.v_; return *this; }
  constexpr Duration& operator-=(Duration o) { v_ -= o.v_; return *this; }

 private:
  constexpr explicit Duration(int64_t v) : v_(v) {}
  int64_t v_ = 0;
};

// A point in time, nanoseconds since an epoch the driver chooses.
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time from_ns(int64_t v) { return Time(v); }
  static constexpr Time zero() { return Time(0); }
  // "Never": the deadline of a timer that is not armed.
  static constexpr Time never() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ns() const { return v_; }
  constexpr int64_t us() const { return v_ / 1000; }
  constexpr int64_t ms() const { return v_ / 1000000; }
  constexpr double secs() const { return static_cast<double>(v_) / 1e9; }
  constexpr bool is_never() const { return v_ == std::numeric_limits<int64_t>::max(); }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Duration d) const {
    if (is_never() || d == Duration::infinite()) return never();
    return Time(v_ + d.ns());
  }
  constexpr Time operator-(Duration d) const { return Time(v_ - d.ns()); }
  constexpr Duration operator-(Time o) const { return Duration::ns(v_ - o.v_); }
  constexpr Time& operator+=(Duration d) { *this = *this + d; return *this; }

 private:
  constexpr explicit Time(int64_t v) : v_(v) {}
  int64_t v_ = 0;
};

constexpr Time min(Time a, Time b) { return a < b ? a : b; }
constexpr Time max(Time a, Time b) { return a < b ? b : a; }
constexpr Duration min(Duration a, Duration b) { return a < b ? a : b; }
constexpr Duration max(Duration a, Duration b) { return a < b ? b : a; }

// A clock a test or the packetdrill runner advances by hand.
class ManualClock {
 public:
  explicit ManualClock(Time start = Time::zero()) : now_(start) {}
  Time now() const { return now_; }
  void advance(Duration d) { now_ += d; }
  void set(Time t) { now_ = t; }

 private:
  Time now_;
};

}  // namespace weir
