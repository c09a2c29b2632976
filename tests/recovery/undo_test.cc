// Undo decisions (Linux tcp_may_undo / tcp_packet_delayed) and seed 003:
// a non-SACK connection held at high_seq must not undo without proof.
#include <gtest/gtest.h>

#include "recovery/conn_fixture.h"
#include "tcp/recovery/undo.h"

namespace weir::tcp::recovery {
namespace {

using tcp::testing::Conn;

// Linux's tcp_packet_delayed() before the 2025 fix (the seed's fault,
// StackConfig::fault_seed003_undo_without_proof), to show the scenarios
// below really reach the state that fooled it.
bool buggy_packet_delayed(const Undo& u, UndoContext c) {
  c.fault_seed003 = true;
  return u.packet_delayed(c);
}

TEST(Undo, EchoOlderThanFirstRetransmissionProvesDelay) {
  Undo u;
  u.init(Seq32(100), 0, false);
  u.on_retransmit(1, 5000);
  u.on_retransmit(1, 5100);  // later retransmissions keep the first stamp
  EXPECT_EQ(*u.retrans_stamp(), 5000u);
  UndoContext c{true, Seq32(200), Seq32(300), 4999u};
  EXPECT_TRUE(u.packet_delayed(c));
  c.ts_ecr = 5000u;
  EXPECT_FALSE(u.packet_delayed(c));
  c.ts_ecr.reset();
  EXPECT_FALSE(u.packet_delayed(c)) << "no timestamp: no proof";
}

TEST(Undo, TimestampsCompareAcrossWrap) {
  Undo u;
  u.init(Seq32(0), 0, false);
  u.on_retransmit(1, 10u);
  EXPECT_TRUE(u.packet_delayed({true, Seq32(1), Seq32(2), 0xFFFFFFF0u}));
}

TEST(Undo, DsackOfEveryRetransmissionAllowsUndo) {
  Undo u;
  u.init(Seq32(1000), 0, false);
  EXPECT_FALSE(u.dsack_undo_possible()) << "-1: nothing retransmitted yet";
  u.on_retransmit(2, 7);
  EXPECT_EQ(u.undo_retrans(), 2);
  u.on_dsack({Seq32(1000), Seq32(2000)}, /*below_una=*/true, 0, 1000);
  EXPECT_FALSE(u.dsack_undo_possible());
  u.on_dsack({Seq32(500), Seq32(900)}, true, 0, 1000);
  EXPECT_EQ(u.undo_retrans(), 1) << "a D-SACK from before the episode does not count";
  u.on_dsack({Seq32(2000), Seq32(3000)}, false, 1, 1000);
  EXPECT_TRUE(u.dsack_undo_possible());
}

TEST(Undo, NothingRetransmittedCountsAsDelayedOnSackConnections) {
  Undo u;
  u.init(Seq32(0), 0, false);
  EXPECT_TRUE(u.packet_delayed({true, Seq32(10), Seq32(20), std::nullopt}));
}

// The fix at the unit level: retrans_stamp zeroed while held at high_seq on
// a non-SACK connection is no proof.
TEST(Undo, NonSackHeldAtHighSeqWithZeroStampIsNotDelayed) {
  Undo u;
  u.init(Seq32(0), 0, false);
  u.on_retransmit(1, 1100);
  UndoContext at_high{false, Seq32(10000), Seq32(10000), 1100u};
  EXPECT_FALSE(u.may_undo(at_high));
  EXPECT_TRUE(u.non_sack_preventing_reopen(at_high, /*any_retrans_done=*/false));
  EXPECT_FALSE(u.retrans_stamp().has_value()) << "Linux zeroes retrans_stamp here";
  UndoContext above{false, Seq32(11000), Seq32(10000), 1200u};
  EXPECT_TRUE(buggy_packet_delayed(u, above)) << "the buggy shape would undo here";
  EXPECT_FALSE(u.packet_delayed(above));
  EXPECT_FALSE(u.may_undo(above));
}

// Seed 003 end to end through the state machine: a non-SACK connection,
// one loss, fast retransmit, the ACK reaching exactly high_seq (held in
// Recovery), then an ACK above high_seq. Linux with the bug counted a
// TcpExtTCPFullUndo and restored the pre-loss cwnd; it must not.
struct HoldRun {
  uint64_t full_undos = 0;
  uint32_t cwnd = 0;
  CaState state = CaState::Open;
};

HoldRun hold_at_high_seq_then_ack_above(bool fault_seed003) {
  Conn c(/*sack=*/false, 5000, 1, fault_seed003);
  c.send(10);  // t = 0, TSval 1000; packet 1 is lost
  c.advance(Duration::ms(100));
  c.ack(0, {}, 1000u);
  c.ack(0, {}, 1000u);
  EXPECT_EQ(c.state(), CaState::Disorder);
  c.ack(0, {}, 1000u);  // third duplicate ACK
  EXPECT_EQ(c.state(), CaState::Recovery);
  EXPECT_EQ(c.count(Counter::TcpExtTCPRenoRecovery), 1u);
  EXPECT_EQ(c.retransmitted, std::vector<uint32_t>{0});
  EXPECT_EQ(c.tp().snd_ssthresh, 5u);
  const Seq32 high_seq = c.machine().high_seq();
  EXPECT_EQ(high_seq, c.seq(10000));
  c.advance(Duration::ms(100));
  // The retransmission fills the hole: ACK of everything, echoing its TSval.
  c.ack(10000, {}, 1100u);
  EXPECT_EQ(c.state(), CaState::Recovery) << "held at high_seq (RFC 6582, Linux)";
  EXPECT_EQ(c.count(Counter::TcpExtTCPFullUndo), 0u);
  EXPECT_FALSE(c.machine().undo().retrans_stamp().has_value());
  EXPECT_GT(c.machine().undo().undo_retrans(), 0);
  // New data, then an ACK above high_seq with an ordinary echo.
  c.send(2);
  c.advance(Duration::ms(100));
  const UndoContext above{false, c.seq(11000), high_seq, 1200u};
  EXPECT_TRUE(buggy_packet_delayed(c.machine().undo(), above))
      << "the scenario must reach the state the buggy shape misreads";
  c.ack(11000, {}, 1200u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPLossUndo), 0u);
  return {c.count(Counter::TcpExtTCPFullUndo), c.tp().snd_cwnd, c.state()};
}

TEST(Undo, Seed003NonSackHoldAtHighSeqDoesNotUndoWithoutProof) {
  const HoldRun r = hold_at_high_seq_then_ack_above(false);
  EXPECT_EQ(r.full_undos, 0u);
  EXPECT_EQ(r.state, CaState::Open);
  EXPECT_EQ(r.cwnd, 5u) << "cwnd stays reduced to ssthresh";
}

// The test above fails on the seed's shape: with the fault the same
// exchange counts a TcpExtTCPFullUndo and restores the pre-loss cwnd.
TEST(Undo, Seed003FaultUndoesWithoutProof) {
  const HoldRun r = hold_at_high_seq_then_ack_above(true);
  EXPECT_EQ(r.full_undos, 1u);
  EXPECT_EQ(r.cwnd, 10u);
}

// Positive control: with proof (an echo of the original transmission's
// TSval) the same exchange does undo.
TEST(Undo, NonSackEchoOfOriginalTransmissionUndoes) {
  Conn c(/*sack=*/false);
  c.send(10);
  c.advance(Duration::ms(100));
  for (int i = 0; i < 3; ++i) c.ack(0, {}, 1000u);
  ASSERT_EQ(c.state(), CaState::Recovery);
  c.advance(Duration::ms(100));
  c.ack(10000, {}, 1000u);  // the original arrived after all
  EXPECT_EQ(c.count(Counter::TcpExtTCPFullUndo), 1u);
  EXPECT_EQ(c.tp().snd_ssthresh, cc::kInfiniteSsthresh) << "prior ssthresh restored";
  EXPECT_EQ(c.state(), CaState::Recovery) << "still held at high_seq";
  c.send(2);
  c.advance(Duration::ms(100));
  c.ack(11000, {}, 1200u);
  EXPECT_EQ(c.state(), CaState::Open);
  EXPECT_EQ(c.count(Counter::TcpExtTCPFullUndo), 1u);
  EXPECT_GT(c.tp().snd_cwnd, 5u) << "not left at the reduced ssthresh";
}

TEST(Undo, SackRecoveryFullAckEchoingOriginalUndoes) {
  Conn c(/*sack=*/true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(0, {{1000, 4000}}, 1001u);
  ASSERT_EQ(c.state(), CaState::Recovery);
  ASSERT_EQ(c.retransmitted, std::vector<uint32_t>{0});
  c.advance(Duration::ms(100));
  c.ack(10000, {}, 1000u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPFullUndo), 1u);
  EXPECT_EQ(c.state(), CaState::Open);
  EXPECT_EQ(c.tp().snd_cwnd, 10u);
}

TEST(Undo, SackRecoveryFullAckEchoingRetransmissionDoesNotUndo) {
  Conn c(/*sack=*/true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(0, {{1000, 4000}}, 1001u);
  ASSERT_EQ(c.state(), CaState::Recovery);
  const uint32_t rtx_ts = c.tsval();
  c.advance(Duration::ms(100));
  c.ack(10000, {}, rtx_ts);
  EXPECT_EQ(c.count(Counter::TcpExtTCPFullUndo), 0u);
  EXPECT_EQ(c.state(), CaState::Open);
  EXPECT_EQ(c.tp().snd_cwnd, 5u);
}

TEST(Undo, DsackForTheOnlyRetransmissionUndoesRecovery) {
  Conn c(/*sack=*/true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(0, {{1000, 4000}});
  ASSERT_EQ(c.state(), CaState::Recovery);
  c.advance(Duration::ms(50));
  c.ack(10000);  // the original was only delayed...
  EXPECT_EQ(c.state(), CaState::Open);
  EXPECT_EQ(c.tp().snd_cwnd, 5u);
  c.ack(10000, {{0, 1000}});  // ...and the retransmission is reported duplicate
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKRecv), 1u);
  // Linux: the episode ended at the full ACK (undo_marker is kept until an
  // undo), so the D-SACK still undoes in Open.
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKUndo), 1u);
  EXPECT_EQ(c.tp().snd_cwnd, 10u);
}

