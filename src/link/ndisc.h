// IPv6 neighbour discovery messages (RFC 4861 §4.3 Neighbor Solicitation,
// §4.4 Neighbor Advertisement) with the link-layer address options (§4.6.1)
// for Ethernet (RFC 2464 §8): the whole IPv6 packet, parsed into a value
// after the receipt checks of §7.1.1/§7.1.2, and emitted exactly.
// Router discovery and redirects (types 133, 134, 137) are not handled.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "link/ether.h"
#include "weir/addr.h"
#include "weir/expected.h"

namespace weir::link {

inline constexpr uint8_t kIcmp6NeighSolicit = 135;  // NDISC_NEIGHBOUR_SOLICITATION
inline constexpr uint8_t kIcmp6NeighAdvert = 136;   // NDISC_NEIGHBOUR_ADVERTISEMENT
inline constexpr uint8_t kNdOptSourceLl = 1;        // ND_OPT_SOURCE_LL_ADDR
inline constexpr uint8_t kNdOptTargetLl = 2;        // ND_OPT_TARGET_LL_ADDR
inline constexpr uint8_t kNdHopLimit = 255;         // RFC 4861 §7.1: proof it was not forwarded
// IPv6 header + ICMPv6 header and target + one Ethernet link-layer option.
inline constexpr size_t kNdPacketLen = 40 + 24 + 8;

struct NdMessage {
  uint8_t type = 0;                  // kIcmp6NeighSolicit or kIcmp6NeighAdvert
  IpAddr src, dst;                   // the IPv6 header's
  IpAddr target;                     // Target Address
  bool router = false;               // NA R flag
  bool solicited = false;            // NA S flag
  bool override_flag = false;        // NA O flag
  std::optional<MacAddr> lladdr;     // NS: source, NA: target link-layer address option
};

enum class NdError : uint8_t {
  kNotNd,              // not an ICMPv6 NS/NA right after the IPv6 header: not ours to judge
  kTruncated,          // shorter than its headers, its payload length or an option
  kHopLimit,           // §7.1.1/§7.1.2: IP Hop Limit is not 255
  kChecksum,           // ICMPv6 checksum (RFC 4443 §2.3)
  kCode,               // ICMP Code is not 0
  kTargetMulticast,    // Target Address is a multicast address
  kOptionLength,       // an option with length 0
  kLinkLayerLength,    // a link-layer address option not 8 bytes (Ethernet, RFC 2464 §8)
  kDadWithSourceLl,    // §7.1.1: unspecified source with a source link-layer option
  kDadNotSolicited,    // §7.1.1: unspecified source not sent to a solicited-node group
  kSolicitedMulticast, // §7.1.2: a multicast NA with the Solicited flag
};
const char* to_string(NdError e);

// Checks and parses an IPv6 datagram. kNotNd for anything but ICMPv6
// types 135/136 directly after the fixed header (extension headers before
// ICMPv6 are left to the stack, which drops them: a difference from Linux).
Expected<NdMessage, NdError> parse_nd(std::span<const uint8_t> ip6);
// Writes the whole IPv6 packet (kNdPacketLen bytes, with the option when
// m.lladdr is set, else 8 fewer) at `out`; returns its length.
size_t emit_nd(const NdMessage& m, uint8_t* out);

}  // namespace weir::link
