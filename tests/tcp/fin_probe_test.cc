// A FIN sent on its own is a packet in flight like data (Linux tcp_send_fin
// queues it as an skb of its own, counted in packets_out): it is probed by a
// tail loss probe (RFC 8985 §7.2) before the RTO, and the RTO then runs in
// full from the probe (gtests user_timeout/user_timeout.pkt).
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

// A passive open whose handshake took `rtt` (SRTT = rtt, RTO = rtt + 200 ms).
SocketId open_with_rtt(Harness& t, Duration rtt) {
  t.listener = *t.stack().socket();
  EXPECT_EQ(t.stack().bind(t.listener, Endpoint{t.local, t.local_port}), Errc::kOk);
  EXPECT_EQ(t.stack().listen(t.now(), t.listener, 8), Errc::kOk);
  wire::TcpHeader h;
  h.src_port = t.remote_port;
  h.dst_port = t.local_port;
  h.seq = t.peer_isn_;
  h.flags = SYN;
  h.window = 65535;
  t.build_syn_options(h.options, PeerOpts{.ts = false});
  t.peer_ts = false;
  t.inject_raw(h);
  Tx synack = t.expect_tx();
  t.iss_ = synack.h.seq;
  t.advance(rtt);
  t.inject(ACK, 1, 1);
  auto s = t.stack().accept(t.now(), t.listener, nullptr);
  EXPECT_TRUE(s.has_value());
  return *s;
}

TEST(FinProbe, LoneFinIsProbedThenRetransmittedByRto) {
  Harness t;
  SocketId s = open_with_rtt(t, Duration::ms(100));
  ASSERT_EQ(t.stack().tcp_info(s)->tcpi_rto, 300000u);
  t.advance(Duration::s(2));
  ASSERT_EQ(t.stack().close(t.now(), s), Errc::kOk);
  Tx fin = t.expect_tx();
  ASSERT_TRUE(fin.has(FIN));
  const Time fin_at = t.now();
  // PTO = 2 SRTT + 200 ms (one packet out) = 400 ms, capped by the RTO 300 ms.
  const Time probe_at = t.run_next_timer();
  EXPECT_EQ(probe_at - fin_at, Duration::ms(300));
  Tx probe = t.expect_tx();
  EXPECT_TRUE(probe.has(FIN));
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_EQ(t.rel_seq(probe), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPLossProbes), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPTimeouts), 0u);
  // The RTO runs in full from the probe (tcp_send_loss_probe -> tcp_rearm_rto),
  // then backs off: 300 ms, then 600 ms.
  const Time rto1 = t.run_next_timer();
  EXPECT_EQ(rto1 - probe_at, Duration::ms(300));
  EXPECT_TRUE(t.expect_tx().has(FIN));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPTimeouts), 1u);
  const Time rto2 = t.run_next_timer();
  EXPECT_EQ(rto2 - rto1, Duration::ms(600));
  EXPECT_TRUE(t.expect_tx().has(FIN));
}

// TCP_USER_TIMEOUT on a closing socket whose FIN is never acknowledged: it
// gives up once the user timeout has passed since the first RTO
// retransmission, not from when the connection was established.
TEST(FinProbe, UserTimeoutCountsFromTheFinNotFromEstablishment) {
  Harness t;
  SocketId s = open_with_rtt(t, Duration::ms(100));
  t.advance(Duration::s(2));
  int ms = 3000;
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_USER_TIMEOUT, int_opt(ms)), Errc::kOk);
  ASSERT_EQ(t.stack().close(t.now(), s), Errc::kOk);
  ASSERT_TRUE(t.expect_tx().has(FIN));
  const Time fin_at = t.now();
  int fins = 0;
  Time last_fin = fin_at;
  while (t.stack().next_deadline() < fin_at + Duration::s(20)) {
    t.run_next_timer();
    while (t.pending() > 0) {
      Tx x = t.expect_tx();
      if (x.has(FIN)) {
        ++fins;
        last_fin = t.now();
      }
    }
  }
  // Resent at +300 (probe), +600, +1200, +2400 ms; the give-up time counts
  // from the FIN's last transmission before the first RTO, the probe
  // (+300 + 3000 ms), before the 2400 ms backoff would resend at +4800.
  EXPECT_EQ(fins, 4);
  EXPECT_EQ(last_fin - fin_at, Duration::ms(2400));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPAbortOnTimeout), 1u);
}

// Data arriving after close() (RFC 1122 §4.2.2.13, Linux tcp_rcv_state_process
// in FIN-WAIT-1): the reset answers that segment, <SEQ=SEG.ACK><CTL=RST>
// (tcp_v4_send_reset), it is not an RST|ACK at our SND.NXT.
TEST(FinProbe, DataAfterCloseIsAnsweredWithResetAtItsAck) {
  Harness t;
  SocketId s = open_with_rtt(t, Duration::ms(100));
  ASSERT_EQ(t.stack().close(t.now(), s), Errc::kOk);
  ASSERT_TRUE(t.expect_tx().has(FIN));
  t.advance(Duration::ms(50));
  t.inject(ACK, 1, 1, 1);  // one byte, our FIN not yet acknowledged
  Tx rst = t.expect_tx();
  EXPECT_TRUE(rst.has(RST));
  EXPECT_FALSE(rst.has(ACK));
  EXPECT_EQ(t.rel_seq(rst), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPAbortOnData), 1u);
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_TRUE(t.stack().next_deadline().is_never());
}

}  // namespace
}  // namespace weir::test
