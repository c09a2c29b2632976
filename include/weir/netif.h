// The seam the engine transmits through. Packets are whole IP datagrams
// (IPv4 or IPv6, no link header): what a TUN device, a pcap with
// LINKTYPE_RAW, the simulator's links and the packetdrill runner all carry.
#pragma once

#include <cstdint>
#include <span>

#include "weir/addr.h"

namespace weir {

// What the local device did with a packet handed to it: accepted it (it may
// still be lost on the path), or dropped it here (Linux: the qdisc's
// enqueue returned NET_XMIT_DROP, e.g. `pfifo limit 0`, a full queue, or a
// TUN write failing with ENOBUFS/EAGAIN). The engine reacts to a local drop
// as Linux __tcp_transmit_skb's callers do to a positive return.
enum class XmitResult : uint8_t { kSent, kDropped };

class Netif {
 public:
  virtual ~Netif() = default;
  // Called by the engine for every packet it sends. The bytes are valid only
  // for the duration of the call.
  virtual void transmit(std::span<const uint8_t> ip_packet) = 0;
  // The engine's entry point: transmit() and say whether the device took
  // the packet. A device that can refuse packets overrides this one.
  virtual XmitResult try_transmit(std::span<const uint8_t> ip_packet) {
    transmit(ip_packet);
    return XmitResult::kSent;
  }
  // The link MTU in bytes (IP header included), from which MSS is derived.
  virtual uint32_t mtu() const = 0;
  // Whether the device takes TSO/GSO super-packets (the packetdrill runner's
  // emulated tun0 unless the script turns tso and gso off; TunNetif does
  // not say so yet, see there). The engine applies Linux's TSO deferral
  // (tcp_tso_should_defer) only on such a device; see src/tcp/tso_defer.h
  // for how this differs from Linux >= 4.17, where every TCP socket can GSO.
  virtual bool gso() const { return false; }
  // Upper-layer reachability confirmation (RFC 4861 §7.3.1): a TCP
  // connection to `dst` made forward progress, so the neighbour its packets
  // go through is reachable. The engine says so just before the next
  // packet to `dst`, as Linux's sock_confirm_neigh confirms the neighbour in
  // ip_finish_output2 when the skb carries dst_pending_confirm. A device
  // with a neighbour table (link/ether_link.h) refreshes the entry's
  // `confirmed` time, and a busy connection's next hop is never probed.
  virtual void confirm_neighbor(const IpAddr& dst) { (void)dst; }
};

}  // namespace weir
