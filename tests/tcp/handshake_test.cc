// Connection establishment (RFC 9293 §3.5): active, passive and simultaneous
// open, SYN options as Linux sends them, retransmission and give-up.
#include <gtest/gtest.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

TEST(Handshake, ActiveOpenSendsLinuxSynOptions) {
  Harness t;
  SocketId s = *t.stack().socket();
  EXPECT_EQ(t.stack().connect(t.now(), s, Endpoint{t.remote, 80}), Errc::kInProgress);
  Tx syn = t.expect_tx();
  ASSERT_TRUE(syn.has(SYN));
  EXPECT_FALSE(syn.has(ACK));
  EXPECT_EQ(syn.h.options.mss, 1460);  // MTU 1500 - 40
  EXPECT_TRUE(syn.h.options.sack_permitted);
  ASSERT_TRUE(syn.h.options.ts.has_value());
  EXPECT_EQ(syn.h.options.ts->ecr, 0u);
  ASSERT_TRUE(syn.h.options.wscale.has_value());
  EXPECT_GE(*syn.h.options.wscale, 7);
  EXPECT_EQ(syn.h.window, 64240);  // Linux: 65535 rounded down to 44 MSS; never scaled
  EXPECT_GE(syn.h.src_port, 32768);
  EXPECT_LE(syn.h.src_port, 60999);
  EXPECT_EQ(t.stack().poll(s) & ev::OUT, 0u);
}

TEST(Handshake, MssFollowsInterfaceMtu) {
  Harness t({}, 9000);
  SocketId s = *t.stack().socket();
  t.stack().connect(t.now(), s, Endpoint{t.remote, 80});
  EXPECT_EQ(t.expect_tx().h.options.mss, 8960);
}

TEST(Handshake, ActiveOpenCompletesAndAcks) {
  Harness t;
  SocketId s = t.active_open();
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_state, 1);
  EXPECT_NE(t.stack().poll(s) & ev::OUT, 0u);
  auto info = *t.stack().tcp_info(s);
  EXPECT_EQ(info.tcpi_options & 7, 7);  // TS, SACK, WSCALE
  EXPECT_EQ(info.tcpi_snd_wscale, 7);
  EXPECT_EQ(info.tcpi_snd_mss, 1448u);  // 1460 - 12 bytes of timestamps
}

TEST(Handshake, SynRetransmitsWithBackoffThenTimesOut) {
  Harness t;
  SocketId s = *t.stack().socket();
  t.stack().connect(t.now(), s, Endpoint{t.remote, 80});
  Tx syn = t.expect_tx();
  Time last = t.now();
  // RFC 6298 (2.1): 1 s, then doubling; tcp_syn_retries = 6.
  for (int i = 0; i < 6; ++i) {
    Time fired = t.run_next_timer();
    EXPECT_EQ(fired - last, Duration::s(1) * (int64_t{1} << i)) << "retry " << i;
    last = fired;
    Tx again = t.expect_tx();
    EXPECT_TRUE(again.has(SYN));
    EXPECT_EQ(again.h.seq, syn.h.seq);
  }
  Time fired = t.run_next_timer();
  EXPECT_EQ(fired - last, Duration::s(64));
  EXPECT_EQ(t.pending(), 0u);
  auto r = t.stack().recv(t.now(), s, std::span<uint8_t>());
  std::vector<uint8_t> b(10);
  auto rr = t.stack().recv(t.now(), s, b);
  ASSERT_FALSE(rr.has_value());
  EXPECT_EQ(rr.error(), Errc::kTimedOut);
  (void)r;
  // Linux tcp_retransmit_timer counts every expiry, the last one too, and
  // gives up through tcp_write_err (tcp_done in SYN-SENT).
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPTimeouts), 7u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPSynRetrans), 6u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpAttemptFails), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPAbortOnTimeout), 1u);
}

TEST(Handshake, RstToSynIsConnectionRefused) {
  Harness t;
  SocketId s = *t.stack().socket();
  t.stack().connect(t.now(), s, Endpoint{t.remote, 80});
  Tx syn = t.expect_tx();
  t.iss_ = syn.h.seq;
  t.local_port = syn.h.src_port;
  t.remote_port = 80;
  t.inject(RST | ACK, 0, 1);
  std::vector<uint8_t> b(10);
  auto r = t.stack().recv(t.now(), s, b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), Errc::kConnRefused);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpAttemptFails), 1u);
}

TEST(Handshake, SynAckWithBadAckDrawsResetAndKeepsWaiting) {
  Harness t;
  SocketId s = *t.stack().socket();
  t.stack().connect(t.now(), s, Endpoint{t.remote, 80});
  Tx syn = t.expect_tx();
  t.iss_ = syn.h.seq;
  t.local_port = syn.h.src_port;
  t.remote_port = 80;
  t.inject(SYN | ACK, 0, 100);  // acks something never sent
  Tx rst = t.expect_tx();
  EXPECT_TRUE(rst.has(RST));
  EXPECT_EQ(rst.h.seq, t.iss_ + 100);  // RFC 9293 §3.10.7.3: <SEQ=SEG.ACK><CTL=RST>
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_state, 2);  // still SYN-SENT
}

