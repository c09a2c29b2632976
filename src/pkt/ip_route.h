// `ip route` lines of packetdrill scripts, parsed into a route with
// metrics (iproute2's syntax, the subset that changes what TCP reads):
//   ip [-4|-6] route add|change|replace DEST [via [inet|inet6] GW] [dev NAME]
//      [metric N] [proto P] [advmss N] [mtu [lock] N] [initcwnd N]
// DEST is `default` or ADDR[/LEN]. Every error names the word at fault.
#pragma once

#include <string>
#include <vector>

#include "weir/expected.h"
#include "weir/route.h"

namespace weir::pkt {

struct RouteError {
  bool unsupported = false;  // valid for iproute2, but a metric weir does not model
  std::string what;
};

// `w` is the command's words, w[0] == "ip". Unexpected: the line is not a
// route change weir can apply; `what` says why.
Expected<Route, RouteError> parse_ip_route(const std::vector<std::string>& w);

// True when `w` is an `ip [-4|-6] route ...` command.
bool is_ip_route(const std::vector<std::string>& w);

}  // namespace weir::pkt
