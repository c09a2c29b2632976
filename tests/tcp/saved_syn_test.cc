// TCP_SAVE_SYN / TCP_SAVED_SYN (Linux tcp_reqsk_record_syn, tcp_move_syn,
// do_tcp_getsockopt): a listener that asks keeps each SYN's network and TCP
// headers; the accepted child hands them out once.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <array>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

SocketId listen_saving(Harness& t, int save_syn) {
  SocketId l = *t.stack().socket();
  t.stack().bind(l, Endpoint{t.local, 8080});
  if (save_syn) {
    EXPECT_EQ(t.stack().setsockopt(t.now(), l, IPPROTO_TCP, TCP_SAVE_SYN, int_opt(save_syn)), Errc::kOk);
  }
  t.stack().listen(t.now(), l, 16);
  t.listener = l;
  return l;
}

// The peer's SYN from port 4000 as the bytes on the wire, sent; then the
// handshake's ACK and accept(). Returns the child.
SocketId open_with_syn(Harness& t, SocketId l, std::vector<uint8_t>* syn_bytes) {
  wire::TcpHeader h = t.peer_syn(4000, Seq32(777));
  wire::IpInfo ip;
  ip.src = t.remote;
  ip.dst = t.local;
  ip.ttl = 61;
  ip.id = 0x1234;
  *syn_bytes = wire::build_tcp_packet(ip, h, {});
  t.inject_bytes(*syn_bytes);
  Tx sa = t.expect_tx();
  EXPECT_TRUE(sa.has(SYN) && sa.has(ACK));
  t.remote_port = 4000;
  t.peer_isn_ = Seq32(777);
  t.iss_ = sa.h.seq;
  t.last_tsval = sa.h.options.ts ? sa.h.options.ts->val : 0;
  t.inject(ACK, 1, 1);
  auto c = t.stack().accept(t.now(), l);
  EXPECT_TRUE(c.has_value());
  return c ? *c : kNoSocket;
}

Errc saved_syn(Harness& t, SocketId s, std::vector<uint8_t>& out, size_t cap) {
  out.assign(cap, 0);
  size_t len = 0;
  Errc e = t.stack().getsockopt(s, IPPROTO_TCP, TCP_SAVED_SYN, out, &len);
  out.resize(len);
  return e;
}

TEST(SavedSyn, ChildReturnsTheSynHeadersOnceThenNothing) {
  Harness t;
  SocketId l = listen_saving(t, 1);
  std::vector<uint8_t> syn;
  SocketId c = open_with_syn(t, l, &syn);
  // A SYN carries no payload here: its headers are the whole datagram
  // (20 bytes of IPv4, 20 + 20 of TCP with MSS, SACK, TS, WS).
  ASSERT_EQ(syn.size(), 60u);
  std::vector<uint8_t> got;
  ASSERT_EQ(saved_syn(t, c, got, 256), Errc::kOk);
  EXPECT_EQ(got, syn);  // the TTL and IP ID as sent, not rebuilt
  ASSERT_EQ(saved_syn(t, c, got, 256), Errc::kOk);  // tcp_saved_syn_free: gone
  EXPECT_TRUE(got.empty());
  // The listener keeps none of its own; the child inherits the setting.
  ASSERT_EQ(saved_syn(t, l, got, 256), Errc::kOk);
  EXPECT_TRUE(got.empty());
  int v = 0;
  size_t len = sizeof v;
  std::span<uint8_t> vb(reinterpret_cast<uint8_t*>(&v), sizeof v);
  ASSERT_EQ(t.stack().getsockopt(c, IPPROTO_TCP, TCP_SAVE_SYN, vb, &len), Errc::kOk);
  EXPECT_EQ(v, 1);
}

TEST(SavedSyn, ShortBufferIsEinvalWithTheNeededLengthAndKeepsTheSyn) {
  Harness t;
  SocketId l = listen_saving(t, 2);  // 2: from the MAC header, none on an IP netif
  std::vector<uint8_t> syn;
  SocketId c = open_with_syn(t, l, &syn);
  std::vector<uint8_t> buf(10, 0);
  size_t len = 0;
  EXPECT_EQ(t.stack().getsockopt(c, IPPROTO_TCP, TCP_SAVED_SYN, buf, &len), Errc::kInval);
  EXPECT_EQ(len, syn.size());
  std::vector<uint8_t> got;
  ASSERT_EQ(saved_syn(t, c, got, syn.size()), Errc::kOk);
  EXPECT_EQ(got, syn);
}

TEST(SavedSyn, NothingSavedWithoutTheOptionOrForACookieChild) {
  Harness t;
  SocketId l = listen_saving(t, 0);
  std::vector<uint8_t> syn;
  SocketId c = open_with_syn(t, l, &syn);
  std::vector<uint8_t> got;
  ASSERT_EQ(saved_syn(t, c, got, 256), Errc::kOk);
  EXPECT_TRUE(got.empty());

  // Linux tcp_conn_request records the SYN only when it keeps a request
  // (not want_cookie): a child born of a SYN cookie has none.
  StackConfig cfg;
  cfg.tcp_syncookies = 2;
  Harness k(cfg);
  SocketId kl = listen_saving(k, 1);
  c = open_with_syn(k, kl, &syn);
  ASSERT_NE(c, kNoSocket);
  ASSERT_EQ(saved_syn(k, c, got, 256), Errc::kOk);
  EXPECT_TRUE(got.empty());
}

TEST(SavedSyn, SaveSynTakesZeroToTwo) {
  Harness t;
  SocketId l = *t.stack().socket();
  for (int bad : {-1, 3})
    EXPECT_EQ(t.stack().setsockopt(t.now(), l, IPPROTO_TCP, TCP_SAVE_SYN, int_opt(bad)), Errc::kInval);
  for (int ok : {0, 1, 2})
    EXPECT_EQ(t.stack().setsockopt(t.now(), l, IPPROTO_TCP, TCP_SAVE_SYN, int_opt(ok)), Errc::kOk);
}

}  // namespace
}  // namespace weir::test
