// EtherLink over IPv4: ARP resolution end to end between two links, the
// NUD timers, bounds, routing to the gateway, and input filtering.
#include <gtest/gtest.h>

#include "link/arp.h"
#include "link/ether_link.h"
#include "link/ether_harness.h"

namespace weir::link {
namespace {

using namespace weir::link::test;

const std::vector<uint8_t> kRequestAFor2 = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06,  // broadcast, from A, ARP
    0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01,                          // Ethernet/IPv4, request
    2, 0, 0, 0, 0, 1, 10, 0, 0, 1,                                     // sha A, spa 10.0.0.1
    0, 0, 0, 0, 0, 0, 10, 0, 0, 2};                                    // tha 0, tpa 10.0.0.2
const std::vector<uint8_t> kReplyBToA = {
    2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x06,  // to A, from B, ARP
    0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x02,        // reply
    2, 0, 0, 0, 0, 2, 10, 0, 0, 2,                   // sha B, spa 10.0.0.2
    2, 0, 0, 0, 0, 1, 10, 0, 0, 1};                  // tha A, tpa 10.0.0.1

const IpAddr kA = ip4(10, 0, 0, 1), kB = ip4(10, 0, 0, 2);

std::vector<uint8_t> framed(const MacAddr& dst, const MacAddr& src, uint16_t type,
                            std::span<const uint8_t> payload) {
  std::vector<uint8_t> f(kEtherHeaderLen + payload.size());
  write_ether_header(f.data(), {dst, src, type});
  std::copy(payload.begin(), payload.end(), f.begin() + kEtherHeaderLen);
  return f;
}

std::vector<uint8_t> arp_frame(const MacAddr& dst, const ArpPacket& a) {
  uint8_t body[kArpLen];
  emit_arp(a, body);
  return framed(dst, a.sha, kEthPArp, body);
}

TEST(EtherLinkArp, FirstPacketQueuesBroadcastRequestReplyReleasesQueueInOrder) {
  TwoHosts h;
  h.a.advance(at_ms(0));
  for (uint8_t tag = 1; tag <= 3; ++tag) {
    EXPECT_EQ(h.a.try_transmit(ipv4_packet(kA, kB, tag)), XmitResult::kSent);
  }
  auto out = h.sink_a.take();
  ASSERT_EQ(out.size(), 1u);  // one request, the three packets wait
  EXPECT_EQ(out[0], kRequestAFor2);
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kIncomplete);
  EXPECT_EQ(h.a.neighbor(kB)->queue.size(), 3u);

  // B answers unicast, and learns A from the request (STALE: RFC 826 merge).
  EXPECT_TRUE(h.b.input(at_ms(1), out[0]).empty());
  auto reply = h.sink_b.take();
  ASSERT_EQ(reply.size(), 1u);
  EXPECT_EQ(reply[0], kReplyBToA);
  ASSERT_TRUE(h.b.neighbor(kA));
  EXPECT_EQ(h.b.neighbor(kA)->state, NudState::kStale);
  EXPECT_EQ(h.b.neighbor(kA)->mac, mac(1));

  EXPECT_TRUE(h.a.input(at_ms(2), reply[0]).empty());
  auto released = h.sink_a.take();
  ASSERT_EQ(released.size(), 3u);
  for (uint8_t i = 0; i < 3; ++i) {
    EXPECT_EQ(frame_dst(released[i]), mac(2));
    EXPECT_EQ(frame_type(released[i]), kEthPIp);
    EXPECT_EQ(frame_payload(released[i])[25], i + 1);  // in order
  }
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kReachable);
  // Resolved: the next packet goes straight out.
  h.a.transmit(ipv4_packet(kA, kB, 9));
  ASSERT_EQ(h.sink_a.frames.size(), 1u);
  EXPECT_EQ(frame_dst(h.sink_a.frames[0]), mac(2));
  // B hands the datagrams up.
  h.exchange(at_ms(3));
  EXPECT_EQ(h.up_b.size(), 1u);
  EXPECT_EQ(h.a.stats().arp_requests_tx, 1u);
  EXPECT_EQ(h.b.stats().arp_replies_tx, 1u);
  EXPECT_EQ(h.a.stats().arp_replies_rx, 1u);
}

