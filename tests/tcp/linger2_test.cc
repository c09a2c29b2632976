// An orphan's FIN-WAIT-2 lifetime (Linux tcp_fin_time, TCP_LINGER2) and
// TIME-WAIT's fixed length (TCP_TIMEWAIT_LEN), which tcp_fin_timeout does
// not touch.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

uint8_t state(Harness& t, SocketId s) { return t.stack().tcp_info(s)->tcpi_state; }

Errc set_linger2(Harness& t, SocketId s, int v) {
  return t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_LINGER2,
                              std::span(reinterpret_cast<const uint8_t*>(&v), sizeof v));
}

int get_linger2(Harness& t, SocketId s) {
  int v = 0;
  size_t len = sizeof v;
  EXPECT_EQ(t.stack().getsockopt(s, IPPROTO_TCP, TCP_LINGER2,
                                 std::span(reinterpret_cast<uint8_t*>(&v), sizeof v), &len),
            Errc::kOk);
  return v;
}

// Closes `s` and acknowledges its FIN: an orphan in FIN-WAIT-2.
void orphan_in_fin_wait2(Harness& t, SocketId s) {
  t.stack().close(t.now(), s);
  EXPECT_TRUE(t.expect_tx().has(FIN));
  t.inject(ACK, 1, 2);
}

// True when the connection is still there: a bare ACK is taken silently,
// while a closed port answers data with a reset.
bool alive(Harness& t) {
  t.clear_tx();
  t.inject(ACK | PSH, 1, 2, 10);
  const bool reset = t.pending() > 0 && t.expect_tx().has(RST);
  return !reset;
}

// The orphan is still there `margin` before `lifetime` (a bare ACK is
// taken silently) and gone `margin` after it.
void expect_lifetime(Harness& t, Duration lifetime, Duration margin) {
  t.advance(lifetime - margin);
  t.clear_tx();
  t.inject(ACK, 1, 2);
  EXPECT_EQ(t.pending(), 0u);
  t.advance(margin * 2);
  EXPECT_FALSE(alive(t));
}

TEST(Linger2, SetAndGetAsLinux) {
  Harness t;
  SocketId s = t.passive_open();
  EXPECT_EQ(get_linger2(t, s), 60);  // unset: tcp_fin_timeout
  ASSERT_EQ(set_linger2(t, s, 7), Errc::kOk);
  EXPECT_EQ(get_linger2(t, s), 7);
  ASSERT_EQ(set_linger2(t, s, 500), Errc::kOk);
  EXPECT_EQ(get_linger2(t, s), 120);  // TCP_FIN_TIMEOUT_MAX
  ASSERT_EQ(set_linger2(t, s, -3), Errc::kOk);
  EXPECT_EQ(get_linger2(t, s), -1);
}

TEST(Linger2, SetsTheOrphanFinWait2Lifetime) {
  Harness t;
  SocketId s = t.passive_open();
  ASSERT_EQ(set_linger2(t, s, 5), Errc::kOk);
  orphan_in_fin_wait2(t, s);
  expect_lifetime(t, Duration::s(5), Duration::ms(100));
}

TEST(Linger2, NeverBelowThreeAndAHalfRto) {
  StackConfig cfg;
  cfg.tcp_fin_timeout_s = 0;  // only the floor is left
  Harness t(cfg);
  SocketId s = t.passive_open();
  const uint32_t rto_us = t.stack().tcp_info(s)->tcpi_rto;
  ASSERT_GE(rto_us, 200000u);
  const Duration floor = Duration::us(rto_us) * 4 - Duration::us(rto_us) / 2;
  orphan_in_fin_wait2(t, s);
  expect_lifetime(t, floor, Duration::ms(50));
}

TEST(Linger2, AboveTimewaitLenWaitsTheExcessTwice) {
  // Linux: the full socket waits tmo - 60 s on the keepalive timer, then
  // tcp_keepalive_timer makes a FIN-WAIT-2 timewait entry of tmo - 60 s
  // more: 2 x 40 s for TCP_LINGER2 = 100.
  Harness t;
  SocketId s = t.passive_open();
  ASSERT_EQ(set_linger2(t, s, 100), Errc::kOk);
  orphan_in_fin_wait2(t, s);
  expect_lifetime(t, Duration::s(80), Duration::s(1));
}

TEST(Linger2, NegativeResetsOnReachingFinWait2) {
  Harness t;
  SocketId s = t.passive_open();
  ASSERT_EQ(set_linger2(t, s, -1), Errc::kOk);
  t.stack().close(t.now(), s);
  EXPECT_TRUE(t.expect_tx().has(FIN));
  t.inject(ACK, 1, 2);
  Tx rst = t.expect_tx();  // tcp_v4_do_rcv answers the ACK: <SEQ=SEG.ACK><CTL=RST>
  EXPECT_TRUE(rst.has(RST));
  EXPECT_EQ(t.rel_seq(rst), 2u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPAbortOnData), 1u);
}

TEST(Linger2, NegativeCloseInFinWait2ResetsAndCountsAbortOnLinger) {
  Harness t;
  SocketId s = t.passive_open();
  ASSERT_EQ(t.stack().shutdown(t.now(), s, SHUT_WR), Errc::kOk);
  EXPECT_TRUE(t.expect_tx().has(FIN));
  t.inject(ACK, 1, 2);
  EXPECT_EQ(state(t, s), 5);  // FIN-WAIT-2, not orphaned: it waits
  ASSERT_EQ(set_linger2(t, s, -1), Errc::kOk);
  t.stack().close(t.now(), s);
  EXPECT_TRUE(t.expect_tx().has(RST));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPAbortOnLinger), 1u);
}

TEST(TimeWait, LastsSixtySecondsWhateverTcpFinTimeoutSays) {
  StackConfig cfg;
  cfg.tcp_fin_timeout_s = 5;
  Harness t(cfg);
  SocketId s = t.passive_open();
  ASSERT_EQ(t.stack().shutdown(t.now(), s, SHUT_WR), Errc::kOk);
  t.expect_tx();
  t.inject(ACK, 1, 2);
  t.inject(FIN | ACK, 1, 2);
  t.expect_tx();
  EXPECT_EQ(state(t, s), 7);  // CLOSED; the timewait entry holds the tuple
  EXPECT_TRUE(time_wait_row(t));
  t.advance(Duration::s(59));
  EXPECT_TRUE(time_wait_row(t));
  t.advance(Duration::s(1));
  EXPECT_FALSE(time_wait_row(t));
}

}  // namespace
}  // namespace weir::test
