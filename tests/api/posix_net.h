// Two stacks on a memory pipe for the POSIX-layer tests: a at 10.0.0.1,
// b at 10.0.0.2; run() moves virtual time for the stacks and every Api.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>

#include <vector>

#include "link/memory_pipe.h"
#include "weir/posix.h"

namespace weir::test {

struct Net {
  link::MemoryPipe pipe{link::MemoryPipe::Config{Duration::ms(1), 1500, 4096}};
  Stack a{StackConfig{}, pipe.a()};
  Stack b{StackConfig{}, pipe.b()};
  Time now = Time::zero();
  std::vector<posix::Api*> apis;
  Net() {
    a.add_address(IpAddr::v4(10, 0, 0, 1));
    b.add_address(IpAddr::v4(10, 0, 0, 2));
  }
  void run(Duration d) {
    const Time until = now + d;
    link::pump_until(pipe, a, b, now, until);
    now = until;
    for (auto* api : apis) api->set_now(now);
  }
};

// 10.0.0.<last>:<port> as the POSIX calls take it.
inline sockaddr_in addr(uint8_t last, uint16_t port) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(port);
  in.sin_addr.s_addr = htonl((10u << 24) | last);
  return in;
}

}  // namespace weir::test
