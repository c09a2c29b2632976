// EtherLink over IPv6: neighbour discovery end to end between two links,
// answering solicitations, RFC 4861 §7.1 validation, routing.
#include <gtest/gtest.h>

#include "link/ether_link.h"
#include "link/ether_harness.h"
#include "link/ndisc.h"

namespace weir::link {
namespace {

using namespace weir::link::test;

const IpAddr kA = ip6("2001:db8::1"), kB = ip6("2001:db8::2");

NdMessage ns(const IpAddr& src, const IpAddr& dst, const IpAddr& target, std::optional<MacAddr> sll) {
  return nd_message(kIcmp6NeighSolicit, src, dst, target, sll);
}

NdMessage parse_frame(const std::vector<uint8_t>& f) {
  EXPECT_EQ(frame_type(f), kEthPIpv6);
  auto p = parse_nd(frame_payload(f));
  EXPECT_TRUE(p) << (p ? "" : to_string(p.error()));
  return p ? *p : NdMessage{};
}

TEST(EtherLinkNd, FirstPacketQueuesSolicitationToSolicitedNodeAdvertReleasesQueue) {
  TwoHosts h;
  h.a.advance(at_ms(0));
  for (uint8_t tag = 1; tag <= 3; ++tag) h.a.transmit(ipv6_packet(kA, kB, tag));
  auto out = h.sink_a.take();
  ASSERT_EQ(out.size(), 1u);
  // 33:33:ff + the low 24 bits of 2001:db8::2, from A, IPv6.
  const std::vector<uint8_t> head = {0x33, 0x33, 0xff, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd};
  EXPECT_EQ(std::vector<uint8_t>(out[0].begin(), out[0].begin() + 14), head);
  const NdMessage s = parse_frame(out[0]);
  EXPECT_EQ(s.type, kIcmp6NeighSolicit);
  EXPECT_EQ(s.src, kA);
  EXPECT_EQ(s.dst, ip6("ff02::1:ff00:2"));
  EXPECT_EQ(s.target, kB);
  EXPECT_EQ(s.lladdr, mac(1));
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kIncomplete);

  EXPECT_TRUE(h.b.input(at_ms(1), out[0]).empty());
  auto adv = h.sink_b.take();
  ASSERT_EQ(adv.size(), 1u);
  EXPECT_EQ(frame_dst(adv[0]), mac(1));
  const NdMessage na = parse_frame(adv[0]);
  EXPECT_EQ(na.type, kIcmp6NeighAdvert);
  EXPECT_EQ(na.src, kB);
  EXPECT_EQ(na.dst, kA);
  EXPECT_EQ(na.target, kB);
  EXPECT_TRUE(na.solicited);
  EXPECT_TRUE(na.override_flag);
  EXPECT_FALSE(na.router);
  EXPECT_EQ(na.lladdr, mac(2));
  ASSERT_TRUE(h.b.neighbor(kA));
  EXPECT_EQ(h.b.neighbor(kA)->state, NudState::kStale);  // §7.2.3
  EXPECT_EQ(h.b.neighbor(kA)->mac, mac(1));

  EXPECT_TRUE(h.a.input(at_ms(2), adv[0]).empty());
  auto released = h.sink_a.take();
  ASSERT_EQ(released.size(), 3u);
  for (uint8_t i = 0; i < 3; ++i) {
    EXPECT_EQ(frame_dst(released[i]), mac(2));
    EXPECT_EQ(frame_type(released[i]), kEthPIpv6);
    EXPECT_EQ(frame_payload(released[i])[45], i + 1);
  }
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kReachable);
  EXPECT_EQ(h.a.stats().nd_solicits_tx, 1u);
  EXPECT_EQ(h.b.stats().nd_adverts_tx, 1u);
  for (const auto& f : released) EXPECT_EQ(h.b.input(at_ms(3), f).size(), 60u);  // up to B's stack
}

TEST(EtherLinkNd, RetriesEverySecondAndFailsAfterThree) {
  RecordingSink sink;
  EtherLink a(TwoHosts::config(1), sink);
  a.advance(at_ms(0));
  const IpAddr nobody = ip6("2001:db8::99");
  a.transmit(ipv6_packet(kA, nobody, 1));
  for (int t = 0; t <= 2000; t += 1000) {
    a.advance(at_ms(t));
    auto f = sink.take();
    ASSERT_EQ(f.size(), 1u) << t;
    EXPECT_EQ(frame_dst(f[0]).str(), "33:33:ff:00:00:99");
    a.advance(at_ms(t + 999));
    EXPECT_TRUE(sink.take().empty());
  }
  a.advance(at_ms(3000));
  EXPECT_TRUE(sink.take().empty());
  EXPECT_EQ(a.neighbor(nobody)->state, NudState::kFailed);
  EXPECT_EQ(a.stats().queue_drops, 1u);
  EXPECT_EQ(a.stats().resolutions_failed, 1u);
}