// Linux tcp_dsack_seen(): more duplicates reported than were ever
// retransmitted is implausible (TcpExtTCPDSACKIgnoredDubious) and proves
// nothing. Here nothing was retransmitted at all.
TEST(Undo, DsackWithoutAnyRetransmissionIsDubious) {
  Conn c(/*sack=*/true);
  c.send(4);
  c.advance(Duration::ms(100));
  c.ack(2000);
  c.ack(2000, {{0, 1000}});
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKRecv), 1u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKIgnoredDubious), 1u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKRecvSegs), 0u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKIgnoredNoUndo), 0u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKUndo), 0u);
}

// A lying receiver D-SACKs two packets after one retransmission: the second
// report is dubious and must not complete an undo.
TEST(Undo, DsackOfMoreThanWasRetransmittedDoesNotUndo) {
  Conn c(/*sack=*/true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(0, {{1000, 4000}});
  ASSERT_EQ(c.state(), CaState::Recovery);
  ASSERT_EQ(c.retransmitted, (std::vector<uint32_t>{0}));
  c.ack(0, {{1000, 3000}, {1000, 4000}});  // D-SACK of two packets, one retransmitted
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKIgnoredDubious), 1u);
  EXPECT_EQ(c.state(), CaState::Recovery) << "no undo from an implausible D-SACK";
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKUndo), 0u);
}

