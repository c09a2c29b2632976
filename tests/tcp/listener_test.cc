// Listeners (RFC 9293 §3.10.7.2): backlog, SYN cookies (RFC 4987), TIME-WAIT
// reuse; ICMP (RFC 1191, RFC 8201, RFC 5461); minimum MSS; IPv6.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "tcp/harness_helper.h"
#include "wire/checksum.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

void syn_from(Harness& t, uint16_t port, Seq32 isn, const PeerOpts& o = {}) {
  t.inject_raw(t.peer_syn(port, isn, o));
}

SocketId listen_on(Harness& t, int backlog) {
  SocketId l = *t.stack().socket();
  t.stack().bind(l, Endpoint{t.local, 8080});
  t.stack().listen(t.now(), l, backlog);
  t.listener = l;
  return l;
}

TEST(Listener, SynCookiesWhenSynQueueFullCompleteWithoutState) {
  Harness t;
  SocketId l = listen_on(t, 2);
  syn_from(t, 1001, Seq32(100));
  syn_from(t, 1002, Seq32(200));
  t.clear_tx();
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtSyncookiesSent), 0u);
  PeerOpts o;
  o.wscale = 5;
  syn_from(t, 1003, Seq32(300), o);  // queue full: a cookie
  Tx sa = t.expect_tx();
  ASSERT_TRUE(sa.has(SYN) && sa.has(ACK));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtSyncookiesSent), 1u);
  ASSERT_TRUE(sa.h.options.ts.has_value());
  EXPECT_EQ(sa.h.options.ts->val & 0xf, 5u);  // wscale in the TSval's low bits (Linux)
  // The third ACK completes the connection from the cookie alone.
  wire::TcpHeader h;
  h.src_port = 1003;
  h.dst_port = 8080;
  h.seq = Seq32(301);
  h.ack = sa.h.seq + 1;
  h.flags = ACK;
  h.window = 100;
  h.options.ts = wire::TcpTimestamps{t.peer_tsval + 5, sa.h.options.ts->val};
  t.inject_raw(h);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtSyncookiesRecv), 1u);
  Endpoint peer;
  auto s = t.stack().accept(t.now(), l, &peer);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(peer.port, 1003);
  auto info = *t.stack().tcp_info(*s);
  EXPECT_EQ(info.tcpi_state, 1);
  EXPECT_EQ(info.tcpi_snd_wscale, 5);
  EXPECT_EQ(info.tcpi_snd_wnd, 100u << 5);
  // A forged ACK with a wrong cookie draws a reset and no connection.
  h.src_port = 1004;
  h.ack = sa.h.seq + 12345;
  t.inject_raw(h);
  EXPECT_TRUE(t.expect_tx().has(RST));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtSyncookiesFailed), 1u);
}

TEST(Listener, AcceptQueueOverflowDropsSyn) {
  StackConfig cfg;
  cfg.tcp_syncookies = 0;
  Harness t(cfg);
  listen_on(t, 1);
  for (uint16_t p = 2000; p < 2002; ++p) {
    syn_from(t, p, Seq32(p * 1000));
    Tx sa = t.expect_tx();
    wire::TcpHeader h;
    h.src_port = p;
    h.dst_port = 8080;
    h.seq = Seq32(p * 1000 + 1);
    h.ack = sa.h.seq + 1;
    h.flags = ACK;
    h.window = 1000;
    h.options.ts = wire::TcpTimestamps{t.peer_tsval + static_cast<uint32_t>(t.now().ms()), sa.h.options.ts->val};
    t.inject_raw(h);
  }
  // Accept queue holds backlog + 1 = 2 (Linux sk_acceptq_is_full); a third SYN is dropped.
  syn_from(t, 2002, Seq32(5));
  EXPECT_EQ(t.pending(), 0u) << describe(t.expect_tx());
  EXPECT_GE(t.stack().counters().get(Counter::TcpExtListenOverflows), 1u);
}

