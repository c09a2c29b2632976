// The IP header fields a socket chooses, as Linux: IP_TOS / IPV6_TCLASS
// (RFC 2474 DS field) on every segment with TCP's ECN field (RFC 3168
// §6.1.1) in the low bits, IP_TTL / IPV6_UNICAST_HOPS (RFC 791, RFC 8200
// §3), a passive open's child inheriting the listener's, tcp_reflect_tos,
// resets carrying the offending segment's DSCP, and the options' argument
// checks (do_ip_setsockopt / do_ipv6_setsockopt).
#include <netinet/in.h>

#include <gtest/gtest.h>

#include "harness_helper.h"
#include "wire/packet.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

constexpr uint8_t kEct0 = 2;

// The peer's SYN to the listener on 8080 with IP TOS `tos` and TCP flags
// `extra` (ECE|CWR asks for ECN).
void peer_syn(Harness& t, uint8_t tos, uint8_t extra = 0) {
  wire::TcpHeader h = t.peer_syn(t.remote_port, t.peer_isn_, PeerOpts{1460, std::nullopt, false, false});
  h.flags |= extra;
  wire::IpInfo ip;
  ip.src = t.remote;
  ip.dst = t.local;
  ip.tos = tos;
  t.inject_bytes(wire::build_tcp_packet(ip, h, {}));
}

// A listener with `tos` and `ttl` (-1: unset), the peer's SYN with
// `syn_tos`, our SYN-ACK in *synack, the peer's ACK, accept().
SocketId open_passive(Harness& t, int tos, int ttl, uint8_t syn_tos, Tx* synack, uint8_t extra = 0) {
  t.listener = *t.stack().socket();
  EXPECT_EQ(set_int(t, t.listener, IPPROTO_IP, IP_TOS, tos), Errc::kOk);
  EXPECT_EQ(set_int(t, t.listener, IPPROTO_IP, IP_TTL, ttl), Errc::kOk);
  EXPECT_EQ(t.stack().bind(t.listener, Endpoint{t.local, t.local_port}), Errc::kOk);
  EXPECT_EQ(t.stack().listen(t.now(), t.listener, 16), Errc::kOk);
  t.peer_ts = false;
  peer_syn(t, syn_tos, extra);
  *synack = t.expect_tx();
  t.iss_ = synack->h.seq;
  t.inject(ACK, 1, 1);
  auto s = t.stack().accept(t.now(), t.listener, nullptr);
  EXPECT_TRUE(s.has_value());
  return s ? *s : kNoSocket;
}

TEST(IpFields, DefaultsAreDscpZeroTtl64) {
  Harness t;
  const SocketId s = t.active_open();
  write(t, s, 100);
  const Tx d = t.expect_tx();
  EXPECT_EQ(d.ip.tos, 0);
  EXPECT_EQ(d.ip.ttl, 64);
  EXPECT_EQ(get_int(t, s, IPPROTO_IP, IP_TOS), 0);
  EXPECT_EQ(get_int(t, s, IPPROTO_IP, IP_TTL), 64);
}

TEST(IpFields, SynAndDataCarrySocketTosAndTtl) {
  Harness t;
  const SocketId s = *t.stack().socket();
  ASSERT_EQ(set_int(t, s, IPPROTO_IP, IP_TOS, 0x28), Errc::kOk);  // AF11
  ASSERT_EQ(set_int(t, s, IPPROTO_IP, IP_TTL, 9), Errc::kOk);
  ASSERT_EQ(t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port}), Errc::kInProgress);
  const Tx syn = t.expect_tx();
  EXPECT_EQ(syn.ip.tos, 0x28);  // RFC 3168 §6.1.1: the SYN not-ECT, the DSCP still the socket's
  EXPECT_EQ(syn.ip.ttl, 9);
  t.answer_syn(syn);
  const Tx ack = t.expect_tx();
  EXPECT_EQ(ack.ip.tos, 0x28);
  EXPECT_EQ(ack.ip.ttl, 9);
  write(t, s, 100);
  const Tx d = t.expect_tx();
  EXPECT_EQ(d.ip.tos, 0x28);
  EXPECT_EQ(d.ip.ttl, 9);
}

