#include "driver/address_wait.h"

#include <poll.h>

#include <algorithm>

#include "driver/clock.h"

namespace weir::driver {

std::string wait_for_addresses(PolledLink& link, Stack& st, Duration limit) {
  const Time give_up = mono_now() + limit;
  while (link.addresses_pending()) {
    const Time now = mono_now();
    if (now >= give_up) return "duplicate address detection did not finish";
    // Frames first: an advertisement for a tentative address ends DAD
    // (RFC 4862 §5.4.4); then the link's timers send probes and reports.
    link.input(now, st);
    link.advance(now, st);
    link.flush();
    // Sleep to the link's next timer or the next frame, at most 100 ms
    // (a bound, not a clock the link depends on).
    const Time next = std::min(link.next_deadline(), now + Duration::ms(100));
    const int64_t ms = std::max<int64_t>(0, (next - mono_now()).ns() / 1000000 + 1);
    pollfd p{link.fd(), POLLIN, 0};
    (void)::poll(&p, 1, static_cast<int>(ms));
  }
  return link.address_error();
}

}  // namespace weir::driver