TEST(Listener, WithoutCookiesTheLastQuarterOfMaxSynBacklogIsKept) {
  // Linux tcp_conn_request: max_syn_backlog 8, no cookies: a SYN is dropped
  // once fewer than 8 >> 2 = 2 request slots would stay free, though the
  // listen backlog (100) has room.
  StackConfig cfg;
  cfg.tcp_syncookies = 0;
  cfg.tcp_max_syn_backlog = 8;
  Harness t(cfg);
  listen_on(t, 100);
  for (uint16_t p = 3000; p < 3007; ++p) {
    syn_from(t, p, Seq32(p * 1000));
    EXPECT_TRUE(t.expect_tx().has(SYN)) << p;
  }
  syn_from(t, 3007, Seq32(7));
  EXPECT_EQ(t.pending(), 0u) << describe(t.expect_tx());
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtListenDrops), 1u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPReqQFullDrop), 0u);
}

TEST(Listener, NewerSynReusesTimeWait) {
  Harness t;
  SocketId s = t.passive_open();
  t.stack().close(t.now(), s);
  t.expect_tx();
  t.inject(FIN | ACK, 1, 2);
  t.expect_tx();  // TIME-WAIT now
  t.advance(Duration::s(1));
  // A new SYN on the same 4-tuple, with a higher timestamp: a new connection.
  t.peer_isn_ = t.peer_isn_ + 100000;
  syn_from(t, t.remote_port, t.peer_isn_);
  Tx sa = t.expect_tx();
  EXPECT_TRUE(sa.has(SYN) && sa.has(ACK));
  EXPECT_EQ(sa.h.ack, t.peer_isn_ + 1);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTWRecycled), 1u);
}

TEST(Listener, ListenerCloseResetsUnacceptedChildren) {
  Harness t;
  SocketId l = listen_on(t, 8);
  syn_from(t, 3000, Seq32(10));
  Tx sa = t.expect_tx();
  t.iss_ = sa.h.seq;
  t.remote_port = 3000;
  t.peer_isn_ = Seq32(10);
  t.inject(ACK, 1, 1);
  t.stack().close(t.now(), l);
  Tx rst = t.expect_tx();
  EXPECT_TRUE(rst.has(RST));
  EXPECT_EQ(rst.h.dst_port, 3000);
}

// Linux reqsk_timer_handler: a request's SYN-ACK retries are the
// listener's TCP_SYNCNT (icsk_syn_retries) when set, else
// tcp_synack_retries; every expiry counts in TcpExtTCPTimeouts
// (tcp_syn_ack_timeout) and the dropped request counts nothing else.
TEST(Listener, ChildSynAckRetriesFollowListenersSyncnt) {
  Harness t;
  SocketId l = listen_on(t, 8);
  const int two = 2;
  ASSERT_EQ(t.stack().setsockopt(t.now(), l, IPPROTO_TCP, TCP_SYNCNT, int_opt(two)), Errc::kOk);
  syn_from(t, 3001, Seq32(10));
  ASSERT_TRUE(t.expect_tx().has(SYN));
  for (int i = 0; i < 2; ++i) {
    t.run_next_timer();
    EXPECT_TRUE(t.expect_tx().has(SYN)) << "retry " << i;
  }
  t.run_next_timer();  // the third expiry gives up: nothing sent
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPSynRetrans), 2u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPTimeouts), 3u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpAttemptFails), 0u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPAbortOnTimeout), 0u);
  EXPECT_TRUE(t.stack().next_deadline().is_never());
}

std::vector<uint8_t> icmp_frag_needed(const Tx& ours, uint16_t mtu) {
  // ICMP type 3 code 4 quoting our IP header and first 8 bytes of TCP.
  std::vector<uint8_t> q = wire::build_tcp_packet(ours.ip, ours.h, ours.payload);
  q.resize(28);
  std::vector<uint8_t> icmp = {3, 4, 0, 0, 0, 0, static_cast<uint8_t>(mtu >> 8), static_cast<uint8_t>(mtu)};
  icmp.insert(icmp.end(), q.begin(), q.end());
  uint16_t c = wire::csum_fold(wire::csum_partial(icmp));
  icmp[2] = static_cast<uint8_t>(c >> 8);
  icmp[3] = static_cast<uint8_t>(c);
  std::vector<uint8_t> ip = {0x45, 0, 0, 0, 0, 0, 0, 0, 64, 1, 0, 0, 192, 0, 2, 254, 192, 168, 0, 1};
  const size_t total = ip.size() + icmp.size();
  ip[2] = static_cast<uint8_t>(total >> 8);
  ip[3] = static_cast<uint8_t>(total);
  uint16_t hc = wire::csum_fold(wire::csum_partial(ip));
  ip[10] = static_cast<uint8_t>(hc >> 8);
  ip[11] = static_cast<uint8_t>(hc);
  ip.insert(ip.end(), icmp.begin(), icmp.end());
  return ip;
}

