// TCP Fast Open, server side (RFC 7413 §4.2.2, §5.1), as Linux's
// tcp_fastopen.c does it: the listener's Fast Open queue limit, the key
// drawn when none is configured.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <array>

#include "tcp/fastopen.h"
#include "tcp/harness_helper.h"
#include "weir/route.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

// Server side on, no cookie needed (TFO_SERVER_ENABLE |
// TFO_SERVER_COOKIE_NOT_REQD): any SYN with data asks for a Fast Open child.
StackConfig fastopen_no_cookie() {
  StackConfig cfg;
  cfg.tcp_fastopen = 0x2 | 0x200;
  return cfg;
}

SocketId fastopen_listener(Harness& t, int qlen, int backlog) {
  SocketId l = *t.stack().socket();
  t.stack().bind(l, Endpoint{t.local, 8080});
  t.stack().setsockopt(t.now(), l, IPPROTO_TCP, TCP_FASTOPEN, int_opt(qlen));
  t.stack().listen(t.now(), l, backlog);
  t.listener = l;
  return l;
}

// A SYN with ten bytes of data from `port`; returns our SYN-ACK.
Tx syn_data_from(Harness& t, uint16_t port, Seq32 isn) {
  const std::array<uint8_t, 10> data{};
  t.inject_raw(t.peer_syn(port, isn), data);
  return t.expect_tx();
}

void ack_from(Harness& t, uint16_t port, Seq32 seq, const Tx& synack) {
  wire::TcpHeader h;
  h.src_port = port;
  h.dst_port = 8080;
  h.seq = seq;
  h.ack = synack.h.seq + 1;
  h.flags = ACK;
  h.window = 65535;
  t.inject_raw(h);
}

uint64_t overflows(Harness& t) {
  return t.stack().counters().get(Counter::TcpExtTCPFastOpenListenOverflow);
}

// Linux tcp_fastopen_queue_check counts fastopenq.qlen, which
// reqsk_fastopen_remove only lowers when the child leaves SYN-RECEIVED (its
// handshake completes or it dies), not when accept() takes it: an accepted
// child still waiting for the third ACK keeps its slot.
TEST(FastOpenQueue, AcceptedChildInSynReceivedStillCounts) {
  Harness t(fastopen_no_cookie());
  SocketId l = fastopen_listener(t, 1, 8);
  Tx sa1 = syn_data_from(t, 1001, Seq32(100));
  EXPECT_EQ(sa1.h.ack, Seq32(111));  // the data is taken: a Fast Open child
  auto c1 = t.stack().accept(t.now(), l, nullptr);
  ASSERT_TRUE(c1.has_value());
  EXPECT_EQ(t.stack().tcp_info(*c1)->tcpi_state, 3);  // SYN-RECEIVED

  // Queue full (1 of 1): the next SYN's data is not taken.
  Tx sa2 = syn_data_from(t, 1002, Seq32(200));
  EXPECT_EQ(sa2.h.ack, Seq32(201));
  EXPECT_EQ(overflows(t), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPFastOpenPassive), 1u);

  // The first child's handshake completes: its slot is free again.
  ack_from(t, 1001, Seq32(111), sa1);
  EXPECT_EQ(t.stack().tcp_info(*c1)->tcpi_state, 1);  // ESTABLISHED
  Tx sa3 = syn_data_from(t, 1003, Seq32(300));
  EXPECT_EQ(sa3.h.ack, Seq32(311));
  EXPECT_EQ(overflows(t), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPFastOpenPassive), 2u);
}

// Linux tcp_fastopen_no_cookie(TFO_SERVER_COOKIE_NOT_REQD): a route to the
// client with RTAX_FASTOPEN_NO_COOKIE takes SYN data without a cookie even
// when the sysctl requires one; other clients still need theirs.
TEST(FastOpenServer, RouteWithoutCookiesTakesDataFromThatPeerOnly) {
  StackConfig cfg;
  cfg.tcp_fastopen = 0x2;  // server on, cookies required
  Harness t(cfg);
  Route r;
  r.dst = t.remote;
  r.prefix_len = 32;
  r.metrics.fastopen_no_cookie = true;
  ASSERT_EQ(t.stack().set_route(r), Errc::kOk);
  fastopen_listener(t, 4, 8);
  EXPECT_EQ(syn_data_from(t, 1001, Seq32(100)).h.ack, Seq32(111));
  r.metrics.fastopen_no_cookie = false;
  ASSERT_EQ(t.stack().set_route(r), Errc::kOk);
  EXPECT_EQ(syn_data_from(t, 1002, Seq32(200)).h.ack, Seq32(201));
}

wire::TcpHeader rst_from(uint16_t port, Seq32 seq) {
  wire::TcpHeader rst;
  rst.src_port = port;
  rst.dst_port = 8080;
  rst.seq = seq;
  rst.flags = RST;
  return rst;
}