TEST(EtherLinkNd, ProbesUnicastToTheTargetAddressInProbe) {
  TwoHosts h;
  h.a.advance(at_ms(0));
  h.a.transmit(ipv6_packet(kA, kB, 1));
  h.exchange(at_ms(0));
  const Time reach = h.a.neighbor(kB)->deadline;
  h.a.advance(reach);
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kStale);
  h.a.transmit(ipv6_packet(kA, kB, 2));
  h.sink_a.take();
  h.a.advance(reach + Duration::s(5));
  auto probe = h.sink_a.take();
  ASSERT_EQ(probe.size(), 1u);
  EXPECT_EQ(frame_dst(probe[0]), mac(2));
  const NdMessage s = parse_frame(probe[0]);
  EXPECT_EQ(s.dst, kB);  // §7.2.2: unicast to the target in PROBE
  h.b.input(reach + Duration::s(5), probe[0]);  // B answers the probe
  h.exchange(reach + Duration::s(5));
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kReachable);
}

TEST(EtherLinkNd, AnswersSolicitationsForItsAddressesOnly) {
  RecordingSink sink;
  EtherLink b(TwoHosts::config(2), sink);
  // Someone else's address, sent to that address's solicited-node group.
  const IpAddr other = ip6("2001:db8::77");
  auto f = nd_frame(ipv6_multicast_mac(solicited_node(other)), mac(1),
                    ns(kA, solicited_node(other), other, mac(1)));
  EXPECT_TRUE(b.input(at_ms(0), f).empty());
  EXPECT_TRUE(sink.frames.empty());
  EXPECT_EQ(b.stats().rx_not_for_us, 1u);  // a group B has not joined
  // The same NS delivered to B's MAC: parsed, not answered, nothing learned.
  b.input(at_ms(0), nd_frame(mac(2), mac(1), ns(kA, solicited_node(other), other, mac(1))));
  EXPECT_TRUE(sink.frames.empty());
  EXPECT_EQ(b.stats().nd_solicits_rx, 1u);
  EXPECT_FALSE(b.neighbor(kA));
  // Ours, unicast (a PROBE from A).
  b.input(at_ms(0), nd_frame(mac(2), mac(1), ns(kA, kB, kB, mac(1))));
  ASSERT_EQ(sink.frames.size(), 1u);
  const NdMessage na = parse_frame(sink.take()[0]);
  EXPECT_EQ(na.dst, kA);
  EXPECT_TRUE(na.solicited);
}

TEST(EtherLinkNd, AnswersDadProbesForItsAddressToAllNodes) {
  RecordingSink sink;
  EtherLink b(TwoHosts::config(2), sink);
  b.input(at_ms(0), nd_frame(ipv6_multicast_mac(solicited_node(kB)), mac(9),
                             ns(IpAddr::v6({}), solicited_node(kB), kB, std::nullopt)));
  ASSERT_EQ(sink.frames.size(), 1u);
  EXPECT_EQ(frame_dst(sink.frames[0]).str(), "33:33:00:00:00:01");
  const NdMessage na = parse_frame(sink.frames[0]);
  EXPECT_EQ(na.dst, ip6("ff02::1"));
  EXPECT_FALSE(na.solicited);
  EXPECT_TRUE(na.override_flag);
  EXPECT_EQ(b.neighbor_count(), 0u);
}

TEST(EtherLinkNd, ListsTheMulticastMacsADriverMustJoin) {
  RecordingSink sink;
  auto c = TwoHosts::config(2);
  c.addrs.push_back({ip6("fe80::2"), 64});  // the same solicited-node group as 2001:db8::2
  c.addrs.push_back({ip6("2001:db8::abcd:ef01"), 64});
  EtherLink b(c, sink);
  std::vector<std::string> got;
  for (const MacAddr& m : b.multicast_macs()) got.push_back(m.str());
  EXPECT_EQ(got, (std::vector<std::string>{"33:33:00:00:00:01", "33:33:ff:00:00:02", "33:33:ff:cd:ef:01"}));
  RecordingSink s4;
  EtherLink v4only(EtherLinkConfig{.mac = mac(1), .addrs = {{ip4(10, 0, 0, 1), 24}}}, s4);
  EXPECT_TRUE(v4only.multicast_macs().empty());
}

