#include "sim/codel.h"

#include <cmath>

#include "sim/ecn.h"

namespace weir::sim {

bool CoDel::mark(Packet* p) {
  if (!p_.ecn || !mark_ce(p->bytes)) return false;
  ++marks_;
  return true;
}

Time CoDel::control_law(Time t, uint32_t count) const {
  double step = static_cast<double>(p_.interval.ns()) / std::sqrt(static_cast<double>(count));
  return t + Duration::ns(static_cast<int64_t>(step));
}

// RFC 8289 §5.4 dodequeue(): decides whether the head packet may be dropped.
CoDel::Result CoDel::do_dequeue(Time now, PacketFifo& q) {
  Packet* p = q.pop();
  if (p == nullptr) {
    first_above_time_ = Time::zero();
    return {nullptr, false};
  }
  Duration sojourn = now - p->enqueued;
  // Below target, or too little queued to justify a drop: reset the clock.
  if (sojourn < p_.target || q.bytes() <= p_.mtu) {
    first_above_time_ = Time::zero();
    return {p, false};
  }
  if (first_above_time_ == Time::zero()) {
    first_above_time_ = now + p_.interval;
    return {p, false};
  }
  return {p, now >= first_above_time_};
}

// RFC 8289 §5.5 dequeue(): the dropping state machine.
Packet* CoDel::dequeue(Time now, PacketFifo& q, PacketPool& pool) {
  Result r = do_dequeue(now, q);
  if (r.p == nullptr) {
    dropping_ = false;
    return nullptr;
  }
  if (dropping_) {
    if (!r.ok_to_drop) {
      dropping_ = false;  // sojourn went below target: leave dropping state
    }
    while (dropping_ && now >= drop_next_) {
      ++count_;
      if (mark(r.p)) {  // Linux: marked, the next signal one control-law step on
        drop_next_ = control_law(drop_next_, count_);
        break;
      }
      drop(r.p, pool);
      r = do_dequeue(now, q);
      if (r.p == nullptr || !r.ok_to_drop) {
        dropping_ = false;
      } else {
        drop_next_ = control_law(drop_next_, count_);
      }
    }
  } else if (r.ok_to_drop) {
    if (!mark(r.p)) {
      drop(r.p, pool);
      r = do_dequeue(now, q);
    }
    dropping_ = true;
    // If we were dropping recently, start from the earlier drop rate
    // (RFC 8289 §5.5, "delta" heuristic).
    uint32_t delta = count_ - lastcount_;
    count_ = 1;
    if (delta > 1 && now - drop_next_ < p_.interval * 16) count_ = delta;
    drop_next_ = control_law(now, count_);
    lastcount_ = count_;
  }
  return r.p;
}

}  // namespace weir::sim