// Linux sk_dst_reset on a change: the next segment carries the new value;
// the IPv4 header template (per address pair) must not keep the old TTL.
TEST(IpFields, ChangeAppliesToTheNextSegment) {
  Harness t;
  const SocketId s = t.active_open();
  ASSERT_EQ(set_int(t, s, IPPROTO_IP, IP_TOS, 0xb8), Errc::kOk);  // EF
  ASSERT_EQ(set_int(t, s, IPPROTO_IP, IP_TTL, 200), Errc::kOk);
  write(t, s, 10);
  Tx d = t.expect_tx();
  EXPECT_EQ(d.ip.tos, 0xb8);
  EXPECT_EQ(d.ip.ttl, 200);
  t.inject(ACK, 1, 11);  // acknowledged: Nagle lets the next small write go
  ASSERT_EQ(set_int(t, s, IPPROTO_IP, IP_TTL, -1), Errc::kOk);  // back to ip_default_ttl
  ASSERT_EQ(set_int(t, s, IPPROTO_IP, IP_TOS, 0), Errc::kOk);
  write(t, s, 10);
  d = t.expect_tx();
  EXPECT_EQ(d.ip.tos, 0);
  EXPECT_EQ(d.ip.ttl, 64);
  EXPECT_EQ(get_int(t, s, IPPROTO_IP, IP_TTL), 64);
}

TEST(IpFields, DefaultTtlIsTheSysctl) {
  StackConfig cfg;
  ASSERT_EQ(cfg.set("net.ipv4.ip_default_ttl", "100"), "");
  Harness t(cfg);
  const SocketId s = *t.stack().socket();
  ASSERT_EQ(t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port}), Errc::kInProgress);
  EXPECT_EQ(t.expect_tx().ip.ttl, 100);
  EXPECT_EQ(get_int(t, s, IPPROTO_IP, IP_TTL), 100);
}

// IPv6's counterpart: the conf hop_limit (all or default: weir has one
// device) for sockets whose IPV6_UNICAST_HOPS is -1, and for resets.
TEST(IpFields, DefaultHopLimitIsTheSysctl) {
  StackConfig cfg;
  ASSERT_EQ(cfg.set("net.ipv6.conf.all.hop_limit", "33"), "");
  Harness t(cfg);
  t.local = IpAddr::v6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
  t.remote = IpAddr::v6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2});
  t.stack().add_address(t.local);
  const SocketId s = *t.stack().socket(true);
  ASSERT_EQ(t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port}), Errc::kInProgress);
  EXPECT_EQ(t.expect_tx().ip.ttl, 33);
  EXPECT_EQ(get_int(t, s, IPPROTO_IPV6, IPV6_UNICAST_HOPS), 33);
  EXPECT_EQ(get_int(t, s, IPPROTO_IP, IP_TTL), 64);  // IPv4's stays ip_default_ttl
  StackConfig c2;
  EXPECT_EQ(c2.set("/proc/sys/net/ipv6/conf/default/hop_limit", "7"), "");
  EXPECT_EQ(c2.ipv6_hop_limit, 7);
}

