// `ss -ti` and `nstat` layouts for a running stack, so people read weir's
// connections and counters the way they read Linux's (iproute2's field
// names, order and units).
#pragma once

#include <string>
#include <vector>

#include "weir/counters.h"
#include "weir/stack.h"
#include "weir/tcp_info.h"

namespace weir::driver {

// "ESTAB", "SYN-SENT", ... from tcpi_state (Linux TCP_* numbering).
const char* ss_state_name(uint8_t tcpi_state);
// iproute2's rate format: "12.3Mbps".
std::string ss_rate(double bits_per_sec);
// The indented second line of `ss -ti` for one connection.
std::string ss_info_line(const TcpInfo& i);
// iproute2's print_ms_timer: "59sec", "5.250ms", "1min", "200ms".
std::string ss_ms_timer(int64_t timeout_ms);
// Header plus one entry per socket, then the stack's timewait socks;
// `info` adds the tcp_info line and the timewait timers.
std::string format_ss(const Stack& st, const std::vector<SocketId>& socks, Time now, bool info);
// `nstat -az` layout: "#kernel" then "Name  value  rate"; zeros left out
// unless `zeros`.
std::string format_nstat(const Counters& c, bool zeros = false);

}  // namespace weir::driver
