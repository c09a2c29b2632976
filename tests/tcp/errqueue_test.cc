// The socket error queue: MSG_ZEROCOPY notification ids and their range
// coalescing (Linux msg_zerocopy_callback, skb_zerocopy_notify_extend), the
// queue's bounds, POLLERR while it is not empty, SO_TIMESTAMPING's three
// transmit points (SCHED and SND at transmission, ACK when the key byte is
// cumulatively acknowledged) and its keys (OPT_ID), and MAX_SKB_FRAGS.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>

#include "tcp/errqueue.h"
#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;
constexpr int kSoZerocopy = 60;
constexpr int kSoTimestamping = 37;

std::vector<uint8_t> bytes(size_t n) { return std::vector<uint8_t>(n, 0x7a); }

// An established connection with SO_ZEROCOPY set.
SocketId zerocopy_open(Harness& t) {
  SocketId s = t.passive_open();
  int one = 1;
  EXPECT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, kSoZerocopy, int_opt(one)), Errc::kOk);
  return s;
}

SockExtendedErr zc_range(Stack& st, Time now, SocketId s) {
  auto e = st.recv_error(now, s);
  EXPECT_TRUE(e.has_value());
  if (!e) return {};
  EXPECT_EQ(e->ee.ee_origin, SO_EE_ORIGIN_ZEROCOPY);
  EXPECT_EQ(e->ee.ee_code, SO_EE_CODE_ZEROCOPY_COPIED);  // weir copies, and says so
  EXPECT_EQ(e->ee.ee_errno, 0u);
  EXPECT_FALSE(e->tstamp.has_value());
  EXPECT_TRUE(e->payload.empty());
  return e->ee;
}

// ---- ErrQueue on its own ----

TEST(ErrQueue, ConsecutiveCompletionsExtendTheTailRange) {
  tcp::ErrQueue q;
  q.push_zerocopy(0, 1, true);
  q.push_zerocopy(1, 2, true);  // [1, 2] follows [0, 0]
  q.push_zerocopy(3, 1, true);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q.reports(), 3u);  // every completion wakes pollers
  auto e = q.pop();
  EXPECT_EQ(e->ee.ee_info, 0u);
  EXPECT_EQ(e->ee.ee_data, 3u);
}

TEST(ErrQueue, AGapOrATimestampStartsANewRange) {
  tcp::ErrQueue q;
  q.push_zerocopy(0, 1, true);
  q.push_zerocopy(2, 1, true);  // not lo == old_hi + 1
  ErrQueueEntry ts;
  ts.ee.ee_origin = SO_EE_ORIGIN_TIMESTAMPING;
  ASSERT_TRUE(q.push(ts, 1 << 20));
  q.push_zerocopy(3, 1, true);  // the tail is a timestamp now
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q.pop()->ee.ee_data, 0u);
  EXPECT_EQ(q.pop()->ee.ee_info, 2u);
}

TEST(ErrQueue, ARangeStopsBelowTwoToThe32) {
  tcp::ErrQueue q;
  q.push_zerocopy(0, 0xFFFFFFF0u, true);
  q.push_zerocopy(0xFFFFFFF0u, 0x10, true);  // sum_len == 2^32: not merged
  EXPECT_EQ(q.size(), 2u);
}

TEST(ErrQueue, TimestampsAreBoundedByTheLimitAndDropsCounted) {
  tcp::ErrQueue q;
  ErrQueueEntry e;
  e.payload.resize(100);
  const uint32_t one = tcp::ErrQueue::kCloneOverhead + 100;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(q.push(e, 3 * one + 1));
  EXPECT_FALSE(q.push(e, 3 * one + 1));
  EXPECT_EQ(q.drops(), 1u);
  EXPECT_EQ(q.size(), 3u);
  q.pop();
  EXPECT_TRUE(q.push(e, 3 * one + 1));  // room again once read
}

// ---- MSG_ZEROCOPY on a connection ----