TEST(EtherLinkArp, RetriesEverySecondAndFailsAfterThreeDroppingTheQueue) {
  RecordingSink sink;
  EtherLink a(TwoHosts::config(1), sink);
  a.advance(at_ms(0));
  const IpAddr nobody = ip4(10, 0, 0, 9);
  a.transmit(ipv4_packet(kA, nobody, 1));
  a.transmit(ipv4_packet(kA, nobody, 2));
  EXPECT_EQ(sink.take().size(), 1u);
  EXPECT_EQ(a.next_deadline(), at_ms(1000));
  a.advance(at_ms(999));
  EXPECT_TRUE(sink.take().empty());
  a.advance(at_ms(1000));
  EXPECT_EQ(sink.take().size(), 1u);
  EXPECT_EQ(a.next_deadline(), at_ms(2000));
  a.advance(at_ms(2000));
  auto third = sink.take();
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(frame_dst(third[0]), kBroadcastMac);
  EXPECT_EQ(a.neighbor(nobody)->state, NudState::kIncomplete);
  EXPECT_EQ(a.stats().queue_drops, 0u);
  a.advance(at_ms(3000));
  EXPECT_TRUE(sink.take().empty());  // mcast_solicit 3: no fourth request
  EXPECT_EQ(a.neighbor(nobody)->state, NudState::kFailed);
  EXPECT_TRUE(a.neighbor(nobody)->queue.empty());
  EXPECT_EQ(a.stats().queue_drops, 2u);
  EXPECT_EQ(a.stats().resolutions_failed, 1u);
  EXPECT_EQ(a.stats().arp_requests_tx, 3u);
  EXPECT_TRUE(a.next_deadline().is_never());
  // The next packet starts a new resolution.
  a.advance(at_ms(10000));
  a.transmit(ipv4_packet(kA, nobody, 3));
  EXPECT_EQ(sink.take().size(), 1u);
  EXPECT_EQ(a.neighbor(nobody)->state, NudState::kIncomplete);
}

TEST(EtherLinkArp, ReachableTimeIsRandomisedAroundThirtySecondsAndSeeded) {
  TwoHosts h1, h2;
  const Time d1 = resolve_v4(h1), d2 = resolve_v4(h2);
  EXPECT_EQ(d1, d2);  // same seed, same draw
  EXPECT_GE(d1, at_ms(15000));
  EXPECT_LT(d1, at_ms(45000));
  auto c = TwoHosts::config(1);
  c.neigh.seed = 7;
  TwoHosts h3(c, TwoHosts::config(2));
  EXPECT_NE(resolve_v4(h3), d1);
}

TEST(EtherLinkArp, ReachableGoesStaleThenDelayOnUseThenUnicastProbesThenFails) {
  TwoHosts h;
  const Time reach = resolve_v4(h);
  h.up_b.clear();
  h.a.advance(reach - Duration::ms(1));
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kReachable);
  h.a.advance(reach);
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kStale);
  EXPECT_TRUE(h.a.next_deadline().is_never());  // STALE has no timer

  // Use while STALE: the packet goes out at once with the cached address.
  const Time use = reach + Duration::s(10);
  h.a.advance(use);
  h.a.transmit(ipv4_packet(kA, kB, 2));
  auto sent = h.sink_a.take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(frame_dst(sent[0]), mac(2));
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kDelay);
  EXPECT_EQ(h.a.next_deadline(), use + Duration::s(5));

  h.a.advance(use + Duration::s(5) - Duration::ms(1));
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kDelay);
  h.a.advance(use + Duration::s(5));
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kProbe);
  for (int i = 0; i < 3; ++i) {
    if (i > 0) h.a.advance(use + Duration::s(5 + i));
    auto probe = h.sink_a.take();
    ASSERT_EQ(probe.size(), 1u) << i;
    EXPECT_EQ(frame_dst(probe[0]), mac(2)) << "PROBE is unicast";
    auto arp = parse_arp(frame_payload(probe[0]));
    ASSERT_TRUE(arp);
    EXPECT_EQ(arp->op, kArpOpRequest);
    EXPECT_TRUE(arp->tha.is_zero());
    EXPECT_EQ(arp->tpa, kB.v4_host_order());
  }
  // Packets still go out with the cached address while probing.
  h.a.transmit(ipv4_packet(kA, kB, 3));
  EXPECT_EQ(frame_dst(h.sink_a.take().at(0)), mac(2));
  h.a.advance(use + Duration::s(8));
  EXPECT_TRUE(h.sink_a.take().empty());  // ucast_solicit 3
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kFailed);
  EXPECT_EQ(h.a.stats().resolutions_failed, 1u);
}

