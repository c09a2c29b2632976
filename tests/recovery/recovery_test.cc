// The CA state machine (Linux tcp_fastretrans_alert) driven through a
// miniature sender: entering and leaving recovery, RACK's reordering timer,
// PRR, dupthresh fallback, NewReno partial ACKs, RTO with F-RTO, TLP, SACK
// reneging, learned reordering.
#include <gtest/gtest.h>

#include "recovery/conn_fixture.h"

namespace weir::tcp::recovery {
namespace {

using tcp::testing::Conn;

// Ten packets 1 ms apart; 100 ms later SACKs for packets 2-4 (offsets
// 1000-4000) show packet 1 missing.
void lose_first_of_ten(Conn& c) {
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(0, {{1000, 2000}});
  c.ack(0, {{1000, 4000}});
}

TEST(Recovery, SackRecoveryEntersAtDupthreshSacksWithRack) {
  Conn c(true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  auto r = c.ack(0, {{1000, 2000}});
  EXPECT_EQ(c.state(), CaState::Disorder);
  EXPECT_FALSE(r.reo_timeout.is_never()) << "RACK waits min_rtt/4 for reordering";
  EXPECT_EQ(c.sb().lost_out(), 0u);
  r = c.ack(0, {{1000, 4000}});
  EXPECT_EQ(c.state(), CaState::Recovery) << "three SACKed: reo_wnd 0, head lost";
  EXPECT_EQ(r.rexmit, Rexmit::kLost);
  EXPECT_EQ(c.count(Counter::TcpExtTCPSackRecovery), 1u);
  EXPECT_EQ(c.retransmitted, std::vector<uint32_t>{0});
  EXPECT_EQ(c.tp().snd_ssthresh, 5u);
  EXPECT_EQ(c.tp().prior_cwnd, 10u);
  EXPECT_EQ(c.machine().high_seq(), c.seq(10000));
}

TEST(Recovery, ReorderingTimerMarksLossAndEntersRecovery) {
  Conn c(true);
  c.send(10, Duration::ms(1));  // packet i sent at i ms
  c.advance(Duration::ms(100));  // now 110 ms
  auto r = c.ack(0, {{1000, 2000}});
  // RACK.rtt = 109 ms, reo_wnd = 25 ms: packet 1 waits until 134 ms, +2 ms slack.
  ASSERT_EQ(r.reo_timeout, Time::from_ns(0) + Duration::ms(136));
  EXPECT_EQ(c.state(), CaState::Disorder);
  c.advance(r.reo_timeout - c.now());
  r = c.reo_timeout();
  EXPECT_EQ(r.newly_lost, 1u);
  EXPECT_EQ(c.state(), CaState::Recovery);
  EXPECT_EQ(c.retransmitted, std::vector<uint32_t>{0});
}

// gtests fast_retransmit/fr-4pkt-fack-last-mss (4 packets, the last one
// SACKed) and sack/sack-shift-sacked-7-3-4-8-9-fack (10 packets, the 8th
// SACKed): one burst, SACK 100 ms later, min_rtt = SRTT = 100 ms. Linux
// tcp_rack_detect_loss() looks only at send time and RACK.rtt, never at
// where the SACKed packet sits, so both deadlines are RACK.rtt + min_rtt/4 -
// elapsed + TCP_TIMEOUT_MIN = 27 ms after the SACK (tcp_rack_mark_lost());
// the first script's +40 ms has no code path behind it (see team-log).
TEST(Recovery, ReorderingDeadlineIgnoresWhereTheSackedPacketSits) {
  for (uint32_t n : {4u, 10u}) {
    Conn c(true);
    c.send(n);  // one burst: every packet sent at 0
    c.advance(Duration::ms(100));
    const uint32_t sacked = n == 4 ? 3000 : 7000;
    auto r = c.ack(0, {{sacked, sacked + 1000}});
    EXPECT_EQ(c.state(), CaState::Disorder) << n;
    ASSERT_EQ(r.reo_timeout, c.now() + Duration::ms(27)) << n;
    c.advance(Duration::ms(27));
    r = c.reo_timeout();
    EXPECT_EQ(r.newly_lost, sacked / 1000) << n << ": every packet below the SACKed one";
    EXPECT_EQ(c.state(), CaState::Recovery) << n;
    EXPECT_EQ(c.retransmitted, std::vector<uint32_t>{0}) << n;
  }
}

TEST(Recovery, PrrPacesTheReductionThenSsrbCapsAtSsthresh) {
  Conn c(true);
  lose_first_of_ten(c);
  // Entry: 2 newly SACKed, pipe 6 > ssthresh 5: ceil(5*2/10) = 1 packet.
  EXPECT_EQ(c.tp().snd_cwnd, 7u);
  EXPECT_EQ(c.sb().in_flight(), 7u) << "the fast retransmission went out";
  c.ack(0, {{1000, 6000}});
  // pipe 5 = ssthresh: SSRB allows min(ssthresh - pipe, ...) = 0 more.
  EXPECT_EQ(c.tp().snd_cwnd, 5u);
  EXPECT_EQ(c.machine().prr().prr_delivered(), 4u);
  EXPECT_EQ(c.machine().prr().prr_out(), 1u);
}

TEST(Recovery, FullAckLeavesRecoveryWithCwndAtSsthresh) {
  Conn c(true);
  lose_first_of_ten(c);
  c.advance(Duration::ms(100));
  c.ack(10000);
  EXPECT_EQ(c.state(), CaState::Open);
  EXPECT_EQ(c.tp().snd_cwnd, 5u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPFullUndo), 0u);
  EXPECT_EQ(c.cc().states, (std::vector<CaState>{CaState::Disorder, CaState::Recovery, CaState::Open}));
}

TEST(Recovery, DupthreshFallbackWithoutRack) {
  Conn c(true, 5000, /*tcp_recovery=*/0);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  auto r = c.ack(0, {{1000, 2000}});
  EXPECT_TRUE(r.reo_timeout.is_never()) << "no RACK timer";
  c.ack(0, {{1000, 3000}});
  EXPECT_EQ(c.state(), CaState::Disorder);
  c.ack(0, {{1000, 4000}});
  EXPECT_EQ(c.state(), CaState::Recovery) << "RFC 6675: DupThresh SACKed segments";
  EXPECT_EQ(c.retransmitted, std::vector<uint32_t>{0});
  EXPECT_EQ(c.sb().lost_out(), 1u);
}

TEST(Recovery, ReorderingDegreeIsLearnedFromLateOriginals) {
  Conn c(true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  auto r = c.ack(0, {{5000, 6000}});
  EXPECT_EQ(r.newly_lost, 0u);
  EXPECT_EQ(c.state(), CaState::Disorder);
  c.ack(5000, {{5000, 6000}});  // packets 1-5 were only late
  // Linux tcp_check_sack_reordering(): from the lowest late packet (0) to
  // tcp_highest_sack_seq(), the END of the highest SACKed packet (6000).
  EXPECT_EQ(c.machine().reordering(), 6u);
  EXPECT_EQ(c.machine().reord_seen(), 1u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPSACKReorder), 1u);
  c.ack(10000);
  EXPECT_EQ(c.state(), CaState::Open);
  EXPECT_EQ(c.count(Counter::TcpExtTCPSackRecovery), 0u);
  EXPECT_EQ(c.tp().snd_cwnd, 10u);
}

TEST(Recovery, NewRenoPartialAckRetransmitsNextHoleAndHoldsAtHighSeq) {
  Conn c(false);
  c.send(10);
  c.advance(Duration::ms(100));
  for (int i = 0; i < 3; ++i) c.ack(0);
  ASSERT_EQ(c.state(), CaState::Recovery);
  EXPECT_EQ(c.count(Counter::TcpExtTCPRenoRecovery), 1u);
  for (int i = 0; i < 5; ++i) c.ack(0);  // packets 6-10 arrive (packet 5 lost too)
  EXPECT_EQ(c.sb().sacked_out(), 8u);
  c.advance(Duration::ms(100));
  auto r = c.ack(4000);  // RFC 6582 §3.2 step 5: a partial ACK
  EXPECT_EQ(r.rexmit, Rexmit::kLost);
  EXPECT_EQ(c.state(), CaState::Recovery);
  EXPECT_EQ(c.retransmitted, (std::vector<uint32_t>{0, 4000}));
  c.advance(Duration::ms(100));
  c.ack(10000);
  EXPECT_EQ(c.state(), CaState::Recovery) << "held until something above high_seq is ACKed";
  c.send(1);
  c.advance(Duration::ms(100));
  c.ack(11000);
  EXPECT_EQ(c.state(), CaState::Open);
  EXPECT_EQ(c.tp().snd_cwnd, 5u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPFullUndo), 0u);
}

TEST(Recovery, NonSackDuplicateAcksAreDeliveredForPrr) {
  Conn c(false);
  c.send(10);
  c.advance(Duration::ms(100));
  for (int i = 0; i < 3; ++i) c.ack(0);
  const uint32_t before = c.machine().prr().prr_delivered();
  auto r = c.ack(0);
  EXPECT_EQ(r.reno_delivered, 1u);
  EXPECT_EQ(c.machine().prr().prr_delivered(), before + 1);
}

TEST(Recovery, RtoMarksEverythingLostAndCwndRestartsAtOne) {
  Conn c(true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(300));
  c.rto();
  EXPECT_EQ(c.state(), CaState::Loss);
  EXPECT_EQ(c.sb().lost_out(), 10u);
  EXPECT_EQ(c.tp().snd_cwnd, 1u);
  EXPECT_EQ(c.tp().snd_ssthresh, 5u);
  EXPECT_TRUE(c.machine().frto().active());
  c.retransmit_lost();
  EXPECT_EQ(c.retransmitted, std::vector<uint32_t>{0});
  EXPECT_EQ(c.machine().retransmit_counter(), Counter::TcpExtTCPSlowStartRetrans);
}

TEST(Recovery, FrtoSpuriousTimeoutIsUndone) {
  Conn c(true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(300));
  c.rto();
  c.retransmit_lost();
  c.advance(Duration::ms(100));
  auto r = c.ack(1000, {}, std::nullopt, /*can_send_new=*/true);
  EXPECT_EQ(r.rexmit, Rexmit::kNew) << "RFC 5682 step 2.b: send new data";
  EXPECT_EQ(c.state(), CaState::Loss);
  c.send(2);
  c.advance(Duration::ms(10));
  c.ack(3000);  // never-retransmitted packets 2 and 3: the RTO was spurious
  EXPECT_EQ(c.state(), CaState::Open);
  EXPECT_EQ(c.count(Counter::TcpExtTCPSpuriousRTOs), 1u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPLossUndo), 1u);
  EXPECT_EQ(c.tp().snd_cwnd, 10u);
  EXPECT_EQ(c.sb().lost_out(), 0u);
}

