// When the receiver ACKs: quick-ACK mode, the every-second-full-segment rule
// (RFC 1122 §4.2.3.2, RFC 9293 §3.8.6.3) including seed 001's unscaled big
// buffer, delayed-ACK timing (ATO, Linux tcp_event_data_recv), out-of-order
// and FIN ACKs, SACK compression, ping-pong mode and window updates.
#include <gtest/gtest.h>

#include "tcp/rcv_rig.h"

namespace weir::tcp {
namespace {

using testing::linux_defaults;
using testing::packetdrill_profile;
using testing::Rig;
using testing::RigOptions;

// Delivers full-sized segments (read at once by the app) until one is not
// ACKed immediately: quick-ACK mode is over. Returns the next offset.
uint32_t drain_quickack(Rig& rig, uint32_t off, uint32_t mss = 1460) {
  for (int i = 0; i < 500; ++i) {
    rig.advance(Duration::ms(1));
    const bool now = rig.deliver(off, mss);
    off += mss;
    rig.read(mss);
    if (!now) {
      rig.send_ack();  // settle: as if the delayed ACK went out
      return off;
    }
  }
  ADD_FAILURE() << "quick-ACK mode never ended";
  return off;
}

TEST(RcvAck, QuickAckModeAcksTheFirstSixteenSegmentsAtOnce) {
  Rig rig(packetdrill_profile());
  rig.send_ack();
  // Small segments (< 128 bytes, so the window does not grow) 1 ms apart.
  for (uint32_t i = 0; i < 16; ++i) {
    rig.advance(Duration::ms(1));
    ASSERT_TRUE(rig.deliver(i * 100, 100)) << "segment " << i;
  }
  rig.advance(Duration::ms(1));
  const DataOutcome o = rig.data(1600, 100);
  EXPECT_FALSE(o.ack_now);
  EXPECT_TRUE(rig.r.ack_pending());
  // Linux TCP_ATO_MIN / TCP_DELACK_MIN: 40 ms.
  EXPECT_EQ(rig.r.delack_deadline(), rig.now() + Duration::ms(40));
}

TEST(RcvAck, DelayedAckTimerKeepsItsDeadlineAndInflatesAtoWhenItFires) {
  Rig rig(packetdrill_profile());
  rig.send_ack();
  for (uint32_t i = 0; i < 16; ++i) {
    rig.advance(Duration::ms(1));
    rig.deliver(i * 100, 100);
  }
  rig.advance(Duration::ms(1));
  rig.data(1600, 100);
  const Time deadline = rig.r.delack_deadline();
  rig.advance(Duration::ms(5));
  EXPECT_FALSE(rig.data(1700, 100).ack_now);
  EXPECT_EQ(rig.r.delack_deadline(), deadline);  // the earlier deadline stands
  EXPECT_FALSE(rig.r.on_delack_timer(deadline - Duration::ms(1), rig.rto, rig.c));
  rig.clock.set(deadline);
  EXPECT_TRUE(rig.r.on_delack_timer(deadline, rig.rto, rig.c));
  EXPECT_EQ(rig.c.get(Counter::TcpExtDelayedACKs), 1u);
  EXPECT_EQ(rig.r.ato(), Duration::ms(80));  // missed: ATO doubles (bounded by RTO)
  rig.send_ack();
  EXPECT_FALSE(rig.r.ack_pending());
  EXPECT_TRUE(rig.r.delack_deadline().is_never());
}

// RFC 1122 §4.2.3.2: an ACK for at least every second full-sized segment,
// once the window has opened (while rcv_ssthresh grows, Linux ACKs every
// segment so the sender hears of the larger window at once).
TEST(RcvAck, EverySecondFullSizedSegmentIsAckedAtOnce) {
  Rig rig(packetdrill_profile());
  rig.send_ack();
  uint32_t off = drain_quickack(rig, 0);
  for (int pair = 0; pair < 20; ++pair) {
    rig.advance(Duration::ms(1));
    EXPECT_FALSE(rig.deliver(off, 1460)) << "pair " << pair;
    rig.read(1460);
    rig.advance(Duration::ms(1));
    EXPECT_TRUE(rig.deliver(off + 1460, 1460)) << "pair " << pair;
    rig.read(1460);
    off += 2920;
  }
  EXPECT_EQ(rig.r.rcv_mss(), 1460u);  // learnt from the segments (tcp_measure_rcv_mss)
}

// Seed 001: window scaling off, a 256 KB SO_RCVBUF. The window the peer sees
// is at most 65535; the receiver must still ACK every second full segment
// (Linux before the fix compared against an rcv_wnd above 65535 and fell back
// to delayed ACKs only).
TEST(RcvAck, UnscaledBigBufferStillAcksEverySecondFullSegment) {
  ReceiverConfig cfg = linux_defaults();
  cfg.rmem_max = 1u << 20;
  RigOptions o;
  o.wscale_ok = false;
  o.rcvbuf = 256 * 1024;
  Rig rig(cfg, o);
  rig.send_ack();
  uint32_t off = drain_quickack(rig, 0);
  int immediate = 0;
  for (int i = 0; i < 40; ++i) {
    rig.advance(Duration::ms(1));
    if (rig.deliver(off, 1460)) ++immediate;
    off += 1460;
    rig.read(1460);
    ASSERT_LE(rig.r.rcv_wnd(), 65535u);
  }
  EXPECT_EQ(immediate, 20);
}

TEST(RcvAck, OutOfOrderDataIsAckedAtOnceThenSackCompressed) {
  Rig rig(linux_defaults());
  rig.send_ack();
  uint32_t off = drain_quickack(rig, 0);
  // Lose one segment; the next three each draw an immediate duplicate ACK.
  for (uint32_t i = 1; i <= 3; ++i) {
    const DataOutcome o = rig.data(off + i * 1460, 1460);
    EXPECT_TRUE(o.out_of_order);
    EXPECT_TRUE(o.ack_now) << "dupack " << i;
    rig.send_ack();
  }
  // Linux then compresses SACKs: at most 1 ms (5% of the RTT) of delay.
  rig.advance(Duration::us(10));
  EXPECT_FALSE(rig.data(off + 4 * 1460, 1460).ack_now);
  EXPECT_FALSE(rig.data(off + 5 * 1460, 1460).ack_now);
  const Time d = rig.r.delack_deadline();
  EXPECT_LE(d, rig.now() + Duration::ms(1));
  rig.clock.set(d);
  EXPECT_TRUE(rig.r.on_delack_timer(d, rig.rto, rig.c));
  rig.send_ack();
  rig.data(off + 6 * 1460, 0, false);  // no-op call flushes the counter
  EXPECT_EQ(rig.c.get(Counter::TcpExtTCPAckCompressed), 1u);
  // The retransmission fills the hole: ACK at once (RFC 5681 §4.2).
  const DataOutcome fill = rig.data(off, 1460);
  EXPECT_TRUE(fill.filled_hole);
  EXPECT_TRUE(fill.ack_now);
  EXPECT_EQ(fill.in_order, 6u * 1460);
}

TEST(RcvAck, WithoutSackEveryOutOfOrderSegmentIsAckedAtOnce) {
  RigOptions o;
  o.sack_ok = false;
  Rig rig(linux_defaults(), o);
  rig.send_ack();
  uint32_t off = drain_quickack(rig, 0);
  for (uint32_t i = 1; i <= 10; ++i) {
    EXPECT_TRUE(rig.data(off + i * 1460, 1460).ack_now) << i;
    rig.send_ack();
  }
  EXPECT_EQ(rig.c.get(Counter::TcpExtTCPOFOQueue), 10u);
}

TEST(RcvAck, FinIsAckedAtOnce) {
  Rig rig(linux_defaults());
  rig.send_ack();
  uint32_t off = drain_quickack(rig, 0);
  rig.advance(Duration::ms(1));
  const DataOutcome o = rig.data(off, 0, true);
  EXPECT_TRUE(o.fin);
  EXPECT_TRUE(o.ack_now);
  EXPECT_EQ(rig.r.rcv_nxt(), rig.seq(off + 1));
}

TEST(RcvAck, AtoFollowsInterArrivalTimesAndIdleRestartsQuickAcks) {
  Rig rig(linux_defaults());
  rig.send_ack();
  uint32_t off = drain_quickack(rig, 0, 100);
  EXPECT_EQ(rig.r.ato(), Duration::ms(40));
  rig.advance(Duration::ms(30));  // between ATO/2 and ATO: ato = ato/2 + m
  rig.deliver(off, 100);
  off += 100;
  EXPECT_EQ(rig.r.ato(), Duration::ms(50));
  rig.advance(Duration::ms(30));
  rig.deliver(off, 100);
  off += 100;
  EXPECT_EQ(rig.r.ato(), Duration::ms(55));
  rig.advance(Duration::ms(5));  // fast: ato = ato/2 + ATO_MIN/2
  rig.deliver(off, 100);
  off += 100;
  EXPECT_EQ(rig.r.ato(), Duration::us(47500));
  rig.send_ack();
  EXPECT_FALSE(rig.r.in_quickack_mode());
  rig.advance(Duration::ms(500));  // idle longer than the RTO: quick ACKs again
  EXPECT_TRUE(rig.deliver(off, 100));
}

TEST(RcvAck, DelayIsBoundedBySmoothedRtt) {
  Rig rig(linux_defaults());
  rig.send_ack();
  uint32_t off = drain_quickack(rig, 0, 100);
  // Let a delayed ACK fire so ATO inflates to 80 ms.
  rig.data(off, 100);
  off += 100;
  Time d = rig.r.delack_deadline();
  rig.clock.set(d);
  ASSERT_TRUE(rig.r.on_delack_timer(d, rig.rto, rig.c));
  rig.send_ack();
  ASSERT_EQ(rig.r.ato(), Duration::ms(80));
  rig.advance(Duration::ms(100));
  DataSegment s;
  std::vector<uint8_t> p(100, 1);
  s.seq = rig.seq(off);
  s.payload = p;
  rig.r.on_data(rig.now(), s, rig.rto, Duration::ms(50), rig.c);
  EXPECT_EQ(rig.r.delack_deadline(), rig.now() + Duration::ms(50));
}

TEST(RcvAck, RepliesWithinAtoEnterPingPongModeAndDelayAcks) {
  Rig rig(linux_defaults());
  rig.send_ack();
  rig.advance(Duration::ms(1));
  EXPECT_TRUE(rig.deliver(0, 100));  // quick-ACK mode at start
  rig.advance(Duration::ms(2));
  rig.r.on_data_sent(rig.now());  // we answered within ATO: interactive
  EXPECT_FALSE(rig.r.in_quickack_mode());
  rig.advance(Duration::ms(10));
  EXPECT_FALSE(rig.deliver(100, 100));  // the ACK waits to ride on our reply
  // The timer fires instead: leave ping-pong mode, ATO back to minimum.
  const Time d = rig.r.delack_deadline();
  rig.clock.set(d);
  EXPECT_TRUE(rig.r.on_delack_timer(d, rig.rto, rig.c));
  rig.send_ack();
  EXPECT_TRUE(rig.r.in_quickack_mode());
  EXPECT_EQ(rig.r.ato(), Duration::ms(40));
}

TEST(RcvAck, TcpQuickackTogglesPingPongMode) {
  Rig rig(linux_defaults());
  rig.send_ack();
  EXPECT_FALSE(rig.r.set_quickack(false));  // TCP_QUICKACK 0: delay ACKs
  rig.advance(Duration::ms(1));
  EXPECT_FALSE(rig.deliver(0, 100));
  EXPECT_TRUE(rig.r.ack_pending());
  EXPECT_TRUE(rig.r.in_pingpong_mode());
  // TCP_QUICKACK 1: out of ping-pong mode. The owed ACK waits while unread
  // data is queued (Linux runs tcp_cleanup_rbuf, which wants a drained queue)...
  EXPECT_FALSE(rig.r.set_quickack(true));
  EXPECT_FALSE(rig.r.in_pingpong_mode());
  // ...and the next segment is ACKed at once: quick-ACK mode is back in force.
  rig.advance(Duration::ms(1));
  EXPECT_TRUE(rig.deliver(100, 100));
  // With the queue drained and an ACK owed, TCP_QUICKACK 1 sends it.
  rig.r.set_quickack(false);
  rig.advance(Duration::ms(1));
  EXPECT_FALSE(rig.deliver(200, 100));
  std::vector<uint8_t> buf(300);
  rig.r.read(rig.now(), buf, false, rig.c);
  EXPECT_TRUE(rig.r.set_quickack(true));
}

TEST(RcvAck, DrainingPushedSmallSegmentsSendsTheOwedAck) {
  Rig rig(linux_defaults());
  rig.send_ack();
  uint32_t off = drain_quickack(rig, 0);
  rig.advance(Duration::ms(1));
  EXPECT_FALSE(rig.deliver(off, 100));  // small: delayed, marked "pushed"
  bool update = false;
  EXPECT_EQ(rig.read(100, &update), 100u);
  EXPECT_TRUE(update);  // Linux tcp_cleanup_rbuf
}

// Linux __tcp_ack_snd_check: while fewer than SO_RCVLOWAT bytes are queued
// the reader is waiting, so a second full segment is ACKed even when the
// queued data shrinks the window (without SO_RCVLOWAT it would wait).
TEST(RcvAck, UnmetRcvlowatKeepsAckingEverySecondSegmentOfUnreadData) {
  auto second_of_pair_acked = [](uint32_t lowat) {
    Rig rig(linux_defaults());
    rig.send_ack();
    if (lowat) rig.r.set_rcvlowat(lowat);
    uint32_t off = drain_quickack(rig, 0);
    rig.advance(Duration::ms(1));
    EXPECT_FALSE(rig.deliver(off, 1460));
    rig.advance(Duration::ms(1));
    return rig.deliver(off + 1460, 1460);  // nothing read: the window shrinks
  };
  EXPECT_FALSE(second_of_pair_acked(0));
  EXPECT_TRUE(second_of_pair_acked(20000));
}

TEST(RcvAck, DuplicateSegmentIsAckedAtOnceAndCountedAsLostDelayedAck) {
  Rig rig(linux_defaults());
  rig.send_ack();
  uint32_t off = drain_quickack(rig, 0);
  const DataOutcome o = rig.data(0, 1460);  // far below rcv.wup
  EXPECT_EQ(o.drop, RcvDrop::kDuplicate);
  EXPECT_TRUE(o.ack_now);
  EXPECT_EQ(rig.c.get(Counter::TcpExtDelayedACKLost), 1u);
  EXPECT_GT(off, 0u);
}

}  // namespace
}  // namespace weir::tcp
