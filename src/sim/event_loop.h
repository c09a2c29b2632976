// The simulator's discrete-event core: nanosecond virtual time and one event
// queue. Ties are broken by insertion order, so a run is a pure function of
// its inputs (and its seed). Events carry a target and a 64-bit tag instead
// of a std::function, so scheduling never allocates once the heap has grown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "weir/time.h"

namespace weir::sim {

// Anything that can be woken by the loop: links, hosts, applications.
class EventTarget {
 public:
  virtual void on_event(Time now, uint64_t tag) = 0;

 protected:
  ~EventTarget() = default;
};

class EventLoop {
 public:
  // Every queue is bounded: a scenario that schedules more than this many
  // pending events is broken (runaway timer or packet storm) and is stopped.
  static constexpr size_t kMaxPending = 1u << 24;

  Time now() const { return now_; }
  // Schedules `target->on_event(t, tag)`. `t` earlier than now() runs at now().
  // Returns false (and counts an overflow) when the queue is full.
  bool at(Time t, EventTarget* target, uint64_t tag = 0);
  bool after(Duration d, EventTarget* target, uint64_t tag = 0) { return at(now_ + d, target, tag); }

  // Runs the earliest event; false when none is pending.
  bool step();
  // Runs every event due at or before `end`, then sets now() to `end`
  // (unless stop() was called). Returns the number of events run.
  uint64_t run_until(Time end);
  // Makes run_until return after the current event.
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }

  Time next_time() const { return heap_.empty() ? Time::never() : heap_.front().when; }
  size_t pending() const { return heap_.size(); }
  uint64_t events_run() const { return events_run_; }
  uint64_t overflows() const { return overflows_; }

 private:
  struct Event {
    Time when;
    uint64_t seq;  // insertion order: the tie-break
    EventTarget* target;
    uint64_t tag;
  };
  static bool later(const Event& a, const Event& b) {
    return a.when != b.when ? a.when > b.when : a.seq > b.seq;
  }
  void sift_up(size_t i);
  void sift_down(size_t i);

  std::vector<Event> heap_;  // binary min-heap on (when, seq)
  Time now_ = Time::zero();
  uint64_t next_seq_ = 0;
  uint64_t events_run_ = 0;
  uint64_t overflows_ = 0;
  bool stopped_ = false;
};

}  // namespace weir::sim
