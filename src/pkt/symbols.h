// Names a script may use for numbers: Linux's socket API constants
// (SOL_SOCKET, TCP_NODELAY, MSG_MORE, O_NONBLOCK, POLLIN, EPOLLET, ...) and
// errno names, with their Linux x86-64 values.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace weir::pkt {

std::optional<int64_t> symbol_value(std::string_view name);
std::optional<int> errno_value(std::string_view name);  // "EAGAIN" -> 11
const char* errno_text(int e);                            // "Resource temporarily unavailable"

namespace sym {
inline constexpr int SOL_SOCKET = 1;
inline constexpr int SOL_TCP = 6;
inline constexpr int SOL_IP = 0;
inline constexpr int SOL_IPV6 = 41;
inline constexpr int SO_ERROR = 4;
inline constexpr int SO_RCVLOWAT = 18;
inline constexpr int SO_ZEROCOPY = 60;
inline constexpr int SO_TIMESTAMPING = 37;
inline constexpr int SCM_TIMESTAMPING = 37;
inline constexpr int IP_RECVERR = 11;
inline constexpr int IPV6_RECVERR = 25;
inline constexpr int MSG_TRUNC = 0x20;
inline constexpr int MSG_CTRUNC = 0x8;
inline constexpr int IP_TOS = 1;
inline constexpr int IP_TTL = 2;
inline constexpr int IPV6_UNICAST_HOPS = 16;
inline constexpr int IPV6_TCLASS = 67;
inline constexpr int IP_MTU_DISCOVER = 10;
inline constexpr int TCP_INQ = 36;  // also TCP_CM_INQ, the cmsg type
inline constexpr int TCP_TX_DELAY = 37;
inline constexpr int MSG_OOB = 0x1;
inline constexpr int MSG_PEEK = 0x2;
inline constexpr int MSG_DONTWAIT = 0x40;
inline constexpr int MSG_ERRQUEUE = 0x2000;
inline constexpr int MSG_ZEROCOPY = 0x4000000;
inline constexpr int MSG_FASTOPEN = 0x20000000;
inline constexpr int O_NONBLOCK = 0x800;
inline constexpr int O_RDWR = 0x2;
inline constexpr int F_GETFL = 3;
inline constexpr int F_SETFL = 4;
inline constexpr int SOCK_STREAM = 1;
inline constexpr int SOCK_NONBLOCK = 0x800;
inline constexpr int POLLNVAL = 0x20;
inline constexpr int EPOLL_CTL_ADD = 1;
inline constexpr int EPOLL_CTL_DEL = 2;
inline constexpr int EPOLL_CTL_MOD = 3;
inline constexpr uint32_t EPOLLET = 1u << 31;
inline constexpr uint32_t EPOLLONESHOT = 1u << 30;
inline constexpr uint32_t EPOLLEXCLUSIVE = 1u << 28;
}  // namespace sym

}  // namespace weir::pkt
