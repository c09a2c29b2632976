// Duplicate Address Detection (RFC 4862 §5.4) on an EtherLink: the probe,
// success after RetransTimer, failure by an advertisement or by another
// node's simultaneous probe, and a tentative address neither used as a
// source nor answered for.
#include <gtest/gtest.h>

#include "link/ether_harness.h"
#include "link/ether_link.h"
#include "link/mld.h"
#include "link/ndisc.h"

namespace weir::link {
namespace {

using namespace weir::link::test;

const IpAddr kA = ip6("2001:db8::1"), kB = ip6("2001:db8::2");
const IpAddr kAny = ip6("::");

EtherLinkConfig dad_config(bool mld = false) {
  EtherLinkConfig c;
  c.mac = mac(1);
  c.addrs = {{ip4(10, 0, 0, 1), 24}, {kA, 64}};
  c.dad_transmits = 1;  // Linux's default
  c.mld = mld;
  return c;
}

NdMessage nd(uint8_t type, const IpAddr& src, const IpAddr& dst, const IpAddr& target) {
  return nd_message(type, src, dst, target);
}

// The probe A sends at start, checked field by field.
void expect_probe(const std::vector<uint8_t>& f) {
  EXPECT_EQ(frame_dst(f), ipv6_multicast_mac(solicited_node(kA)));
  auto p = parse_nd(frame_payload(f));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->type, kIcmp6NeighSolicit);
  EXPECT_EQ(p->src, kAny);                       // §5.4.2
  EXPECT_EQ(p->dst, ip6("ff02::1:ff00:1"));
  EXPECT_EQ(p->target, kA);
  EXPECT_FALSE(p->lladdr);                       // RFC 4861 §7.1.1: none from ::
}

TEST(Dad, ProbeThenPreferredAfterRetransTimer) {
  RecordingSink sink;
  EtherLink a(dad_config(), sink);
  EXPECT_EQ(a.address_state(kA), AddrState::kTentative);
  EXPECT_TRUE(a.dad_pending());
  a.advance(at_ms(0));
  auto out = sink.take();
  ASSERT_EQ(out.size(), 1u);
  expect_probe(out[0]);
  EXPECT_EQ(a.stats().dad_probes_tx, 1u);
  EXPECT_EQ(a.next_deadline(), at_ms(1000));
  a.advance(at_ms(999));
  EXPECT_EQ(a.address_state(kA), AddrState::kTentative);
  a.advance(at_ms(1000));
  EXPECT_EQ(a.address_state(kA), AddrState::kPreferred);
  EXPECT_FALSE(a.dad_pending());
  EXPECT_TRUE(a.duplicates().empty());
  EXPECT_TRUE(sink.take().empty());  // one probe only (dad_transmits 1)
  EXPECT_EQ(a.next_deadline(), Time::never());
}

TEST(Dad, AdvertisementMarksDuplicate) {
  RecordingSink sink;
  EtherLink a(dad_config(), sink);
  a.advance(at_ms(0));
  sink.take();
  // §5.4.4: the holder answers the probe to all-nodes.
  NdMessage na = nd(kIcmp6NeighAdvert, kA, ip6("ff02::1"), kA);
  na.override_flag = true;
  na.lladdr = mac(7);
  EXPECT_TRUE(a.input(at_ms(10), nd_frame(ipv6_multicast_mac(na.dst), mac(7), na)).empty());
  EXPECT_EQ(a.address_state(kA), AddrState::kDuplicate);
  EXPECT_EQ(a.stats().dad_duplicates, 1u);
  EXPECT_EQ(a.duplicates(), std::vector<IpAddr>{kA});
  a.advance(at_ms(5000));
  EXPECT_EQ(a.address_state(kA), AddrState::kDuplicate);  // for good (§5.4.5)
  EXPECT_FALSE(a.dad_pending());
}

TEST(Dad, SimultaneousProbeMarksDuplicate) {
  RecordingSink sink;
  EtherLink a(dad_config(), sink);
  a.advance(at_ms(0));
  sink.take();
  // §5.4.3: another node probing for the same address.
  const NdMessage ns = nd(kIcmp6NeighSolicit, kAny, solicited_node(kA), kA);
  EXPECT_TRUE(a.input(at_ms(10), nd_frame(ipv6_multicast_mac(ns.dst), mac(7), ns)).empty());
  EXPECT_EQ(a.address_state(kA), AddrState::kDuplicate);
  EXPECT_TRUE(sink.take().empty());  // and not answered
}

TEST(Dad, TentativeNotAnsweredNotSourceNotDestination) {
  RecordingSink sink;
  EtherLink a(dad_config(), sink);
  a.advance(at_ms(0));
  sink.take();
  // §5.4.3: a solicitation from a unicast source for a tentative target
  // is silently discarded, and it does not make the address duplicate.
  NdMessage ns = nd(kIcmp6NeighSolicit, kB, solicited_node(kA), kA);
  ns.lladdr = mac(2);
  a.input(at_ms(10), nd_frame(ipv6_multicast_mac(ns.dst), mac(2), ns));
  EXPECT_TRUE(sink.take().empty());
  EXPECT_EQ(a.address_state(kA), AddrState::kTentative);
  // Not a source: the packet is dropped, no resolution starts.
  EXPECT_EQ(a.try_transmit(ipv6_packet(kA, kB, 1)), XmitResult::kDropped);
  EXPECT_EQ(a.stats().tx_tentative_src, 1u);
  EXPECT_TRUE(sink.take().empty());
  EXPECT_EQ(a.neighbor(kB), nullptr);
  // Not a destination: a datagram to it does not reach the stack.
  std::vector<uint8_t> in(kEtherHeaderLen);
  write_ether_header(in.data(), {mac(1), mac(2), kEthPIpv6});
  const auto pkt = ipv6_packet(kB, kA, 1);
  in.insert(in.end(), pkt.begin(), pkt.end());
  EXPECT_TRUE(a.input(at_ms(20), in).empty());
  EXPECT_EQ(a.stats().rx_tentative_dst, 1u);
  // Once preferred, all three work.
  a.advance(at_ms(1000));
  EXPECT_FALSE(a.input(at_ms(1001), in).empty());
  a.input(at_ms(1001), nd_frame(ipv6_multicast_mac(ns.dst), mac(2), ns));
  auto out = sink.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(parse_nd(frame_payload(out[0]))->type, kIcmp6NeighAdvert);
  EXPECT_EQ(a.try_transmit(ipv6_packet(kA, kB, 1)), XmitResult::kSent);
}

// End to end: B holds kA already (no DAD), A is given kA too: B's
// all-nodes advertisement answers A's probe and A refuses the address.
TEST(Dad, TwoLinksSecondHolderRefusesAddress) {
  auto ca = dad_config();
  auto cb = TwoHosts::config(2);
  cb.addrs = {{kA, 64}};
  TwoHosts h(ca, cb);
  h.a.advance(at_ms(0));
  h.exchange(at_ms(0));
  EXPECT_EQ(h.a.address_state(kA), AddrState::kDuplicate);
  EXPECT_EQ(h.b.address_state(kA), AddrState::kPreferred);
  EXPECT_EQ(h.b.stats().nd_adverts_tx, 1u);
}

// With MLD on: the solicited-node group's report (from ::) precedes the
// probe (§5.4.2), and DAD completing announces the group again (Linux
// ipv6_mc_dad_complete).
TEST(Dad, ReportBeforeProbeAndAgainAfterDad) {
  RecordingSink sink;
  EtherLink a(dad_config(true), sink);
  a.advance(at_ms(0));
  auto out = sink.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(frame_dst(out[0]), (MacAddr{{0x33, 0x33, 0, 0, 0, 0x16}}));
  expect_probe(out[1]);
  const Time second = a.next_deadline();  // the join's second report, within the interval
  ASSERT_LT(second, at_ms(1000));
  a.advance(second);
  EXPECT_EQ(sink.take().size(), 1u);
  a.advance(at_ms(1000));
  out = sink.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(frame_dst(out[0]), (MacAddr{{0x33, 0x33, 0, 0, 0, 0x16}}));
  EXPECT_EQ(a.stats().mld_v2_reports_tx, 3u);
}

}  // namespace
}  // namespace weir::link
