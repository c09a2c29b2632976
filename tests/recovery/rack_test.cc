// RACK (RFC 8985 §6) and TLP (§7) against a real scoreboard on a manual
// clock.
#include <gtest/gtest.h>

#include "recovery/scoreboard_fixture.h"
#include "tcp/recovery/rack.h"
#include "tcp/recovery/tlp.h"

namespace weir::tcp::recovery {
namespace {

using tcp::testing::SbHarness;

constexpr Duration kMinRtt = Duration::ms(40);
constexpr Duration kRto = Duration::ms(300);

class RackTest : public ::testing::TestWithParam<uint32_t> {};
INSTANTIATE_TEST_SUITE_P(Bases, RackTest, ::testing::ValuesIn(tcp::testing::kBases));

// Sends three packets 1 ms apart, then an ACK 48 ms after the third SACKs it.
struct ThreePackets {
  explicit ThreePackets(uint32_t base) : h(base) {
    for (uint32_t i = 0; i < 3; ++i) {
      h.send(i * 1000, (i + 1) * 1000, 1000);
      h.advance(Duration::ms(1));
    }
    h.advance(Duration::ms(47));
    AckResult r = h.ack(0, {{2000, 3000}});
    rack.advance(*r.latest_delivered, h.now(), kMinRtt);
  }
  SbHarness h;
  Rack rack;
};

TEST_P(RackTest, PacketsSentBeforeDeliveredOneAreLostAfterRttPlusWindow) {
  ThreePackets t(GetParam());
  EXPECT_EQ(t.rack.rtt(), Duration::ms(48));
  EXPECT_EQ(t.rack.end_seq(), t.h.seq(3000));
  auto r = t.rack.detect_loss(t.h.sb(), t.h.now(), Duration::zero(), kRto);
  t.h.check();
  EXPECT_EQ(r.newly_lost, 2u);
  EXPECT_EQ(t.h.sb().lost_out(), 2u);
  EXPECT_TRUE(r.reo_timeout.is_never());
}

TEST_P(RackTest, ReorderingWindowDefersLossAndReturnsDeadline) {
  ThreePackets t(GetParam());
  // Packet 1 was sent 50 ms ago, packet 2 49 ms ago; RACK.rtt is 48 ms.
  auto r = t.rack.detect_loss(t.h.sb(), t.h.now(), Duration::ms(10), kRto);
  EXPECT_EQ(r.newly_lost, 0u);
  EXPECT_EQ(r.reo_timeout, t.h.now() + Duration::ms(9) + kTimeoutMin);
  t.h.advance(Duration::ms(8));
  r = t.rack.detect_loss(t.h.sb(), t.h.now(), Duration::ms(10), kRto);
  EXPECT_EQ(r.newly_lost, 1u) << "packet 1 waited 58 ms = RACK.rtt + reo_wnd";
  EXPECT_EQ(r.reo_timeout, t.h.now() + Duration::ms(1) + kTimeoutMin);
  t.h.check();
}

TEST_P(RackTest, ReorderingTimeoutIsCappedByRto) {
  ThreePackets t(GetParam());
  auto r = t.rack.detect_loss(t.h.sb(), t.h.now(), Duration::s(5), kRto);
  EXPECT_EQ(r.reo_timeout, t.h.now() + kRto);
}

TEST_P(RackTest, MarkLostOnlyScansAfterAdvance) {
  ThreePackets t(GetParam());
  auto r = t.rack.mark_lost(t.h.sb(), t.h.now(), Duration::ms(10), kRto);
  EXPECT_FALSE(r.reo_timeout.is_never());
  EXPECT_FALSE(t.rack.advanced());
  t.h.advance(Duration::ms(20));
  r = t.rack.mark_lost(t.h.sb(), t.h.now(), Duration::ms(10), kRto);
  EXPECT_EQ(r.newly_lost, 0u) << "no ACK advanced RACK: no scan (the timer does it)";
  r = t.rack.detect_loss(t.h.sb(), t.h.now(), Duration::ms(10), kRto);
  EXPECT_EQ(r.newly_lost, 2u);
}

TEST_P(RackTest, LostRetransmissionIsDetectedByTime) {
  ThreePackets t(GetParam());
  t.rack.detect_loss(t.h.sb(), t.h.now(), Duration::zero(), kRto);
  t.h.retransmit(0, 1000, 1000);
  t.h.advance(Duration::ms(1));
  t.h.send(3000, 4000, 1000);
  t.h.advance(Duration::ms(60));
  AckResult a = t.h.ack(0, {{2000, 4000}});
  t.rack.advance(*a.latest_delivered, t.h.now(), kMinRtt);
  auto r = t.rack.detect_loss(t.h.sb(), t.h.now(), Duration::zero(), kRto);
  EXPECT_EQ(r.newly_lost, 1u);
  EXPECT_EQ(t.h.sb().lost_retransmits(), 1u);
  EXPECT_EQ(t.h.sb().retrans_out(), 0u);
  t.h.check();
}

// Linux tcp_rack_advance() runs per delivered packet and overwrites RACK.rtt
// each time: after a cumulative ACK that covers a fresh retransmission and,
// behind it, an original sent long before, RACK.rtt is the original's RTT
// (the last one processed) while RACK.xmit_ts stays at the retransmission.
// With the retransmission's RTT the packet sent with the original would be
// declared lost at once (gtests prr-ss-ack-below-snd_una-cubic).
TEST_P(RackTest, RttIsTheLastProcessedPacketsNotTheLatestSent) {
  SbHarness h(GetParam());
  h.send(0, 4000, 1000);  // four packets at t0
  h.advance(Duration::ms(10));
  h.ack(0, {{3000, 4000}});
  h.mark_lost(0);
  h.retransmit(0, 1000, 1000);  // at t0 + 10 ms
  h.advance(Duration::ms(12));
  h.sb().set_rack_min_rtt(Duration::ms(10));
  AckResult a = h.ack(2000);  // the retransmission and the original 1000:2000
  ASSERT_TRUE(a.rack_latest && a.rack_rtt);
  EXPECT_EQ(a.rack_latest->end_seq, h.seq(1000)) << "the retransmission was sent last";
  EXPECT_EQ(*a.rack_rtt, Duration::ms(22)) << "1000:2000, processed after it";
  Rack rack;
  rack.advance(a);
  EXPECT_EQ(rack.rtt(), Duration::ms(22));
  // 2000:3000 was sent 22 ms ago: not overdue against RACK.rtt 22 ms + 2 ms.
  auto r = rack.detect_loss(h.sb(), h.now(), Duration::ms(2), kRto);
  EXPECT_EQ(r.newly_lost, 0u);
  EXPECT_FALSE(r.reo_timeout.is_never());
}

// RFC 8985 §6.2 step 2: a retransmission delivered faster than min_rtt is
// left out of the ACK's RACK sample; the original beside it still counts.
TEST_P(RackTest, FastRetransmissionLeftOutOfTheAcksSample) {
  SbHarness h(GetParam());
  h.send(0, 2000, 1000);
  h.advance(Duration::ms(30));
  h.mark_lost(0);
  h.retransmit(0, 1000, 1000);
  h.advance(Duration::ms(5));
  h.sb().set_rack_min_rtt(Duration::ms(30));
  AckResult a = h.ack(2000);
  ASSERT_TRUE(a.rack_latest && a.rack_rtt);
  EXPECT_EQ(a.rack_latest->end_seq, h.seq(2000));
  EXPECT_EQ(*a.rack_rtt, Duration::ms(35));
  SbHarness g(GetParam());
  g.send(0, 1000, 1000);
  g.advance(Duration::ms(30));
  g.mark_lost(0);
  g.retransmit(0, 1000, 1000);
  g.advance(Duration::ms(5));
  g.sb().set_rack_min_rtt(Duration::ms(30));
  AckResult b = g.ack(1000);
  EXPECT_FALSE(b.rack_latest.has_value()) << "only an ambiguous retransmission was delivered";
}

// Among SACKed packets Linux processes the blocks in sequence order, so the
// highest one sets RACK.rtt whatever order the blocks came in.
TEST_P(RackTest, SackBlocksInAnyOrderGiveTheHighestPacketsRtt) {
  SbHarness h(GetParam());
  h.send(0, 1000, 1000);
  h.advance(Duration::ms(5));
  h.send(1000, 3000, 1000);
  h.advance(Duration::ms(5));
  h.send(3000, 4000, 1000);
  h.advance(Duration::ms(20));
  AckResult a = h.ack(0, {{3000, 4000}, {1000, 2000}});
  ASSERT_TRUE(a.rack_rtt);
  EXPECT_EQ(*a.rack_rtt, Duration::ms(20));
  AckResult b = h.ack(0, {{2000, 3000}, {3000, 4000}});
  ASSERT_TRUE(b.rack_rtt);
  EXPECT_EQ(*b.rack_rtt, Duration::ms(25));
}

TEST(Rack, AmbiguousFastRetransmissionDoesNotAdvance) {
  Rack rack;
  const Time now = Time::from_ns(1'000'000'000);
  rack.advance({now - Duration::ms(10), Seq32(2000), /*retransmitted=*/true, {}}, now, kMinRtt);
  EXPECT_FALSE(rack.advanced());
  rack.advance({now - Duration::ms(50), Seq32(2000), /*retransmitted=*/true, {}}, now, kMinRtt);
  EXPECT_TRUE(rack.advanced());
  EXPECT_EQ(rack.rtt(), Duration::ms(50));
}

TEST(Rack, XmitTsKeepsMostRecentlySentAcrossWrap) {
  Rack rack;
  const Time now = Time::from_ns(1'000'000'000);
  rack.advance({now - Duration::ms(50), Seq32(0xFFFFFF00u), false, {}}, now, kMinRtt);
  rack.advance({now - Duration::ms(50), Seq32(0x100u), false, {}}, now, kMinRtt);
  EXPECT_EQ(rack.end_seq(), Seq32(0x100u)) << "same time: the higher sequence (after wrap) wins";
  rack.advance({now - Duration::ms(60), Seq32(0x200u), false, {}}, now, kMinRtt);
  EXPECT_EQ(rack.end_seq(), Seq32(0x100u)) << "sent earlier: RACK.xmit_ts stays";
  EXPECT_EQ(rack.rtt(), Duration::ms(60)) << "but RACK.rtt follows the latest ACKed packet";
}

TEST(Rack, ReoWndIsZeroWithoutReorderingInRecoveryOrAtDupthresh) {
  Rack rack;
  ReoWndInput in;
  in.min_rtt = Duration::ms(40);
  in.srtt = Duration::ms(50);
  EXPECT_EQ(rack.reo_wnd(in), Duration::ms(10));
  in.ca_state = CaState::Recovery;
  EXPECT_EQ(rack.reo_wnd(in), Duration::zero());
  in.ca_state = CaState::Disorder;
  in.sacked_out = 3;
  EXPECT_EQ(rack.reo_wnd(in), Duration::zero());
  in.tcp_recovery = kRackLossDetection | kRackNoDupthresh;
  EXPECT_EQ(rack.reo_wnd(in), Duration::ms(10));
  in.tcp_recovery = kRackLossDetection;
  in.reord_seen = 1;
  EXPECT_EQ(rack.reo_wnd(in), Duration::ms(10)) << "reordering seen: keep the window";
}

TEST(Rack, DsackWidensWindowOncePerRoundAndPersistsSixteenRecoveries) {
  Rack rack;
  ReoWndInput in;
  in.reord_seen = 1;
  in.min_rtt = Duration::ms(40);
  in.srtt = Duration::ms(100);
  rack.on_dsack(/*reord_seen=*/1, false);
  rack.update_reo_wnd(kRackLossDetection, 100, 120);
  EXPECT_EQ(rack.reo_wnd_steps(), 2);
  EXPECT_EQ(rack.reo_wnd(in), Duration::ms(20));
  // A D-SACK for a packet sent before the step is from the same round.
  rack.on_dsack(1, false);
  rack.update_reo_wnd(kRackLossDetection, 110, 125);
  EXPECT_EQ(rack.reo_wnd_steps(), 2);
  rack.on_dsack(1, false);
  rack.update_reo_wnd(kRackLossDetection, 121, 140);
  EXPECT_EQ(rack.reo_wnd_steps(), 3);
  in.srtt = Duration::ms(25);
  EXPECT_EQ(rack.reo_wnd(in), Duration::ms(25)) << "capped by SRTT";
  for (int i = 0; i < 15; ++i) rack.on_recovery_without_undo();
  rack.update_reo_wnd(kRackLossDetection, 200, 210);
  EXPECT_EQ(rack.reo_wnd_steps(), 3);
  rack.on_recovery_without_undo();
  rack.update_reo_wnd(kRackLossDetection, 210, 220);
  EXPECT_EQ(rack.reo_wnd_steps(), 1);
}

TEST(Rack, DsackIgnoredWithoutReorderingOrForProbe) {
  Rack rack;
  rack.on_dsack(0, false);
  rack.on_dsack(1, /*for_tlp_probe=*/true);
  rack.update_reo_wnd(kRackLossDetection, 100, 120);
  EXPECT_EQ(rack.reo_wnd_steps(), 1);
  rack.on_dsack(1, false);
  rack.update_reo_wnd(kRackLossDetection | kRackStaticReoWnd, 100, 120);
  EXPECT_EQ(rack.reo_wnd_steps(), 1) << "static window";
}

TEST(Tlp, PtoIsTwoSrttPlusSlackCappedByRto) {
  PtoInput in;
  in.packets_out = 5;
  in.srtt = Duration::ms(30);
  in.rto_remaining = Duration::ms(250);
  EXPECT_EQ(loss_probe_timeout(in), Duration::ms(62));
  in.packets_out = 1;
  EXPECT_EQ(loss_probe_timeout(in), Duration::ms(250)) << "60 + 200 ms, capped by the RTO";
  in.rto_remaining = Duration::s(1);
  EXPECT_EQ(loss_probe_timeout(in), Duration::ms(260));
  in.srtt.reset();
  EXPECT_EQ(loss_probe_timeout(in), Duration::s(1));
}

TEST(Tlp, NoProbeOutsideOpenOrCwrOrWithoutSack) {
  PtoInput in;
  in.packets_out = 5;
  in.srtt = Duration::ms(30);
  in.ca_state = CaState::CWR;
  EXPECT_TRUE(loss_probe_timeout(in).has_value());
  in.ca_state = CaState::Recovery;
  EXPECT_FALSE(loss_probe_timeout(in).has_value());
  in.ca_state = CaState::Disorder;
  EXPECT_FALSE(loss_probe_timeout(in).has_value());
  in.ca_state = CaState::Open;
  in.sack = false;
  EXPECT_FALSE(loss_probe_timeout(in).has_value());
  in.sack = true;
  in.tcp_early_retrans = 2;
  EXPECT_FALSE(loss_probe_timeout(in).has_value());
  in.tcp_early_retrans = 3;
  in.packets_out = 0;
  EXPECT_FALSE(loss_probe_timeout(in).has_value());
}

TEST(Tlp, AckBeyondRetransmittedProbeMeansLossRepaired) {
  Tlp tlp;
  tlp.on_probe_sent(Seq32(5000), /*retransmission=*/true);
  EXPECT_EQ(tlp.on_ack(Seq32(4000), true, true, false, false), TlpAckOutcome::kNone);
  EXPECT_TRUE(tlp.outstanding());
  EXPECT_EQ(tlp.on_ack(Seq32(5000), true, true, false, false), TlpAckOutcome::kNone);
  EXPECT_EQ(tlp.on_ack(Seq32(6000), true, true, false, false), TlpAckOutcome::kLossRepaired);
  EXPECT_FALSE(tlp.outstanding());
}

TEST(Tlp, DuplicateAckOrDsackAtProbeMeansNoLoss) {
  Tlp tlp;
  tlp.on_probe_sent(Seq32(5000), true);
  EXPECT_EQ(tlp.on_ack(Seq32(5000), false, false, false, false), TlpAckOutcome::kProbeDone);
  tlp.on_probe_sent(Seq32(5000), true);
  EXPECT_TRUE(tlp.dsack_is_for_probe({Seq32(4000), Seq32(5000)}, 1000));
  EXPECT_FALSE(tlp.dsack_is_for_probe({Seq32(3000), Seq32(5000)}, 1000));
  EXPECT_EQ(tlp.on_ack(Seq32(5000), true, true, false, true), TlpAckOutcome::kProbeDone);
  tlp.on_probe_sent(Seq32(5000), /*retransmission=*/false);
  EXPECT_EQ(tlp.on_ack(Seq32(5000), true, true, false, false), TlpAckOutcome::kProbeDone);
}

}  // namespace
}  // namespace weir::tcp::recovery
