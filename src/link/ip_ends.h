// The two addresses of an IP datagram, read from its header without
// validating it (EtherLink's transmit path and error reports).
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <span>

#include "weir/addr.h"
#include "wire/bytes.h"

namespace weir::link {

struct IpEnds {
  IpAddr src, dst;
};

// The addresses of an outgoing IPv4/IPv6 packet; nullopt if it has no
// plausible header (the engine never builds one; counted as tx_malformed).
inline std::optional<IpEnds> ip_ends(std::span<const uint8_t> p) {
  if (p.empty()) return std::nullopt;
  const uint8_t version = p[0] >> 4;
  if (version == 4 && p.size() >= 20) {
    return IpEnds{IpAddr::v4(wire::load_be32(p.data() + 12)), IpAddr::v4(wire::load_be32(p.data() + 16))};
  }
  if (version == 6 && p.size() >= 40) {
    std::array<uint8_t, 16> s, d;
    std::copy(p.begin() + 8, p.begin() + 24, s.begin());
    std::copy(p.begin() + 24, p.begin() + 40, d.begin());
    return IpEnds{IpAddr::v6(s), IpAddr::v6(d)};
  }
  return std::nullopt;
}

}  // namespace weir::link