TEST(EtherLinkArp, AProbeAnsweredMakesTheEntryReachableAgain) {
  TwoHosts h;
  const Time reach = resolve_v4(h);
  const Time use = reach + Duration::s(1);
  h.a.advance(use);
  h.a.transmit(ipv4_packet(kA, kB, 2));
  h.a.advance(use + Duration::s(5));
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kProbe);
  h.exchange(use + Duration::s(5));  // B replies to the unicast request
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kReachable);
  EXPECT_EQ(h.a.neighbor(kB)->probes, 0);
}

TEST(EtherLinkArp, QueueIsBoundedByBytesDroppingTheOldestFirst) {
  TwoHosts h;
  h.a.advance(at_ms(0));
  // 212992 / (1500 + 14 + 576) = 101 full-size packets (Linux's unres_qlen).
  for (int i = 0; i < 150; ++i) h.a.transmit(ipv4_packet(kA, kB, static_cast<uint8_t>(i), 1500));
  EXPECT_EQ(h.a.neighbor(kB)->queue.size(), 101u);
  EXPECT_LE(h.a.neighbor(kB)->queue_bytes, 212992u);
  EXPECT_EQ(h.a.stats().queue_drops, 49u);
  h.exchange(at_ms(0));
  ASSERT_EQ(h.up_b.size(), 101u);
  for (size_t i = 0; i < h.up_b.size(); ++i) EXPECT_EQ(h.up_b[i][30], 49 + i) << i;
}

TEST(EtherLinkArp, TableIsBoundedAtGcThresh3AndEvictsOnlyIdleEntries) {
  RecordingSink sink;
  auto c = TwoHosts::config(1);
  c.addrs = {{kA, 16}};
  EtherLink a(c, sink);
  a.advance(at_ms(0));
  for (int i = 0; i < 1024; ++i) {
    const IpAddr dst = ip4(10, 0, static_cast<uint8_t>(1 + i / 256), static_cast<uint8_t>(i % 256));
    EXPECT_EQ(a.try_transmit(ipv4_packet(kA, dst, 1)), XmitResult::kSent);
  }
  EXPECT_EQ(a.neighbor_count(), 1024u);
  // Every entry is resolving (INCOMPLETE with a queue): the 1025th is refused.
  const IpAddr extra = ip4(10, 0, 9, 9);
  EXPECT_EQ(a.try_transmit(ipv4_packet(kA, extra, 1)), XmitResult::kDropped);
  EXPECT_EQ(a.stats().table_full, 1u);
  EXPECT_EQ(a.neighbor_count(), 1024u);
  EXPECT_FALSE(a.neighbor(extra));
  // Once they have failed they are idle, and one makes room.
  for (int t = 1000; t <= 3000; t += 1000) a.advance(at_ms(t));
  EXPECT_EQ(a.stats().resolutions_failed, 1024u);
  EXPECT_EQ(a.try_transmit(ipv4_packet(kA, extra, 1)), XmitResult::kSent);
  EXPECT_EQ(a.neighbor_count(), 1024u);
  ASSERT_TRUE(a.neighbor(extra));
  EXPECT_EQ(a.neighbor(extra)->state, NudState::kIncomplete);
}

TEST(EtherLinkArp, OffLinkDestinationGoesToTheGatewaysMac) {
  auto ca = TwoHosts::config(1);
  ca.gateway4 = kB;  // B is the router
  TwoHosts h(ca, TwoHosts::config(2));
  h.a.advance(at_ms(0));
  const IpAddr far = ip4(192, 0, 2, 7);
  h.a.transmit(ipv4_packet(kA, far, 5));
  auto req = h.sink_a.frames;
  ASSERT_EQ(req.size(), 1u);
  EXPECT_EQ(parse_arp(frame_payload(req[0]))->tpa, kB.v4_host_order());  // asks for the gateway
  EXPECT_FALSE(h.a.neighbor(far));
  h.exchange(at_ms(0));
  ASSERT_EQ(h.up_b.size(), 1u);
  EXPECT_EQ(h.up_b[0][19], 7);  // the datagram still says 192.0.2.7
  // A static gateway entry: no ARP at all.
  RecordingSink sink;
  auto cs = TwoHosts::config(1);
  cs.gateway4 = ip4(10, 0, 0, 254);
  EtherLink s(cs, sink);
  s.add_static(ip4(10, 0, 0, 254), mac(0xfe));
  s.transmit(ipv4_packet(kA, far, 5));
  ASSERT_EQ(sink.frames.size(), 1u);
  EXPECT_EQ(frame_dst(sink.frames[0]), mac(0xfe));
  EXPECT_EQ(frame_type(sink.frames[0]), kEthPIp);
}

