// Packets the local device drops (Linux: the qdisc returns NET_XMIT_DROP,
// e.g. `tc qdisc replace dev tun0 root pfifo limit 0`): nothing left the
// host, and TCP knows it. New data stays unsent (tcp_write_xmit), a failed
// retransmission is not in flight (tcp_retransmit_skb) and counts
// TcpExtTCPRetransFail, timers retry after TCP_RESOURCE_PROBE_INTERVAL
// (500 ms) without backing off, and the connection enters CWR
// (__tcp_transmit_skb -> tcp_enter_cwr).
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

TEST(LocalDrop, NewDataStaysUnsentUntilTheDeviceAcceptsAgain) {
  Harness t;
  SocketId s = t.passive_open();
  t.nif().drop_all = true;
  std::vector<uint8_t> d(1000, 7);
  ASSERT_EQ(*t.stack().send(t.now(), s, d), 1000u);
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_EQ(t.nif().dropped, 1u);
  auto i = *t.stack().tcp_info(s);
  EXPECT_EQ(i.tcpi_unacked, 0u);           // not in flight: SND.NXT did not move
  EXPECT_EQ(i.tcpi_notsent_bytes, 1000u);
  EXPECT_EQ(i.tcpi_ca_state, static_cast<uint8_t>(CaState::CWR));  // tcp_enter_cwr
  EXPECT_EQ(t.stack().counters().get(Counter::WeirOutDeviceDrops), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPOrigDataSent), 0u);
  // Nothing in flight and data queued: the probe timer (tcp_check_probe_timer)
  // tries again; once the device accepts, the data leaves from SND.UNA.
  t.nif().drop_all = false;
  t.run_next_timer();
  Tx seg = t.expect_tx();
  EXPECT_EQ(t.rel_seq(seg), 1u);
  EXPECT_EQ(seg.payload.size(), 1000u);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_unacked, 1u);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_notsent_bytes, 0u);
}

TEST(LocalDrop, FailedRetransmissionIsNotInFlightAndRetriesIn500ms) {
  Harness t;
  SocketId s = t.passive_open();
  std::vector<uint8_t> d(1000, 7);
  t.stack().send(t.now(), s, d);
  t.expect_tx();
  t.nif().drop_all = true;
  // The tail loss probe (a retransmission of the last packet) fails...
  t.run_next_timer();
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPLossProbes), 0u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPRetransFail), 1u);
  // ...and so does the RTO's retransmission of the head.
  t.run_next_timer();
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPTimeouts), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPRetransFail), 2u);
  auto i = *t.stack().tcp_info(s);
  EXPECT_EQ(i.tcpi_retrans, 0u);  // tcp_retransmit_skb failed: no TCPCB_RETRANS
  EXPECT_EQ(i.tcpi_lost, 1u);
  EXPECT_EQ(i.tcpi_backoff, 0);    // local congestion does not back off
  EXPECT_EQ(t.pending(), 0u);
  // tcp_retransmit_timer: TCP_RESOURCE_PROBE_INTERVAL, not the RTO.
  const Time failed_at = t.now();
  t.nif().drop_all = false;
  EXPECT_EQ(t.run_next_timer() - failed_at, Duration::ms(500));
  Tx rtx = t.expect_tx();
  EXPECT_EQ(t.rel_seq(rtx), 1u);
  EXPECT_EQ(rtx.payload.size(), 1000u);
  i = *t.stack().tcp_info(s);
  EXPECT_EQ(i.tcpi_retrans, 1u);
  EXPECT_EQ(i.tcpi_backoff, 1);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPRetransFail), 2u);
}

// gtests user_timeout/user-timeout-probe.pkt, as a unit: with the device
// dropping everything, each window probe fails, counts in tcpi_probes and
// is retried 500 ms later without backoff; TCP_USER_TIMEOUT (3 s) counts
// from the first probe (icsk_probes_tstamp).
TEST(LocalDrop, DroppedWindowProbesRetryEvery500msUntilUserTimeout) {
  Harness t;
  SocketId s = t.passive_open(PeerOpts{.ts = false});
  const int ut = 3000;
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_USER_TIMEOUT, int_opt(ut)), Errc::kOk);
  t.nif().drop_all = true;
  std::vector<uint8_t> d(24, 1);
  ASSERT_EQ(*t.stack().send(t.now(), s, d), 24u);
  const Time written = t.now();
  const Time first_probe = t.run_next_timer();  // tcp_probe0_base: max(RTO, 200 ms)
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_probes, 1);
  Time last = first_probe;
  for (int k = 2; k <= 6; ++k) {
    const Time at = t.run_next_timer();
    EXPECT_EQ(at - last, Duration::ms(500)) << "probe " << k;
    last = at;
    EXPECT_EQ(t.stack().tcp_info(s)->tcpi_probes, k);
    EXPECT_EQ(t.stack().tcp_info(s)->tcpi_backoff, 0);
  }
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_EQ(t.nif().dropped, 7u);  // the write's attempt and six probes
  // Still alive just before the user timeout runs out...
  t.advance_to(first_probe + Duration::ms(2999));
  EXPECT_TRUE(t.stack().send(t.now(), s, d).has_value());
  // ...and timed out by the next probe time after it.
  t.advance_to(first_probe + Duration::ms(3001));
  auto r = t.stack().send(t.now(), s, d);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), Errc::kTimedOut);
  EXPECT_GT(first_probe - written, Duration::ms(199));
}

TEST(LocalDrop, DroppedAckIsNotResent) {
  Harness t;
  SocketId s = t.passive_open();
  t.nif().drop_all = true;
  t.inject(ACK | PSH, 1, 1, 100);  // quick-ack mode: acknowledged at once
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_EQ(t.nif().dropped, 1u);
  t.nif().drop_all = false;
  // Linux __tcp_send_ack ignores the error: tcp_event_ack_sent already ran,
  // so no delayed-ACK timer is left to send it again.
  t.advance(Duration::s(1));
  EXPECT_EQ(t.pending(), 0u);
  (void)s;
}

}  // namespace
}  // namespace weir::test