TEST(Handshake, PassiveOpenSynAckEchoesNegotiatedOptions) {
  Harness t;
  PeerOpts o;
  o.sack = false;
  o.wscale = std::nullopt;
  SocketId l = *t.stack().socket();
  t.stack().bind(l, Endpoint{t.local, 8080});
  t.stack().listen(t.now(), l, 8);
  t.listener = l;
  wire::TcpHeader h;
  h.src_port = t.remote_port;
  h.dst_port = 8080;
  h.seq = t.peer_isn_;
  h.flags = SYN;
  h.window = 65535;
  t.build_syn_options(h.options, o);
  t.inject_raw(h);
  Tx sa = t.expect_tx();
  ASSERT_TRUE(sa.has(SYN) && sa.has(ACK));
  EXPECT_EQ(sa.h.ack, t.peer_isn_ + 1);
  EXPECT_FALSE(sa.h.options.sack_permitted);
  EXPECT_FALSE(sa.h.options.wscale.has_value());  // RFC 7323 §2.2: only if the SYN had it
  ASSERT_TRUE(sa.h.options.ts.has_value());
  EXPECT_EQ(sa.h.options.ts->ecr, h.options.ts->val);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpPassiveOpens), 1u);
  // Nothing to accept before the ACK.
  EXPECT_FALSE(t.stack().accept(t.now(), l, nullptr).has_value());
  EXPECT_EQ(t.stack().poll(l) & ev::IN, 0u);
  t.iss_ = sa.h.seq;
  t.inject(ACK, 1, 1);
  EXPECT_NE(t.stack().poll(l) & ev::IN, 0u);
  Endpoint peer;
  auto s = t.stack().accept(t.now(), l, &peer);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(peer.addr, t.remote);
  EXPECT_EQ(peer.port, t.remote_port);
}

TEST(Handshake, SynAckRetransmittedFiveTimesThenChildDropped) {
  Harness t;
  SocketId l = *t.stack().socket();
  t.stack().bind(l, Endpoint{t.local, 8080});
  t.stack().listen(t.now(), l, 8);
  t.listener = l;
  wire::TcpHeader h;
  h.src_port = t.remote_port;
  h.dst_port = 8080;
  h.seq = t.peer_isn_;
  h.flags = SYN;
  h.window = 65535;
  t.build_syn_options(h.options, {});
  t.inject_raw(h);
  t.expect_tx();
  int retrans = 0;
  while (!t.stack().next_deadline().is_never()) {
    t.run_next_timer();
    while (t.pending()) {
      EXPECT_TRUE(t.expect_tx().has(SYN));
      ++retrans;
    }
  }
  EXPECT_EQ(retrans, 5);  // tcp_synack_retries
  t.iss_ = Seq32(0);
  t.inject(ACK, 1, 1);  // too late: no child, answered with a reset
  EXPECT_TRUE(t.expect_tx().has(RST));
}

TEST(Handshake, LostSynAckResentOnDuplicateSyn) {
  Harness t;
  SocketId l = *t.stack().socket();
  t.stack().bind(l, Endpoint{t.local, 8080});
  t.stack().listen(t.now(), l, 8);
  wire::TcpHeader h;
  h.src_port = t.remote_port;
  h.dst_port = 8080;
  h.seq = t.peer_isn_;
  h.flags = SYN;
  h.window = 65535;
  t.build_syn_options(h.options, {});
  t.inject_raw(h);
  Tx a = t.expect_tx();
  t.advance(Duration::ms(300));
  t.inject_raw(h);
  Tx b = t.expect_tx();
  EXPECT_TRUE(b.has(SYN) && b.has(ACK));
  EXPECT_EQ(a.h.seq, b.h.seq);
}

TEST(Handshake, SimultaneousOpen) {
  Harness t;
  SocketId s = *t.stack().socket();
  t.stack().bind(s, Endpoint{t.local, 7000});
  t.local_port = 7000;
  t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port});
  Tx syn = t.expect_tx();
  t.iss_ = syn.h.seq;
  // The peer's SYN crosses ours (RFC 9293 figure 8).
  wire::TcpHeader h;
  h.src_port = t.remote_port;
  h.dst_port = 7000;
  h.seq = t.peer_isn_;
  h.flags = SYN;
  h.window = 65535;
  t.build_syn_options(h.options, {});
  t.inject_raw(h);
  Tx sa = t.expect_tx();
  EXPECT_TRUE(sa.has(SYN) && sa.has(ACK));
  EXPECT_EQ(sa.h.seq, t.iss_);
  EXPECT_EQ(sa.h.ack, t.peer_isn_ + 1);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_state, 3);  // SYN-RECEIVED
  t.inject(SYN | ACK, 0, 1);
  // Its SYN-ACK: in SYN-RECEIVED the SYN bit is in the window... Linux ACKs
  // the crossing SYN-ACK and enters ESTABLISHED.
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_state, 1);
}

TEST(Handshake, ResetForSegmentToNoSocket) {
  Harness t;
  t.iss_ = Seq32(0);
  t.inject(ACK, 5, 777);
  Tx r = t.expect_tx();
  EXPECT_EQ(r.h.flags, RST);  // RFC 9293 §3.10.7.1: <SEQ=SEG.ACK><CTL=RST>
  EXPECT_EQ(r.h.seq, Seq32(777));
  t.inject(SYN, 0, 0, 0);
  Tx r2 = t.expect_tx();
  EXPECT_EQ(r2.h.flags, RST | ACK);  // <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>
  EXPECT_EQ(r2.h.seq, Seq32(0));
  EXPECT_EQ(r2.h.ack, t.peer_isn_ + 1);
  t.inject(RST, 0, 0);
  EXPECT_EQ(t.pending(), 0u);  // never a reset for a reset
  EXPECT_EQ(t.stack().counters().get(Counter::TcpOutRsts), 2u);
}

TEST(Handshake, MalformedSegmentDroppedAndCounted) {
  Harness t;
  std::vector<uint8_t> junk = {0x45, 0, 0, 10, 1, 2};
  t.inject_bytes(junk);
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_EQ(t.stack().counters().get(Counter::IpInHdrErrors), 1u);
}

}  // namespace
}  // namespace weir::test
