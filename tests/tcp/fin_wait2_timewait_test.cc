// An orphan's FIN-WAIT-2 as Linux's timewait sock with tw_substate
// FIN_WAIT2 (tcp_time_wait(sk, TCP_FIN_WAIT2, tmo) from tcp_close or
// tcp_rcv_state_process when tcp_fin_time() is at most TCP_TIMEWAIT_LEN):
// listed as such in /proc/net/tcp, counted when scheduled, answering as
// tcp_timewait_state_process does, and taken over by connect().
#include <gtest/gtest.h>

#include <sys/socket.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

// get_timewait4_sock: the tw_substate (05), timer 3.
bool fw2_row(Harness& t) {
  return t.stack().proc_net_tcp(false).find(" 05 00000000:00000000 03:") != std::string::npos;
}

// close(), the peer ACKs our FIN: an orphan in FIN-WAIT-2 with the default
// tcp_fin_timeout (60 s), so at once its timewait stage.
void orphan_fin_wait2(Harness& t, SocketId s) {
  ASSERT_EQ(t.stack().close(t.now(), s), Errc::kOk);
  ASSERT_TRUE(t.expect_tx().has(FIN));
  t.inject(ACK, 1, 2);
  ASSERT_EQ(t.pending(), 0u);
}

TEST(FinWait2Timewait, ListedAndCountedAsATimewaitSock) {
  Harness t;
  orphan_fin_wait2(t, t.passive_open());
  EXPECT_TRUE(fw2_row(t));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTW), 1u);  // __inet_twsk_schedule
  // The peer's FIN: acknowledged, the same timewait sock now TIME-WAIT (06),
  // rescheduled and not counted again.
  t.advance(Duration::s(10));
  t.inject(FIN | ACK, 1, 2);
  Tx ack = t.expect_tx();
  EXPECT_EQ(t.rel_ack(ack), 2u);
  EXPECT_FALSE(fw2_row(t));
  EXPECT_TRUE(time_wait_row(t));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTW), 1u);
  t.advance(Duration::s(60));
  EXPECT_FALSE(time_wait_row(t));
}

TEST(FinWait2Timewait, ShortWaitCountsAsKilled) {
  StackConfig cfg;
  cfg.tcp_fin_timeout_s = 3;  // tcp_fin_time: max(3 s, 3.5 RTO)
  Harness t(cfg);
  orphan_fin_wait2(t, t.passive_open());
  EXPECT_TRUE(fw2_row(t));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTWKilled), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTW), 0u);
}

// TCP_TW_RST: a SYN at or past RCV.NXT is answered with a reset (no RFC
// 5961 challenge ACK) and the tuple is free at once.
TEST(FinWait2Timewait, SynDrawsResetAndFreesTheTuple) {
  Harness t;
  orphan_fin_wait2(t, t.passive_open());
  wire::TcpHeader syn = t.peer_syn(t.remote_port, t.peer_isn_ + 1000);
  t.inject_raw(syn);
  Tx rst = t.expect_tx();
  EXPECT_TRUE(rst.has(RST) && rst.has(ACK)) << describe(rst);
  EXPECT_EQ(rst.h.ack, t.peer_isn_ + 1001);
  EXPECT_FALSE(fw2_row(t));
}

// An RST anywhere in the window ends it, silently (tcp_in_window, then
// "goto kill"; a full socket would answer a challenge ACK).
TEST(FinWait2Timewait, InWindowRstEndsItSilently) {
  Harness t;
  orphan_fin_wait2(t, t.passive_open());
  t.inject(RST, 101, 0);
  EXPECT_EQ(t.pending(), 0u) << describe(t.expect_tx());
  EXPECT_FALSE(fw2_row(t));
}

// "Dup ACK?": the ACK field is not looked at; an empty segment is dropped.
TEST(FinWait2Timewait, EmptySegmentsAreDroppedWhateverTheyAck) {
  Harness t;
  orphan_fin_wait2(t, t.passive_open());
  t.inject(ACK, 1, 50);  // acknowledges data never sent
  EXPECT_EQ(t.pending(), 0u) << describe(t.expect_tx());
  EXPECT_TRUE(fw2_row(t));
}