TEST(EtherLinkNd, InvalidSolicitationsAreDroppedCountedAndNotAnswered) {
  RecordingSink sink;
  EtherLink b(TwoHosts::config(2), sink);
  auto f = nd_frame(mac(2), mac(1), ns(kA, kB, kB, mac(1)));
  f[kEtherHeaderLen + 7] = 254;  // hop limit: forwarded by a router
  EXPECT_TRUE(b.input(at_ms(0), f).empty());
  f = nd_frame(mac(2), mac(1), ns(kA, kB, kB, mac(1)));
  f[kEtherHeaderLen + 42] ^= 0xff;  // checksum
  EXPECT_TRUE(b.input(at_ms(0), f).empty());
  EXPECT_TRUE(sink.frames.empty());
  EXPECT_EQ(b.stats().rx_malformed, 2u);
  EXPECT_EQ(b.stats().nd_solicits_rx, 0u);
  EXPECT_FALSE(b.neighbor(kA));
}

TEST(EtherLinkNd, AdvertisementsUpdateOnlyExistingEntriesAsSection7_2_5Says) {
  TwoHosts h;
  h.a.advance(at_ms(0));
  // Unsolicited NA for an unknown target: creates nothing.
  NdMessage na;
  na.type = kIcmp6NeighAdvert;
  na.src = na.target = ip6("2001:db8::3");
  na.dst = ip6("ff02::1");
  na.override_flag = true;
  na.lladdr = mac(3);
  h.a.input(at_ms(0), nd_frame(ipv6_multicast_mac(na.dst), mac(3), na));
  EXPECT_FALSE(h.a.neighbor(na.target));
  // Resolve B, then an NA without Override and with another MAC: REACHABLE
  // drops to STALE and the address stays.
  h.a.transmit(ipv6_packet(kA, kB, 1));
  h.exchange(at_ms(0));
  ASSERT_EQ(h.a.neighbor(kB)->state, NudState::kReachable);
  NdMessage weak;
  weak.type = kIcmp6NeighAdvert;
  weak.src = weak.target = kB;
  weak.dst = kA;
  weak.solicited = true;
  weak.lladdr = mac(0x22);
  h.a.input(at_ms(10), nd_frame(mac(1), mac(0x22), weak));
  EXPECT_EQ(h.a.neighbor(kB)->mac, mac(2));
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kStale);
  // With Override the new address is taken.
  weak.override_flag = true;
  h.a.input(at_ms(20), nd_frame(mac(1), mac(0x22), weak));
  EXPECT_EQ(h.a.neighbor(kB)->mac, mac(0x22));
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kReachable);
}

TEST(EtherLinkNd, OffLinkGoesToGatewayMulticastMapsLinkLocalIsOnLink) {
  RecordingSink sink;
  auto c = TwoHosts::config(1);
  c.gateway6 = ip6("2001:db8::fe");
  EtherLink a(c, sink);
  a.transmit(ipv6_packet(kA, ip6("2001:db8:1::5"), 1));
  ASSERT_EQ(sink.frames.size(), 1u);
  EXPECT_EQ(parse_frame(sink.take()[0]).target, ip6("2001:db8::fe"));
  a.transmit(ipv6_packet(kA, ip6("ff02::fb"), 2));
  ASSERT_EQ(sink.frames.size(), 1u);
  EXPECT_EQ(frame_dst(sink.take()[0]).str(), "33:33:00:00:00:fb");
  a.transmit(ipv6_packet(kA, ip6("fe80::2"), 3));  // no fe80::/64 configured, still on-link
  ASSERT_EQ(sink.frames.size(), 1u);
  EXPECT_EQ(parse_frame(sink.take()[0]).target, ip6("fe80::2"));
  EXPECT_EQ(a.stats().tx_no_route, 0u);
  auto c2 = TwoHosts::config(1);
  EtherLink nogw(c2, sink);
  EXPECT_EQ(nogw.try_transmit(ipv6_packet(kA, ip6("2001:db8:1::5"), 1)), XmitResult::kDropped);
  EXPECT_EQ(nogw.stats().tx_no_route, 1u);
  // An IPv6 packet to an IPv4-mapped address never reaches the wire as IPv4.
  EXPECT_EQ(nogw.try_transmit(ipv6_packet(kA, ip4(10, 0, 0, 2), 1)), XmitResult::kDropped);
  EXPECT_EQ(nogw.stats().tx_malformed, 1u);
}

TEST(EtherLinkNd, OtherIcmpv6AndPaddedFramesGoUpTrimmed) {
  RecordingSink sink;
  EtherLink b(TwoHosts::config(2), sink);
  auto ip = ipv6_packet(kA, kB, 1, 48);
  ip[6] = 58;
  ip[40] = 128;  // echo request: the stack's
  std::vector<uint8_t> f(kEtherHeaderLen);
  write_ether_header(f.data(), {mac(2), mac(1), kEthPIpv6});
  f.insert(f.end(), ip.begin(), ip.end());
  f.resize(f.size() + 6, 0);  // trailing padding
  EXPECT_EQ(b.input(at_ms(0), f).size(), 48u);
  EXPECT_EQ(b.stats().rx_ip, 1u);
}

}  // namespace
}  // namespace weir::link