TEST(Zerocopy, IdsCountSendsAndReadsSeparateRanges) {
  Harness t;
  SocketId s = zerocopy_open(t);
  auto d = bytes(1000);
  ASSERT_EQ(*t.stack().send(t.now(), s, d, MSG_ZEROCOPY), 1000u);
  t.expect_tx();
  EXPECT_EQ(t.stack().recv_error(t.now(), s).error(), Errc::kAgain);  // not acknowledged yet
  EXPECT_FALSE(t.stack().poll(s) & ev::ERR);
  t.inject(ACK, 1, 1001);
  EXPECT_TRUE(t.stack().poll(s) & ev::ERR);
  SockExtendedErr ee = zc_range(t.stack(), t.now(), s);
  EXPECT_EQ(ee.ee_info, 0u);
  EXPECT_EQ(ee.ee_data, 0u);
  EXPECT_FALSE(t.stack().poll(s) & ev::ERR);  // read: POLLERR clears
  // Two more sends acknowledged before a read: one range [1, 2].
  t.stack().send(t.now(), s, d, MSG_ZEROCOPY);
  t.expect_tx();
  t.inject(ACK, 1, 2001);
  t.stack().send(t.now(), s, d, MSG_ZEROCOPY);
  t.expect_tx();
  t.inject(ACK, 1, 3001);
  ee = zc_range(t.stack(), t.now(), s);
  EXPECT_EQ(ee.ee_info, 1u);
  EXPECT_EQ(ee.ee_data, 2u);
  EXPECT_EQ(t.stack().recv_error(t.now(), s).error(), Errc::kAgain);
}

TEST(Zerocopy, CompletesOnlyWhenTheWholeSendIsAcknowledged) {
  Harness t;
  SocketId s = zerocopy_open(t);
  auto d = bytes(3000);
  t.stack().send(t.now(), s, d, MSG_ZEROCOPY);
  while (t.pending()) t.expect_tx();
  t.inject(ACK, 1, 1461);
  t.inject(ACK, 1, 2921);
  EXPECT_FALSE(t.stack().poll(s) & ev::ERR);  // one byte short
  t.inject(ACK, 1, 3001);
  EXPECT_TRUE(t.stack().poll(s) & ev::ERR);
}

TEST(Zerocopy, WithoutSoZerocopyTheFlagIsIgnored) {
  Harness t;
  SocketId s = t.passive_open();
  auto d = bytes(100);
  ASSERT_EQ(*t.stack().send(t.now(), s, d, MSG_ZEROCOPY), 100u);  // tcp_sendmsg_locked: a copy
  t.expect_tx();
  t.inject(ACK, 1, 101);
  EXPECT_EQ(t.stack().recv_error(t.now(), s).error(), Errc::kAgain);
}

TEST(Zerocopy, AFailedSendGivesItsIdBack) {
  Harness t;
  auto s = t.stack().socket();
  int one = 1;
  ASSERT_EQ(t.stack().setsockopt(t.now(), *s, SOL_SOCKET, kSoZerocopy, int_opt(one)), Errc::kOk);
  int two = 2;
  EXPECT_EQ(t.stack().setsockopt(t.now(), *s, SOL_SOCKET, kSoZerocopy, int_opt(two)), Errc::kInval);
  auto d = bytes(100);
  EXPECT_EQ(t.stack().send(t.now(), *s, d, MSG_ZEROCOPY).error(), Errc::kPipe);
  EXPECT_EQ(t.stack().recv_error(t.now(), *s).error(), Errc::kAgain);
}

TEST(Zerocopy, ExtendingAnUnreadRangeWakesPollersAgain) {
  Harness t;
  SocketId s = zerocopy_open(t);
  auto d = bytes(100);
  t.stack().send(t.now(), s, d, MSG_ZEROCOPY);
  t.expect_tx();
  t.inject(ACK, 1, 101);
  const uint64_t first = t.stack().error_reports(s);
  t.stack().send(t.now(), s, d, MSG_ZEROCOPY);
  t.expect_tx();
  t.inject(ACK, 1, 201);
  EXPECT_GT(t.stack().error_reports(s), first);  // sk_error_report: EPOLLET fires again
  SockExtendedErr ee = zc_range(t.stack(), t.now(), s);
  EXPECT_EQ(ee.ee_data, 1u);
}

