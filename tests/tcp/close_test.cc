// Closing (RFC 9293 §3.6, §3.10.4): active, passive, simultaneous close,
// half-close, TIME-WAIT, SO_LINGER zero, close with unread data, RST.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

uint8_t state(Harness& t, SocketId s) { return t.stack().tcp_info(s)->tcpi_state; }

TEST(Close, ActiveCloseWalksFinWait1FinWait2TimeWaitClosed) {
  Harness t;
  SocketId s = t.passive_open();
  ASSERT_EQ(t.stack().shutdown(t.now(), s, SHUT_WR), Errc::kOk);
  Tx fin = t.expect_tx();
  EXPECT_TRUE(fin.has(FIN) && fin.has(ACK));
  EXPECT_EQ(t.rel_seq(fin), 1u);
  EXPECT_EQ(state(t, s), 4);  // FIN-WAIT-1
  t.inject(ACK, 1, 2);
  EXPECT_EQ(state(t, s), 5);  // FIN-WAIT-2
  t.inject(FIN | ACK, 1, 2);
  Tx ack = t.expect_tx();
  EXPECT_EQ(t.rel_ack(ack), 2u);
  // TIME-WAIT belongs to the timewait entry; the socket the application
  // holds is CLOSED (Linux tcp_time_wait -> tcp_done).
  EXPECT_EQ(state(t, s), 7);
  EXPECT_TRUE(time_wait_row(t));  // the tuple is held
  t.advance(Duration::s(59));
  EXPECT_TRUE(time_wait_row(t));
  t.advance(Duration::s(1));
  EXPECT_FALSE(time_wait_row(t));  // gone after 60 s (Linux TCP_TIMEWAIT_LEN)
  EXPECT_EQ(state(t, s), 7);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTW), 1u);
}

TEST(Close, PassiveCloseCloseWaitLastAck) {
  Harness t;
  SocketId s = t.passive_open();
  t.inject(FIN | ACK, 1, 1);
  Tx ack = t.expect_tx();
  EXPECT_EQ(t.rel_ack(ack), 2u);  // immediate ACK of the FIN
  EXPECT_EQ(state(t, s), 8);      // CLOSE-WAIT
  EXPECT_NE(t.stack().poll(s) & ev::RDHUP, 0u);
  std::vector<uint8_t> b(10);
  EXPECT_EQ(*t.stack().recv(t.now(), s, b), 0u);  // end of stream
  EXPECT_EQ(*t.stack().send(t.now(), s, std::span<const uint8_t>(b.data(), 3)), 3u);  // half-open: may still send
  Tx data = t.expect_tx();
  EXPECT_EQ(data.payload.size(), 3u);
  t.inject(ACK, 2, 4);
  t.stack().close(t.now(), s);
  Tx fin = t.expect_tx();
  EXPECT_TRUE(fin.has(FIN));
  EXPECT_EQ(t.rel_seq(fin), 4u);
  t.inject(ACK, 2, 5);
  EXPECT_EQ(t.stack().poll(s), ev::ERR | ev::HUP);  // gone: no longer a socket
  EXPECT_EQ(t.pending(), 0u);
}

TEST(Close, SimultaneousCloseGoesThroughClosing) {
  Harness t;
  SocketId s = t.passive_open();
  t.stack().shutdown(t.now(), s, SHUT_WR);
  Tx fin = t.expect_tx();
  ASSERT_TRUE(fin.has(FIN));
  t.inject(FIN | ACK, 1, 1);  // crosses ours: does not ack our FIN
  Tx ack = t.expect_tx();
  EXPECT_EQ(t.rel_ack(ack), 2u);
  EXPECT_EQ(state(t, s), 11);  // CLOSING
  t.inject(ACK, 2, 2);
  EXPECT_EQ(state(t, s), 7);  // TIME-WAIT's timewait entry; the socket is CLOSED
  EXPECT_TRUE(time_wait_row(t));
}

TEST(Close, FinRetransmittedUntilAcked) {
  Harness t;
  SocketId s = t.passive_open();
  t.stack().shutdown(t.now(), s, SHUT_WR);
  t.expect_tx();
  t.run_next_timer();
  Tx again = t.expect_tx();
  EXPECT_TRUE(again.has(FIN));
  EXPECT_EQ(t.rel_seq(again), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpRetransSegs), 1u);
}

TEST(Close, TimeWaitAcksRetransmittedFinAndRestartsTimer) {
  Harness t;
  SocketId s = t.passive_open();
  t.stack().shutdown(t.now(), s, SHUT_WR);
  t.expect_tx();
  t.inject(FIN | ACK, 1, 2);
  t.expect_tx();
  ASSERT_TRUE(time_wait_row(t));
  t.advance(Duration::s(30));
  t.inject(FIN | ACK, 1, 2);  // our ACK was lost; the peer retransmits its FIN
  Tx ack = t.expect_tx();
  EXPECT_EQ(t.rel_ack(ack), 2u);
  t.advance(Duration::s(59));
  EXPECT_TRUE(time_wait_row(t));  // 2MSL restarted
  t.advance(Duration::s(1));
  EXPECT_FALSE(time_wait_row(t));
  EXPECT_EQ(state(t, s), 7);
}

TEST(Close, LingerZeroSendsReset) {
  Harness t;
  SocketId s = t.passive_open();
  struct linger l{1, 0};
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_LINGER,
                                 std::span(reinterpret_cast<const uint8_t*>(&l), sizeof l)),
            Errc::kOk);
  t.stack().close(t.now(), s);
  Tx rst = t.expect_tx();
  EXPECT_TRUE(rst.has(RST));
  EXPECT_FALSE(rst.has(FIN));
  EXPECT_EQ(t.rel_seq(rst), 1u);
}

TEST(Close, CloseWithUnreadDataSendsReset) {
  Harness t;
  SocketId s = t.passive_open();
  t.inject(ACK | PSH, 1, 1, 100);
  t.clear_tx();
  t.stack().close(t.now(), s);
  Tx rst = t.expect_tx();
  EXPECT_TRUE(rst.has(RST));  // RFC 2525 §2.17, Linux tcp_close
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPAbortOnClose), 1u);
}

TEST(Close, OrphanFinWait2TimesOut) {
  Harness t;
  SocketId s = t.passive_open();
  t.stack().close(t.now(), s);
  t.expect_tx();
  t.inject(ACK, 1, 2);  // FIN-WAIT-2, orphaned
  EXPECT_EQ(t.pending(), 0u);
  t.advance(Duration::s(61));  // tcp_fin_timeout
  // Gone: a segment now draws a reset.
  t.inject(ACK | PSH, 1, 2, 10);
  Tx r = t.expect_tx();
  EXPECT_TRUE(r.has(RST));
}

TEST(Close, ResetInEstablishedReportsEconnreset) {
  Harness t;
  SocketId s = t.passive_open();
  t.inject(RST, 1, 0);
  std::vector<uint8_t> b(10);
  auto r = t.stack().recv(t.now(), s, b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), Errc::kConnReset);
  EXPECT_EQ(*t.stack().recv(t.now(), s, b), 0u);  // then end of stream
  auto w = t.stack().send(t.now(), s, b);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error(), Errc::kPipe);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpEstabResets), 1u);
}

}  // namespace
}  // namespace weir::test