// Linux tcp_is_sackblock_valid(): a plausible D-SACK below the current
// episode's undo_marker is about an earlier episode (TCPDSACKIgnoredOld).
TEST(Undo, DsackFromAnEarlierEpisodeIsIgnoredAsOld) {
  Conn c(/*sack=*/true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(0, {{1000, 4000}});
  ASSERT_EQ(c.state(), CaState::Recovery);
  c.advance(Duration::ms(50));
  c.ack(10000);
  ASSERT_EQ(c.state(), CaState::Open);
  // A second episode starting at 10000.
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(10000, {{11000, 14000}});
  ASSERT_EQ(c.state(), CaState::Recovery);
  c.ack(10000, {{0, 1000}, {11000, 14000}});
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKIgnoredDubious), 0u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKIgnoredOld), 1u);
  EXPECT_EQ(c.state(), CaState::Recovery) << "no undo from an old D-SACK";
}

// Linux tcp_dsack_seen(): "a spurious retransmission is delivered": a
// plausible D-SACK adds its segments to the ACK's delivered count (and to
// tcpi_dsack_dups); a dubious one adds nothing to delivered.
TEST(Undo, PlausibleDsackCountsAsDelivered) {
  Conn c(/*sack=*/true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(0, {{1000, 4000}});
  ASSERT_EQ(c.retransmitted, (std::vector<uint32_t>{0}));
  c.advance(Duration::ms(50));
  c.ack(10000);
  EXPECT_EQ(c.last_dsack_delivered, 0u);
  c.ack(10000, {{0, 1000}});
  EXPECT_EQ(c.last_dsack_delivered, 1u) << "the duplicate was delivered";
  EXPECT_EQ(c.dsack_dups, 1u);
  c.ack(10000, {{0, 1000}});  // the same duplicate again: more than retransmitted
  EXPECT_EQ(c.last_dsack_delivered, 0u);
  EXPECT_EQ(c.dsack_dups, 2u) << "Linux counts it before judging it dubious";
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKIgnoredDubious), 1u);
}

// Linux tcp_dsack_seen(): a D-SACKed range longer than the largest window
// the peer ever offered cannot be a duplicate: dubious, no undo, not counted
// in tcpi_dsack_dups.
TEST(Undo, DsackWiderThanMaxWindowIsDubious) {
  Conn c(/*sack=*/true);
  c.max_window = 3000;
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(0, {{1000, 4000}});
  ASSERT_EQ(c.state(), CaState::Recovery);
  c.advance(Duration::ms(50));
  c.ack(10000);
  c.ack(10000, {{0, 4000}});  // 4000 bytes > max_window
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKIgnoredDubious), 1u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKRecvSegs), 0u);
  EXPECT_EQ(c.dsack_dups, 0u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKUndo), 0u);
  EXPECT_EQ(c.tp().snd_cwnd, 5u) << "no undo";
}