TEST(Zerocopy, OutstandingNotificationsAreBoundedByOptmem) {
  StackConfig cfg;
  cfg.initial_cwnd = 1000;
  Harness t(cfg);
  SocketId s = zerocopy_open(t);
  const int one = 1;
  t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_NODELAY, int_opt(one));
  auto d = bytes(1);
  // Each send leaves at once, so none joins another's skb: one
  // notification each, 576 bytes of optmem_max (131072) apiece.
  int ok = 0;
  while (ok < 1000 && t.stack().send(t.now(), s, d, MSG_ZEROCOPY)) ++ok;
  EXPECT_EQ(ok, 228);
  EXPECT_EQ(t.stack().send(t.now(), s, d, MSG_ZEROCOPY).error(), Errc::kNoBufs);
  EXPECT_TRUE(t.stack().send(t.now(), s, d, 0).has_value());  // a copy still goes
  t.inject(ACK, 1, 230);
  SockExtendedErr ee = zc_range(t.stack(), t.now(), s);
  EXPECT_EQ(ee.ee_info, 0u);
  EXPECT_EQ(ee.ee_data, 227u);
  EXPECT_TRUE(t.stack().send(t.now(), s, d, MSG_ZEROCOPY).has_value());
}

TEST(Zerocopy, SeventeenFragmentsEndAnSkbWithPsh) {
  Harness t;
  SocketId s = zerocopy_open(t);
  auto d = bytes(18);
  std::vector<uint32_t> iov(18, 1);
  ASSERT_EQ(*t.stack().sendmsg(t.now(), s, d, iov, MSG_ZEROCOPY), 18u);
  Tx a = t.expect_tx();
  EXPECT_EQ(a.payload.size(), 17u);  // MAX_SKB_FRAGS one-byte fragments
  EXPECT_TRUE(a.has(PSH));           // tcp_mark_push on the full skb
  t.inject(ACK, 1, 18);              // Nagle held the small tail until now
  Tx b = t.expect_tx();
  EXPECT_EQ(b.payload.size(), 1u);
  EXPECT_TRUE(b.has(PSH));
  // Without MSG_ZEROCOPY the same iovec is one linear skb.
  t.inject(ACK, 1, 19);
  ASSERT_EQ(*t.stack().sendmsg(t.now(), s, d, iov, 0), 18u);
  EXPECT_EQ(t.expect_tx().payload.size(), 18u);
}

// ---- SO_TIMESTAMPING ----

constexpr int kTsAll = static_cast<int>(sof::TX_SCHED | sof::TX_SOFTWARE | sof::TX_ACK | sof::SOFTWARE | sof::OPT_ID);

TEST(Timestamping, OptIdNeedsAConnection) {
  Harness t;
  auto s = t.stack().socket();
  EXPECT_EQ(t.stack().setsockopt(t.now(), *s, SOL_SOCKET, kSoTimestamping, int_opt(kTsAll)), Errc::kInval);
  int bad = 1 << 20;
  EXPECT_EQ(t.stack().setsockopt(t.now(), *s, SOL_SOCKET, kSoTimestamping, int_opt(bad)), Errc::kInval);
}

