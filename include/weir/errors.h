// Error codes: Linux errno values, so the POSIX-shaped layer and the
// packetdrill runner map one to one.
#pragma once

#include <cerrno>

namespace weir {

enum class Errc : int {
  kOk = 0,
  kAgain = EAGAIN,
  kInProgress = EINPROGRESS,
  kAlready = EALREADY,
  kIsConn = EISCONN,
  kNotConn = ENOTCONN,
  kConnRefused = ECONNREFUSED,
  kConnReset = ECONNRESET,
  kConnAborted = ECONNABORTED,
  kTimedOut = ETIMEDOUT,
  kPipe = EPIPE,
  kAddrInUse = EADDRINUSE,
  kAddrNotAvail = EADDRNOTAVAIL,
  kInval = EINVAL,
  kBadf = EBADF,
  kNoProtoOpt = ENOPROTOOPT,
  kOpNotSupp = EOPNOTSUPP,
  kNoBufs = ENOBUFS,
  kNoMem = ENOMEM,
  kHostUnreach = EHOSTUNREACH,
  kNetUnreach = ENETUNREACH,
  kMsgSize = EMSGSIZE,
  kFault = EFAULT,
  kFBig = EFBIG,     // TCP_REPAIR_OPTIONS with a window shift above 14 (tcp_repair_options_est)
  kAfNoSupport = EAFNOSUPPORT,
  kPerm = EPERM,
  kNoEnt = ENOENT,   // TCP_CONGESTION with an unknown algorithm (as Linux)
  kNotSock = ENOTSOCK,
  kDom = EDOM,       // SO_RCVTIMEO/SO_SNDTIMEO with tv_usec out of range (sock_set_timeout)
  kNoDev = ENODEV,   // SO_BINDTODEVICE to an unknown interface
};

const char* errc_name(Errc e);  // "EAGAIN"

}  // namespace weir