TEST(EtherLinkArp, OffLinkWithoutGatewayIsDroppedAndCounted) {
  RecordingSink sink;
  EtherLink a(TwoHosts::config(1), sink);
  EXPECT_EQ(a.try_transmit(ipv4_packet(kA, ip4(192, 0, 2, 7), 5)), XmitResult::kDropped);
  EXPECT_TRUE(sink.frames.empty());
  EXPECT_EQ(a.stats().tx_no_route, 1u);
}

TEST(EtherLinkArp, BroadcastAndMulticastMapWithoutResolution) {
  RecordingSink sink;
  EtherLink a(TwoHosts::config(1), sink);
  a.transmit(ipv4_packet(kA, ip4(255, 255, 255, 255), 1));
  a.transmit(ipv4_packet(kA, ip4(10, 0, 0, 255), 2));    // directed broadcast of 10.0.0.0/24
  a.transmit(ipv4_packet(kA, ip4(224, 0, 0, 251), 3));   // mDNS group
  a.transmit(ipv4_packet(kA, ip4(239, 200, 1, 2), 4));
  ASSERT_EQ(sink.frames.size(), 4u);
  EXPECT_EQ(frame_dst(sink.frames[0]), kBroadcastMac);
  EXPECT_EQ(frame_dst(sink.frames[1]), kBroadcastMac);
  EXPECT_EQ(frame_dst(sink.frames[2]).str(), "01:00:5e:00:00:fb");
  EXPECT_EQ(frame_dst(sink.frames[3]).str(), "01:00:5e:48:01:02");
  EXPECT_EQ(a.neighbor_count(), 0u);
}

// Prefixes of any length, across the 64-bit halves of an address: whether a
// destination is on-link (resolved itself), off-link (its gateway resolved)
// or a directed broadcast (no resolution) follows the exact prefix bits.
TEST(EtherLinkRouting, OnLinkFollowsEveryPrefixBit) {
  RecordingSink sink;
  auto c = TwoHosts::config(1);
  c.addrs = {{kA, 25}, {ip6("2001:db8::1"), 60}, {ip6("2001:db8:1::1"), 64}, {ip6("fd00::1"), 72}};
  c.gateway4 = ip4(10, 0, 0, 126);
  c.gateway6 = ip6("2001:db8::fe");
  struct Case {
    IpAddr dst;
    bool on_link;
  };
  const Case cases[] = {
      {ip4(10, 0, 0, 100), true},
      {ip4(10, 0, 0, 129), false},  // bit 25 differs
      {ip4(10, 0, 0, 255), false},  // 10.0.0.0/24's broadcast, but not in /25
      {ip6("2001:db8:0:f::5"), true},
      {ip6("2001:db8:0:10::5"), false},  // bit 59
      {ip6("2001:db8:1:0:ffff::1"), true},
      {ip6("2001:db8:1:1::1"), false},  // bit 63, the last of the first half
      {ip6("fd00::ff:1:2"), true},
      {ip6("fd00:0:0:0:100::1"), false},  // bit 71, in the second half
  };
  for (const Case& k : cases) {
    EtherLink a(c, sink);  // a fresh table for each case
    a.advance(at_ms(0));
    const bool v6 = !k.dst.is_v4();
    const IpAddr gw = v6 ? *c.gateway6 : *c.gateway4;
    a.transmit(v6 ? ipv6_packet(ip6("2001:db8::1"), k.dst, 1) : ipv4_packet(kA, k.dst, 1));
    EXPECT_EQ(a.neighbor(k.dst) != nullptr, k.on_link) << k.dst.to_string();
    EXPECT_EQ(a.neighbor(gw) != nullptr, !k.on_link) << k.dst.to_string();
  }
  // 10.0.0.127 is the /25's directed broadcast: no resolution at all.
  EtherLink a(c, sink);
  a.advance(at_ms(0));
  sink.frames.clear();
  a.transmit(ipv4_packet(kA, ip4(10, 0, 0, 127), 2));
  ASSERT_EQ(sink.frames.size(), 1u);
  EXPECT_EQ(frame_dst(sink.frames[0]), kBroadcastMac);
  EXPECT_EQ(a.neighbor_count(), 0u);
}

