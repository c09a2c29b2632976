// `weir serve --app http DIR`: static files over HTTP/1.1 (RFC 9110/9112)
// with persistent connections, pipelining, HEAD and single byte ranges:
// enough for curl and wget.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "driver/app.h"

namespace weir::driver {

std::unique_ptr<App> make_http_server(std::vector<IpAddr> addrs, uint16_t port, std::string root);

}  // namespace weir::driver
