// Seed 002: SACK accounting must be exact. Each case here is one of the
// ways gVisor's netstack got it wrong; each runs with and without sequence
// wrap, and the invariant checker runs after every operation.
#include <gtest/gtest.h>

#include "recovery/scoreboard_fixture.h"

namespace weir::tcp {
namespace {

using testing::SbHarness;

class Seed002 : public ::testing::TestWithParam<uint32_t> {};
INSTANTIATE_TEST_SUITE_P(Bases, Seed002, ::testing::ValuesIn(testing::kBases));

// Eight full segments, SACK of the third, cumulative ACK of 100 bytes, SACK
// of the sixth to eighth, full ACK: Linux's tcpi_sacked reads 1, 1, 4, 0
// (gVisor read 0, 0, 0, -3).
TEST_P(Seed002, TcpiSackedReadsOneOneFourZeroAsLinux) {
  SbHarness h(GetParam());
  h.send(0, 8000, 1000);
  EXPECT_EQ(h.sb().packets_out(), 8u);
  h.ack(0, {{2000, 3000}});
  EXPECT_EQ(h.sb().sacked_out(), 1u);
  h.ack(100, {{2000, 3000}});
  EXPECT_EQ(h.sb().sacked_out(), 1u);
  EXPECT_EQ(h.sb().packets_out(), 8u) << "a partly acknowledged packet is still out";
  h.ack(100, {{5000, 8000}, {2000, 3000}});
  EXPECT_EQ(h.sb().sacked_out(), 4u);
  EXPECT_EQ(h.sb().in_flight(), 4u);
  h.ack(8000);
  EXPECT_EQ(h.sb().sacked_out(), 0u);
  EXPECT_EQ(h.sb().packets_out(), 0u);
  EXPECT_EQ(h.sb().in_flight(), 0u);
}

// gVisor #14092: a packet SACKed outside recovery and then cumulatively
// ACKed leaked into Outstanding. Here in-flight must come back exactly.
TEST_P(Seed002, SackedOutsideRecoveryThenCumAckedLeavesNothingInFlight) {
  SbHarness h(GetParam());
  h.send(0, 4000, 1000);
  h.ack(0, {{2000, 3000}});  // benign reordering, no loss marked
  EXPECT_EQ(h.sb().in_flight(), 3u);
  auto r = h.ack(3000);
  EXPECT_EQ(r.acked_packets, 3u);
  EXPECT_EQ(r.delivered_packets, 2u) << "the SACKed packet was delivered already";
  EXPECT_EQ(h.sb().in_flight(), 1u);
  EXPECT_EQ(h.sb().sacked_out(), 0u);
  h.ack(4000);
  EXPECT_EQ(h.sb().in_flight(), 0u);
}

// The test above fails on the seed's shape: the fault (StackConfig::
// fault_seed002_sacked_acked_leak) leaks what AckResult reports as
// SACKed-then-ACKed, and in-flight keeps the packet.
TEST_P(Seed002, TheFaultsPhantomStaysInFlight) {
  SbHarness h(GetParam());
  h.send(0, 4000, 1000);
  h.ack(0, {{2000, 3000}});
  auto r = h.ack(3000);
  EXPECT_EQ(r.acked_sacked_packets, 1u);
  h.sb().leak_phantoms(r.acked_sacked_packets);
  EXPECT_EQ(h.sb().in_flight(), 2u) << "one real packet and the phantom";
  EXPECT_EQ(h.sb().counts().in_flight(), 1u) << "the counts themselves stay exact";
  h.sb().clear_phantoms();
  EXPECT_EQ(h.sb().in_flight(), 1u);
}

// The phantom accumulates over a long reordering-but-lossless transfer; after
// a thousand rounds in-flight must equal what is really outstanding.
TEST_P(Seed002, ReorderingOverManyRoundsAccumulatesNoPhantoms) {
  SbHarness h(GetParam());
  uint32_t next = 0;
  for (int round = 0; round < 1000; ++round) {
    h.send(next, next + 4000, 1000);
    h.ack(next, {{next + 1000, next + 3000}});
    h.ack(next + 3000);
    next += 4000;
    ASSERT_EQ(h.sb().in_flight(), 1u);
    h.ack(next);
    ASSERT_EQ(h.sb().in_flight(), 0u);
  }
}

// After an RTO the scoreboard is cleared (SACK reneging). SACKs that then
// arrive for data sent before the timeout must move a packet from lost to
// SACKed once, never subtract it from the flight a second time.
TEST_P(Seed002, SackAfterRtoClearIsNotSubtractedTwice) {
  SbHarness h(GetParam());
  h.send(0, 10000, 1000);
  h.ack(0, {{4000, 6000}});
  EXPECT_EQ(h.sb().sacked_out(), 2u);
  h.rto(/*reneged=*/true);
  EXPECT_EQ(h.sb().sacked_out(), 0u);
  EXPECT_EQ(h.sb().lost_out(), 10u);
  EXPECT_EQ(h.sb().in_flight(), 0u);
  h.retransmit(0, 1000, 1000);
  EXPECT_EQ(h.sb().in_flight(), 1u);
  h.ack(0, {{4000, 6000}});  // the peer repeats its pre-timeout SACK
  EXPECT_EQ(h.sb().sacked_out(), 2u);
  EXPECT_EQ(h.sb().lost_out(), 8u);
  EXPECT_EQ(h.sb().in_flight(), 1u) << "only the retransmission is in flight";
  h.ack(0, {{4000, 6000}});  // and again: nothing changes
  EXPECT_EQ(h.sb().sacked_out(), 2u);
  EXPECT_EQ(h.sb().in_flight(), 1u);
  h.ack(1000, {{4000, 6000}});
  EXPECT_EQ(h.sb().in_flight(), 0u);
  EXPECT_EQ(h.sb().packets_out(), 9u);
  h.ack(10000);
  EXPECT_EQ(h.sb().in_flight(), 0u);
  EXPECT_EQ(h.sb().packets_out(), 0u);
}

// Without reneging the SACK marks survive the RTO; a repeated SACK then
// changes nothing.
TEST_P(Seed002, SackAfterRtoWithoutRenegingKeepsMarksAndCountsOnce) {
  SbHarness h(GetParam());
  h.send(0, 6000, 1000);
  h.ack(0, {{3000, 5000}});
  h.rto(/*reneged=*/false);
  EXPECT_EQ(h.sb().sacked_out(), 2u);
  EXPECT_EQ(h.sb().lost_out(), 4u);
  auto r = h.ack(0, {{3000, 5000}});
  EXPECT_EQ(r.sacked_packets, 0u);
  EXPECT_EQ(h.sb().sacked_out(), 2u);
  EXPECT_EQ(h.sb().in_flight(), 0u);
}

// Linux, after a path MTU reduction, still counted a packet once while the
// hole before it was retransmitted in smaller pieces.
TEST_P(Seed002, MtuDropResegmentationCountsSackedPacketOnce) {
  SbHarness h(GetParam());
  h.send(0, 4000, 1000);
  h.ack(0, {{2000, 3000}});
  EXPECT_EQ(h.sb().sacked_out(), 1u);
  h.mark_lost(0);
  h.mark_lost(1000);
  EXPECT_EQ(h.sb().lost_out(), 2u);
  // MSS falls to 500: the two-packet hole goes out again as four packets.
  EXPECT_EQ(h.retransmit(0, 500, 500), 1u);
  EXPECT_EQ(h.retransmit(500, 1000, 500), 1u);
  EXPECT_EQ(h.retransmit(1000, 1500, 500), 1u);
  EXPECT_EQ(h.retransmit(1500, 2000, 500), 1u);
  EXPECT_EQ(h.sb().packets_out(), 6u);
  EXPECT_EQ(h.sb().sacked_out(), 1u);
  EXPECT_EQ(h.sb().retrans_out(), 4u);
  EXPECT_EQ(h.sb().lost_out(), 4u);
  EXPECT_EQ(h.sb().in_flight(), 5u);
  // The peer SACKs the small pieces together with the old packet.
  auto r = h.ack(0, {{1000, 3000}});
  EXPECT_EQ(r.sacked_packets, 2u);
  EXPECT_EQ(h.sb().sacked_out(), 3u) << "old packet once, plus two small pieces";
  EXPECT_EQ(h.sb().in_flight(), 3u);
  h.ack(0, {{500, 3000}});
  EXPECT_EQ(h.sb().sacked_out(), 4u);
  h.ack(3000);
  EXPECT_EQ(h.sb().sacked_out(), 0u);
  EXPECT_EQ(h.sb().packets_out(), 1u);
  EXPECT_EQ(h.sb().in_flight(), 1u);
}

// A SACK covering only part of a packet credits nothing and is not
// remembered (Linux tcp_match_skb_to_sack() tags whole packets only): when
// that packet is re-sent in smaller pieces, the piece the peer holds is
// credited when a block covers it, once.
TEST_P(Seed002, PartialSackCreditsNothingUntilResegmentedPieceIsCovered) {
  SbHarness h(GetParam());
  h.send(0, 3000, 1000);
  h.ack(0, {{1500, 2000}});
  EXPECT_EQ(h.sb().sacked_out(), 0u);
  EXPECT_EQ(h.sb().sack_ranges(), 0u) << "no sub-packet SACK state";
  h.retransmit(1000, 1500, 500);
  EXPECT_EQ(h.sb().packets_out(), 4u);
  EXPECT_EQ(h.sb().sacked_out(), 0u);
  auto r = h.ack(0, {{1500, 2000}});
  EXPECT_EQ(r.sacked_packets, 1u) << "[1500,2000) is now a whole packet";
  r = h.ack(0, {{1000, 2000}});
  EXPECT_EQ(r.sacked_packets, 1u);
  EXPECT_EQ(h.sb().sacked_out(), 2u);
}

TEST_P(Seed002, DuplicateAndOverlappingBlocksCountOnce) {
  SbHarness h(GetParam());
  h.send(0, 10000, 1000);
  auto r = h.ack(0, {{3000, 5000}, {3000, 5000}, {4000, 6000}});
  EXPECT_EQ(r.sacked_packets, 3u);
  EXPECT_EQ(h.sb().sacked_out(), 3u);
  r = h.ack(0, {{2000, 7000}, {3000, 6000}});
  EXPECT_EQ(r.sacked_packets, 2u);
  EXPECT_EQ(h.sb().sacked_out(), 5u);
  r = h.ack(0, {{2000, 7000}});
  EXPECT_EQ(r.sacked_packets, 0u);
  EXPECT_EQ(r.sacked_bytes, 0u);
  EXPECT_EQ(h.sb().sacked_out(), 5u);
  // Adjacent blocks that only together cover a packet credit nothing
  // (Linux matches each block to whole packets on its own).
  r = h.ack(0, {{8000, 8400}, {8400, 9000}});
  EXPECT_EQ(r.sacked_packets, 0u);
  r = h.ack(0, {{8000, 9000}});
  EXPECT_EQ(r.sacked_packets, 1u);
  EXPECT_EQ(h.sb().sacked_out(), 6u);
  EXPECT_EQ(h.sb().in_flight(), 4u);
}

TEST(Scoreboard, BlocksAcrossSequenceWrapCountOnce) {
  SbHarness h(0xFFFFFC18u);  // 1000 bytes before the wrap
  h.send(0, 5000, 1000);
  EXPECT_LT(h.seq(2000).raw(), h.seq(0).raw()) << "the flight straddles the wrap";
  auto r = h.ack(0, {{500, 3000}});
  EXPECT_EQ(r.sacked_packets, 2u);
  r = h.ack(0, {{1000, 3000}, {500, 2500}});
  EXPECT_EQ(r.sacked_packets, 0u);
  EXPECT_EQ(h.sb().sacked_out(), 2u);
  EXPECT_EQ(*r.highest_sacked_end, h.seq(3000));
  h.ack(4000);
  EXPECT_EQ(h.sb().packets_out(), 1u);
  EXPECT_EQ(h.sb().sacked_out(), 0u);
}

}  // namespace
}  // namespace weir::tcp
