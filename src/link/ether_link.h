// EtherLink: a weir::Netif over an Ethernet frame device. Frames IP packets
// for their next hop, resolves next hops with ARP (RFC 826) and IPv6
// neighbour discovery (RFC 4861 §7), answers both for this host's
// addresses, checks its IPv6 addresses are unique before using them
// (duplicate address detection, RFC 4862 §5.4), reports the multicast
// groups it listens to (MLDv2, RFC 3810), and hands received IP datagrams
// back to the driver. Pure: time
// comes in through input()/advance(), frames go out through a FrameSink,
// and nothing here reads a clock, sleeps or does I/O.
//
// Driver loop, per wake-up:
//   for each frame f: if (auto ip = link.input(now, f); !ip.empty()) stack.input(now, ip);
//   link.advance(now); stack.advance(now); ...
//   sleep until min(stack.next_deadline(), link.next_deadline())
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "link/ether.h"
#include "link/mld_host.h"
#include "link/ndisc.h"
#include "link/neighbor.h"
#include "weir/addr.h"
#include "weir/netif.h"
#include "weir/time.h"

namespace weir::link {

// Every member has an initializer, so designated initialisation may leave
// any out under -Wmissing-field-initializers.
struct EtherLinkConfig {
  MacAddr mac{};                     // this host's MAC (source of every frame)
  uint32_t mtu = 1500;               // IP MTU; frames carry at most mtu + 14 bytes
  // This host's addresses with their prefix length: a destination inside one
  // of the prefixes is on-link (resolved itself); anything else goes to the
  // gateway of its family. No gateway and not on-link: dropped and counted.
  std::vector<std::pair<IpAddr, int>> addrs{};
  std::optional<IpAddr> gateway4{}, gateway6{};
  // Linux's neighbour defaults (net.ipv4.neigh.default.*, the same for
  // net.ipv6.neigh.default.*); one table per family, as Linux's arp_tbl and nd_tbl.
  NeighParams neigh{};
  // IPv6 Duplicate Address Detection (RFC 4862 §5.4): solicitations per
  // address before it is used, RetransTimer (neigh.retrans_time) apart;
  // Linux net.ipv6.conf.*.dad_transmits, 1 by default. 0: every address
  // is usable at once.
  int dad_transmits = 1;
  // MLDv2 reports (RFC 3810) for the solicited-node groups; off only for
  // tests that count every frame.
  bool mld = true;
  MldParams mld_params{};
};

// Every frame in or out is counted once in rx_frames/tx_frames; every
// dropped one also under exactly one reason.
struct EtherStats {
  uint64_t rx_frames = 0;
  uint64_t tx_frames = 0;
  uint64_t rx_ip = 0;                // IP datagrams handed to the stack
  uint64_t arp_requests_rx = 0, arp_replies_rx = 0;
  uint64_t arp_requests_tx = 0, arp_replies_tx = 0;
  uint64_t nd_solicits_rx = 0, nd_adverts_rx = 0;   // NS / NA received (valid)
  uint64_t nd_solicits_tx = 0, nd_adverts_tx = 0;
  uint64_t resolutions_failed = 0;   // both tables' res_failed
  uint64_t queue_drops = 0;          // unres_discards: queue overflow, failed resolution, eviction
  uint64_t table_full = 0;           // new neighbour refused at gc_thresh3
  uint64_t rx_malformed = 0;         // short frame, bad ARP, NS/NA failing RFC 4861 §7.1
  uint64_t rx_not_for_us = 0;        // destination MAC not ours/broadcast/joined multicast, or our own frame
  uint64_t rx_unknown_ethertype = 0; // neither IPv4, ARP nor IPv6 (802.3 length fields included)
  uint64_t rx_vlan = 0;              // 802.1Q/802.1ad tagged: no VLAN support
  uint64_t tx_oversize = 0;          // IP packet larger than the MTU
  uint64_t tx_no_route = 0;          // not on-link and no gateway of its family
  uint64_t tx_malformed = 0;         // not a parseable IPv4/IPv6 header
  uint64_t tx_device_drops = 0;      // the FrameSink said kDropped
  uint64_t unreach_reported = 0;     // ICMP errors made for dropped queued packets (take_local)
  uint64_t unreach_dropped = 0;      // ... not made: kMaxLocal already waiting
  // Duplicate address detection (RFC 4862 §5.4).
  uint64_t dad_probes_tx = 0;        // NS from :: (also in nd_solicits_tx)
  uint64_t dad_duplicates = 0;       // addresses found in use: never used
  uint64_t rx_tentative_dst = 0;     // IPv6 datagram to a tentative or duplicate address: dropped
  uint64_t tx_tentative_src = 0;     // ... from one: dropped (Linux would not pick it as a source)
  // MLD (RFC 3810), with the names of Linux's /proc/net/snmp6.
  uint64_t mld_queries_rx = 0;       // Icmp6InGroupMembQueries (valid ones)
  uint64_t mld_v1_reports_rx = 0;    // Icmp6InGroupMembResponses
  uint64_t mld_dones_rx = 0;         // Icmp6InGroupMembReductions
  uint64_t mld_v2_reports_rx = 0;    // Icmp6InMLDv2Reports
  uint64_t mld_v2_reports_tx = 0;    // Icmp6OutMLDv2Reports
  uint64_t mld_rx_invalid = 0;       // bad checksum or length; a query failing RFC 3810 §6.2: dropped
};

// An IPv6 address's state (RFC 4862 §2): tentative until DAD passes,
// then preferred (weir has no lifetimes); duplicate for good if DAD
// found it in use (§5.4.5).
enum class AddrState : uint8_t { kTentative, kPreferred, kDuplicate };

class EtherLink final : public Netif {
 public:
  EtherLink(EtherLinkConfig cfg, FrameSink& out);
  EtherLink(const EtherLink&) = delete;
  EtherLink& operator=(const EtherLink&) = delete;

