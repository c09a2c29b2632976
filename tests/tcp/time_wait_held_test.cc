// TIME-WAIT while the application still holds the socket (Linux
// tcp_time_wait + tcp_done): a timewait entry answers for the tuple, and the
// socket the application holds is CLOSED (tcpi_state TCP_CLOSE, both
// directions shut, shutdown() and getpeername() ENOTCONN, close() silent).
// connect() and a newer SYN may take the tuple over from under it.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

uint8_t state(Harness& t, SocketId s) { return t.stack().tcp_info(s)->tcpi_state; }

// shutdown(SHUT_WR), the peer ACKs our FIN and sends its own: TIME-WAIT,
// with the socket still open.
SocketId held_time_wait(Harness& t, SocketId s) {
  EXPECT_EQ(t.stack().shutdown(t.now(), s, SHUT_WR), Errc::kOk);
  EXPECT_TRUE(t.expect_tx().has(FIN));
  t.inject(ACK, 1, 2);
  t.inject(FIN | ACK, 1, 2);
  Tx ack = t.expect_tx();
  EXPECT_EQ(t.rel_ack(ack), 2u);
  return s;
}

TEST(TimeWaitHeld, TheApplicationSeesCloseWhileTheTupleIsHeld) {
  Harness t;
  SocketId s = held_time_wait(t, t.passive_open());
  EXPECT_EQ(state(t, s), 7);  // TCP_CLOSE, not TCP_TIME_WAIT
  EXPECT_TRUE(time_wait_row(t));
  // Linux tcp_poll for CLOSE with SHUTDOWN_MASK.
  EXPECT_EQ(t.stack().poll(s), ev::IN | ev::RDHUP | ev::HUP | ev::OUT);
  std::vector<uint8_t> b(10);
  EXPECT_EQ(*t.stack().recv(t.now(), s, b), 0u);
  EXPECT_EQ(t.stack().send(t.now(), s, std::span<const uint8_t>(b.data(), 3)).error(), Errc::kPipe);
  EXPECT_EQ(t.stack().shutdown(t.now(), s, SHUT_WR), Errc::kNotConn);  // inet_shutdown: TCP_CLOSE
  EXPECT_EQ(t.stack().remote_endpoint(s).error(), Errc::kNotConn);    // inet_getname(peer)
  ASSERT_TRUE(t.stack().local_endpoint(s));
  EXPECT_EQ(t.stack().local_endpoint(s)->port, 8080);
  EXPECT_EQ(t.pending(), 0u);
  // The timewait entry still re-ACKs the peer's retransmitted FIN.
  t.advance(Duration::ms(200));
  t.inject(FIN | ACK, 1, 2);
  Tx again = t.expect_tx();
  EXPECT_TRUE(again.has(ACK) && !again.has(FIN));
  EXPECT_EQ(t.rel_ack(again), 2u);
  EXPECT_EQ(t.rel_seq(again), 2u);
  // Closing the socket sends nothing; the timewait entry lives on, answers,
  // and goes after 60 s.
  EXPECT_EQ(t.stack().close(t.now(), s), Errc::kOk);
  EXPECT_EQ(t.pending(), 0u);
  t.inject(FIN | ACK, 1, 2);
  EXPECT_EQ(t.rel_ack(t.expect_tx()), 2u);
  EXPECT_TRUE(time_wait_row(t));
  t.advance(Duration::s(60));
  EXPECT_FALSE(time_wait_row(t));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTW), 1u);
}

TEST(TimeWaitHeld, TheTimewaitEntryExpiresUnderTheOpenSocket) {
  Harness t;
  SocketId s = held_time_wait(t, t.passive_open());
  t.advance(Duration::s(60));
  EXPECT_FALSE(time_wait_row(t));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTW), 1u);
  EXPECT_EQ(state(t, s), 7);
  std::vector<uint8_t> b(10);
  EXPECT_EQ(*t.stack().recv(t.now(), s, b), 0u);
  // The tuple is free: the peer's FIN now finds no socket.
  t.inject(FIN | ACK, 1, 2);
  EXPECT_TRUE(t.expect_tx().has(RST));
}

// Linux __tcp_close on a socket already CLOSE: "goto adjudge_to_death"
// before the unread-data and SO_LINGER checks, so no reset.
TEST(TimeWaitHeld, CloseWithUnreadDataSendsNoReset) {
  for (bool linger_zero : {false, true}) {
    Harness t;
    SocketId s = t.passive_open();
    if (linger_zero) {
      const struct linger l{1, 0};
      ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_LINGER,
                                     std::span(reinterpret_cast<const uint8_t*>(&l), sizeof l)),
                Errc::kOk);
    }
    ASSERT_EQ(t.stack().shutdown(t.now(), s, SHUT_WR), Errc::kOk);
    t.expect_tx();
    t.inject(ACK, 1, 2);
    t.inject(FIN | ACK, 1, 2, 100);  // 100 bytes and the FIN
    EXPECT_EQ(t.rel_ack(t.expect_tx()), 102u);
    EXPECT_EQ(state(t, s), 7);
    EXPECT_EQ(t.stack().close(t.now(), s), Errc::kOk);
    EXPECT_EQ(t.pending(), 0u) << "linger_zero=" << linger_zero << " " << describe(t.expect_tx());
    EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPAbortOnClose), 0u);
    EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPAbortOnData), 0u);
    t.inject(FIN | ACK, 101, 2);
    Tx ack = t.expect_tx();
    EXPECT_FALSE(ack.has(RST));
    EXPECT_EQ(t.rel_ack(ack), 102u);
  }
}

// tcp_twsk_unique does not ask who holds the socket the timewait sock came
// from: connect() takes the tuple over while the application still has it.
TEST(TimeWaitHeld, ConnectTakesTheTupleOverFromUnderTheHolder) {
  Harness t(single_port_tw_reuse());
  SocketId old = held_time_wait(t, t.active_open());
  EXPECT_EQ(state(t, old), 7);
  SocketId s = kNoSocket;
  connect_over_time_wait(t, &s);
  // The old socket is untouched: still CLOSED, EOF, and closing it is silent.
  EXPECT_EQ(state(t, old), 7);
  std::vector<uint8_t> b(10);
  EXPECT_EQ(*t.stack().recv(t.now(), old, b), 0u);
  EXPECT_EQ(t.stack().close(t.now(), old), Errc::kOk);
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_EQ(state(t, s), 2);  // SYN-SENT
}

// Linux tcp_timewait_state_process (TCP_TW_SYN): a newer SYN takes the
// tuple to the listener; the accepted socket the application holds stays.
TEST(TimeWaitHeld, NewerSynTakesTheTupleToTheListener) {
  Harness t;
  SocketId old = held_time_wait(t, t.passive_open());
  t.advance(Duration::s(1));
  t.peer_isn_ = t.peer_isn_ + 100000;
  t.inject_raw(t.peer_syn(t.remote_port, t.peer_isn_));
  Tx sa = t.expect_tx();
  EXPECT_TRUE(sa.has(SYN) && sa.has(ACK));
  EXPECT_EQ(sa.h.ack, t.peer_isn_ + 1);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTWRecycled), 1u);
  EXPECT_EQ(state(t, old), 7);
  EXPECT_EQ(t.stack().close(t.now(), old), Errc::kOk);
  EXPECT_EQ(t.pending(), 0u);
}

}  // namespace
}  // namespace weir::test
