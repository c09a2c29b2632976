// Per-destination route metrics, as `ip route add|change|replace ... advmss N
// mtu [lock] N initcwnd N fastopen_no_cookie 0|1` sets them on Linux
// (RTAX_ADVMSS, RTAX_MTU with its RTAX_LOCK bit, RTAX_INITCWND,
// RTAX_FASTOPEN_NO_COOKIE). TCP reads them when a connection is made
// (advertised MSS, initial window) and on every send (path MTU).
#pragma once

#include <cstdint>

#include "weir/addr.h"

namespace weir {

struct RouteMetrics {
  uint32_t advmss = 0;      // RTAX_ADVMSS: the MSS we announce; 0: from the MTU
  uint32_t mtu = 0;         // RTAX_MTU: the path MTU; 0: the device's
  bool mtu_locked = false;  // `mtu lock N`: ICMP/PMTU discovery never changes it
  uint32_t initcwnd = 0;    // RTAX_INITCWND: new connections' cwnd; 0: TCP_INIT_CWND
  // RTAX_FASTOPEN_NO_COOKIE: Fast Open to and from this destination without
  // cookies (Linux tcp_fastopen_no_cookie), as TCP_FASTOPEN_NO_COOKIE does
  // for one socket.
  bool fastopen_no_cookie = false;
};

// A route to `dst`/`prefix_len` (an IPv4 prefix counts bits of the IPv4
// address; IpAddr keeps IPv4 in its mapped form).
struct Route {
  IpAddr dst;
  uint8_t prefix_len = 0;
  RouteMetrics metrics;
};

}  // namespace weir
