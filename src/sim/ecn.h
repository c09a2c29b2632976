// ECN marking at a simulated queue (RFC 3168 §5): an ECN-capable packet
// (ECT(0), ECT(1)) that an AQM selects gets CE instead of being dropped.
#pragma once

#include <cstdint>
#include <vector>

namespace weir::sim {

// Sets CE on an IPv4 or IPv6 datagram that is ECN-capable, keeping the
// IPv4 header checksum valid (RFC 1624). Returns false, changing nothing,
// for a not-ECT packet (the AQM must drop it instead) or one already CE.
bool mark_ce(std::vector<uint8_t>& b);

// The packet's ECN field (0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE); 0 if it is
// not an IP datagram.
uint8_t ecn_field(const std::vector<uint8_t>& b);

}  // namespace weir::sim