  // Netif: frames the IP packet for its next hop and hands it to `out`; while
  // the next hop is unresolved, queues it (bounded) and solicits.
  void transmit(std::span<const uint8_t> ip_packet) override;
  XmitResult try_transmit(std::span<const uint8_t> ip_packet) override;
  uint32_t mtu() const override;
  // Netif: refreshes the next hop toward `dst` (RFC 4861 §7.3.1's
  // upper-layer confirmation, Linux sock_confirm_neigh), at the time of the
  // last input()/advance().
  void confirm_neighbor(const IpAddr& dst) override;
  // One frame from the device. Returns the IP datagram inside it (a view into
  // `frame`) for Stack::input, or an empty span when the frame was consumed
  // (ARP, neighbour discovery), is not for this host, or is malformed (counted).
  std::span<const uint8_t> input(Time now, std::span<const uint8_t> frame);
  // Retransmits solicitations, ages entries, drops the queued packets of a
  // failed resolution. The time of the last input()/advance() call is the
  // time used for packets transmitted in between.
  void advance(Time now);
  Time next_deadline() const;       // Time::never() when nothing is pending
  void add_static(const IpAddr& ip, const MacAddr& mac);  // `ip neigh add ... nud permanent`
  const EtherStats& stats() const;  // counters (frames in/out, arp/nd in/out, drops by reason)
  std::string describe() const;     // a one-line summary for `weir ss`-style output (the driver prints it)

