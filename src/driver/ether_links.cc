#include "driver/ether_links.h"

#include <algorithm>

#include <fmt/format.h>

#include "driver/ether_setup.h"
#include "driver/netns.h"

namespace weir::driver {

namespace {

// One frame through the link layer; an IP datagram in it goes on to the
// stack, with the device's word on its checksum.
void deliver(link::EtherLink& ether, Stack& st, Time now, std::span<const uint8_t> frame, bool csum_valid) {
  auto ip = ether.input(now, frame);
  if (ip.empty()) return;
  if (csum_valid) st.input_checksum_valid(now, ip);
  else st.input(now, ip);
}

// The link's timers, then the errors they made for the stack
// (EtherLink::take_local: ICMP unreachables for failed resolutions).
void advance_link(link::EtherLink& ether, Stack& st, Time now) {
  ether.advance(now);
  for (const auto& d : ether.take_local()) st.input(now, d);
}

}  // namespace

// A NIC's filters pass weir's MAC and its groups (the solicited-node
// groups of RFC 4861 §7.2.1, EtherLink::multicast_macs) up without going
// promiscuous; veth has no filter, so a refusal is only worth a warning.
PacketLink::PacketLink(std::unique_ptr<link::PacketRing> ring, link::EtherLinkConfig cfg, size_t batch)
    : PolledLink(ring->name()),
      chunk_(static_cast<uint32_t>(std::clamp<size_t>(batch, 1, UINT32_MAX))),
      ring_(std::move(ring)),
      mac_(cfg.mac.b),
      ether_(std::move(cfg), *ring_) {
  if (auto r = ring_->add_mac(mac_); !r) fmt::print(stderr, "weir: {}\n", r.error());
  for (const auto& m : ether_.multicast_macs())
    if (auto r = ring_->add_mac(m.b); !r) fmt::print(stderr, "weir: {}\n", r.error());
}

// At most `batch` frames per call (V2 and copy; a V3 block goes whole):
// the driver then lets the app read before the next ones. The engine decides
// each segment's ACK as it arrives (tcp_ack_snd_check: at once only if the
// window it would now offer is no smaller), and data the app has not read
// yet shrinks that window, so a wake-up of hundreds of frames drawn in one
// go got one window update at the end instead of an ACK every second
// segment: a sender ACKed once per ~130 segments ("Session 21").
void PacketLink::input(Time now, Stack& st) {
  ring_->drain([&](std::span<const uint8_t> f, bool csum_valid) { deliver(ether_, st, now, f, csum_valid); }, chunk_);
}

void PacketLink::advance(Time now, Stack& st) {
  last_ = now;
  advance_link(ether_, st, now);
}

// A burst a full send buffer left on the ring goes at the next flush: wake
// for one soon (100 us: a few frames' time at 1 Gbit/s) even if nothing
// else is due.
Time PacketLink::next_deadline() const {
  Time t = ether_.next_deadline();
  return ring_->tx_backlog() ? min(t, last_ + Duration::us(100)) : t;
}

std::string PacketLink::describe() const {
  ring_->read_kernel_stats();
  return ring_->describe() + ether_.describe() + "\n";
}

TapLink::TapLink(link::TunDevice dev, link::EtherLinkConfig cfg, size_t batch)
    : PolledLink(dev.name()), dev_(std::move(dev)), sink_(dev_), ether_(std::move(cfg), sink_), batch_(batch, 65536) {}

// A TAP without a vnet header hands over frames whose checksums the kernel
// completed (the device offers no checksum offload): the stack checks them.
void TapLink::input(Time now, Stack& st) {
  size_t n = batch_.read(dev_);
  for (size_t i = 0; i < n; ++i) deliver(ether_, st, now, batch_.packet(i), false);
}

void TapLink::advance(Time now, Stack& st) { advance_link(ether_, st, now); }

std::string TapLink::describe() const {
  const auto& s = dev_.stats();
  return fmt::format("{}: TAP rx {} frames {} bytes in {} batches; tx {} frames {} bytes, {} dropped ({} refused: "
                     "queue full), {} oversize\n",
                     dev_.name(), s.rx_packets, s.rx_bytes, s.rx_batches, s.tx_packets, s.tx_bytes, s.tx_dropped,
                     s.tx_refused, s.tx_oversize) +
         ether_.describe() + "\n";
}

// RFC 4862 §5.4.5: a duplicate is not used; the user asked for an address
// another node holds, which Linux reports as "IPv6 duplicate address ...
// detected!" and leaves unassigned (dadfailed).
std::string duplicate_error(const link::EtherLink& ether) {
  std::string out;
  for (const auto& a : ether.duplicates()) {
    out += fmt::format("{}IPv6 address {} is already in use on the link (duplicate address detection, RFC 4862 "
                       "§5.4; --no-dad skips the check)",
                       out.empty() ? "" : "; ", a.to_string());
  }
  return out;
}

namespace {

// weir's addresses with their prefixes (on-link test), the gateways, the MAC.
Expected<link::EtherLinkConfig, std::string> ether_config(const StackSetup& s, const MacBytes& iface, uint32_t mtu) {
  link::EtherLinkConfig c;
  c.mtu = mtu;
  // Linux's default: one DAD probe per IPv6 address (RFC 4862 §5.4).
  c.dad_transmits = s.dad ? 1 : 0;
  if (s.mac.empty()) {
    c.mac.b = derived_mac(iface);
  } else if (auto m = link::MacAddr::parse(s.mac); m && !m->is_multicast()) {
    c.mac = *m;
  } else {
    return Unexpected(fmt::format("--mac '{}': expected a unicast MAC like 02:00:00:00:00:01", s.mac));
  }
  for (const auto& a : s.addrs) {
    auto p = parse_cidr(a);
    if (!p) return Unexpected(p.error());
    c.addrs.emplace_back(*IpAddr::parse(p->addr), p->prefix);
  }
  for (const auto& g : s.gateways) {
    auto ip = IpAddr::parse(g);
    if (!ip) return Unexpected(fmt::format("--gateway '{}': expected an IPv4 or IPv6 address", g));
    auto& slot = ip->is_v4() ? c.gateway4 : c.gateway6;
    if (slot) return Unexpected(fmt::format("--gateway '{}': one gateway per IP version", g));
    slot = *ip;
  }
  return c;
}

Expected<std::unique_ptr<PolledLink>, std::string> open_packet(const StackSetup& s) {
  // The ring and the flags first: the interface must exist and be
  // Ethernet, and the flags must be right, before anything is changed.
  auto ring = link::PacketRing::open(s.packet, s.ring);
  if (!ring) return Unexpected(fmt::format("--packet {}: {}", s.packet, ring.error()));
  auto cfg = ether_config(s, (*ring)->hw_addr(), (*ring)->mtu());
  if (!cfg) return Unexpected(cfg.error());
  // Real MTU-sized frames both ways: weir's end, and Linux's end of a veth
  // we configure (a sender's TSO would otherwise cross the veth as one
  // 64 KB frame, which the ring drops as oversize).
  offloads_off(s.packet);
  if (auto r = link_up(s.packet); !r) return Unexpected(r.error());
  if (!s.peers.empty()) {
    auto peer = veth_peer(s.packet);
    if (!peer) return Unexpected(peer.error());
    offloads_off(*peer);
    for (const auto& p : s.peers)
      if (auto r = configure_kernel_side(*peer, p); !r) return Unexpected(r.error());
  }
  return std::unique_ptr<PolledLink>(new PacketLink(std::move(*ring), std::move(*cfg), s.driver.batch));
}

Expected<std::unique_ptr<PolledLink>, std::string> open_tap(const StackSetup& s) {
  auto dev = link::TunDevice::open_tap(s.tap);
  if (!dev) return Unexpected(dev.error());
  for (const auto& p : s.peers)
    if (auto r = configure_kernel_side(dev->name(), p); !r) return Unexpected(r.error());
  auto mac = iface_mac(dev->name());
  if (!mac) return Unexpected(mac.error());
  auto cfg = ether_config(s, *mac, dev->mtu());
  if (!cfg) return Unexpected(cfg.error());
  return std::unique_ptr<PolledLink>(new TapLink(std::move(*dev), std::move(*cfg), s.driver.batch));
}

}  // namespace

Expected<std::unique_ptr<PolledLink>, std::string> open_ether(const StackSetup& s) {
  return s.packet.empty() ? open_tap(s) : open_packet(s);
}

}  // namespace weir::driver
