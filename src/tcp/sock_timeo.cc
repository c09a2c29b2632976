// SO_RCVTIMEO / SO_SNDTIMEO values (Linux net/core/sock.c).
#include "tcp/sock_timeo.h"

#include <algorithm>
#include <cstring>

namespace weir::tcp {
namespace {

constexpr int64_t kUsecPerSec = 1000000;

struct Timeval64 {  // __kernel_old_timeval on 64-bit == __kernel_sock_timeval
  int64_t tv_sec;
  int64_t tv_usec;
};

}  // namespace

Errc set_sock_timeout(std::span<const uint8_t> val, int64_t* timeo) {
  Timeval64 tv{};
  if (val.size() < sizeof tv) return Errc::kInval;  // sock_copy_user_timeval
  std::memcpy(&tv, val.data(), sizeof tv);
  if (tv.tv_usec < 0 || tv.tv_usec >= kUsecPerSec) return Errc::kDom;
  if (tv.tv_sec < 0) {
    // Linux warns ("tries to set negative timeout") and sets 0 jiffies.
    *timeo = 0;
    return Errc::kOk;
  }
  *timeo = kMaxScheduleTimeout;
  if ((tv.tv_sec || tv.tv_usec) && tv.tv_sec < kMaxScheduleTimeout / kHz - 1) {
    const int64_t per_jiffy = kUsecPerSec / kHz;
    *timeo = tv.tv_sec * kHz + (tv.tv_usec + per_jiffy - 1) / per_jiffy;  // DIV_ROUND_UP
  }
  return Errc::kOk;
}

size_t get_sock_timeout(int64_t timeo, std::span<uint8_t> out) {
  Timeval64 tv{0, 0};
  if (timeo != kMaxScheduleTimeout) {
    tv.tv_sec = timeo / kHz;
    tv.tv_usec = (timeo % kHz) * kUsecPerSec / kHz;
  }
  const size_t n = std::min(out.size(), sizeof tv);
  std::memcpy(out.data(), &tv, n);
  return n;
}

Duration sock_timeout_duration(int64_t timeo) {
  if (timeo == kMaxScheduleTimeout) return Duration::infinite();
  return Duration::ms(timeo * (1000 / kHz));
}

}  // namespace weir::tcp
