#include "sim/event_loop.h"

namespace weir::sim {

bool EventLoop::at(Time t, EventTarget* target, uint64_t tag) {
  if (heap_.size() >= kMaxPending) {
    ++overflows_;
    stopped_ = true;
    return false;
  }
  heap_.push_back(Event{t < now_ ? now_ : t, next_seq_++, target, tag});
  sift_up(heap_.size() - 1);
  return true;
}

void EventLoop::sift_up(size_t i) {
  Event e = heap_[i];
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!later(heap_[parent], e)) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventLoop::sift_down(size_t i) {
  const size_t n = heap_.size();
  Event e = heap_[i];
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && later(heap_[child], heap_[child + 1])) ++child;
    if (!later(e, heap_[child])) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = e;
}

bool EventLoop::step() {
  if (heap_.empty()) return false;
  Event e = heap_.front();
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
  now_ = e.when;
  ++events_run_;
  e.target->on_event(now_, e.tag);
  return true;
}

uint64_t EventLoop::run_until(Time end) {
  const uint64_t before = events_run_;
  while (!stopped_ && !heap_.empty() && heap_.front().when <= end) step();
  if (!stopped_ && now_ < end) now_ = end;
  return events_run_ - before;
}

}  // namespace weir::sim
