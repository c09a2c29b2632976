#include "util/timer_queue.h"

namespace weir {

bool TimerQueue::less(uint32_t a, uint32_t b) const {
  const Slot& x = slots_[a];
  const Slot& y = slots_[b];
  if (x.deadline != y.deadline) return x.deadline < y.deadline;
  return x.order < y.order;
}

void TimerQueue::place(size_t pos, uint32_t slot) {
  heap_[pos] = slot;
  slots_[slot].heap_pos = static_cast<uint32_t>(pos);
}

void TimerQueue::sift_up(size_t pos) {
  uint32_t s = heap_[pos];
  while (pos > 0) {
    size_t parent = (pos - 1) / 2;
    if (!less(s, heap_[parent])) break;
    place(pos, heap_[parent]);
    pos = parent;
  }
  place(pos, s);
}

void TimerQueue::sift_down(size_t pos) {
  uint32_t s = heap_[pos];
  size_t n = heap_.size();
  for (;;) {
    size_t child = 2 * pos + 1;
    if (child >= n) break;
    if (child + 1 < n && less(heap_[child + 1], heap_[child])) ++child;
    if (!less(heap_[child], s)) break;
    place(pos, heap_[child]);
    pos = child;
  }
  place(pos, s);
}

void TimerQueue::remove_at(size_t pos) {
  uint32_t s = heap_[pos];
  uint32_t last = heap_.back();
  heap_.pop_back();
  if (pos < heap_.size()) {
    place(pos, last);
    sift_down(pos);
    sift_up(slots_[last].heap_pos);
  }
  Slot& slot = slots_[s];
  slot.heap_pos = kFree;
  ++slot.gen;  // every outstanding handle to this slot is now stale
  free_.push_back(s);
}

const TimerQueue::Slot* TimerQueue::live(TimerHandle h) const {
  if (!h.valid() || h.slot >= slots_.size()) return nullptr;
  const Slot& s = slots_[h.slot];
  if (s.gen != h.gen || s.heap_pos == kFree) return nullptr;
  return &s;
}

TimerHandle TimerQueue::arm(Time deadline, uint64_t tag) {
  if (heap_.size() >= max_) return {};
  uint32_t s;
  if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
  } else {
    s = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& slot = slots_[s];
  slot.deadline = deadline;
  slot.order = next_order_++;
  slot.tag = tag;
  heap_.push_back(s);
  slot.heap_pos = static_cast<uint32_t>(heap_.size() - 1);
  sift_up(slot.heap_pos);
  return TimerHandle{s, slot.gen};
}

bool TimerQueue::rearm(TimerHandle h, Time deadline) {
  if (!live(h)) return false;
  move(slots_[h.slot], deadline);
  return true;
}

// The timer orders as if freshly armed at `deadline`. At the same deadline
// its key only grows (a later arm order), so it can only sink: the sift up
// is skipped (a per-kind slot is re-set at an unchanged deadline on most
// calls); the resulting order is the same.
void TimerQueue::move(Slot& slot, Time deadline) {
  const bool same = slot.deadline == deadline;
  slot.deadline = deadline;
  slot.order = next_order_++;
  sift_down(slot.heap_pos);
  if (!same) sift_up(slot.heap_pos);
}

bool TimerQueue::cancel(TimerHandle h) {
  const Slot* s = live(h);
  if (!s) return false;
  remove_at(s->heap_pos);
  return true;
}

bool TimerQueue::set(TimerHandle& h, Time deadline, uint64_t tag) {
  if (deadline.is_never()) {
    cancel(h);
    h = {};
    return true;
  }
  if (live(h)) {
    Slot& slot = slots_[h.slot];
    slot.tag = tag;
    move(slot, deadline);
    return true;
  }
  h = arm(deadline, tag);
  return h.valid();
}

bool TimerQueue::armed(TimerHandle h) const { return live(h) != nullptr; }

Time TimerQueue::deadline(TimerHandle h) const {
  const Slot* s = live(h);
  return s ? s->deadline : Time::never();
}

Time TimerQueue::next_deadline() const {
  return heap_.empty() ? Time::never() : slots_[heap_.front()].deadline;
}

std::optional<TimerQueue::Expired> TimerQueue::pop_expired(Time now) {
  if (heap_.empty()) return std::nullopt;
  uint32_t s = heap_.front();
  const Slot& slot = slots_[s];
  if (slot.deadline > now) return std::nullopt;
  Expired e{TimerHandle{s, slot.gen}, slot.deadline, slot.tag};
  remove_at(0);
  return e;
}

void TimerQueue::clear() {
  while (!heap_.empty()) remove_at(heap_.size() - 1);
}

}  // namespace weir
