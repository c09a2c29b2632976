// EtherLink's Duplicate Address Detection (RFC 4862 §5.4), shaped after
// Linux net/ipv6/addrconf.c (addrconf_dad_work, addrconf_dad_failure):
// each IPv6 address is tentative until DupAddrDetectTransmits
// solicitations from :: went unanswered for RetransTimer after the last.
// Not here: optimistic DAD (RFC 4429), the random delay before the first
// probe (see start()), and leaving the solicited-node group of a
// duplicate address.
#include <algorithm>

#include "link/ether_link.h"
#include "link/ndisc.h"

namespace weir::link {

EtherLink::Dad* EtherLink::dad_entry(const IpAddr& ip) {
  auto it = std::find_if(dad_.begin(), dad_.end(), [&](const Dad& d) { return d.addr == ip; });
  return it == dad_.end() ? nullptr : &*it;
}

const EtherLink::Dad* EtherLink::dad_entry(const IpAddr& ip) const {
  return const_cast<EtherLink*>(this)->dad_entry(ip);
}

bool EtherLink::unusable(const IpAddr& ip) const {
  if (unusable_ == 0) return false;  // every address assigned: the common case, per packet
  const Dad* d = ip.is_v4() ? nullptr : dad_entry(ip);
  return d && d->state != AddrState::kPreferred;
}

std::optional<AddrState> EtherLink::address_state(const IpAddr& ip) const {
  const Dad* d = ip.is_v4() ? nullptr : dad_entry(ip);
  return d ? std::optional<AddrState>(d->state) : std::nullopt;
}

bool EtherLink::dad_pending() const {
  return std::any_of(dad_.begin(), dad_.end(), [](const Dad& d) { return d.state == AddrState::kTentative; });
}

std::vector<IpAddr> EtherLink::duplicates() const {
  std::vector<IpAddr> out;
  for (const Dad& d : dad_) {
    if (d.state == AddrState::kDuplicate) out.push_back(d.addr);
  }
  return out;
}

// RFC 4862 §5.4.2: from the unspecified address to the tentative
// address's solicited-node group, without a source link-layer option
// (§7.1.1 of RFC 4861 forbids one with ::). Linux ndisc_send_ns from
// addrconf_dad_work.
void EtherLink::dad_probe(Dad& d) {
  NdMessage m;
  m.type = kIcmp6NeighSolicit;
  m.src = IpAddr::v6({});
  m.dst = solicited_node(d.addr);
  m.target = d.addr;
  ++stats_.dad_probes_tx;
  nd_send(ipv6_multicast_mac(m.dst), m);
}

void EtherLink::dad_advance() {
  for (Dad& d : dad_) {
    if (d.state != AddrState::kTentative || d.due > now_) continue;
    if (d.probes_left > 0) {
      // §5.4.2: DupAddrDetectTransmits probes, RetransTimer apart.
      --d.probes_left;
      d.due = now_ + cfg_.neigh.retrans_time;
      dad_probe(d);
      continue;
    }
    // §5.4: RetransTimer after the last probe, no answer: the address
    // is assigned (Linux addrconf_dad_completed), and the groups are
    // announced again now that a report may come from a real source.
    d.state = AddrState::kPreferred;
    d.due = Time::never();
    --unusable_;
    if (cfg_.mld) mld_.announce(now_);
  }
}

// RFC 4862 §5.4.5: the address is not assigned; the driver reports it
// (duplicates()), as Linux logs "IPv6 duplicate address ... detected".
void EtherLink::dad_failed(Dad& d) {
  d.state = AddrState::kDuplicate;
  d.due = Time::never();
  ++stats_.dad_duplicates;
}

}  // namespace weir::link
