#include "pkt/symbols.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace weir::pkt {
namespace {

struct Sym {
  std::string_view name;
  int64_t value;
};

// Linux values (include/uapi/linux/*.h, asm-generic/socket.h, x86-64).
constexpr Sym kSymbols[] = {
    {"AF_INET", 2}, {"AF_INET6", 10}, {"AF_UNSPEC", 0}, {"PF_INET", 2}, {"PF_INET6", 10},
    {"SOCK_STREAM", 1}, {"SOCK_DGRAM", 2}, {"SOCK_NONBLOCK", 0x800}, {"SOCK_CLOEXEC", 0x80000},
    {"IPPROTO_IP", 0}, {"IPPROTO_TCP", 6}, {"IPPROTO_UDP", 17}, {"IPPROTO_IPV6", 41},
    {"IPV6_V6ONLY", 26},
    {"SOL_SOCKET", 1}, {"SOL_TCP", 6}, {"SOL_IP", 0}, {"SOL_IPV6", 41},
    // SOL_SOCKET options
    {"SO_DEBUG", 1}, {"SO_REUSEADDR", 2}, {"SO_TYPE", 3}, {"SO_ERROR", 4}, {"SO_DONTROUTE", 5},
    {"SO_BROADCAST", 6}, {"SO_SNDBUF", 7}, {"SO_RCVBUF", 8}, {"SO_KEEPALIVE", 9},
    {"SO_OOBINLINE", 10}, {"SO_LINGER", 13}, {"SO_REUSEPORT", 15}, {"SO_RCVLOWAT", 18},
    {"SO_SNDLOWAT", 19}, {"SO_RCVTIMEO", 20}, {"SO_SNDTIMEO", 21}, {"SO_SNDBUFFORCE", 32},
    {"SO_RCVBUFFORCE", 33}, {"SO_TIMESTAMPING", 37}, {"SO_MARK", 36}, {"SO_MAX_PACING_RATE", 47}, {"SO_TXREHASH", 74},
    {"SO_ZEROCOPY", 60}, {"SO_BINDTODEVICE", 25}, {"SO_PRIORITY", 12},
    // SOL_TCP options
    {"TCP_NODELAY", 1}, {"TCP_MAXSEG", 2}, {"TCP_CORK", 3}, {"TCP_KEEPIDLE", 4},
    {"TCP_KEEPINTVL", 5}, {"TCP_KEEPCNT", 6}, {"TCP_SYNCNT", 7}, {"TCP_LINGER2", 8},
    {"TCP_DEFER_ACCEPT", 9}, {"TCP_WINDOW_CLAMP", 10}, {"TCP_INFO", 11}, {"TCP_QUICKACK", 12},
    {"TCP_CONGESTION", 13}, {"TCP_MD5SIG", 14}, {"TCP_THIN_LINEAR_TIMEOUTS", 16},
    {"TCP_USER_TIMEOUT", 18}, {"TCP_REPAIR", 19}, {"TCP_REPAIR_QUEUE", 20}, {"TCP_QUEUE_SEQ", 21},
    {"TCP_REPAIR_OPTIONS", 22}, {"TCP_REPAIR_WINDOW", 29}, {"TCP_FASTOPEN", 23}, {"TCP_TIMESTAMP", 24},
    {"TCP_NOTSENT_LOWAT", 25}, {"TCP_CC_INFO", 26}, {"TCP_SAVE_SYN", 27}, {"TCP_SAVED_SYN", 28},
    {"TCP_FASTOPEN_CONNECT", 30}, {"TCP_FASTOPEN_KEY", 33}, {"TCP_FASTOPEN_NO_COOKIE", 34},
    {"TCP_ZEROCOPY_RECEIVE", 35}, {"TCP_INQ", 36}, {"TCP_CM_INQ", 36}, {"TCP_TX_DELAY", 37},
    // TCP_REPAIR's values (uapi linux/tcp.h)
    {"TCP_REPAIR_ON", 1}, {"TCP_REPAIR_OFF", 0}, {"TCP_REPAIR_OFF_NO_WP", -1},
    {"TCP_NO_QUEUE", 0}, {"TCP_RECV_QUEUE", 1}, {"TCP_SEND_QUEUE", 2},
    // IP options
    {"IP_TOS", 1}, {"IP_TTL", 2}, {"IP_MTU_DISCOVER", 10}, {"IP_RECVERR", 11}, {"IP_MTU", 14},
    {"IP_FREEBIND", 15}, {"IP_PMTUDISC_DONT", 0}, {"IP_PMTUDISC_DO", 2}, {"IPV6_TCLASS", 67},
    {"IPV6_UNICAST_HOPS", 16}, {"IPV6_RECVERR", 25}, {"IPV6_MTU_DISCOVER", 23}, {"IPV6_FREEBIND", 78},
    {"IPV6_AUTOFLOWLABEL", 70},
    // message flags
    {"MSG_OOB", 0x1}, {"MSG_PEEK", 0x2}, {"MSG_DONTROUTE", 0x4}, {"MSG_CTRUNC", 0x8}, {"MSG_TRUNC", 0x20},
    {"MSG_DONTWAIT", 0x40}, {"MSG_EOR", 0x80}, {"MSG_WAITALL", 0x100}, {"MSG_ERRQUEUE", 0x2000},
    {"MSG_NOSIGNAL", 0x4000}, {"MSG_MORE", 0x8000}, {"MSG_ZEROCOPY", 0x4000000},
    {"MSG_FASTOPEN", 0x20000000},
    // fcntl
    {"F_GETFL", 3}, {"F_SETFL", 4}, {"F_GETFD", 1}, {"F_SETFD", 2}, {"O_RDONLY", 0},
    {"O_WRONLY", 1}, {"O_RDWR", 2}, {"O_NONBLOCK", 0x800},
    // ioctl
    {"SIOCINQ", 0x541B}, {"FIONREAD", 0x541B}, {"SIOCOUTQ", 0x5411}, {"TIOCOUTQ", 0x5411},
    {"SIOCOUTQNSD", 0x894B}, {"FIONBIO", 0x5421},
    {"SIOCATMARK", 0x8905},
    // splice
    {"SPLICE_F_MOVE", 0x01}, {"SPLICE_F_NONBLOCK", 0x02}, {"SPLICE_F_MORE", 0x04}, {"SPLICE_F_GIFT", 0x08},
    // shutdown
    {"SHUT_RD", 0}, {"SHUT_WR", 1}, {"SHUT_RDWR", 2},
    // poll / epoll
    {"POLLIN", 0x1}, {"POLLPRI", 0x2}, {"POLLOUT", 0x4}, {"POLLERR", 0x8}, {"POLLHUP", 0x10},
    {"POLLNVAL", 0x20}, {"POLLRDNORM", 0x40}, {"POLLRDBAND", 0x80}, {"POLLWRNORM", 0x100},
    {"POLLWRBAND", 0x200}, {"POLLRDHUP", 0x2000},
    {"EPOLLIN", 0x1}, {"EPOLLPRI", 0x2}, {"EPOLLOUT", 0x4}, {"EPOLLERR", 0x8}, {"EPOLLHUP", 0x10},
    {"EPOLLRDNORM", 0x40}, {"EPOLLWRNORM", 0x100}, {"EPOLLRDHUP", 0x2000},
    {"EPOLLEXCLUSIVE", 1 << 28}, {"EPOLLONESHOT", 1 << 30}, {"EPOLLET", 1u << 31},
    {"EPOLL_CTL_ADD", 1}, {"EPOLL_CTL_DEL", 2}, {"EPOLL_CTL_MOD", 3},
    // TCP states (tcpi_state) and CA states, for getsockopt/tcp_info comparisons
    {"TCP_ESTABLISHED", 1}, {"TCP_SYN_SENT", 2}, {"TCP_SYN_RECV", 3}, {"TCP_FIN_WAIT1", 4},
    {"TCP_FIN_WAIT2", 5}, {"TCP_TIME_WAIT", 6}, {"TCP_CLOSE", 7}, {"TCP_CLOSE_WAIT", 8},
    {"TCP_LAST_ACK", 9}, {"TCP_LISTEN", 10}, {"TCP_CLOSING", 11},
    // the error queue (linux/errqueue.h, linux/net_tstamp.h)
    {"SCM_TIMESTAMPING", 37}, {"SO_EE_ORIGIN_NONE", 0}, {"SO_EE_ORIGIN_LOCAL", 1},
    {"SO_EE_ORIGIN_ICMP", 2}, {"SO_EE_ORIGIN_ICMP6", 3}, {"SO_EE_ORIGIN_TXSTATUS", 4},
    {"SO_EE_ORIGIN_TIMESTAMPING", 4}, {"SO_EE_ORIGIN_ZEROCOPY", 5}, {"SO_EE_ORIGIN_TXTIME", 6},
    {"SO_EE_CODE_ZEROCOPY_COPIED", 1},
    {"SCM_TSTAMP_SND", 0}, {"SCM_TSTAMP_SCHED", 1}, {"SCM_TSTAMP_ACK", 2},
    {"SOF_TIMESTAMPING_TX_HARDWARE", 1 << 0}, {"SOF_TIMESTAMPING_TX_SOFTWARE", 1 << 1},
    {"SOF_TIMESTAMPING_RX_HARDWARE", 1 << 2}, {"SOF_TIMESTAMPING_RX_SOFTWARE", 1 << 3},
    {"SOF_TIMESTAMPING_SOFTWARE", 1 << 4}, {"SOF_TIMESTAMPING_SYS_HARDWARE", 1 << 5},
    {"SOF_TIMESTAMPING_RAW_HARDWARE", 1 << 6}, {"SOF_TIMESTAMPING_OPT_ID", 1 << 7},
    {"SOF_TIMESTAMPING_TX_SCHED", 1 << 8}, {"SOF_TIMESTAMPING_TX_ACK", 1 << 9},
    {"SOF_TIMESTAMPING_OPT_CMSG", 1 << 10}, {"SOF_TIMESTAMPING_OPT_TSONLY", 1 << 11},
    {"SOF_TIMESTAMPING_OPT_STATS", 1 << 12}, {"SOF_TIMESTAMPING_OPT_PKTINFO", 1 << 13},
    {"SOF_TIMESTAMPING_OPT_TX_SWHW", 1 << 14}, {"SOF_TIMESTAMPING_BIND_PHC", 1 << 15},
    {"SOF_TIMESTAMPING_OPT_ID_TCP", 1 << 16},
    {"NULL", 0},
};

struct Err {
  std::string_view name;
  int value;
};

constexpr Err kErrnos[] = {
    {"EPERM", EPERM}, {"ENOENT", ENOENT}, {"EINTR", EINTR}, {"EIO", EIO}, {"EBADF", EBADF},
    {"EAGAIN", EAGAIN}, {"EWOULDBLOCK", EWOULDBLOCK}, {"ENOMEM", ENOMEM}, {"EACCES", EACCES},
    {"EFAULT", EFAULT}, {"EBUSY", EBUSY}, {"EEXIST", EEXIST}, {"EINVAL", EINVAL},
    {"EPIPE", EPIPE}, {"ENOTSOCK", ENOTSOCK}, {"EDESTADDRREQ", EDESTADDRREQ},
    {"EMSGSIZE", EMSGSIZE}, {"EPROTOTYPE", EPROTOTYPE}, {"ENOPROTOOPT", ENOPROTOOPT},
    {"EPROTONOSUPPORT", EPROTONOSUPPORT}, {"EOPNOTSUPP", EOPNOTSUPP},
    {"EAFNOSUPPORT", EAFNOSUPPORT}, {"EADDRINUSE", EADDRINUSE},
    {"EADDRNOTAVAIL", EADDRNOTAVAIL}, {"ENETDOWN", ENETDOWN}, {"ENETUNREACH", ENETUNREACH},
    {"ECONNABORTED", ECONNABORTED}, {"ECONNRESET", ECONNRESET}, {"ENOBUFS", ENOBUFS},
    {"EISCONN", EISCONN}, {"ENOTCONN", ENOTCONN}, {"ETIMEDOUT", ETIMEDOUT},
    {"ECONNREFUSED", ECONNREFUSED}, {"EHOSTUNREACH", EHOSTUNREACH}, {"EALREADY", EALREADY},
    {"EINPROGRESS", EINPROGRESS}, {"ENOTSUP", ENOTSUP}, {"ENOMSG", ENOMSG},
    {"EDOM", EDOM}, {"ENODEV", ENODEV}, {"ERANGE", ERANGE}, {"EFBIG", EFBIG},
};

}  // namespace

std::optional<int64_t> symbol_value(std::string_view name) {
  for (const Sym& s : kSymbols)
    if (s.name == name) return s.value;
  return std::nullopt;
}

std::optional<int> errno_value(std::string_view name) {
  for (const Err& e : kErrnos)
    if (e.name == name) return e.value;
  return std::nullopt;
}

const char* errno_text(int e) { return strerror(e); }

}  // namespace weir::pkt
