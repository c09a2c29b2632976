// Upper-layer reachability confirmation (RFC 4861 §7.3.1, Linux
// neigh_confirm): the neighbour table's side, and two weir stacks over
// Ethernet where the TCP sender's ACKs keep its next hop REACHABLE while
// the pure receiver, which sees no forward progress, probes as Linux does.
#include <gtest/gtest.h>

#include <vector>

#include "link/ether_stacks.h"

namespace weir::link {
namespace {

using namespace weir::link::test;

const IpAddr kA = ip4(10, 0, 0, 1), kB = ip4(10, 0, 0, 2);

TEST(EtherLinkConfirm, AConfirmedEntryStaysReachablePastItsReachableTime) {
  TwoHosts h;
  const Time reach = resolve_v4(h);
  const Time mid = reach - Duration::s(5);
  h.a.advance(mid);
  h.a.confirm_neighbor(kB);
  h.a.advance(reach);
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kReachable);
  EXPECT_EQ(h.a.neighbor(kB)->confirmed, mid);
  EXPECT_EQ(h.a.neighbor(kB)->deadline, mid + (reach - at_ms(0)));
  EXPECT_TRUE(h.sink_a.take().empty()) << "no probe";
}

TEST(EtherLinkConfirm, AConfirmationDuringDelayReturnsToReachableWithoutProbing) {
  TwoHosts h;
  const Time reach = resolve_v4(h);
  h.a.advance(reach);  // STALE
  const Time use = reach + Duration::s(1);
  h.a.advance(use);
  h.a.transmit(ipv4_packet(kA, kB, 2));  // DELAY
  h.sink_a.take();
  ASSERT_EQ(h.a.neighbor(kB)->state, NudState::kDelay);
  h.a.advance(use + Duration::s(2));
  h.a.confirm_neighbor(kB);
  h.a.advance(use + Duration::s(5));
  EXPECT_EQ(h.a.neighbor(kB)->state, NudState::kReachable);
  EXPECT_TRUE(h.sink_a.take().empty()) << "no unicast probe";
}

TEST(EtherLinkConfirm, UnknownOrOffLinkDestinationsCreateNothing) {
  TwoHosts h;
  h.a.advance(at_ms(0));
  h.a.confirm_neighbor(kB);
  h.a.confirm_neighbor(ip4(192, 0, 2, 9));  // no gateway: no next hop
  EXPECT_EQ(h.a.neighbor_count(), 0u);
  EXPECT_TRUE(h.sink_a.take().empty());
}

uint64_t unicast_probes(const EtherStats& s) { return s.arp_requests_tx + s.nd_solicits_tx; }

// A sends a record every 100 ms for 100 s; B reads them.
class EtherConfirmFamily : public ::testing::TestWithParam<bool> {};

TEST_P(EtherConfirmFamily, TheSendersAcksKeepItsNextHopReachableTheReceiverProbes) {
  const bool v6 = GetParam();
  EtherStacks e;
  const IpAddr b_addr = v6 ? ip6("2001:db8::2") : kB;
  const IpAddr a_addr = v6 ? ip6("2001:db8::1") : kA;
  const SocketId l = *e.sb.socket(v6);
  ASSERT_EQ(e.sb.bind(l, Endpoint{b_addr, 80}), Errc::kOk);
  ASSERT_EQ(e.sb.listen(e.now, l, 4), Errc::kOk);
  const SocketId c = *e.sa.socket(v6);
  e.sa.connect(e.now, c, Endpoint{b_addr, 80});
  e.settle();
  const auto srv = e.sb.accept(e.now, l, nullptr);
  ASSERT_TRUE(srv);
  const std::vector<uint8_t> record(4000, 7);
  std::vector<uint8_t> sink(65536);
  uint64_t got = 0;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(*e.sa.send(e.now, c, record), record.size());
    e.run_to(e.now + Duration::ms(100));
    while (auto n = e.sb.recv(e.now, *srv, sink)) {
      if (*n == 0) break;
      got += *n;
    }
  }
  EXPECT_EQ(got, 1000u * record.size());
  // A: one broadcast/multicast solicitation to resolve B, then never again.
  EXPECT_EQ(unicast_probes(e.h.a.stats()), 1u);
  EXPECT_EQ(e.h.a.neighbor(b_addr)->state, NudState::kReachable);
  // B learnt A from A's solicitation and only ever sends ACKs: nothing of
  // B's is acknowledged, so nothing confirms A, and B probes A about every
  // reachable time (15-45 s): Linux's asymmetry, kept.
  EXPECT_GE(unicast_probes(e.h.b.stats()), 2u);
  EXPECT_TRUE(nud_valid(e.h.b.neighbor(a_addr)->state));
}

INSTANTIATE_TEST_SUITE_P(Families, EtherConfirmFamily, ::testing::Values(false, true),
                         [](const auto& i) { return i.param ? "IPv6" : "IPv4"; });

}  // namespace
}  // namespace weir::link
