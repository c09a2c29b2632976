// ICMP and ICMPv6 destination-unreachable errors quoting an offending
// datagram (RFC 792, RFC 4443 §3.1), shaped as Linux icmp_send and
// icmp6_send shape them: the quote is as much of the datagram as keeps the
// error within 576 bytes (RFC 1812 §4.3.2.3) or within the IPv6 minimum MTU
// of 1280 (RFC 4443 §2.4 (c)).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "weir/addr.h"

namespace weir::wire {

inline constexpr uint8_t kIcmpDestUnreach = 3;     // RFC 792
inline constexpr uint8_t kIcmpHostUnreach = 1;     //   code: host unreachable
inline constexpr uint8_t kIcmpv6DestUnreach = 1;   // RFC 4443 §3.1
inline constexpr uint8_t kIcmpv6AddrUnreach = 3;   //   code: address unreachable

// The error from `src` to the offending datagram's source, of the
// datagram's own family; empty when it must not be answered: unparseable,
// a non-initial fragment, or itself an ICMP error (RFC 1122 §3.2.2,
// RFC 4443 §2.4 (e)).
std::vector<uint8_t> build_icmp_unreachable(std::span<const uint8_t> offending, const IpAddr& src,
                                            uint8_t type, uint8_t code);

}  // namespace weir::wire
