// connect() and TIME-WAIT (Linux tcp_twsk_unique, __inet_hash_connect):
// when a new active open may take over a TIME-WAIT tuple, what it inherits,
// and which ports connect() shares.
#include <gtest/gtest.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

StackConfig one_port(int reuse) {
  StackConfig c;
  c.tcp_tw_reuse = reuse;
  c.ip_local_port_range = {40000, 40000};
  return c;
}

// Active open, then active close to TIME-WAIT; returns the old snd_nxt
// (ISN + SYN + FIN) as an absolute sequence number.
Seq32 to_time_wait(Harness& t, const PeerOpts& o = {}) {
  SocketId s = t.active_open(o);
  EXPECT_EQ(t.stack().close(t.now(), s), Errc::kOk);
  Tx fin = t.expect_tx();
  EXPECT_TRUE(fin.has(FIN)) << describe(fin);
  t.inject(FIN | ACK, 1, 2);
  t.expect_tx();  // the ACK of the peer's FIN
  return t.iss_ + 2;
}

Expected<Tx, Errc> reconnect(Harness& t) {
  SocketId s = *t.stack().socket();
  Errc e = t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port});
  if (e != Errc::kInProgress) return Unexpected(e);
  return t.expect_tx();
}

TEST(TwReuse, TakeoverStartsPastTheOldSequenceSpaceAndEchoesTsRecent) {
  Harness t(one_port(1));
  const Seq32 old_nxt = to_time_wait(t);
  // The peer's last TSval, on its FIN (inject() stamps peer_tsval + now in ms).
  const uint32_t peer_last_tsval = t.peer_tsval + static_cast<uint32_t>(t.now().ms());
  t.advance(Duration::ms(1001));
  auto syn = reconnect(t);
  ASSERT_TRUE(syn) << "EADDRNOTAVAIL";
  EXPECT_EQ(syn->h.src_port, 40000);
  // tcp_twsk_unique: write_seq = tw_snd_nxt + 65535 + 2.
  EXPECT_EQ(syn->h.seq, old_nxt + 65537u);
  ASSERT_TRUE(syn->h.options.ts.has_value());
  EXPECT_EQ(syn->h.options.ts->ecr, peer_last_tsval);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTWRecycled), 1u);
}

TEST(TwReuse, NotBeforeTheReuseDelay) {
  Harness t(one_port(1));
  to_time_wait(t);
  t.advance(Duration::ms(1000));  // "time_after32": strictly after the threshold
  EXPECT_EQ(reconnect(t).error(), Errc::kAddrNotAvail);
  t.advance(Duration::ms(1));
  EXPECT_TRUE(reconnect(t));
}

TEST(TwReuse, OffOrLoopbackOnlyKeepsTheTuple) {
  for (int reuse : {0, 2}) {  // 2: the harness's 192.0.2.1 is not loopback
    Harness t(one_port(reuse));
    to_time_wait(t);
    t.advance(Duration::s(30));
    EXPECT_EQ(reconnect(t).error(), Errc::kAddrNotAvail) << "tcp_tw_reuse=" << reuse;
    EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTWRecycled), 0u);
    t.advance(Duration::s(31));  // TIME-WAIT over: the tuple is free
    EXPECT_TRUE(reconnect(t)) << "tcp_tw_reuse=" << reuse;
  }
}

TEST(TwReuse, NeverWithoutTimestamps) {
  Harness t(one_port(1));
  PeerOpts no_ts;
  no_ts.ts = false;
  t.peer_ts = false;
  to_time_wait(t, no_ts);
  t.advance(Duration::s(5));
  EXPECT_EQ(reconnect(t).error(), Errc::kAddrNotAvail);
}

TEST(TwReuse, ConnectSharesItsPortsButNotOnesBindTook) {
  Harness t(one_port(0));
  SocketId a = *t.stack().socket();
  EXPECT_EQ(t.stack().connect(t.now(), a, Endpoint{t.remote, 80}), Errc::kInProgress);
  // Another peer: the same local port serves (the 4-tuples differ).
  SocketId b = *t.stack().socket();
  EXPECT_EQ(t.stack().connect(t.now(), b, Endpoint{t.remote, 81}), Errc::kInProgress);
  // The same peer again: that tuple is taken.
  SocketId c = *t.stack().socket();
  EXPECT_EQ(t.stack().connect(t.now(), c, Endpoint{t.remote, 80}), Errc::kAddrNotAvail);
  t.clear_tx();

  Harness u(one_port(0));
  SocketId l = *u.stack().socket();
  ASSERT_EQ(u.stack().bind(l, Endpoint{u.local, 40000}), Errc::kOk);
  SocketId d = *u.stack().socket();
  EXPECT_EQ(u.stack().connect(u.now(), d, Endpoint{u.remote, 80}), Errc::kAddrNotAvail);
}

TEST(TwReuse, SysctlsAreRangeChecked) {
  StackConfig c;
  EXPECT_EQ(c.set("net.ipv4.ip_local_port_range", "1024 2047"), "");
  EXPECT_EQ(c.ip_local_port_range[0], 1024u);
  EXPECT_EQ(c.ip_local_port_range[1], 2047u);
  EXPECT_NE(c.set("ip_local_port_range", "3000 2000"), "");
  EXPECT_NE(c.set("ip_local_port_range", "0 2000"), "");
  EXPECT_NE(c.set("ip_local_port_range", "1000 70000"), "");
  EXPECT_NE(c.set("ip_local_port_range", "1000"), "");
  EXPECT_EQ(c.ip_local_port_range[0], 1024u);  // a refused value changes nothing
  EXPECT_NE(c.set("tcp_tw_reuse", "3"), "");
  EXPECT_EQ(c.tcp_tw_reuse, 2);
  EXPECT_NE(c.set("tcp_tw_reuse_delay", "0"), "");
  EXPECT_EQ(c.set("tcp_tw_reuse_delay", "2000"), "");
  EXPECT_EQ(c.tcp_tw_reuse_delay, 2000u);
}

}  // namespace
}  // namespace weir::test
