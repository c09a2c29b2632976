// EtherLink's IPv6 neighbour discovery half (RFC 4861 §7.2), shaped after
// Linux net/ipv6/ndisc.c. Duplicate address detection (RFC 4862 §5.4) is
// in ether_link_dad.cc, its receive side here. Not here: router and prefix
// discovery (§6; routes come from the config), redirects (§8), and the IsRouter flag's bookkeeping (§7.2.5).
#include "link/ether_link.h"
#include "link/ndisc.h"

namespace weir::link {
namespace {

const IpAddr kAllNodes = *IpAddr::parse("ff02::1");  // RFC 4291 §2.7.1

}  // namespace

void EtherLink::nd_send(const MacAddr& dst_mac, const NdMessage& m) {
  uint8_t pkt[kNdPacketLen];
  const size_t len = emit_nd(m, pkt);
  if (m.type == kIcmp6NeighSolicit) {
    ++stats_.nd_solicits_tx;
  } else {
    ++stats_.nd_adverts_tx;
  }
  (void)send_frame(dst_mac, kEthPIpv6, std::span<const uint8_t>(pkt, len));
}

// Linux ndisc_solicit, RFC 4861 §7.2.2: while INCOMPLETE to the target's
// solicited-node group, in PROBE unicast to the target; always with our
// source link-layer address (§4.3: MUST in multicast solicitations).
void EtherLink::nd_solicit(const Neighbor& n, const MacAddr* unicast) {
  const auto src = source_for(n.ip, n.solicit_src);
  if (!src) return;  // no assigned IPv6 address to ask from: only DAD may use ::
  NdMessage m;
  m.type = kIcmp6NeighSolicit;
  m.src = *src;
  m.dst = unicast ? n.ip : solicited_node(n.ip);
  m.target = n.ip;
  m.lladdr = cfg_.mac;
  nd_send(unicast ? *unicast : ipv6_multicast_mac(m.dst), m);
}

bool EtherLink::nd_input(const EtherHeader& eh, std::span<const uint8_t> ip6) {
  const auto parsed = parse_nd(ip6);
  if (!parsed) {
    if (parsed.error() == NdError::kNotNd) return false;  // the stack's
    ++stats_.rx_malformed;                                 // §7.1: silently discarded
    return true;
  }
  if (parsed->type == kIcmp6NeighSolicit) {
    ++stats_.nd_solicits_rx;
    nd_solicitation(eh, *parsed);
  } else {
    ++stats_.nd_adverts_rx;
    nd_advertisement(*parsed);
  }
  return true;
}

// Linux ndisc_recv_ns, RFC 4861 §7.2.3.
void EtherLink::nd_solicitation(const EtherHeader& eh, const NdMessage& ns) {
  // RFC 4862 §5.4.3: for a tentative address, a probe from :: is another
  // node's DAD for it (a duplicate); any other solicitation is silently
  // discarded. A duplicate address is never answered for.
  Dad* d = ns.target.is_v4() ? nullptr : dad_entry(ns.target);
  if (d && d->state != AddrState::kPreferred) {
    if (d->state == AddrState::kTentative && ns.src.is_unspecified()) dad_failed(*d);
    return;
  }
  // §7.2.3: not a target address of ours (an IPv4-mapped target is not
  // an IPv6 address of ours even though our IPv4 addresses are held so).
  if (ns.target.is_v4() || !is_ours(ns.target)) return;
  NdMessage na;
  na.type = kIcmp6NeighAdvert;
  na.src = ns.target;
  na.target = ns.target;
  na.lladdr = cfg_.mac;
  na.override_flag = true;
  if (ns.src.is_unspecified()) {
    // §7.2.4: a DAD probe for our address is answered to all-nodes,
    // unsolicited, which tells the prober the address is taken.
    na.dst = kAllNodes;
    nd_send(ipv6_multicast_mac(kAllNodes), na);
    return;
  }
  // §7.2.3: the source link-layer address creates or updates the
  // sender's entry, STALE (as Linux: override, weak override).
  if (ns.lladdr) {
    if (Neighbor* n = nd_.lookup_or_create(now_, ns.src)) {
      nd_.update(now_, *n, &*ns.lladdr, NudState::kStale, kUpdOverride | kUpdWeakOverride, out6_);
    }
  }
  // §7.2.4: Solicited and Override set, our address in the target option.
  // Linux leaves the option and O out when answering a unicast NS (RFC
  // 4861 allows it); they are always here, which the RFC prefers.
  // Without a source link-layer option the answer goes to the frame's
  // source address; Linux would resolve the solicitor first.
  na.dst = ns.src;
  na.solicited = true;
  nd_send(ns.lladdr ? *ns.lladdr : eh.src, na);
}

// Linux ndisc_recv_na, RFC 4861 §7.2.5: only an existing entry is
// updated; an advertisement creates nothing.
void EtherLink::nd_advertisement(const NdMessage& na) {
  // RFC 4862 §5.4.4: an advertisement for a tentative address means it
  // is in use. For one of our assigned addresses it is someone else's
  // claim, which Linux ndisc_recv_na logs and ignores.
  if (Dad* d = na.target.is_v4() ? nullptr : dad_entry(na.target)) {
    if (d->state == AddrState::kTentative) dad_failed(*d);
    return;
  }
  Neighbor* n = nd_.lookup(na.target);
  if (!n) return;
  // §7.2.5: an INCOMPLETE entry needs the target's address from the option.
  if (n->state == NudState::kIncomplete && !na.lladdr) return;
  const MacAddr* mac = na.lladdr ? &*na.lladdr : nullptr;
  const unsigned flags = kUpdWeakOverride | (na.override_flag ? kUpdOverride : 0);
  nd_.update(now_, *n, mac, na.solicited ? NudState::kReachable : NudState::kStale, flags, out6_);
}

}  // namespace weir::link