TEST(IpFields, SysctlRanges) {
  StackConfig cfg;
  EXPECT_NE(cfg.set("net.ipv4.ip_default_ttl", "0"), "");
  EXPECT_NE(cfg.set("net.ipv4.ip_default_ttl", "256"), "");
  EXPECT_EQ(cfg.set("net.ipv4.ip_default_ttl", "255"), "");
  EXPECT_NE(cfg.set("net.ipv4.tcp_reflect_tos", "2"), "");
  EXPECT_EQ(cfg.set("net.ipv4.tcp_reflect_tos", "1"), "");
  EXPECT_NE(cfg.set("net.ipv6.conf.all.hop_limit", "0"), "");
  EXPECT_NE(cfg.set("net.ipv4.conf.all.hop_limit", "9"), "");  // no such IPv4 setting
  EXPECT_NE(cfg.set("net.ipv6.conf.default.hop_limit", "256"), "");
  EXPECT_EQ(cfg.set("net.ipv6.conf.default.hop_limit", "255"), "");
  EXPECT_EQ(cfg.ip_default_ttl, 255);
  EXPECT_EQ(cfg.tcp_reflect_tos, 1);
  EXPECT_EQ(cfg.ipv6_hop_limit, 255);
}

// Linux __ip_sock_set_tos on SOCK_STREAM keeps TCP's ECN bits: the user's
// are dropped, and data segments still carry ECT(0) under the DSCP.
TEST(IpFields, EcnFieldStaysTcps) {
  Harness t;
  Tx synack;
  const SocketId s = open_passive(t, 0x23, -1, 0, &synack, ECE | CWR);
  EXPECT_EQ(synack.ip.tos, 0x20);  // RFC 3168 §6.1.1: a SYN-ACK is not-ECT
  write(t, s, 100);
  const Tx d = t.expect_tx();
  EXPECT_EQ(d.ip.tos, 0x20 | kEct0);
  EXPECT_EQ(get_int(t, s, IPPROTO_IP, IP_TOS), 0x20 | kEct0);  // INET_ECN_xmit left ECT(0) in inet->tos
  ASSERT_EQ(set_int(t, s, IPPROTO_IP, IP_TOS, 0x41), Errc::kOk);
  t.inject(ACK, 1, 101, 50);  // data from the peer: a pure ACK answers, not-ECT
  t.advance(Duration::ms(200));
  const Tx a = t.expect_tx();
  ASSERT_EQ(a.payload.size(), 0u);
  EXPECT_EQ(a.ip.tos, 0x40);
}

// inet_csk_clone_lock: the child has the listener's tos and uc_ttl; the
// SYN-ACK carries them (tcp_v4_send_synack with tcp_reflect_tos 0).
TEST(IpFields, ChildInheritsListenerTosAndTtl) {
  Harness t;
  Tx synack;
  const SocketId s = open_passive(t, 0x10, 33, 0x48, &synack);
  EXPECT_EQ(synack.ip.tos, 0x10);
  EXPECT_EQ(synack.ip.ttl, 33);
  write(t, s, 100);
  const Tx d = t.expect_tx();
  EXPECT_EQ(d.ip.tos, 0x10);
  EXPECT_EQ(d.ip.ttl, 33);
  EXPECT_EQ(get_int(t, s, IPPROTO_IP, IP_TOS), 0x10);
  EXPECT_EQ(get_int(t, s, IPPROTO_IP, IP_TTL), 33);
}

// tcp_reflect_tos: SYN-ACK and child take the SYN's DSCP, not its ECN
// field, and not the listener's TOS; the TTL stays the listener's.
TEST(IpFields, ReflectTosTakesTheSynsDscp) {
  StackConfig cfg;
  cfg.tcp_reflect_tos = 1;
  Harness t(cfg);
  Tx synack;
  const SocketId s = open_passive(t, 0x10, 33, 0x48 | 1, &synack);
  EXPECT_EQ(synack.ip.tos, 0x48);
  EXPECT_EQ(synack.ip.ttl, 33);
  write(t, s, 100);
  EXPECT_EQ(t.expect_tx().ip.tos, 0x48);
  EXPECT_EQ(get_int(t, s, IPPROTO_IP, IP_TOS), 0x48);
  EXPECT_EQ(get_int(t, t.listener, IPPROTO_IP, IP_TOS), 0x10);  // the listener keeps its own
}