TEST(Timestamping, SchedAndSndAtTransmitAckWhenTheKeyIsAcked) {
  Harness t;
  SocketId s = t.passive_open();
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, kSoTimestamping, int_opt(kTsAll)), Errc::kOk);
  const Time sent = t.now();
  auto d = bytes(2000);
  t.stack().send(t.now(), s, d);
  t.expect_tx();
  t.expect_tx();
  // Within the loss probe's 2 ms (the handshake's RTT is 0): a probe would
  // resend the key's segment, and that transmission is stamped too.
  t.advance(Duration::us(500));
  t.inject(ACK, 1, 1461);
  EXPECT_EQ(t.stack().error_reports(s), 2u);  // the key, byte 1999, is not acknowledged yet
  t.advance(Duration::us(500));
  const Time acked = t.now();
  t.inject(ACK, 1, 2001);
  const uint32_t types[] = {SCM_TSTAMP_SCHED, SCM_TSTAMP_SND, SCM_TSTAMP_ACK};
  const Time at[] = {sent, sent, acked};
  for (int i = 0; i < 3; ++i) {
    ErrQueueEntry e = next_error(t, s);
    EXPECT_EQ(e.ee.ee_origin, SO_EE_ORIGIN_TIMESTAMPING);
    EXPECT_EQ(e.ee.ee_errno, static_cast<uint32_t>(ENOMSG));
    EXPECT_EQ(e.ee.ee_info, types[i]);
    EXPECT_EQ(e.ee.ee_data, 1999u);  // OPT_ID: the last byte, counted from SND.UNA at setsockopt
    ASSERT_TRUE(e.tstamp.has_value());
    EXPECT_EQ(*e.tstamp, at[i]);
    EXPECT_FALSE(e.payload.empty());  // without OPT_TSONLY the packet comes along
  }
  EXPECT_EQ(t.stack().recv_error(t.now(), s).error(), Errc::kAgain);
}

TEST(Timestamping, TsonlyAndNoSoftwareReporting) {
  Harness t;
  SocketId s = t.passive_open();
  const int f = static_cast<int>(sof::TX_SOFTWARE | sof::OPT_TSONLY);
  t.stack().setsockopt(t.now(), s, SOL_SOCKET, kSoTimestamping, int_opt(f));
  auto d = bytes(100);
  t.stack().send(t.now(), s, d);
  t.expect_tx();
  ErrQueueEntry e = next_error(t, s);
  EXPECT_EQ(e.ee.ee_info, SCM_TSTAMP_SND);
  EXPECT_TRUE(e.payload.empty());      // OPT_TSONLY
  EXPECT_FALSE(e.tstamp.has_value());  // SOF_TIMESTAMPING_SOFTWARE is off: no SCM_TIMESTAMPING
  EXPECT_EQ(e.ee.ee_data, 0u);         // no OPT_ID: no key
}

TEST(Timestamping, AQdiscDropTakesSchedButNotSnd) {
  Harness t;
  SocketId s = t.passive_open();
  t.stack().setsockopt(t.now(), s, SOL_SOCKET, kSoTimestamping, int_opt(kTsAll));
  t.nif().drop_all = true;
  auto d = bytes(100);
  t.stack().send(t.now(), s, d);
  EXPECT_EQ(next_error(t, s).ee.ee_info, SCM_TSTAMP_SCHED);
  EXPECT_EQ(t.stack().recv_error(t.now(), s).error(), Errc::kAgain);
}

TEST(Timestamping, TheQueueIsBoundedByTheReceiveBuffer) {
  Harness t;
  SocketId s = t.passive_open();
  int small = 2048;  // SO_RCVBUF: 4608 after doubling and the minimum
  t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_RCVBUF, int_opt(small));
  int one = 1;
  t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_NODELAY, int_opt(one));
  t.stack().setsockopt(t.now(), s, SOL_SOCKET, kSoTimestamping, int_opt(kTsAll));
  const uint64_t before = t.stack().counters().get(Counter::WeirErrQueueDrops);
  auto d = bytes(10);
  for (int i = 0; i < 10; ++i) t.stack().send(t.now(), s, d);
  EXPECT_GT(t.stack().counters().get(Counter::WeirErrQueueDrops), before);
  int n = 0;
  while (t.stack().recv_error(t.now(), s)) ++n;
  EXPECT_GT(n, 0);
  EXPECT_LT(n, 20);  // 10 sends, two entries each, not all kept
}

}  // namespace
}  // namespace weir::test