TEST(Icmp, FragNeededLowersMssAndResegmentsRetransmission) {
  Harness t;
  SocketId s = t.passive_open();
  std::vector<uint8_t> d(1448 * 2, 3);
  t.stack().send(t.now(), s, d);
  Tx first = t.expect_tx();
  t.expect_tx();
  ASSERT_EQ(first.payload.size(), 1448u);
  t.inject_bytes(icmp_frag_needed(first, 1000));
  EXPECT_EQ(t.stack().counters().get(Counter::IcmpInDestUnreachs), 1u);
  auto info = *t.stack().tcp_info(s);
  EXPECT_EQ(info.tcpi_pmtu, 1000u);
  EXPECT_EQ(info.tcpi_snd_mss, 1000u - 40 - 12);
  ASSERT_GE(t.pending(), 1u);
  Tx r = t.expect_tx();
  EXPECT_EQ(t.rel_seq(r), 1u);
  EXPECT_EQ(r.payload.size(), 948u);  // re-segmented to the new MSS
  EXPECT_LE(r.ip.version == 4 ? r.payload.size() + 20 + 32 : 0, 1000u);
}

TEST(Icmp, UnreachableDuringSynSentFailsConnect) {
  Harness t;
  SocketId s = *t.stack().socket();
  t.stack().connect(t.now(), s, Endpoint{t.remote, 80});
  Tx syn = t.expect_tx();
  auto pkt = icmp_frag_needed(syn, 0);
  pkt[20] = 3;
  pkt[21] = 1;  // host unreachable
  pkt[22] = pkt[23] = 0;
  std::span<uint8_t> icmp(pkt.data() + 20, pkt.size() - 20);
  uint16_t c = wire::csum_fold(wire::csum_partial(icmp));
  pkt[22] = static_cast<uint8_t>(c >> 8);
  pkt[23] = static_cast<uint8_t>(c);
  t.inject_bytes(pkt);
  std::vector<uint8_t> b(4);
  auto r = t.stack().recv(t.now(), s, b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), Errc::kHostUnreach);
}

TEST(Mss, PeerCannotForceTinySegments) {
  Harness t;
  PeerOpts o;
  o.mss = 10;  // below tcp_min_snd_mss
  SocketId s = t.passive_open(o);
  std::vector<uint8_t> d(1000, 1);
  t.stack().send(t.now(), s, d);
  Tx x = t.expect_tx();
  // 48 (tcp_min_snd_mss) less the 12 bytes of timestamps.
  EXPECT_EQ(x.payload.size(), 36u);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_snd_mss, 36u);
}

TEST(Mss, LoopbackMtuIsCappedAtTheIpv4LengthField) {
  // Linux ipv4_default_advmss / ipv4_mtu: a 65,536-byte device MTU (lo)
  // gives MSS 65,495 (65,535 - 40), so no packet overflows total length.
  Harness t(StackConfig{}, 65536);
  PeerOpts o;
  o.mss = 65495;
  o.ts = false;
  SocketId s = t.passive_open(o);
  const TcpInfo info = *t.stack().tcp_info(s);
  EXPECT_EQ(info.tcpi_advmss, 65495u);
  EXPECT_EQ(info.tcpi_snd_mss, 65495u);
}

TEST(Mss, MissingMssOptionMeans536) {
  Harness t;
  PeerOpts o;
  o.mss = std::nullopt;
  o.ts = false;
  SocketId s = t.passive_open(o);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_snd_mss, 536u);  // RFC 9293 §3.7.1
}