// tcp_reflect_tos with SYN cookies (tcp_syncookies 2): the cookie SYN-ACK
// reflects the SYN too (tcp_v4_send_synack from the request).
TEST(IpFields, ReflectTosOnCookieSynAck) {
  StackConfig cfg;
  cfg.tcp_reflect_tos = 1;
  cfg.tcp_syncookies = 2;
  Harness t(cfg);
  t.listener = *t.stack().socket();
  ASSERT_EQ(set_int(t, t.listener, IPPROTO_IP, IP_TTL, 20), Errc::kOk);
  ASSERT_EQ(t.stack().bind(t.listener, Endpoint{t.local, t.local_port}), Errc::kOk);
  ASSERT_EQ(t.stack().listen(t.now(), t.listener, 16), Errc::kOk);
  peer_syn(t, 0x88);
  const Tx synack = t.expect_tx();
  EXPECT_EQ(synack.ip.tos, 0x88);
  EXPECT_EQ(synack.ip.ttl, 20);
}

// tcp_v4_send_reset: no socket's options, the segment's DSCP without its
// ECN field, the control socket's (default) TTL.
TEST(IpFields, ResetCarriesTheSegmentsDscp) {
  StackConfig cfg;
  cfg.ip_default_ttl = 99;
  Harness t(cfg);
  peer_syn(t, 0x61);  // nobody listens on 8080
  const Tx rst = t.expect_tx();
  ASSERT_TRUE(rst.has(RST));
  EXPECT_EQ(rst.ip.tos, 0x60);
  EXPECT_EQ(rst.ip.ttl, 99);
}

TEST(IpFields, Ipv6UsesTclassAndHopLimit) {
  Harness t;
  t.local = IpAddr::v6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
  t.remote = IpAddr::v6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2});
  t.stack().add_address(t.local);
  const SocketId s = *t.stack().socket(true);
  ASSERT_EQ(set_int(t, s, IPPROTO_IPV6, IPV6_TCLASS, 0x2c), Errc::kOk);
  ASSERT_EQ(set_int(t, s, IPPROTO_IPV6, IPV6_UNICAST_HOPS, 7), Errc::kOk);
  ASSERT_EQ(set_int(t, s, IPPROTO_IP, IP_TOS, 0x80), Errc::kOk);  // inet->tos: IPv4 packets only
  ASSERT_EQ(set_int(t, s, IPPROTO_IP, IP_TTL, 3), Errc::kOk);
  ASSERT_EQ(t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port}), Errc::kInProgress);
  const Tx syn = t.expect_tx();
  EXPECT_EQ(syn.ip.version, 6);
  EXPECT_EQ(syn.ip.tos, 0x2c);
  EXPECT_EQ(syn.ip.ttl, 7);
  EXPECT_EQ(get_int(t, s, IPPROTO_IPV6, IPV6_TCLASS), 0x2c);
  EXPECT_EQ(get_int(t, s, IPPROTO_IPV6, IPV6_UNICAST_HOPS), 7);
  ASSERT_EQ(set_int(t, s, IPPROTO_IPV6, IPV6_UNICAST_HOPS, -1), Errc::kOk);
  EXPECT_EQ(get_int(t, s, IPPROTO_IPV6, IPV6_UNICAST_HOPS), 64);
}

// A v4-mapped peer on an AF_INET6 socket: IPv4 packets with inet->tos and
// inet->uc_ttl (ip_queue_xmit), not the traffic class.
TEST(IpFields, V4MappedPeerUsesIpTos) {
  Harness t;
  const SocketId s = *t.stack().socket(true);
  ASSERT_EQ(set_int(t, s, IPPROTO_IPV6, IPV6_TCLASS, 0x2c), Errc::kOk);
  ASSERT_EQ(set_int(t, s, IPPROTO_IP, IP_TOS, 0x80), Errc::kOk);
  ASSERT_EQ(set_int(t, s, IPPROTO_IP, IP_TTL, 3), Errc::kOk);
  ASSERT_EQ(t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port}), Errc::kInProgress);
  const Tx syn = t.expect_tx();
  EXPECT_EQ(syn.ip.version, 4);
  EXPECT_EQ(syn.ip.tos, 0x80);
  EXPECT_EQ(syn.ip.ttl, 3);
}

