// Opens the link a StackSetup names, as a PolledLink for StackDriver: the
// TUN device (tun_link.h) or an Ethernet device under an EtherLink
// (ether_links.h), its kernel side configured for --peer.
#pragma once

#include <memory>
#include <string>

#include "driver/polled_link.h"
#include "driver/run.h"

namespace weir::driver {

Expected<std::unique_ptr<PolledLink>, std::string> open_link(const StackSetup& s);

}  // namespace weir::driver
