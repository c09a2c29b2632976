// EtherLink's ARP half (RFC 826), shaped after Linux net/ipv4/arp.c.
#include "link/arp.h"
#include "link/ether_link.h"

namespace weir::link {

void EtherLink::arp_send(uint16_t op, const MacAddr& dst, uint32_t spa, const MacAddr& tha,
                         uint32_t tpa) {
  uint8_t body[kArpLen];
  emit_arp({.op = op, .sha = cfg_.mac, .spa = spa, .tha = tha, .tpa = tpa}, body);
  if (op == kArpOpRequest) {
    ++stats_.arp_requests_tx;
  } else {
    ++stats_.arp_replies_tx;
  }
  (void)send_frame(dst, kEthPArp, body);
}

// Linux arp_solicit: broadcast while INCOMPLETE, unicast to the cached
// address in PROBE; the target hardware address is zero either way.
void EtherLink::arp_solicit(const Neighbor& n, const MacAddr* unicast) {
  const auto src = source_for(n.ip, n.solicit_src);
  if (!src) return;  // no IPv4 address to ask from; the entry fails after its probes
  arp_send(kArpOpRequest, unicast ? *unicast : kBroadcastMac, src->v4_host_order(), MacAddr{},
           n.ip.v4_host_order());
}

void EtherLink::arp_input(const EtherHeader& eh, std::span<const uint8_t> body) {
  const auto parsed = parse_arp(body);
  if (!parsed) {
    ++stats_.rx_malformed;
    return;
  }
  const ArpPacket& a = *parsed;
  const bool request = a.op == kArpOpRequest;
  if (request) {
    ++stats_.arp_requests_rx;
  } else {
    ++stats_.arp_replies_rx;
  }
  const IpAddr sip = IpAddr::v4(a.spa), tip = IpAddr::v4(a.tpa);
  // RFC 1812 §3.3.2: an ARP claiming a multicast hardware address is
  // ignored; Linux arp_process: a multicast target is never answered.
  if (a.sha.is_multicast() || (a.tpa >> 28) == 0xe) {
    ++stats_.rx_malformed;
    return;
  }
  // RFC 5227 §2.1.1 probe (sender 0.0.0.0): answered for our address, but
  // it teaches nothing about the sender (Linux arp_process, sip == 0).
  if (a.spa == 0) {
    if (request && is_ours(tip)) arp_send(kArpOpReply, a.sha, a.tpa, a.sha, 0);
    return;
  }
  if (request && is_ours(tip)) {
    // RFC 826's merge, as Linux neigh_event_ns: the requester's entry is
    // created or refreshed STALE (a request does not prove reachability).
    // Linux sends no reply when the table cannot take the entry; the reply
    // needs nothing from the table, so it goes regardless here.
    if (Neighbor* n = arp_.lookup_or_create(now_, sip)) {
      arp_.update(now_, *n, &a.sha, NudState::kStale, kUpdOverride, out4_);
    }
    arp_send(kArpOpReply, a.sha, a.tpa, a.sha, a.spa);
    return;
  }
  // Not a request for us: with arp_accept 0 only an existing entry is
  // updated (RFC 826 "merge_flag"; unsolicited replies create nothing).
  Neighbor* n = arp_.lookup(sip);
  if (!n) return;
  // Linux arp_is_garp: sender == target, and a gratuitous reply also
  // names its own hardware address as the target's.
  const bool garp = a.spa == a.tpa && (request || a.tha == a.sha);
  // arp_process: within locktime of the last update, the first answer
  // wins (several proxies replying); a gratuitous ARP always overrides.
  const bool override = now_ > n->updated + cfg_.neigh.locktime || garp;
  // Only a reply sent to us (PACKET_HOST) confirms reachability; requests
  // and broadcast replies leave the entry STALE.
  const bool confirms = !request && eh.dst == cfg_.mac;
  arp_.update(now_, *n, &a.sha, confirms ? NudState::kReachable : NudState::kStale,
              override ? kUpdOverride : 0, out4_);
}

}  // namespace weir::link
