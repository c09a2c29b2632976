// A failed neighbour resolution answers each queued packet with an ICMP
// unreachable to this host's own stack (Linux arp_error_report,
// ndisc_error_report), so a connect() to an absent on-link host fails with
// EHOSTUNREACH once the solicitations run out (3 s), as on Linux.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include "link/ether_stacks.h"
#include "wire/packet.h"  // kProtoIcmp

namespace weir::link {
namespace {

using namespace weir::link::test;

int so_error(Stack& s, SocketId id) {
  int v = -1;
  size_t len = sizeof v;
  EXPECT_EQ(s.getsockopt(id, SOL_SOCKET, SO_ERROR, std::span(reinterpret_cast<uint8_t*>(&v), sizeof v), &len),
            Errc::kOk);
  return v;
}

class EtherUnreachFamily : public ::testing::TestWithParam<bool> {};

TEST_P(EtherUnreachFamily, ConnectToAnAbsentNeighbourFailsWithHostUnreachableAfterThreeSeconds) {
  EtherStacks e;
  const IpAddr nobody = GetParam() ? ip6("2001:db8::9") : ip4(10, 0, 0, 9);
  const SocketId c = *e.sa.socket(GetParam());
  const Time start = e.now;
  EXPECT_EQ(e.sa.connect(e.now, c, Endpoint{nobody, 80}), Errc::kInProgress);
  e.settle();
  e.run_to(start + Duration::s(3) - Duration::ms(1));
  EXPECT_EQ(so_error(e.sa, c), 0) << "still resolving";
  EXPECT_EQ(e.h.a.stats().unreach_reported, 0u);
  e.run_to(start + Duration::s(3));
  EXPECT_EQ(e.h.a.neighbor(nobody)->state, NudState::kFailed);
  // The SYN and its retransmission at 1 s were queued: two errors, the
  // first of which ends the connection (Linux tcp_v4_err in SYN-SENT).
  EXPECT_EQ(e.h.a.stats().unreach_reported, 2u);
  EXPECT_EQ(so_error(e.sa, c), static_cast<int>(Errc::kHostUnreach));
  EXPECT_TRUE(e.h.a.take_local().empty()) << "handed over";
}

INSTANTIATE_TEST_SUITE_P(Families, EtherUnreachFamily, ::testing::Values(false, true),
                         [](const auto& i) { return i.param ? "IPv6" : "IPv4"; });

TEST(EtherUnreach, TheReportsAreBoundedAndCounted) {
  TwoHosts h;
  h.a.advance(at_ms(0));
  // 200 small packets wait for an absent neighbour (the 212,992-byte queue
  // holds them all); its failure reports at most kMaxLocal.
  for (int i = 0; i < 200; ++i) h.a.transmit(ipv4_packet(ip4(10, 0, 0, 1), ip4(10, 0, 0, 9), 0));
  for (int s = 1; s <= 3; ++s) h.a.advance(at_ms(1000 * s));
  EXPECT_EQ(h.a.stats().unreach_reported, EtherLink::kMaxLocal);
  EXPECT_EQ(h.a.stats().unreach_dropped, 200 - EtherLink::kMaxLocal);
  const auto local = h.a.take_local();
  ASSERT_EQ(local.size(), EtherLink::kMaxLocal);
  EXPECT_EQ(local[0][9], wire::kProtoIcmp);
  EXPECT_EQ(local[0][20], 3);
  EXPECT_EQ(local[0][21], 1);
}

}  // namespace
}  // namespace weir::link
