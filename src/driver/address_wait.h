// The driver's start-up wait for the link's addresses (IPv6 Duplicate
// Address Detection, RFC 4862 §5.4): the app starts only once every
// address is assigned, as a Linux application bound to a tentative
// address would fail (EADDRNOTAVAIL) until DAD completes.
#pragma once

#include <string>

#include "driver/polled_link.h"
#include "weir/stack.h"

namespace weir::driver {

// Runs the link (input, timers, flush) until no address is pending, at
// most `limit` long. Returns "" or the error for the user (an address
// found in use, or the wait timing out).
std::string wait_for_addresses(PolledLink& link, Stack& st, Duration limit = Duration::s(10));

}  // namespace weir::driver