// New data after the half-close: TCP_TW_RST, which is not TCPAbortOnData.
TEST(FinWait2Timewait, DataDrawsAResetNotCountedAsAbortOnData) {
  Harness t;
  orphan_fin_wait2(t, t.passive_open());
  t.inject(ACK, 1, 2, 10);
  Tx rst = t.expect_tx();
  EXPECT_TRUE(rst.has(RST)) << describe(rst);
  EXPECT_EQ(t.rel_seq(rst), 2u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPAbortOnData), 0u);
  EXPECT_FALSE(fw2_row(t));
}

// Out of the window: an ACK, then rate-limited (TCPACKSkippedFinWait2).
TEST(FinWait2Timewait, OutOfWindowIsAckedAtARateLimit) {
  Harness t;
  orphan_fin_wait2(t, t.passive_open());
  t.inject(ACK, 0, 2);  // an empty segment just left of the window (old)
  Tx ack = t.expect_tx();
  EXPECT_EQ(t.rel_ack(ack), 1u);
  t.inject(ACK, 0, 2);
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPACKSkippedFinWait2), 1u);
}

// __inet_check_established: a FIN-WAIT-2 timewait sock is a timewait sock,
// and tcp_twsk_unique lets connect() take it with tcp_tw_reuse.
TEST(FinWait2Timewait, ConnectTakesItOver) {
  Harness t(single_port_tw_reuse());
  orphan_fin_wait2(t, t.active_open());
  const Seq32 old_nxt = t.iss_ + 2;  // SYN and FIN
  SocketId s = kNoSocket;
  const Tx syn = connect_over_time_wait(t, &s);
  EXPECT_EQ(syn.h.seq, old_nxt + 65537u);  // tw_snd_nxt + 65535 + 2
  EXPECT_FALSE(fw2_row(t));
}

// tcp_timewait_state_process (FIN_WAIT2): "Dup ACK?" asks only whether ACK
// is set; the FIN's ACK value is never checked (no tcp_ack()). A FIN whose
// ACK covers data never sent, or an old ACK, still starts TIME-WAIT.
TEST(FinWait2Timewait, FinIsTakenWhateverItAcks) {
  for (uint32_t ack : {2u + 100000u, 1u}) {
    Harness t;
    orphan_fin_wait2(t, t.passive_open());
    t.advance(Duration::s(1));
    t.inject(FIN | ACK, 1, ack);
    Tx a = t.expect_tx();
    EXPECT_TRUE(a.has(ACK) && !a.has(RST) && !a.has(FIN)) << describe(a);
    EXPECT_EQ(t.rel_ack(a), 2u) << "ack " << ack;
    EXPECT_EQ(t.rel_seq(a), 2u);
    EXPECT_TRUE(time_wait_row(t)) << "ack " << ack;
    EXPECT_EQ(t.pending(), 0u);
  }
}

// tcp_time_wait froze tw_rcv_wnd; the FIN_WAIT2 substate's in-window test
// is [tw_rcv_nxt, tw_rcv_nxt + tw_rcv_wnd) and its ACKs carry the frozen
// field, the same as the last one the full socket sent.
TEST(FinWait2Timewait, AdvertisesTheFrozenWindow) {
  Harness t;
  SocketId s = t.passive_open();
  ASSERT_EQ(t.stack().close(t.now(), s), Errc::kOk);
  const Tx fin = t.expect_tx();
  t.inject(ACK, 1, 2);
  t.advance(Duration::s(1));
  t.inject(FIN | ACK, 1, 2);
  const Tx a = t.expect_tx();
  EXPECT_EQ(a.h.window, fin.h.window) << describe(a);
}

// tcp_time_wait(sk, TCP_FIN_WAIT2, tmo) without room for a timewait sock
// (tcp_max_tw_buckets): TCPTimeWaitOverflow and tcp_done, so the orphan
// goes silently and a later segment of the peer's finds no socket.
TEST(FinWait2Timewait, NoRoomForATimewaitSockEndsTheOrphan) {
  StackConfig cfg;
  cfg.tcp_max_tw_buckets = 0;
  Harness t(cfg);
  orphan_fin_wait2(t, t.passive_open());
  EXPECT_FALSE(fw2_row(t));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPTimeWaitOverflow), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTW), 0u);
  t.inject(FIN | ACK, 1, 2);
  EXPECT_TRUE(t.expect_tx().has(RST));
}

}  // namespace
}  // namespace weir::test