TEST(Recovery, FrtoSackForNewDataMeansTheLossWasReal) {
  Conn c(true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(300));
  c.rto();
  c.retransmit_lost();
  c.advance(Duration::ms(100));
  c.ack(1000, {}, std::nullopt, true);
  c.send(2);
  c.advance(Duration::ms(10));
  auto r = c.ack(1000, {{10000, 11000}});  // step 3.a: a hole remains
  EXPECT_FALSE(c.machine().frto().active());
  EXPECT_EQ(r.rexmit, Rexmit::kLost);
  EXPECT_EQ(c.state(), CaState::Loss);
  EXPECT_EQ(c.count(Counter::TcpExtTCPSpuriousRTOs), 0u);
}

TEST(Recovery, TlpThatRepairsALossReducesCwndOnce) {
  Conn c(true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(9000);
  c.advance(Duration::ms(200));
  c.send_probe();
  c.send(1);
  c.advance(Duration::ms(100));
  c.ack(11000);
  EXPECT_EQ(c.count(Counter::TcpExtTCPLossProbeRecovery), 1u);
  EXPECT_EQ(c.tp().snd_ssthresh, 5u);
  EXPECT_EQ(c.tp().snd_cwnd, 5u);
  EXPECT_EQ(c.state(), CaState::Open);
  EXPECT_EQ(c.cc().states, (std::vector<CaState>{CaState::CWR, CaState::Open}));
}

TEST(Recovery, TlpDsackedProbeMeansNoLoss) {
  Conn c(true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(9000);
  c.advance(Duration::ms(200));
  c.send_probe();
  c.advance(Duration::ms(100));
  c.ack(10000, {{9000, 10000}});
  EXPECT_FALSE(c.machine().tlp().outstanding());
  EXPECT_EQ(c.count(Counter::TcpExtTCPLossProbeRecovery), 0u);
  EXPECT_EQ(c.tp().snd_cwnd, 10u);
}

TEST(Recovery, SackedHeadAfterCumulativeAckSuspectsReneging) {
  Conn c(true);
  c.send(4);
  c.advance(Duration::ms(100));
  c.ack(0, {{1000, 2000}});
  auto r = c.ack(1000, {{1000, 2000}});
  EXPECT_EQ(r.reneging_rto, c.now() + Duration::ms(50)) << "max(SRTT/2, 10 ms)";
  c.advance(Duration::ms(50));
  c.rto();
  EXPECT_EQ(c.count(Counter::TcpExtTCPSACKReneging), 1u);
  EXPECT_EQ(c.sb().sacked_out(), 0u);
  EXPECT_EQ(c.sb().lost_out(), 3u);
  EXPECT_TRUE(c.machine().is_sack_reneg());
}

// RFC 3042 limited transmit falls out of Linux's accounting: each duplicate
// ACK counts a packet as delivered, so the flight shrinks and one new packet
// may go out within an unchanged cwnd.
TEST(Recovery, LimitedTransmitLetsOneNewPacketOutPerDuplicateAck) {
  for (bool sack : {false, true}) {
    Conn c(sack);
    c.send(10);
    c.advance(Duration::ms(100));
    EXPECT_EQ(c.sb().in_flight(), c.tp().snd_cwnd);
    if (sack) c.ack(0, {{1000, 2000}}); else c.ack(0);
    EXPECT_EQ(c.state(), CaState::Disorder);
    EXPECT_EQ(c.tp().snd_cwnd, 10u) << "cwnd unchanged (RFC 3042 §2)";
    EXPECT_EQ(c.sb().in_flight(), 9u) << "room for one new packet";
    c.send(1);
    if (sack) c.ack(0, {{1000, 3000}}); else c.ack(0);
    EXPECT_EQ(c.sb().in_flight(), 9u);
    EXPECT_EQ(c.state(), CaState::Disorder);
  }
}

// Linux tcp_try_undo_partial(): a partial ACK whose echo predates the first
// retransmission shows the hole was filled by the delayed original.
TEST(Recovery, PartialAckEchoingOriginalUndoesWhenNoRetransmissionIsOut) {
  Conn c(true);
  c.send(10, Duration::ms(1));  // TSvals 1000..1009
  c.advance(Duration::ms(100));
  c.ack(0, {{1000, 4000}}, 1001u);
  ASSERT_EQ(c.state(), CaState::Recovery);
  ASSERT_EQ(c.sb().retrans_out(), 1u);
  c.advance(Duration::ms(10));
  c.ack(4000, {}, 1000u);  // the original packet 1 arrived late
  EXPECT_EQ(c.count(Counter::TcpExtTCPPartialUndo), 1u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPTSReorder), 1u);
  EXPECT_NE(c.state(), CaState::Recovery);
  EXPECT_EQ(c.tp().snd_ssthresh, cc::kInfiniteSsthresh);
  EXPECT_EQ(c.tp().snd_cwnd, 10u);
}

TEST(Recovery, LossProbeTimeoutFollowsState) {
  Conn c(true);
  c.send(5);
  EXPECT_EQ(c.machine().loss_probe_timeout(5, Duration::ms(20), Duration::ms(200), Duration::ms(300)),
            Duration::ms(42));
  c.advance(Duration::ms(300));
  c.rto();
  EXPECT_FALSE(c.machine().loss_probe_timeout(5, Duration::ms(20), Duration::ms(200), Duration::ms(300)));
}

}  // namespace
}  // namespace weir::tcp::recovery
