// SO_RCVTIMEO / SO_SNDTIMEO (Linux sock_set_timeout / sock_get_timeout in
// net/core/sock.c): a struct timeval kept as jiffies, as the kernel keeps
// sk_rcvtimeo and sk_sndtimeo, so that getsockopt() reads back what Linux
// reads back (the microseconds rounded up to a whole jiffy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "weir/errors.h"
#include "weir/time.h"

namespace weir::tcp {

// Linux MAX_SCHEDULE_TIMEOUT (LONG_MAX): wait for ever. A new socket's
// timeouts (sock_init_data).
inline constexpr int64_t kMaxScheduleTimeout = std::numeric_limits<int64_t>::max();
// CONFIG_HZ of the kernels Linux's packetdrill suites run on: one jiffy is
// 1 ms. The timeouts are the only place weir keeps time in jiffies, because
// getsockopt() shows the rounding.
inline constexpr int64_t kHz = 1000;

// Linux's option numbers (asm-generic/socket.h): the _OLD ones take
// struct __kernel_old_timeval, the _NEW ones struct __kernel_sock_timeval;
// on a 64-bit ABI both are two 64-bit fields, 16 bytes.
inline constexpr int kSoRcvTimeoOld = 20;
inline constexpr int kSoSndTimeoOld = 21;
inline constexpr int kSoRcvTimeoNew = 66;
inline constexpr int kSoSndTimeoNew = 67;
inline bool is_rcvtimeo(int name) { return name == kSoRcvTimeoOld || name == kSoRcvTimeoNew; }
inline bool is_sndtimeo(int name) { return name == kSoSndTimeoOld || name == kSoSndTimeoNew; }

// Linux sock_set_timeout: EINVAL when shorter than a timeval, EDOM when
// tv_usec is outside [0, 1e6); a negative tv_sec sets 0 jiffies (the call
// does not wait at all), {0, 0} and values too large for jiffies set
// MAX_SCHEDULE_TIMEOUT; otherwise tv_sec * HZ + tv_usec rounded up to a jiffy.
Errc set_sock_timeout(std::span<const uint8_t> val, int64_t* timeo);
// Linux sock_get_timeout: MAX_SCHEDULE_TIMEOUT reads as {0, 0}, else the
// jiffies as seconds and microseconds; cut to the caller's buffer as
// sk_getsockopt cuts it. Returns the bytes written.
size_t get_sock_timeout(int64_t timeo, std::span<uint8_t> out);
// How long a blocking call may wait: Duration::infinite() for
// MAX_SCHEDULE_TIMEOUT, zero for none.
Duration sock_timeout_duration(int64_t timeo);

}  // namespace weir::tcp
