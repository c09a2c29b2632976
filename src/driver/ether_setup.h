// Setting up an Ethernet interface for weir (--packet, --tap): weir's MAC,
// offloads off so frames are real MTU-sized packets, and the kernel side
// of a veth pair configured for --peer.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "weir/expected.h"

namespace weir::driver {

using MacBytes = std::array<uint8_t, 6>;

// weir's default MAC on an interface whose own MAC is `iface`: a locally
// administered unicast address (IEEE 802: bit 1 of the first octet set,
// bit 0 clear) that always differs from `iface` (bit 2 of the first octet
// flipped). It must differ: the kernel's stack on the same interface then
// sees weir's frames as another host's (eth_type_trans: PACKET_OTHERHOST)
// and ip_rcv_core/ipv6_rcv drop them at once, instead of taking weir's
// segments as its own and answering them with resets or forwarding them.
MacBytes derived_mac(const MacBytes& iface);

// The MAC of Ethernet interface `ifname` (SIOCGIFHWADDR), or why not.
Expected<MacBytes, std::string> iface_mac(const std::string& ifname);

// Switches TSO, GSO and GRO off on `ifname` (the ethtool ioctls ETHTOOL_STSO,
// _SGSO, _SGRO, as `ethtool -K IF tso off gso off gro off`): every frame
// it sends or hands up is one MTU-sized packet, the anchor's "real
// 1500-byte packets". An interface without a feature keeps going.
void offloads_off(const std::string& ifname);

// The other end of veth `ifname` when it lives in this (the calling
// thread's) namespace, as `ip -o link` names it, else why not.
Expected<std::string, std::string> veth_peer(const std::string& ifname);

// Brings `ifname` up (SIOCSIFFLAGS IFF_UP).
Expected<bool, std::string> link_up(const std::string& ifname);

}  // namespace weir::driver