// Linux tcp_is_sackblock_valid(): a D-SACK below snd.una that crosses the
// episode's undo_marker counts for this episode (it starts within
// max_window of its end, which tcp_dsack_seen already made sure of), unlike
// one wholly below the marker (TCPDSACKIgnoredOld).
TEST(Undo, DsackCrossingUndoMarkerIsNotOld) {
  Conn c(/*sack=*/true);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(0, {{1000, 4000}});
  c.advance(Duration::ms(50));
  c.ack(10000);
  c.send(10, Duration::ms(1));
  c.advance(Duration::ms(100));
  c.ack(10000, {{11000, 14000}});  // second episode, undo_marker 10000
  ASSERT_EQ(c.state(), CaState::Recovery);
  ASSERT_EQ(c.retransmitted, (std::vector<uint32_t>{0, 10000}));
  c.advance(Duration::ms(50));
  c.ack(20000);
  c.ack(20000, {{9000, 11000}});
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKIgnoredDubious), 0u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKIgnoredOld), 0u);
  EXPECT_EQ(c.last_dsack_delivered, 2u);
  c.ack(20000, {{0, 1000}});
  EXPECT_EQ(c.count(Counter::TcpExtTCPDSACKIgnoredDubious), 1u) << "three duplicates, two retransmissions";
}

// Seed 003 principle after an RTO (issue #6/#9): the timed-out segment's
// retransmission is ACKed on a connection without timestamps. Either copy
// may have arrived: undo_retrans is 1 and tcp_packet_delayed() is false
// (retrans_stamp set, no TSecr), and F-RTO sees no never-retransmitted data
// delivered (FLAG_ORIG_SACK_ACKED), so Linux tcp_process_loss keeps the
// reduction.
TEST(Undo, RtoRetransmissionAckedWithoutTimestampsKeepsReduction) {
  for (bool sack : {true, false}) {
    SCOPED_TRACE(sack ? "SACK" : "non-SACK");
    Conn c(sack);
    c.send(1);
    c.advance(Duration::ms(300));
    c.rto();
    ASSERT_EQ(c.tp().snd_ssthresh, 5u);
    ASSERT_EQ(c.retransmit_lost(), 1u);
    ASSERT_TRUE(c.machine().undo().retrans_stamp().has_value());
    c.advance(Duration::ms(100));
    c.ack(1000);
    EXPECT_EQ(c.tp().snd_ssthresh, 5u) << "restored without proof";
    EXPECT_EQ(c.count(Counter::TcpExtTCPLossUndo), 0u);
    EXPECT_EQ(c.count(Counter::TcpExtTCPSpuriousRTOs), 0u);
    EXPECT_EQ(c.count(Counter::TcpExtTCPFullUndo), 0u);
  }
}

// The same after a TLP probe of the segment: the probe counts in
// undo_retrans (Linux tcp_init_undo: tlp_retrans), the RTO's retransmission
// too; an ACK without TSecr proves nothing.
TEST(Undo, ProbeThenRtoAckedWithoutTimestampsKeepsReduction) {
  Conn c(/*sack=*/true);
  c.send(1);
  c.advance(Duration::ms(300));
  c.send_probe();
  c.advance(Duration::ms(300));
  c.rto();
  EXPECT_EQ(c.machine().undo().undo_retrans(), 1) << "the probe is in flight";
  ASSERT_EQ(c.retransmit_lost(), 1u);
  c.advance(Duration::ms(100));
  c.ack(1000);
  EXPECT_EQ(c.state(), CaState::Open);
  EXPECT_EQ(c.tp().snd_ssthresh, 5u);
  EXPECT_EQ(c.count(Counter::TcpExtTCPLossUndo), 0u);
}

// The control: the same ACK echoing the original's TSval is the proof
// (RFC 3522), so the RTO is undone.
TEST(Undo, RtoRetransmissionAckEchoingOriginalUndoes) {
  Conn c(/*sack=*/true);
  const uint32_t original = c.tsval();
  c.send(1);
  c.advance(Duration::ms(300));
  c.rto();
  ASSERT_EQ(c.retransmit_lost(), 1u);
  c.advance(Duration::ms(100));
  c.ack(1000, {}, original);
  EXPECT_EQ(c.count(Counter::TcpExtTCPLossUndo), 1u);
  EXPECT_GT(c.tp().snd_ssthresh, 5u);
}

}  // namespace
}  // namespace weir::tcp::recovery
