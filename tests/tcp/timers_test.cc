// Timers: RTO (RFC 6298 with Linux's values), backoff, give-up after
// tcp_retries2, TCP_USER_TIMEOUT, keepalive (RFC 1122 §4.2.3.6).
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

TEST(Timers, RtoFromHandshakeRttFloorsAt200ms) {
  Harness t;
  SocketId s = *t.stack().socket();
  t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port});
  Tx syn = t.expect_tx();
  t.advance(Duration::ms(10));  // a 10 ms handshake RTT
  t.answer_syn(syn);
  t.expect_tx();
  auto i = *t.stack().tcp_info(s);
  EXPECT_EQ(i.tcpi_rtt, 10000u);
  // Linux: RTO = SRTT + max(4 * RTTVAR, 200 ms) = 10 + 200 ms.
  EXPECT_EQ(i.tcpi_rto, 210000u);
  std::vector<uint8_t> d(100, 1);
  t.stack().send(t.now(), s, d);
  t.expect_tx();
  Time sent = t.now();
  // First a tail loss probe (RFC 8985 §7.2): PTO = 2 SRTT + 200 ms with one
  // packet out, capped at the RTO: 210 ms.
  Time probe_at = t.run_next_timer();
  EXPECT_EQ(probe_at - sent, Duration::ms(210));
  Tx probe = t.expect_tx();
  EXPECT_EQ(probe.payload.size(), 100u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPLossProbes), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPTimeouts), 0u);
  // Then the RTO, counted from the head's latest transmission.
  EXPECT_EQ(t.run_next_timer() - probe_at, Duration::ms(210));
  Tx rtx = t.expect_tx();
  EXPECT_EQ(rtx.payload.size(), 100u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPTimeouts), 1u);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_backoff, 1);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_ca_state, static_cast<uint8_t>(CaState::Loss));
}

TEST(Timers, BackoffDoublesAndGivesUpAfterRetries2) {
  Harness t;
  SocketId s = t.passive_open();
  std::vector<uint8_t> d(100, 1);
  t.stack().send(t.now(), s, d);
  t.expect_tx();
  const Time start = t.now();
  Time last = start;
  Duration prev = Duration::zero();
  int n = 0;
  // The first expiry is a tail loss probe; the RTO backoff follows.
  last = t.run_next_timer();
  t.expect_tx();
  ASSERT_EQ(t.stack().counters().get(Counter::TcpExtTCPLossProbes), 1u);
  while (!t.stack().next_deadline().is_never() && n < 40) {
    Time fired = t.run_next_timer();
    if (t.stack().tcp_info(s)->tcpi_state == 7) break;
    Tx r = t.expect_tx();
    EXPECT_EQ(t.rel_seq(r), 1u);
    Duration gap = fired - last;
    if (n > 0 && prev * 2 <= Duration::s(120)) {
      EXPECT_EQ(gap, prev * 2) << "retransmission " << n;
    }
    EXPECT_LE(gap, Duration::s(120));  // TCP_RTO_MAX
    prev = gap;
    last = fired;
    ++n;
  }
  EXPECT_EQ(n, 15);  // tcp_retries2
  // Linux counts the expiry that gives up as well (tcp_retransmit_timer
  // increments TCPTimeouts before tcp_write_timeout).
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPTimeouts), 16u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPAbortOnTimeout), 1u);
  std::vector<uint8_t> b(10);
  auto r = t.stack().recv(t.now(), s, b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), Errc::kTimedOut);
  // Linux tcp_model_timeout: (2^10 - 1) * 200 ms + 6 * 120 s after the first
  // retransmission, i.e. about 15.4 minutes.
  EXPECT_GT(t.now() - start, Duration::s(900));
  EXPECT_LT(t.now() - start, Duration::s(1200));
}

TEST(Timers, UserTimeoutAbortsEarly) {
  Harness t;
  SocketId s = t.passive_open();
  int ms = 3000;
  t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_USER_TIMEOUT, int_opt(ms));
  std::vector<uint8_t> d(100, 1);
  t.stack().send(t.now(), s, d);
  t.expect_tx();
  const Time start = t.now();
  while (t.stack().tcp_info(s)->tcpi_state != 7 && t.now() - start < Duration::s(100)) {
    t.run_next_timer();
    t.clear_tx();
  }
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_state, 7);
  EXPECT_LE(t.now() - start, Duration::s(5));
}

TEST(Timers, KeepaliveProbesThenResets) {
  Harness t;
  SocketId s = t.passive_open();
  int one = 1, idle = 10, intvl = 2, cnt = 3;
  t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_KEEPALIVE, int_opt(one));
  t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_KEEPIDLE, int_opt(idle));
  t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_KEEPINTVL, int_opt(intvl));
  t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_KEEPCNT, int_opt(cnt));
  const Time start = t.now();
  Time fired = t.run_next_timer();
  EXPECT_EQ(fired - start, Duration::s(10));
  Tx probe = t.expect_tx();
  EXPECT_EQ(t.rel_seq(probe), 0u);  // SND.UNA - 1, no data
  EXPECT_TRUE(probe.payload.empty());
  // The peer answers: the connection lives on, probing restarts after idle.
  t.inject(ACK, 1, 1);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_state, 1);
  // Now the peer goes silent: after 10 s idle, 3 probes 2 s apart, then a reset.
  const Time answered = t.now();
  t.advance_to(answered + Duration::s(10));
  EXPECT_EQ(t.pending(), 1u);
  t.expect_tx();
  fired = t.now();
  for (int i = 0; i < 2; ++i) {
    Time f2 = t.run_next_timer();
    EXPECT_EQ(f2 - fired, Duration::s(2));
    fired = f2;
    t.expect_tx();
  }
  t.run_next_timer();
  Tx rst = t.expect_tx();
  EXPECT_TRUE(rst.has(RST));
  std::vector<uint8_t> b(4);
  auto r = t.stack().recv(t.now(), s, b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), Errc::kTimedOut);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPKeepAlive), 4u);
}

TEST(Timers, TimerOptionsValidated) {
  Harness t;
  SocketId s = *t.stack().socket();
  int zero = 0, big = 40000, neg = -1;
  EXPECT_EQ(t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_KEEPIDLE, int_opt(zero)), Errc::kInval);
  EXPECT_EQ(t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_KEEPINTVL, int_opt(big)), Errc::kInval);
  EXPECT_EQ(t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_KEEPCNT, int_opt(big)), Errc::kInval);
  EXPECT_EQ(t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_USER_TIMEOUT, int_opt(neg)), Errc::kInval);
  int v = 0;
  size_t len = 0;
  EXPECT_EQ(t.stack().getsockopt(s, IPPROTO_TCP, TCP_KEEPIDLE, std::span(reinterpret_cast<uint8_t*>(&v), 4), &len),
            Errc::kOk);
  EXPECT_EQ(v, 7200);  // tcp_keepalive_time
}

}  // namespace
}  // namespace weir::test