TEST(EtherLinkArp, RequestForSomeoneElsesAddressIsNotAnsweredNorLearned) {
  RecordingSink sink;
  EtherLink b(TwoHosts::config(2), sink);
  auto req = arp_frame(kBroadcastMac, {.op = kArpOpRequest, .sha = mac(1), .spa = kA.v4_host_order(),
                                       .tpa = ip4(10, 0, 0, 77).v4_host_order()});
  EXPECT_TRUE(b.input(at_ms(0), req).empty());
  EXPECT_TRUE(sink.frames.empty());
  EXPECT_FALSE(b.neighbor(kA));  // arp_accept 0: nothing learned from it
  EXPECT_EQ(b.stats().arp_requests_rx, 1u);
  EXPECT_EQ(b.stats().arp_replies_tx, 0u);
}

TEST(EtherLinkArp, AnswersRequestsForEachOfItsAddresses) {
  RecordingSink sink;
  auto c = TwoHosts::config(2);
  c.addrs.push_back({ip4(192, 168, 5, 5), 24});
  EtherLink b(c, sink);
  for (const IpAddr& ours : {kB, ip4(192, 168, 5, 5)}) {
    b.input(at_ms(0), arp_frame(kBroadcastMac, {.op = kArpOpRequest, .sha = mac(1),
                                                .spa = kA.v4_host_order(), .tpa = ours.v4_host_order()}));
    auto out = sink.take();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(frame_dst(out[0]), mac(1));
    auto r = parse_arp(frame_payload(out[0]));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->op, kArpOpReply);
    EXPECT_EQ(r->sha, mac(2));
    EXPECT_EQ(r->spa, ours.v4_host_order());
    EXPECT_EQ(r->tha, mac(1));
    EXPECT_EQ(r->tpa, kA.v4_host_order());
  }
}

TEST(EtherLinkArp, UnsolicitedRepliesCreateNothingButUpdateExistingEntries) {
  TwoHosts h;
  resolve_v4(h);
  RecordingSink sink;
  EtherLink& a = h.a;
  // A gratuitous reply from an unknown host: not learned (arp_accept 0).
  const IpAddr c = ip4(10, 0, 0, 3);
  a.input(at_ms(100), arp_frame(kBroadcastMac, {.op = kArpOpReply, .sha = mac(3), .spa = c.v4_host_order(),
                                                .tha = mac(3), .tpa = c.v4_host_order()}));
  EXPECT_FALSE(a.neighbor(c));
  // A gratuitous ARP from B with a new MAC: the known entry moves (override),
  // STALE since a broadcast does not confirm reachability.
  a.input(at_ms(200), arp_frame(kBroadcastMac, {.op = kArpOpRequest, .sha = mac(0x22),
                                                .spa = kB.v4_host_order(), .tpa = kB.v4_host_order()}));
  EXPECT_EQ(a.neighbor(kB)->mac, mac(0x22));
  EXPECT_EQ(a.neighbor(kB)->state, NudState::kStale);
  (void)sink;
}

TEST(EtherLinkArp, WithinLocktimeTheFirstReplyWins) {
  TwoHosts h;
  resolve_v4(h);  // updated at t=0 with B's MAC
  auto other = arp_frame(mac(1), {.op = kArpOpReply, .sha = mac(0x33), .spa = kB.v4_host_order(),
                                  .tha = mac(1), .tpa = kA.v4_host_order()});
  h.a.input(at_ms(500), other);
  EXPECT_EQ(h.a.neighbor(kB)->mac, mac(2));  // a second answer within 1 s is ignored
  h.a.input(at_ms(1500), other);
  EXPECT_EQ(h.a.neighbor(kB)->mac, mac(0x33));  // after locktime it overrides
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kReachable);  // unicast reply confirms
}

TEST(EtherLinkArp, StaticEntriesAreNeverChangedByArp) {
  TwoHosts h;
  h.a.add_static(kB, mac(0x44));
  h.a.input(at_ms(5000), arp_frame(mac(1), {.op = kArpOpReply, .sha = mac(2), .spa = kB.v4_host_order(),
                                            .tha = mac(1), .tpa = kA.v4_host_order()}));
  EXPECT_EQ(h.a.neighbor(kB)->mac, mac(0x44));
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kPermanent);
  h.a.transmit(ipv4_packet(kA, kB, 1));
  EXPECT_EQ(frame_dst(h.sink_a.frames.at(0)), mac(0x44));
}

