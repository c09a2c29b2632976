// EtherLink's error reports: a queued packet whose next hop failed to
// resolve becomes an ICMP error for this host's own stack.
#include <utility>

#include "link/ether_link.h"
#include "link/ip_ends.h"
#include "wire/icmp_build.h"

namespace weir::link {

// Linux arp_error_report -> ipv4_link_failure: icmp_send(ICMP_DEST_UNREACH,
// ICMP_HOST_UNREACH); ndisc_error_report -> ip6_link_failure:
// icmpv6_send(ICMPV6_DEST_UNREACH, ICMPV6_ADDR_UNREACH). The packet was our
// own, so the error goes back to its source, from that same address (the
// source address selection toward ourselves).
void EtherLink::Output::unreachable(std::span<const uint8_t> ip_packet) {
  const auto ends = ip_ends(ip_packet);
  if (!ends) return;
  if (link_.local_.size() >= kMaxLocal) {
    ++link_.stats_.unreach_dropped;
    return;
  }
  auto icmp = v6_ ? wire::build_icmp_unreachable(ip_packet, ends->src, wire::kIcmpv6DestUnreach,
                                                 wire::kIcmpv6AddrUnreach)
                  : wire::build_icmp_unreachable(ip_packet, ends->src, wire::kIcmpDestUnreach,
                                                 wire::kIcmpHostUnreach);
  if (icmp.empty()) return;  // an ICMP error or a later fragment: never answered
  ++link_.stats_.unreach_reported;
  link_.local_.push_back(std::move(icmp));
}

std::vector<std::vector<uint8_t>> EtherLink::take_local() { return std::exchange(local_, {}); }

}  // namespace weir::link