TEST(Ipv6, PassiveOpenOverIpv6) {
  Harness t;
  t.local = *IpAddr::parse("fd00::1");
  t.remote = *IpAddr::parse("fd00::2");
  t.stack().add_address(t.local);
  SocketId l = *t.stack().socket(true);
  ASSERT_EQ(t.stack().bind(l, Endpoint{t.local, 8080}), Errc::kOk);
  t.stack().listen(t.now(), l, 8);
  t.listener = l;
  SocketId s = t.passive_open();
  ASSERT_NE(s, kNoSocket);
  std::vector<uint8_t> d(3000, 1);
  t.stack().send(t.now(), s, d);
  Tx x = t.expect_tx();
  EXPECT_EQ(x.ip.version, 6);
  EXPECT_EQ(x.payload.size(), 1500u - 40 - 20 - 12);
}

Errc set_v6only(Harness& t, SocketId s, int on) {
  return t.stack().setsockopt(t.now(), s, IPPROTO_IPV6, IPV6_V6ONLY,
                              std::span(reinterpret_cast<const uint8_t*>(&on), sizeof on));
}

TEST(Ipv6, DualStackListenerHearsIpv4UnlessV6Only) {
  // Linux: an AF_INET6 listener on :: takes IPv4-mapped peers, unless
  // IPV6_V6ONLY (then an IPv4 SYN finds no listener and draws a reset).
  for (int v6only : {0, 1}) {
    Harness t;
    SocketId l = *t.stack().socket(true);
    ASSERT_EQ(set_v6only(t, l, v6only), Errc::kOk);
    ASSERT_EQ(t.stack().bind(l, Endpoint{IpAddr::v6({}), 8080}), Errc::kOk);
    ASSERT_EQ(t.stack().listen(t.now(), l, 8), Errc::kOk);
    syn_from(t, 1001, Seq32(100));
    Tx r = t.expect_tx();
    if (v6only) EXPECT_TRUE(r.has(RST)) << describe(r);
    else EXPECT_TRUE(r.has(SYN) && r.has(ACK)) << describe(r);
  }
}

TEST(Ipv6, V6OnlyRulesAsLinux) {
  Harness t;
  SocketId v4 = *t.stack().socket(false);
  EXPECT_EQ(set_v6only(t, v4, 1), Errc::kNoProtoOpt);  // not an AF_INET6 socket
  SocketId a = *t.stack().socket(true);
  ASSERT_EQ(set_v6only(t, a, 1), Errc::kOk);
  int on = 0;
  size_t len = sizeof on;
  ASSERT_EQ(t.stack().getsockopt(a, IPPROTO_IPV6, IPV6_V6ONLY, std::span(reinterpret_cast<uint8_t*>(&on), sizeof on), &len),
            Errc::kOk);
  EXPECT_EQ(on, 1);
  EXPECT_EQ(t.stack().bind(a, Endpoint{t.local, 80}), Errc::kInval);  // a v4-mapped address
  EXPECT_EQ(t.stack().connect(t.now(), a, Endpoint{IpAddr::v4(10, 0, 0, 2), 80}), Errc::kNetUnreach);
  // A v6-only :: and an IPv4 wildcard share a port; a dual-stack :: does not.
  ASSERT_EQ(t.stack().bind(a, Endpoint{IpAddr::v6({}), 80}), Errc::kOk);
  EXPECT_EQ(set_v6only(t, a, 0), Errc::kInval);  // bound already
  EXPECT_EQ(t.stack().bind(v4, Endpoint{IpAddr::v4(0), 80}), Errc::kOk);
  SocketId v4b = *t.stack().socket(false);
  ASSERT_EQ(t.stack().bind(v4b, Endpoint{IpAddr::v4(0), 81}), Errc::kOk);
  SocketId dual = *t.stack().socket(true);
  EXPECT_EQ(t.stack().bind(dual, Endpoint{IpAddr::v6({}), 81}), Errc::kAddrInUse);
}

TEST(Ipv6, V4SocketRejectsV6Peer) {
  Harness t;
  SocketId s = *t.stack().socket(false);
  EXPECT_EQ(t.stack().connect(t.now(), s, Endpoint{*IpAddr::parse("fd00::2"), 80}), Errc::kAfNoSupport);
}

}  // namespace
}  // namespace weir::test