// Linux reqsk_fastopen_remove(reset = true): a child the peer resets in
// SYN-RECEIVED keeps its slot for 60 s (fastopenq.rskq_rst_head), so a
// spoofed SYN-data-then-RST stream cannot churn the queue; at a full queue
// the expired hold gives its slot to the next SYN (tcp_fastopen_queue_check).
TEST(FastOpenQueue, ResetChildHoldsItsSlotFor60s) {
  Harness t(fastopen_no_cookie());
  fastopen_listener(t, 1, 8);
  Tx sa1 = syn_data_from(t, 1001, Seq32(100));
  ASSERT_EQ(sa1.h.ack, Seq32(111));
  t.inject_raw(rst_from(1001, Seq32(111)));
  t.clear_tx();
  Tx sa2 = syn_data_from(t, 1002, Seq32(200));
  EXPECT_EQ(sa2.h.ack, Seq32(201));  // still full: the data is not taken
  EXPECT_EQ(overflows(t), 1u);
  t.advance(Duration::s(59));
  t.clear_tx();  // the plain child's SYN-ACK retries
  Tx sa3 = syn_data_from(t, 1003, Seq32(300));
  EXPECT_EQ(sa3.h.ack, Seq32(301));
  EXPECT_EQ(overflows(t), 2u);
  t.advance(Duration::s(1));  // 60 s after the reset
  t.clear_tx();
  Tx sa4 = syn_data_from(t, 1004, Seq32(400));
  EXPECT_EQ(sa4.h.ack, Seq32(411));  // the held slot went to this SYN
  EXPECT_EQ(overflows(t), 2u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPFastOpenPassive), 2u);
}

// A child that dies any other way (here its SYN-ACK timer gives up) frees
// its slot at once (tcp_done -> reqsk_fastopen_remove(reset = false)).
TEST(FastOpenQueue, ChildTimedOutFreesItsSlot) {
  Harness t(fastopen_no_cookie());
  SocketId l = fastopen_listener(t, 1, 8);
  const int one = 1;
  ASSERT_EQ(t.stack().setsockopt(t.now(), l, IPPROTO_TCP, TCP_SYNCNT, int_opt(one)), Errc::kOk);
  Tx sa1 = syn_data_from(t, 1001, Seq32(100));
  ASSERT_EQ(sa1.h.ack, Seq32(111));
  t.run_next_timer();  // one SYN-ACK retry
  t.run_next_timer();  // gives up
  t.clear_tx();
  Tx sa2 = syn_data_from(t, 1002, Seq32(200));
  EXPECT_EQ(sa2.h.ack, Seq32(211));
  EXPECT_EQ(overflows(t), 0u);
}

// A SYN asking for a cookie (an empty Fast Open option); returns the
// cookie our SYN-ACK carries, empty if none.
tcp::fastopen::Cookie cookie_for(StackConfig cfg) {
  cfg.tcp_fastopen = 0x2;  // TFO_SERVER_ENABLE, cookies required
  Harness t(cfg);
  fastopen_listener(t, 4, 8);
  wire::TcpHeader h = t.peer_syn(1001, Seq32(100));
  h.options.fastopen = wire::TcpFastOpen{};
  t.inject_raw(h);
  const Tx sa = t.expect_tx();
  tcp::fastopen::Cookie c;
  if (!sa.h.options.fastopen) return c;
  c.len = static_cast<uint8_t>(sa.h.options.fastopen->len);
  for (size_t i = 0; i < c.len; ++i) c.val[i] = sa.h.options.fastopen->cookie[i];
  return c;
}

// Linux tcp_fastopen_init_key_once: no tcp_fastopen_key, no TCP_FASTOPEN_KEY:
// a random key on first use. weir draws it from a generator seeded with the
// driver's seed, so the same seed gives the same cookies and another seed
// others; the cookie is not keyed with the seed itself (weir used
// SipKey{secret, ~secret}).
TEST(FastOpenKey, WithoutAKeyOneIsDrawnFromTheSeed) {
  namespace fo = tcp::fastopen;
  StackConfig cfg;
  cfg.secret = 42;
  const Harness addrs;
  const fo::Cookie got = cookie_for(cfg);
  ASSERT_EQ(got.len, fo::kCookieSize);
  EXPECT_EQ(got, fo::make_cookie(fo::random_key(42), addrs.remote, addrs.local));
  EXPECT_FALSE(got == fo::make_cookie(SipKey{42, ~uint64_t{42}}, addrs.remote, addrs.local));
  EXPECT_EQ(cookie_for(cfg), got);
  cfg.secret = 43;
  EXPECT_FALSE(cookie_for(cfg) == got);
}

}  // namespace
}  // namespace weir::test
