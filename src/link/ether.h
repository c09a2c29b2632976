// Ethernet II framing (IEEE 802.3 clause 3.2.6 with an EtherType, RFC 894
// for IPv4, RFC 2464 for IPv6): MAC addresses, the 14-byte header, the
// multicast MACs IP maps to, and the FrameSink a frame device implements.
// No preamble, no FCS, no padding: the device (or kernel) adds them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "link/frame_sink.h"  // FrameSink, the device under an EtherLink
#include "weir/addr.h"
#include "weir/netif.h"

namespace weir::link {

struct MacAddr {
  std::array<uint8_t, 6> b{};
  // Six colon-separated hex pairs: "02:00:00:00:00:01" (case-insensitive).
  static std::optional<MacAddr> parse(std::string_view text);
  std::string str() const;
  // IEEE 802 I/G bit: the first bit on the wire, bit 0 of the first byte.
  bool is_multicast() const { return b[0] & 1; }
  bool is_broadcast() const { return b == std::array<uint8_t, 6>{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}; }
  bool is_zero() const { return b == std::array<uint8_t, 6>{}; }
  friend bool operator==(const MacAddr&, const MacAddr&) = default;
};

inline constexpr MacAddr kBroadcastMac{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

// EtherTypes (IEEE registry; Linux include/uapi/linux/if_ether.h names).
inline constexpr uint16_t kEthPIp = 0x0800;     // ETH_P_IP
inline constexpr uint16_t kEthPArp = 0x0806;    // ETH_P_ARP
inline constexpr uint16_t kEthPIpv6 = 0x86dd;   // ETH_P_IPV6
inline constexpr uint16_t kEthP8021Q = 0x8100;  // ETH_P_8021Q, a VLAN tag
inline constexpr uint16_t kEthP8021AD = 0x88a8; // ETH_P_8021AD, a QinQ service tag

inline constexpr size_t kEtherHeaderLen = 14;   // ETH_HLEN

struct EtherHeader {
  MacAddr dst;
  MacAddr src;
  uint16_t type = 0;
};

// A checked view of one frame: the header and the bytes after it.
struct EtherFrame {
  EtherHeader hdr;
  std::span<const uint8_t> payload;
};

// Parses the 14-byte header. nullopt when the frame is shorter than that.
// A value below 0x0600 is an 802.3 length, not an EtherType; it is returned
// as is and the caller drops it as an unknown EtherType.
std::optional<EtherFrame> parse_ether(std::span<const uint8_t> frame);
// Writes the 14-byte header at `out` (which has room for it).
void write_ether_header(uint8_t* out, const EtherHeader& h);

// RFC 1112 §6.4: 01:00:5e and the low 23 bits of the IPv4 group.
MacAddr ipv4_multicast_mac(const IpAddr& group);
// RFC 2464 §7: 33:33 and the low 32 bits of the IPv6 address.
MacAddr ipv6_multicast_mac(const IpAddr& group);
// RFC 4291 §2.7.1: ff02::1:ff00:0/104 plus the low 24 bits of `addr`.
IpAddr solicited_node(const IpAddr& addr);

}  // namespace weir::link