TEST(EtherLinkInput, FiltersFramesByDestinationTypeAndLength) {
  RecordingSink sink;
  EtherLink b(TwoHosts::config(2), sink);
  const auto ip = ipv4_packet(kA, kB, 1);
  EXPECT_EQ(b.input(at_ms(0), framed(mac(2), mac(1), kEthPIp, ip)).size(), ip.size());
  EXPECT_TRUE(b.input(at_ms(0), framed(mac(9), mac(1), kEthPIp, ip)).empty());       // someone else's
  EXPECT_TRUE(b.input(at_ms(0), framed(mac(2), mac(2), kEthPIp, ip)).empty());       // our own, looped back
  EXPECT_TRUE(b.input(at_ms(0), framed(MacAddr{{0x01, 0, 0x5e, 0, 0, 0xfb}}, mac(1), kEthPIp, ip)).empty());
  EXPECT_EQ(b.stats().rx_not_for_us, 3u);
  EXPECT_TRUE(b.input(at_ms(0), framed(mac(2), mac(1), kEthP8021Q, ip)).empty());
  EXPECT_EQ(b.stats().rx_vlan, 1u);
  EXPECT_TRUE(b.input(at_ms(0), framed(mac(2), mac(1), 0x88cc, ip)).empty());        // LLDP
  EXPECT_TRUE(b.input(at_ms(0), framed(mac(2), mac(1), 0x0040, ip)).empty());        // an 802.3 length
  EXPECT_EQ(b.stats().rx_unknown_ethertype, 2u);
  EXPECT_TRUE(b.input(at_ms(0), std::vector<uint8_t>(13, 0)).empty());
  EXPECT_TRUE(b.input(at_ms(0), framed(mac(2), MacAddr{{0x03, 0, 0, 0, 0, 1}}, kEthPIp, ip)).empty());
  EXPECT_TRUE(b.input(at_ms(0), framed(kBroadcastMac, mac(1), kEthPArp, std::vector<uint8_t>(27, 0))).empty());
  EXPECT_EQ(b.stats().rx_malformed, 3u);
  EXPECT_EQ(b.stats().rx_frames, 10u);
  EXPECT_EQ(b.stats().rx_ip, 1u);
}

TEST(EtherLinkInput, StripsEthernetPaddingFromShortFrames) {
  RecordingSink sink;
  EtherLink b(TwoHosts::config(2), sink);
  auto ip = ipv4_packet(kA, kB, 1, 28);
  auto f = framed(mac(2), mac(1), kEthPIp, ip);
  f.resize(60, 0);
  EXPECT_EQ(b.input(at_ms(0), f).size(), 28u);
}

TEST(EtherLinkOutput, FramesCarryAtMostMtuPlusFourteenAndOversizeIsDropped) {
  RecordingSink sink;
  auto c = TwoHosts::config(1);
  c.mtu = 1400;
  EtherLink a(c, sink);
  a.add_static(kB, mac(2));
  EXPECT_EQ(a.mtu(), 1400u);
  EXPECT_EQ(a.try_transmit(ipv4_packet(kA, kB, 1, 1400)), XmitResult::kSent);
  ASSERT_EQ(sink.frames.size(), 1u);
  EXPECT_EQ(sink.frames[0].size(), 1414u);
  EXPECT_EQ(a.try_transmit(ipv4_packet(kA, kB, 1, 1401)), XmitResult::kDropped);
  EXPECT_EQ(sink.frames.size(), 1u);
  EXPECT_EQ(a.stats().tx_oversize, 1u);
  sink.refuse = true;
  EXPECT_EQ(a.try_transmit(ipv4_packet(kA, kB, 1, 100)), XmitResult::kDropped);
  EXPECT_EQ(a.stats().tx_device_drops, 1u);
}

TEST(EtherLinkOutput, DescribeIsOneLineWithTheCounters) {
  TwoHosts h;
  resolve_v4(h);
  const std::string d = h.a.describe();
  EXPECT_EQ(d.find('\n'), std::string::npos);
  EXPECT_NE(d.find("ether 02:00:00:00:00:01"), std::string::npos) << d;
  EXPECT_NE(d.find("arp req 0/1 rep 1/0"), std::string::npos) << d;
}

}  // namespace
}  // namespace weir::link
