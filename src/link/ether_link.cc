#include "link/ether_link.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "link/ip_ends.h"
#include "wire/bytes.h"

namespace weir::link {
namespace {

// The first `bits` (0-64) bits of a 64-bit word.
uint64_t top_bits(int bits) { return bits <= 0 ? 0 : bits >= 64 ? ~uint64_t{0} : ~uint64_t{0} << (64 - bits); }

// Whether `a` and `b` share their first `plen` bits, compared a word at a
// time: this runs for every transmitted packet (next hop, directed
// broadcast). IPv4 prefixes count from bit 96 of the mapped form.
bool same_prefix(const IpAddr& a, const IpAddr& b, int plen) {
  const uint8_t* x = a.bytes().data();
  const uint8_t* y = b.bytes().data();
  const int bits = a.is_v4() ? 96 + plen : plen;
  return ((wire::load_be64(x) ^ wire::load_be64(y)) & top_bits(bits)) == 0 &&
         ((wire::load_be64(x + 8) ^ wire::load_be64(y + 8)) & top_bits(bits - 64)) == 0;
}

// The IP datagram without the Ethernet padding that follows it in a short
// frame (RFC 894: the minimum frame is padded; the IP length says where the
// datagram ends). Longer-than-frame lengths are left for the stack to reject.
std::array<uint8_t, 16> ip6_addr_at(const uint8_t* p) {
  std::array<uint8_t, 16> a;
  std::copy(p, p + 16, a.begin());
  return a;
}

std::span<const uint8_t> trim_padding(uint16_t type, std::span<const uint8_t> p) {
  size_t len = p.size();
  if (type == kEthPIp && p.size() >= 20) len = wire::load_be16(p.data() + 2);
  if (type == kEthPIpv6 && p.size() >= 40) len = 40 + size_t{wire::load_be16(p.data() + 4)};
  return len < p.size() ? p.first(len) : p;
}

}  // namespace

EtherLink::EtherLink(EtherLinkConfig cfg, FrameSink& out)
    : cfg_(std::move(cfg)), out_(out), arp_(cfg_.neigh), nd_(cfg_.neigh), mld_(cfg_.mld_params) {
  multicast_macs_ = multicast_macs();
  // RFC 4862 §5.4: every IPv6 address starts tentative when DAD is on.
  for (const auto& [addr, plen] : cfg_.addrs) {
    if (addr.is_v4() || dad_entry(addr)) continue;
    const bool dad = cfg_.dad_transmits > 0;
    dad_.push_back({addr, dad ? AddrState::kTentative : AddrState::kPreferred, cfg_.dad_transmits,
                    dad ? Time::zero() : Time::never()});
    unusable_ += dad ? 1 : 0;
  }
}

uint32_t EtherLink::mtu() const { return cfg_.mtu; }

void EtherLink::transmit(std::span<const uint8_t> ip_packet) { (void)try_transmit(ip_packet); }

XmitResult EtherLink::try_transmit(std::span<const uint8_t> ip_packet) {
  // No segmentation offload: the engine sizes packets from mtu(), and a
  // frame never exceeds mtu + 14 (Linux ip_finish_output would fragment or
  // reject; an oversize packet here is a caller bug, dropped and counted).
  if (ip_packet.size() > cfg_.mtu) {
    ++stats_.tx_oversize;
    return XmitResult::kDropped;
  }
  const auto ends = ip_ends(ip_packet);
  if (!ends) {
    ++stats_.tx_malformed;
    return XmitResult::kDropped;
  }
  // The version says the family; an IPv6 packet to an IPv4-mapped
  // address must not reach the wire (RFC 4291 §2.5.5.2).
  const bool v6 = (ip_packet[0] >> 4) == 6;
  if (v6 && ends->dst.is_v4()) {
    ++stats_.tx_malformed;
    return XmitResult::kDropped;
  }
  // RFC 4862 §5.4: a tentative (or duplicate) address is not a source.
  if (v6 && unusable(ends->src)) {
    ++stats_.tx_tentative_src;
    return XmitResult::kDropped;
  }
  const uint16_t type = v6 ? kEthPIpv6 : kEthPIp;
  // arp_constructor/ndisc_constructor: group addresses map without resolution.
  if (auto mac = group_mac(ends->dst)) return send_frame(*mac, type, ip_packet);
  const auto hop = next_hop(ends->dst);
  if (!hop) {
    ++stats_.tx_no_route;
    return XmitResult::kDropped;
  }
  NeighborTable& table = v6 ? nd_ : arp_;
  const auto res = table.output(now_, *hop, ends->src, ip_packet, v6 ? static_cast<NeighborOutput&>(out6_) : out4_);
  switch (res.verdict) {
    case NeighborTable::Verdict::kSend: return send_frame(res.mac, type, ip_packet);
    case NeighborTable::Verdict::kQueued: return XmitResult::kSent;  // Linux: neigh_resolve_output returns 0
    case NeighborTable::Verdict::kDropped: return XmitResult::kDropped;
  }
  return XmitResult::kDropped;
}

void EtherLink::confirm_neighbor(const IpAddr& dst) {
  if (const auto hop = next_hop(dst)) (dst.is_v4() ? arp_ : nd_).confirm(now_, *hop);
}

// The header and the payload go to the device as two pieces, which it
// copies into its own buffer: the payload is not copied here first.
XmitResult EtherLink::send_frame(const MacAddr& dst, uint16_t type, std::span<const uint8_t> payload) {
  uint8_t header[kEtherHeaderLen];
  write_ether_header(header, {dst, cfg_.mac, type});
  ++stats_.tx_frames;
  const XmitResult r = out_.send_frame(header, payload);
  if (r == XmitResult::kDropped) ++stats_.tx_device_drops;
  return r;
}

std::optional<MacAddr> EtherLink::group_mac(const IpAddr& dst) const {
  const auto& a = dst.bytes();
  if (!dst.is_v4()) {
    if (a[0] == 0xff) return ipv6_multicast_mac(dst);  // RFC 2464 §7
    return std::nullopt;
  }
  const uint32_t v = dst.v4_host_order();
  if (v == 0xffffffffu) return kBroadcastMac;                  // RFC 919 limited broadcast
  if ((v >> 28) == 0xe) return ipv4_multicast_mac(dst);         // RFC 1112 §6.4, 224.0.0.0/4
  // RFC 922 directed broadcast of one of our subnets (Linux RTN_BROADCAST).
  for (const auto& [addr, plen] : cfg_.addrs) {
    if (!addr.is_v4() || plen <= 0 || plen > 30) continue;
    const uint32_t host = 0xffffffffu >> plen;
    if (same_prefix(addr, dst, plen) && (v & host) == host) return kBroadcastMac;
  }
  return std::nullopt;
}

std::optional<IpAddr> EtherLink::next_hop(const IpAddr& dst) const {
  // RFC 4861 §5.2: link-local destinations are always on-link.
  const auto& a = dst.bytes();
  if (!dst.is_v4() && a[0] == 0xfe && (a[1] & 0xc0) == 0x80) return dst;
  for (const auto& [addr, plen] : cfg_.addrs) {
    if (addr.is_v4() == dst.is_v4() && same_prefix(addr, dst, plen)) return dst;
  }
  const auto& gw = dst.is_v4() ? cfg_.gateway4 : cfg_.gateway6;
  return gw;
}

// RFC 4862 §5.4: a tentative or duplicate address is not assigned.
bool EtherLink::is_ours(const IpAddr& ip) const {
  if (unusable(ip)) return false;
  return std::any_of(cfg_.addrs.begin(), cfg_.addrs.end(), [&](const auto& a) { return a.first == ip; });
}

// inet_select_addr/ipv6_dev_get_saddr, reduced: the packet's own source if
// it is ours (Linux arp_solicit with arp_announce 0), else an address of
// ours in the target's prefix, else any of the family.
std::optional<IpAddr> EtherLink::source_for(const IpAddr& target, const IpAddr& hint) const {
  if (hint.is_v4() == target.is_v4() && is_ours(hint)) return hint;
  std::optional<IpAddr> any;
  for (const auto& [addr, plen] : cfg_.addrs) {
    if (addr.is_v4() != target.is_v4() || unusable(addr)) continue;
    if (same_prefix(addr, target, plen)) return addr;
    if (!any) any = addr;
  }
  return any;
}

// The groups IPv6 joins on a link (RFC 4861 §7.2.1, RFC 4291 §2.8):
// all-nodes and the solicited-node group of each address. IPv4 joins
// none: weir has no multicast sockets (and no IGMP).
std::vector<MacAddr> EtherLink::multicast_macs() const {
  std::vector<MacAddr> macs;
  bool any_v6 = false;
  for (const auto& [addr, plen] : cfg_.addrs) {
    if (addr.is_v4()) continue;
    any_v6 = true;
    const MacAddr m = ipv6_multicast_mac(solicited_node(addr));
    if (std::find(macs.begin(), macs.end(), m) == macs.end()) macs.push_back(m);
  }
  if (any_v6) macs.insert(macs.begin(), MacAddr{{0x33, 0x33, 0, 0, 0, 1}});
  return macs;
}

bool EtherLink::accepts_dst(const MacAddr& dst) const {
  if (dst == cfg_.mac || dst.is_broadcast()) return true;
  if (!dst.is_multicast()) return false;
  const auto& groups = multicast_macs_;
  return std::find(groups.begin(), groups.end(), dst) != groups.end();
}

std::span<const uint8_t> EtherLink::input(Time now, std::span<const uint8_t> frame) {
  now_ = max(now_, now);
  if (!started_) start();
  ++stats_.rx_frames;
  const auto f = parse_ether(frame);
  // IEEE 802.3 §3.2.3: a source address is never a group address.
  if (!f || f->hdr.src.is_multicast()) {
    ++stats_.rx_malformed;
    return {};
  }
  // Linux drops PACKET_OTHERHOST frames in ip_rcv/arp_rcv; a device that
  // delivers everything (veth, promiscuous NICs) or loops our own frames
  // back (AF_PACKET's PACKET_OUTGOING) is filtered here.
  if (!accepts_dst(f->hdr.dst) || f->hdr.src == cfg_.mac) {
    ++stats_.rx_not_for_us;
    return {};
  }
  switch (f->hdr.type) {
    case kEthPIp:
      ++stats_.rx_ip;
      return trim_padding(kEthPIp, f->payload);
    case kEthPArp:
      arp_input(f->hdr, f->payload);
      return {};
    case kEthPIpv6: {
      const auto ip6 = trim_padding(kEthPIpv6, f->payload);
      if (nd_input(f->hdr, ip6) || mld_input(ip6)) return {};
      // RFC 4862 §5.4: until DAD passes, packets to the address are not ours.
      if (unusable_ && ip6.size() >= 40 && unusable(IpAddr::v6(ip6_addr_at(ip6.data() + 24)))) {
        ++stats_.rx_tentative_dst;
        return {};
      }
      ++stats_.rx_ip;
      return ip6;
    }
    case kEthP8021Q:
    case kEthP8021AD:
      ++stats_.rx_vlan;
      return {};
    default:
      ++stats_.rx_unknown_ethertype;
      return {};
  }
}

// Whether start() has anything to do: groups to report, addresses to probe.
bool EtherLink::needs_start() const {
  return (cfg_.mld && !dad_.empty()) ||
         std::any_of(dad_.begin(), dad_.end(), [](const Dad& d) { return d.state == AddrState::kTentative; });
}

// The link comes up at the first input()/advance(): RFC 4862 §5.4.2,
// the solicited-node group of each address is joined (its MLD report
// goes out first, Linux addrconf_dad_begin -> addrconf_join_solict)
// before the first DAD probe. Linux then waits a random
// rtr_solicit_delay (up to 1 s) before probing (addrconf_dad_kick, a
// SHOULD of §5.4.2 against a post-outage storm); weir probes at once.
void EtherLink::start() {
  started_ = true;
  if (cfg_.mld) {
    for (const Dad& d : dad_) mld_.join(now_, solicited_node(d.addr));
  }
  for (Dad& d : dad_) {
    if (d.state == AddrState::kTentative) d.due = now_;
  }
}

void EtherLink::advance(Time now) {
  now_ = max(now_, now);
  if (!started_) start();
  arp_.advance(now_, out4_);
  nd_.advance(now_, out6_);
  // Reports before probes (§5.4.2: join, then solicit); DAD completing
  // re-announces the groups (Linux ipv6_mc_dad_complete), sent at once.
  mld_advance();
  dad_advance();
  mld_advance();
}

Time EtherLink::next_deadline() const {
  if (!started_ && needs_start()) return now_;
  Time t = min(arp_.next_deadline(), nd_.next_deadline());
  if (cfg_.mld) t = min(t, mld_.next_deadline());
  for (const Dad& d : dad_) t = min(t, d.due);
  return t;
}

void EtherLink::add_static(const IpAddr& ip, const MacAddr& mac) {
  (ip.is_v4() ? arp_ : nd_).add_static(ip, mac);
}

const Neighbor* EtherLink::neighbor(const IpAddr& ip) const {
  return (ip.is_v4() ? arp_ : nd_).lookup(ip);
}

const EtherStats& EtherLink::stats() const {
  const auto& a = arp_.stats();
  const auto& n = nd_.stats();
  stats_.resolutions_failed = a.resolutions_failed + n.resolutions_failed;
  stats_.queue_drops = a.queue_drops + n.queue_drops;
  stats_.table_full = a.table_full + n.table_full;
  return stats_;
}

std::string EtherLink::describe() const {
  const EtherStats& s = stats();
  return fmt::format(
      "ether {} mtu {} neigh {} rx {} tx {} ip_rx {} arp req {}/{} rep {}/{} nd ns {}/{} na {}/{} "
      "res_failed {} queue_drops {} table_full {} malformed {} not_for_us {} unknown_type {} vlan {} "
      "oversize {} no_route {} tx_malformed {} dev_drops {} unreach {} unreach_dropped {}",
      cfg_.mac.str(), cfg_.mtu, neighbor_count(), s.rx_frames, s.tx_frames, s.rx_ip,
      s.arp_requests_rx, s.arp_requests_tx, s.arp_replies_rx, s.arp_replies_tx, s.nd_solicits_rx,
      s.nd_solicits_tx, s.nd_adverts_rx, s.nd_adverts_tx, s.resolutions_failed, s.queue_drops,
      s.table_full, s.rx_malformed, s.rx_not_for_us, s.rx_unknown_ethertype, s.rx_vlan,
      s.tx_oversize, s.tx_no_route, s.tx_malformed, s.tx_device_drops, s.unreach_reported, s.unreach_dropped) +
         fmt::format(" dad probes {} duplicates {} tentative rx {} tx {} mld Icmp6InGroupMembQueries {} "
                     "Icmp6InGroupMembResponses {} Icmp6InGroupMembReductions {} Icmp6InMLDv2Reports {} "
                     "Icmp6OutMLDv2Reports {} invalid {}",
                     s.dad_probes_tx, s.dad_duplicates, s.rx_tentative_dst, s.tx_tentative_src, s.mld_queries_rx,
                     s.mld_v1_reports_rx, s.mld_dones_rx, s.mld_v2_reports_rx, s.mld_v2_reports_tx, s.mld_rx_invalid);
}

void EtherLink::Output::solicit(const Neighbor& n, const MacAddr* unicast) {
  if (v6_) {
    link_.nd_solicit(n, unicast);
  } else {
    link_.arp_solicit(n, unicast);
  }
}

void EtherLink::Output::send(const MacAddr& dst, std::span<const uint8_t> ip_packet) {
  (void)link_.send_frame(dst, v6_ ? kEthPIpv6 : kEthPIp, ip_packet);
}

}  // namespace weir::link
