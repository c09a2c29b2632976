// EtherLink's IPv6 neighbour discovery half (RFC 4861 §7): stage 1 stub.
#include "link/ether_link.h"

namespace weir::link {

bool EtherLink::nd_input(const EtherHeader&, std::span<const uint8_t>) { return false; }

void EtherLink::nd_solicit(const Neighbor&, const MacAddr*) {}

}  // namespace weir::link