  // The multicast MACs this link accepts (all-nodes and each IPv6
  // address's solicited-node group, RFC 4861 §7.2.1). A NIC filters
  // multicast: the driver joins these (PACKET_ADD_MEMBERSHIP
  // PACKET_MR_MULTICAST) or NS to us never arrive; the MLD reports tell
  // a switch snooping MLD to forward them.
  std::vector<MacAddr> multicast_macs() const;
  // Datagrams for this host's own stack that the link made itself: the ICMP
  // (host unreachable, RFC 792) and ICMPv6 (address unreachable, RFC 4443
  // §3.1) errors for packets dropped because their next hop did not resolve,
  // as Linux arp_error_report/ndisc_error_report send them (a connect() to
  // an absent neighbour fails with EHOSTUNREACH after about 3 s, not after
  // its SYN retries). The driver hands them to Stack::input after advance().
  // Bounded: at most kMaxLocal wait; more are dropped and counted.
  std::vector<std::vector<uint8_t>> take_local();
  static constexpr size_t kMaxLocal = 64;
  // RFC 4862 §5.4: the state of one of our IPv6 addresses (nullopt for
  // IPv4 and addresses not ours); whether any is still tentative; the
  // ones found duplicate, which the driver reports as an error.
  std::optional<AddrState> address_state(const IpAddr& ip) const;
  bool dad_pending() const;
  std::vector<IpAddr> duplicates() const;
  // For tests and `ip neigh`-style output: the entry for `ip`, if any.
  const Neighbor* neighbor(const IpAddr& ip) const;
  size_t neighbor_count() const { return arp_.size() + nd_.size(); }

 private:
  // The table's window onto the wire for one family.
  class Output final : public NeighborOutput {
   public:
    Output(EtherLink& link, bool v6) : link_(link), v6_(v6) {}
    void solicit(const Neighbor& n, const MacAddr* unicast) override;
    void send(const MacAddr& dst, std::span<const uint8_t> ip_packet) override;
    void unreachable(std::span<const uint8_t> ip_packet) override;

   private:
    EtherLink& link_;
    bool v6_;
  };

  XmitResult send_frame(const MacAddr& dst, uint16_t type, std::span<const uint8_t> payload);
  std::optional<IpAddr> next_hop(const IpAddr& dst) const;
  std::optional<MacAddr> group_mac(const IpAddr& dst) const;
  bool is_ours(const IpAddr& ip) const;  // assigned: IPv4, or IPv6 and preferred
  bool needs_start() const;
  void start();
  std::optional<IpAddr> source_for(const IpAddr& target, const IpAddr& hint) const;
  bool accepts_dst(const MacAddr& dst) const;

  // ARP (link/ether_link_arp.cc)
  void arp_input(const EtherHeader& eh, std::span<const uint8_t> body);
  void arp_solicit(const Neighbor& n, const MacAddr* unicast);
  void arp_send(uint16_t op, const MacAddr& dst, uint32_t spa, const MacAddr& tha, uint32_t tpa);

  // Neighbour discovery (link/ether_link_nd.cc)
  bool nd_input(const EtherHeader& eh, std::span<const uint8_t> ip6);  // false: not NS/NA
  void nd_solicit(const Neighbor& n, const MacAddr* unicast);
  void nd_solicitation(const EtherHeader& eh, const NdMessage& ns);
  void nd_advertisement(const NdMessage& na);
  void nd_send(const MacAddr& dst_mac, const NdMessage& m);

  // Duplicate address detection (link/ether_link_dad.cc)
  struct Dad {
    IpAddr addr;
    AddrState state = AddrState::kPreferred;
    int probes_left = 0;
    Time due = Time::never();
  };
  Dad* dad_entry(const IpAddr& ip);
  const Dad* dad_entry(const IpAddr& ip) const;
  void dad_advance();
  void dad_probe(Dad& d);
  void dad_failed(Dad& d);
  bool unusable(const IpAddr& ip) const;  // one of ours, tentative or duplicate

  // MLD (link/ether_link_mld.cc)
  bool mld_input(std::span<const uint8_t> ip6);  // false: not MLD
  void mld_advance();
  IpAddr mld_source() const;

  EtherLinkConfig cfg_;
  FrameSink& out_;
  Time now_;
  NeighborTable arp_, nd_;
  Output out4_{*this, false}, out6_{*this, true};
  std::vector<MacAddr> multicast_macs_;  // multicast_macs(), computed once
  std::vector<std::vector<uint8_t>> local_;  // take_local(): ICMP errors for our stack
  std::vector<Dad> dad_;         // one per IPv6 address
  size_t unusable_ = 0;          // of them tentative or duplicate: 0 keeps the data path's checks free
  MldHost mld_;
  bool started_ = false;         // start(): groups joined, DAD begun
  mutable EtherStats stats_;     // the tables' counters folded in by stats()
};

}  // namespace weir::link
