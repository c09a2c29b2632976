// PSH marking as Linux does it (tcp_sendmsg_locked: tcp_mark_push at the end
// of a write unless MSG_MORE, forced_push after half a window, MSG_EOR closes
// a chunk; tcp_write_wakeup sets PSH on a probe), and Nagle applying to the
// last chunk of the queue only.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

std::vector<uint8_t> bytes(size_t n) { return std::vector<uint8_t>(n, 0x62); }

TEST(Psh, MsgMoreDataFlushedByNodelayCarriesNoPsh) {
  Harness t;
  SocketId s = t.passive_open();
  auto d = bytes(40);
  t.stack().send(t.now(), s, d, MSG_MORE);
  t.stack().send(t.now(), s, d, MSG_MORE);
  EXPECT_EQ(t.pending(), 0u);
  int one = 1;
  t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_NODELAY, int_opt(one));
  Tx a = t.expect_tx();
  EXPECT_EQ(a.payload.size(), 80u);
  EXPECT_FALSE(a.has(PSH));  // gtests nagle/sockopt_cork_nodelay: '. 161:241(80)'
}

TEST(Psh, MsgMoreDataLeavesByProbeTimerWithPsh) {
  Harness t;
  SocketId s = t.passive_open();
  int one = 1;
  t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_NODELAY, int_opt(one));
  const Time t0 = t.now();
  auto d = bytes(40);
  t.stack().send(t.now(), s, d, MSG_MORE);
  EXPECT_EQ(t.pending(), 0u);
  const Time fired = t.run_next_timer();
  EXPECT_GE(fired - t0, Duration::ms(200));  // tcp_probe0_base: max(RTO, 200 ms)
  Tx a = t.expect_tx();
  EXPECT_EQ(a.payload.size(), 40u);
  EXPECT_TRUE(a.has(PSH));  // tcp_write_wakeup sets PSH
}

TEST(Psh, AppendingToAnUnsentMarkedTailClearsItsPsh) {
  Harness t;
  SocketId s = t.passive_open();
  auto d = bytes(100);
  t.stack().send(t.now(), s, d);
  Tx first = t.expect_tx();
  EXPECT_TRUE(first.has(PSH));
  t.stack().send(t.now(), s, d);             // held by Nagle, marked
  t.stack().send(t.now(), s, d, MSG_MORE);   // joins the tail: the mark goes
  EXPECT_EQ(t.pending(), 0u);
  int one = 1;
  t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_NODELAY, int_opt(one));
  Tx next = t.expect_tx();
  EXPECT_EQ(next.payload.size(), 200u);
  EXPECT_FALSE(next.has(PSH));
}

TEST(Psh, EorChunksAreNotCoalescedAndSkipNagle) {
  Harness t;
  SocketId s = t.passive_open();
  auto d = bytes(100);
  t.stack().send(t.now(), s, d);
  t.expect_tx();
  t.stack().send(t.now(), s, d, MSG_EOR);
  EXPECT_EQ(t.pending(), 0u);  // the queue's last chunk: Nagle holds it
  t.stack().send(t.now(), s, d, MSG_EOR);
  t.stack().send(t.now(), s, d);
  // Each closed chunk goes out whole and alone once it is no longer the last
  // (Linux tcp_write_xmit: TCP_NAGLE_PUSH for all but the tail skb); the
  // tail waits for Minshall's rule.
  ASSERT_EQ(t.pending(), 2u);
  Tx a = t.expect_tx(), b = t.expect_tx();
  EXPECT_EQ(a.payload.size(), 100u);
  EXPECT_EQ(b.payload.size(), 100u);
  EXPECT_TRUE(a.has(PSH));
  EXPECT_TRUE(b.has(PSH));
  t.inject(ACK, 1, 201);
  EXPECT_EQ(t.pending(), 0u);
  t.inject(ACK, 1, 301);
  Tx c = t.expect_tx();
  EXPECT_EQ(c.payload.size(), 100u);
  EXPECT_TRUE(c.has(PSH));
}

TEST(Psh, CwndLimitedFlightOfALargeWriteEndsWithPsh) {
  Harness t;
  PeerOpts o;
  o.mss = 1000;
  o.ts = false;
  SocketId s = t.passive_open(o, 65535);
  auto d = bytes(10400);
  EXPECT_EQ(*t.stack().send(t.now(), s, d), 10400u);
  std::vector<Tx> tx;
  while (t.pending() > 0) tx.push_back(t.expect_tx());
  ASSERT_EQ(tx.size(), 10u);  // initial cwnd
  EXPECT_FALSE(tx[0].has(PSH));
  // gtests eor/no-coalesce-large: 'P. 1:10001(10000)' - the first flight's
  // pieces end with PSH although the write continues past cwnd.
  EXPECT_TRUE(tx[9].has(PSH));
}

TEST(Psh, MsgMoreWriteWithoutForcedPushHasNoPsh) {
  Harness t;
  PeerOpts o;
  o.mss = 1000;
  o.ts = false;
  SocketId s = t.passive_open(o, 65535);
  auto d = bytes(3100);
  int one = 1;
  t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_NODELAY, int_opt(one));
  t.stack().send(t.now(), s, d, MSG_MORE);
  std::vector<Tx> tx;
  while (t.pending() > 0) tx.push_back(t.expect_tx());
  ASSERT_EQ(tx.size(), 3u);  // the 100-byte rest is corked
  // No tcp_mark_push (MSG_MORE): the pieces carry no PSH of their own; the
  // burst's last segment has the one Linux's __tcp_transmit_skb forces on
  // every multi-segment (GSO) skb.
  EXPECT_FALSE(tx[0].has(PSH)) << describe(tx[0]);
  EXPECT_FALSE(tx[1].has(PSH)) << describe(tx[1]);
  EXPECT_TRUE(tx[2].has(PSH)) << describe(tx[2]);
}

}  // namespace
}  // namespace weir::test

namespace weir::test {
namespace {

// The engine treats time as monotonic: a `now` that steps back is clamped to
// the latest seen, so timers and RTT samples never run backwards.
TEST(Clock, NowGoingBackwardsIsClampedNotUnderflowed) {
  Harness t;
  SocketId s = t.passive_open();
  const Time t0 = t.now();
  std::vector<uint8_t> d(100, 1);
  ASSERT_TRUE(t.stack().send(t0, s, d).has_value());
  t.expect_tx();
  // A driver whose clock steps back 10 s calls in with the earlier time.
  t.stack().advance(t0 - Duration::s(10));
  EXPECT_EQ(t.pending(), 0u);
  const Time deadline = t.stack().next_deadline();
  EXPECT_GE(deadline, t0);
  EXPECT_LE(deadline, t0 + Duration::s(2));
  auto info = *t.stack().tcp_info(s);
  EXPECT_LT(info.tcpi_rto, 2000000u);
  EXPECT_LT(info.tcpi_last_data_sent, 1000u);  // not a huge unsigned wrap
}

}  // namespace
}  // namespace weir::test
