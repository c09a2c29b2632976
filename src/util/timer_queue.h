// A deterministic timer set: timers ordered by (deadline, arm order), so
// timers due at the same instant fire first-armed-first (STYLE.md habit 8:
// expiry in deadline order with deterministic ties). Arm, re-arm and cancel
// by handle in O(log n); the earliest deadline in O(1). An indexed binary
// heap over a slot table; handles carry a generation so a stale handle (its
// timer fired or was cancelled, the slot reused) is detected, never aliased.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "weir/time.h"

namespace weir {

struct TimerHandle {
  uint32_t slot = UINT32_MAX;
  uint32_t gen = 0;
  bool valid() const { return slot != UINT32_MAX; }
  bool operator==(const TimerHandle&) const = default;
};

class TimerQueue {
 public:
  struct Expired {
    TimerHandle handle;  // no longer armed
    Time deadline;
    uint64_t tag;  // the caller's value given at arm()
  };

  // At most `max_timers` may be armed at once (every structure is bounded).
  explicit TimerQueue(size_t max_timers = size_t{1} << 22) : max_(max_timers) {}

  // Arms a new timer; returns an invalid handle when the queue is full.
  TimerHandle arm(Time deadline, uint64_t tag);
  // Moves an armed timer to `deadline`; it then orders after every timer
  // already due at that instant (as if freshly armed). False if not armed.
  bool rearm(TimerHandle h, Time deadline);
  // Disarms; false if `h` was not armed (already fired, cancelled or stale).
  bool cancel(TimerHandle h);
  // The one call a per-kind timer slot needs: re-arms `h` if armed, else arms
  // it anew (updating `h`); Time::never() cancels it. False only when full.
  bool set(TimerHandle& h, Time deadline, uint64_t tag);

  bool armed(TimerHandle h) const;
  // Deadline of an armed timer, Time::never() otherwise.
  Time deadline(TimerHandle h) const;
  // The earliest deadline, Time::never() when empty.
  Time next_deadline() const;
  // Removes and returns the earliest timer if it is due at or before `now`.
  // Call repeatedly to run everything due, in order.
  std::optional<Expired> pop_expired(Time now);

  size_t size() const { return heap_.size(); }
  bool empty() const { return heap_.empty(); }
  void clear();

 private:
  struct Slot {
    Time deadline;
    uint64_t order = 0;  // arm order, the tie-break
    uint64_t tag = 0;
    uint32_t gen = 0;
    uint32_t heap_pos = kFree;
  };
  static constexpr uint32_t kFree = UINT32_MAX;

  bool less(uint32_t a, uint32_t b) const;
  void move(Slot& slot, Time deadline);
  void place(size_t pos, uint32_t slot);
  void sift_up(size_t pos);
  void sift_down(size_t pos);
  void remove_at(size_t pos);
  const Slot* live(TimerHandle h) const;

  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  std::vector<uint32_t> heap_;  // slot indices, a binary min-heap
  uint64_t next_order_ = 0;
  size_t max_;
};

}  // namespace weir
