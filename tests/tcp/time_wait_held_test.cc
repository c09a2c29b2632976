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

// Linux tcp_time_wait freezes tw_rcv_wnd = tcp_receive_window() and every
// ACK the timewait sock sends carries tw_rcv_wnd >> tw_rcv_wscale
// (tcp_v4_timewait_ack): the holder reading the data afterwards frees
// buffer space but never opens the window TIME-WAIT advertises.
TEST(TimeWaitHeld, ReadingAfterTimeWaitDoesNotOpenTheWindow) {
  Harness t;
  SocketId s = t.passive_open();
  ASSERT_EQ(set_int(t, s, SOL_SOCKET, SO_RCVBUF, 4096), Errc::kOk);
  ASSERT_EQ(t.stack().shutdown(t.now(), s, SHUT_WR), Errc::kOk);
  t.expect_tx();
  t.inject(ACK, 1, 2);
  t.inject(ACK, 1, 2, 1000);
  t.inject(ACK, 1001, 2, 1000);
  t.clear_tx();
  t.inject(FIN | ACK, 2001, 2);
  const Tx fin_ack = t.expect_tx();
  ASSERT_EQ(t.rel_ack(fin_ack), 2002u);
  ASSERT_EQ(state(t, s), 7);
  std::vector<uint8_t> b(4000);
  EXPECT_EQ(*t.stack().recv(t.now(), s, b), 2000u);
  EXPECT_EQ(t.pending(), 0u);  // no window update from a timewait sock
  t.advance(Duration::ms(200));
  t.inject(FIN | ACK, 2001, 2);
  const Tx again = t.expect_tx();
  EXPECT_EQ(t.rel_ack(again), 2002u);
  EXPECT_EQ(again.h.window, fin_ack.h.window) << describe(fin_ack) << " then " << describe(again);
}

// Linux tcp_time_wait with inet_twsk_alloc failing (tcp_max_tw_buckets
// timewait socks exist): TCPTimeWaitOverflow, no TIMEWAITED, tcp_done. The
// FIN was ACKed first (tcp_fin: tcp_send_ack, then tcp_time_wait); the
// tuple is free at once, so the peer's retransmitted FIN finds nothing.
TEST(TimeWaitHeld, NoRoomForATimewaitSockClosesAtOnce) {
  StackConfig cfg;
  cfg.tcp_max_tw_buckets = 0;
  Harness t(cfg);
  SocketId s = held_time_wait(t, t.passive_open());
  EXPECT_EQ(state(t, s), 7);
  EXPECT_FALSE(time_wait_row(t));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPTimeWaitOverflow), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTW), 0u);
  EXPECT_EQ(t.stack().poll(s), ev::IN | ev::RDHUP | ev::HUP | ev::OUT);
  t.inject(FIN | ACK, 1, 2);
  EXPECT_TRUE(t.expect_tx().has(RST));
}

// The limit counts the timewait socks that exist: with room for one, the
// first connection keeps its TIME-WAIT and the second overflows; once the
// first has gone, there is room again.
TEST(TimeWaitHeld, TheLimitCountsLiveTimewaitSocks) {
  StackConfig cfg;
  cfg.tcp_max_tw_buckets = 1;
  Harness t(cfg);
  held_time_wait(t, t.passive_open());
  EXPECT_TRUE(time_wait_row(t));
  t.remote_port = 50001;
  held_time_wait(t, t.passive_open());
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPTimeWaitOverflow), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTW), 1u);
  t.advance(Duration::s(60));
  EXPECT_FALSE(time_wait_row(t));
  t.remote_port = 50002;
  held_time_wait(t, t.passive_open());
  EXPECT_TRUE(time_wait_row(t));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTW), 2u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPTimeWaitOverflow), 1u);
}

// After the timewait entry has gone, the socket still held keeps what
// Linux keeps: getsockname names the port (inet_sport; __inet_put_port
// clears only inet_num), sock->state stays SS_CONNECTED so connect() is
// EISCONN (__inet_stream_connect) and listen() EINVAL (inet_listen), for
// an active and an accepted socket alike.
TEST(TimeWaitHeld, AfterTheTimewaitEntryTheSocketStaysConnectedToTheApi) {
  for (bool active : {true, false}) {
    Harness t;
    SocketId s = held_time_wait(t, active ? t.active_open() : t.passive_open());
    const uint16_t port = t.stack().local_endpoint(s)->port;
    EXPECT_NE(port, 0);
    EXPECT_EQ(t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port}), Errc::kIsConn);
    t.advance(Duration::s(60));
    EXPECT_FALSE(time_wait_row(t));
    ASSERT_TRUE(t.stack().local_endpoint(s));
    EXPECT_EQ(t.stack().local_endpoint(s)->port, port) << "active " << active;
    EXPECT_EQ(t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port}), Errc::kIsConn)
        << "active " << active;
    EXPECT_EQ(t.stack().listen(t.now(), s, 1), Errc::kInval);
    EXPECT_EQ(t.pending(), 0u);
  }
}

}  // namespace
}  // namespace weir::test
