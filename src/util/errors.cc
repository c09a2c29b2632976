#include "weir/errors.h"

#include "weir/tcp_info.h"

namespace weir {

const char* errc_name(Errc e) {
  switch (e) {
    case Errc::kOk: return "OK";
    case Errc::kAgain: return "EAGAIN";
    case Errc::kInProgress: return "EINPROGRESS";
    case Errc::kAlready: return "EALREADY";
    case Errc::kIsConn: return "EISCONN";
    case Errc::kNotConn: return "ENOTCONN";
    case Errc::kConnRefused: return "ECONNREFUSED";
    case Errc::kConnReset: return "ECONNRESET";
    case Errc::kConnAborted: return "ECONNABORTED";
    case Errc::kTimedOut: return "ETIMEDOUT";
    case Errc::kPipe: return "EPIPE";
    case Errc::kAddrInUse: return "EADDRINUSE";
    case Errc::kAddrNotAvail: return "EADDRNOTAVAIL";
    case Errc::kInval: return "EINVAL";
    case Errc::kBadf: return "EBADF";
    case Errc::kNoProtoOpt: return "ENOPROTOOPT";
    case Errc::kOpNotSupp: return "EOPNOTSUPP";
    case Errc::kNoBufs: return "ENOBUFS";
    case Errc::kNoMem: return "ENOMEM";
    case Errc::kHostUnreach: return "EHOSTUNREACH";
    case Errc::kNetUnreach: return "ENETUNREACH";
    case Errc::kMsgSize: return "EMSGSIZE";
    case Errc::kFault: return "EFAULT";
    case Errc::kFBig: return "EFBIG";
    case Errc::kAfNoSupport: return "EAFNOSUPPORT";
    case Errc::kPerm: return "EPERM";
    case Errc::kNoEnt: return "ENOENT";
    case Errc::kNotSock: return "ENOTSOCK";
    case Errc::kDom: return "EDOM";
    case Errc::kNoDev: return "ENODEV";
  }
  return "E?";
}

const char* to_string(CaState s) {
  switch (s) {
    case CaState::Open: return "Open";
    case CaState::Disorder: return "Disorder";
    case CaState::CWR: return "CWR";
    case CaState::Recovery: return "Recovery";
    case CaState::Loss: return "Loss";
  }
  return "?";
}

}  // namespace weir
