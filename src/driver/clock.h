// The real-time drivers' clock: CLOCK_MONOTONIC in nanoseconds is weir::Time
// directly (its epoch is boot), so stamps from different threads and from
// the emulator and a stack in another process compare without conversion.
#pragma once

#include <time.h>

#include "weir/time.h"

namespace weir::driver {

inline Time mono_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return Time::from_ns(static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec);
}

inline timespec to_timespec(Time t) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(t.ns() / 1000000000);
  ts.tv_nsec = static_cast<long>(t.ns() % 1000000000);
  return ts;
}

}  // namespace weir::driver
