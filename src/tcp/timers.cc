#include "tcp/timers.h"

namespace weir::tcp {

const char* to_string(TimerKind k) {
  switch (k) {
    case TimerKind::kRetransmit: return "retransmit";
    case TimerKind::kDelAck: return "delack";
    case TimerKind::kKeepalive: return "keepalive";
    case TimerKind::kTimeWait: return "time-wait";
    case TimerKind::kCount: break;
  }
  return "?";
}

Time TimerSet::earliest() const {
  Time t = Time::never();
  for (Time d : at_) t = min(t, d);
  return t;
}

TimerKind TimerSet::due(Time now) const {
  TimerKind best = TimerKind::kCount;
  Time best_at = Time::never();
  for (size_t i = 0; i < at_.size(); ++i) {
    if (!at_[i].is_never() && at_[i] <= now && at_[i] < best_at) {
      best_at = at_[i];
      best = static_cast<TimerKind>(i);
    }
  }
  return best;
}

}  // namespace weir::tcp