TEST(IpFields, ArgumentChecksAsLinux) {
  Harness t;
  const SocketId s4 = *t.stack().socket();
  const SocketId s6 = *t.stack().socket(true);
  // do_ip_setsockopt(IP_TTL): -1 or 1..255.
  EXPECT_EQ(set_int(t, s4, IPPROTO_IP, IP_TTL, 0), Errc::kInval);
  EXPECT_EQ(set_int(t, s4, IPPROTO_IP, IP_TTL, 256), Errc::kInval);
  EXPECT_EQ(set_int(t, s4, IPPROTO_IP, IP_TTL, -2), Errc::kInval);
  EXPECT_EQ(set_int(t, s4, IPPROTO_IP, IP_TTL, 255), Errc::kOk);
  EXPECT_EQ(t.stack().setsockopt(t.now(), s4, IPPROTO_IP, IP_TTL, {}), Errc::kInval);  // optlen < 1
  // A one-byte value is read as an unsigned char.
  const uint8_t one = 0x44;
  EXPECT_EQ(t.stack().setsockopt(t.now(), s4, IPPROTO_IP, IP_TOS, std::span(&one, 1)), Errc::kOk);
  EXPECT_EQ(get_int(t, s4, IPPROTO_IP, IP_TOS), 0x44);
  // do_ip_getsockopt: a one-byte buffer gets one byte.
  uint8_t b = 0;
  size_t len = 1;
  EXPECT_EQ(t.stack().getsockopt(s4, IPPROTO_IP, IP_TTL, std::span(&b, 1), &len), Errc::kOk);
  EXPECT_EQ(len, 1u);
  EXPECT_EQ(b, 255);
  // do_ipv6_setsockopt: a full int, -1..0xff / -1..255.
  EXPECT_EQ(set_int(t, s6, IPPROTO_IPV6, IPV6_TCLASS, 256), Errc::kInval);
  EXPECT_EQ(set_int(t, s6, IPPROTO_IPV6, IPV6_TCLASS, -2), Errc::kInval);
  EXPECT_EQ(set_int(t, s6, IPPROTO_IPV6, IPV6_UNICAST_HOPS, 256), Errc::kInval);
  EXPECT_EQ(set_int(t, s6, IPPROTO_IPV6, IPV6_UNICAST_HOPS, -2), Errc::kInval);
  EXPECT_EQ(t.stack().setsockopt(t.now(), s6, IPPROTO_IPV6, IPV6_TCLASS, std::span(&one, 1)), Errc::kInval);
  EXPECT_EQ(set_int(t, s6, IPPROTO_IPV6, IPV6_TCLASS, 0x31), Errc::kOk);
  EXPECT_EQ(get_int(t, s6, IPPROTO_IPV6, IPV6_TCLASS), 0x30);  // SOCK_STREAM: ECN bits stay TCP's
  EXPECT_EQ(set_int(t, s6, IPPROTO_IPV6, IPV6_TCLASS, -1), Errc::kOk);  // RFC 3542 §6.5: the default, 0
  EXPECT_EQ(get_int(t, s6, IPPROTO_IPV6, IPV6_TCLASS), 0);
  // An AF_INET socket has no IPv6 level.
  EXPECT_EQ(set_int(t, s4, IPPROTO_IPV6, IPV6_TCLASS, 4), Errc::kNoProtoOpt);
  int v = 0;
  EXPECT_EQ(t.stack().getsockopt(s4, IPPROTO_IPV6, IPV6_UNICAST_HOPS,
                                 std::span(reinterpret_cast<uint8_t*>(&v), sizeof v), &len),
            Errc::kNoProtoOpt);
}

}  // namespace
}  // namespace weir::test
