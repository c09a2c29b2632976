// IPv6 flow labels from the transmit hash, as Linux (tcp/flow_label.h):
// every segment of a connection carries rol32(sk_txhash, 16) & 0xfffff
// (ip6_make_flowlabel), the hash drawn from the stack's seeded generator at
// connect() and for a passive open; a retransmission timeout draws a new one
// (tcp_write_timeout -> sk_rethink_txhash, TcpExtTCPTimeoutRehash,
// tcpi_rehash), as does a SYN-ACK retransmission (tcp_rtx_synack, not
// counted) and duplicate data under a new label (tcp_rcv_spurious_retrans,
// TcpExtTCPDuplicateDataRehash); net.ipv6.auto_flowlabels,
// IPV6_AUTOFLOWLABEL, flowlabel_state_ranges, net.core.txrehash and
// SO_TXREHASH decide. The old shape (label 0 on everything, no rehash)
// fails every test here.
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <array>
#include <bit>

#include <gtest/gtest.h>

#include "harness_helper.h"
#include "tcp/flow_label.h"
#include "wire/packet.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

constexpr int kSoTxRehash = 74;  // SO_TXREHASH (asm-generic/socket.h)

void make_v6(Harness& t) {
  t.local = IpAddr::v6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
  t.remote = IpAddr::v6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2});
  t.stack().add_address(t.local);
}

// The hashes the stack will draw, in order: its generator, seeded as the
// stack seeds it (TcpEnv::tx_rndhash).
struct Draws {
  explicit Draws(Harness& t) : state(tcp::txhash_seed(t.stack().config().secret)) {}
  uint32_t next() { return tcp::next_txhash(state); }
  uint64_t state;
};

// ip6_make_flowlabel with auto labels on and no state ranges.
uint32_t label_of(uint32_t hash) { return std::rotl(hash, 16) & 0xfffffu; }

uint64_t counter(Harness& t, Counter c) { return t.stack().counters().get(c); }

// connect() from a fresh AF_INET6 socket (options set by `setup`); the SYN.
template <typename Setup>
Tx connect6(Harness& t, SocketId* s, Setup setup) {
  *s = *t.stack().socket(true);
  setup(*s);
  EXPECT_EQ(t.stack().connect(t.now(), *s, Endpoint{t.remote, t.remote_port}), Errc::kInProgress);
  return t.expect_tx();
}

SocketId open6(Harness& t) {
  SocketId s = kNoSocket;
  const Tx syn = connect6(t, &s, [](SocketId) {});
  t.answer_syn(syn);
  t.expect_tx();  // our ACK
  return s;
}

// Fires timers until one was a retransmission timeout (the tail-loss
// probe may come first); returns the last segment sent.
Tx run_to_rto(Harness& t) {
  const uint64_t before = counter(t, Counter::TcpExtTCPTimeouts);
  for (int i = 0; i < 4 && counter(t, Counter::TcpExtTCPTimeouts) == before; ++i) t.run_next_timer();
  EXPECT_EQ(counter(t, Counter::TcpExtTCPTimeouts), before + 1);
  Tx last = t.expect_tx();
  while (t.pending() > 0) last = t.expect_tx();
  return last;
}

TEST(FlowLabel, EverySegmentCarriesTheTxhashLabel) {
  Harness t;
  make_v6(t);
  Draws d(t);
  const uint32_t l1 = label_of(d.next());
  ASSERT_NE(l1, 0u);
  SocketId s = kNoSocket;
  const Tx syn = connect6(t, &s, [](SocketId) {});
  EXPECT_EQ(syn.ip.flow_label, l1);
  t.answer_syn(syn);
  EXPECT_EQ(t.expect_tx().ip.flow_label, l1);  // the handshake's ACK
  write(t, s, 100);
  EXPECT_EQ(t.expect_tx().ip.flow_label, l1);
  EXPECT_EQ(get_int(t, s, IPPROTO_IPV6, IPV6_AUTOFLOWLABEL), 1);  // opt-out: on unless turned off
}

// tcp_write_timeout: the retransmission goes out on the new hash; counted.
TEST(FlowLabel, RetransmissionTimeoutDrawsANewHash) {
  Harness t;
  make_v6(t);
  Draws d(t);
  const uint32_t l1 = label_of(d.next());
  const uint32_t l2 = label_of(d.next());
  ASSERT_NE(l1, l2);
  const SocketId s = open6(t);
  write(t, s, 100);
  EXPECT_EQ(t.expect_tx().ip.flow_label, l1);
  const Tx rtx = run_to_rto(t);
  EXPECT_EQ(rtx.ip.flow_label, l2);
  EXPECT_EQ(counter(t, Counter::TcpExtTCPTimeoutRehash), 1u);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_rehash, 1u);  // plb_rehash (none) + timeout_rehash
}

TEST(FlowLabel, SynRetransmissionDrawsANewHash) {
  Harness t;
  make_v6(t);
  Draws d(t);
  const uint32_t l1 = label_of(d.next());
  const uint32_t l2 = label_of(d.next());
  SocketId s = kNoSocket;
  EXPECT_EQ(connect6(t, &s, [](SocketId) {}).ip.flow_label, l1);
  t.run_next_timer();
  const Tx syn2 = t.expect_tx();
  ASSERT_TRUE(syn2.has(SYN));
  EXPECT_EQ(syn2.ip.flow_label, l2);
  EXPECT_EQ(counter(t, Counter::TcpExtTCPTimeoutRehash), 1u);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_rehash, 1u);
}

// Protective Load Balancing (DCTCP with tcp_plb_enabled, tcp_plb.c): two
// observation windows all ECE-acknowledged (tcp_plb_rehash_rounds 2) move
// the connection: the next segment carries the next hash's label; counted
// as TCPPLBRehash and in tcpi_rehash.
TEST(FlowLabel, ProtectiveLoadBalancingDrawsANewHash) {
  StackConfig cfg;
  ASSERT_EQ(cfg.set("net.ipv4.tcp_plb_enabled", "1"), "");
  ASSERT_EQ(cfg.set("net.ipv4.tcp_plb_rehash_rounds", "2"), "");
  ASSERT_EQ(cfg.set("net.ipv4.tcp_plb_rehash_rounds", "32"), "tcp_plb_rehash_rounds: expected 0..31, got 32");
  cfg.tcp_congestion_control = "dctcp";
  Harness t(cfg);
  make_v6(t);
  Draws d(t);
  const uint32_t l1 = label_of(d.next());
  const uint32_t l2 = label_of(d.next());
  ASSERT_NE(l1, l2);
  SocketId s = kNoSocket;
  const Tx syn = connect6(t, &s, [](SocketId) {});
  ASSERT_TRUE(syn.h.has(ECE) && syn.h.has(CWR));  // DCTCP asks for ECN
  t.iss_ = syn.h.seq;
  t.local_port = syn.h.src_port;
  wire::TcpHeader synack;
  synack.src_port = t.remote_port;
  synack.dst_port = t.local_port;
  synack.seq = t.peer_isn_;
  synack.ack = t.iss_ + 1;
  synack.flags = SYN | ACK | ECE;  // RFC 3168 §6.1.1: agreed
  synack.window = 65535;
  t.build_syn_options(synack.options, {});
  t.inject_raw(synack);
  t.expect_tx();
  write(t, s, 5000);
  while (t.pending() > 0) EXPECT_EQ(t.expect_tx().ip.flow_label, l1);
  t.inject(ACK | ECE, 1, 1441);  // round 1: one packet, marked
  EXPECT_EQ(counter(t, Counter::TcpExtTCPPLBRehash), 0u);
  t.inject(ACK | ECE, 1, 5001);  // round 2: the rest, marked
  EXPECT_EQ(counter(t, Counter::TcpExtTCPPLBRehash), 1u);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_rehash, 1u);
  write(t, s, 100);
  EXPECT_EQ(t.expect_tx().ip.flow_label, l2);
}

// SO_TXREHASH 0 (sk_rethink_txhash's sk_txrehash check) keeps the path.
TEST(FlowLabel, TxRehashOffKeepsTheLabel) {
  Harness t;
  make_v6(t);
  Draws d(t);
  const uint32_t l1 = label_of(d.next());
  SocketId s = kNoSocket;
  const Tx syn =
      connect6(t, &s, [&](SocketId id) { ASSERT_EQ(set_int(t, id, SOL_SOCKET, kSoTxRehash, 0), Errc::kOk); });
  EXPECT_EQ(syn.ip.flow_label, l1);
  t.run_next_timer();
  EXPECT_EQ(t.expect_tx().ip.flow_label, l1);
  EXPECT_EQ(counter(t, Counter::TcpExtTCPTimeoutRehash), 0u);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_rehash, 0u);
}

// net.core.txrehash is taken at socket creation (inet6_create); SO_TXREHASH
// -1 takes it again, anything outside -1..1 is EINVAL (sk_setsockopt).
TEST(FlowLabel, TxRehashSysctlAndOption) {
  Harness t;
  make_v6(t);
  const SocketId on = *t.stack().socket(true);
  ASSERT_EQ(t.stack().config().set("net.core.txrehash", "0"), "");
  const SocketId off = *t.stack().socket(true);
  EXPECT_EQ(get_int(t, on, SOL_SOCKET, kSoTxRehash), 1);
  EXPECT_EQ(get_int(t, off, SOL_SOCKET, kSoTxRehash), 0);
  EXPECT_EQ(set_int(t, on, SOL_SOCKET, kSoTxRehash, -1), Errc::kOk);
  EXPECT_EQ(get_int(t, on, SOL_SOCKET, kSoTxRehash), 0);
  EXPECT_EQ(set_int(t, off, SOL_SOCKET, kSoTxRehash, 1), Errc::kOk);
  EXPECT_EQ(get_int(t, off, SOL_SOCKET, kSoTxRehash), 1);
  EXPECT_EQ(set_int(t, off, SOL_SOCKET, kSoTxRehash, 2), Errc::kInval);
  EXPECT_EQ(set_int(t, off, SOL_SOCKET, kSoTxRehash, -2), Errc::kInval);
  EXPECT_NE(t.stack().config().set("net.core.txrehash", "2"), "");
  EXPECT_NE(t.stack().config().set("net.ipv6.auto_flowlabels", "4"), "");
  EXPECT_NE(t.stack().config().set("net.ipv6.flowlabel_state_ranges", "2"), "");
}

// auto_flowlabels 0..3 (off, opt-out, opt-in, forced) against the socket's
// IPV6_AUTOFLOWLABEL (-1: never set): ip6_make_flowlabel /
// ip6_autoflowlabel; getsockopt reports ip6_autoflowlabel.
TEST(FlowLabel, AutoFlowLabelsModesAndTheSocketOption) {
  for (int mode = 0; mode <= 3; ++mode) {
    for (int opt = -1; opt <= 1; ++opt) {
      StackConfig cfg;
      cfg.auto_flowlabels = mode;
      Harness t(cfg);
      make_v6(t);
      Draws d(t);
      const uint32_t l1 = label_of(d.next());
      const bool sock = opt < 0 ? (mode == 1 || mode == 3) : opt == 1;
      const bool labelled = mode == 3 || (mode != 0 && sock);
      SocketId s = kNoSocket;
      const Tx syn = connect6(t, &s, [&](SocketId id) {
        if (opt >= 0) {
          ASSERT_EQ(set_int(t, id, IPPROTO_IPV6, IPV6_AUTOFLOWLABEL, opt), Errc::kOk);
        }
      });
      EXPECT_EQ(syn.ip.flow_label, labelled ? l1 : 0u) << "mode " << mode << " opt " << opt;
      EXPECT_EQ(get_int(t, s, IPPROTO_IPV6, IPV6_AUTOFLOWLABEL), sock ? 1 : 0) << "mode " << mode << " opt " << opt;
    }
  }
}

// The option applies from the next packet on (ip6_xmit asks per packet).
TEST(FlowLabel, OptingOutAppliesToTheNextSegment) {
  Harness t;
  make_v6(t);
  Draws d(t);
  const uint32_t l1 = label_of(d.next());
  const SocketId s = open6(t);
  write(t, s, 10);
  EXPECT_EQ(t.expect_tx().ip.flow_label, l1);
  t.inject(ACK, 1, 11);  // acknowledged, so Nagle lets the next write go
  t.clear_tx();
  ASSERT_EQ(set_int(t, s, IPPROTO_IPV6, IPV6_AUTOFLOWLABEL, 0), Errc::kOk);
  write(t, s, 10);
  EXPECT_EQ(t.expect_tx().ip.flow_label, 0u);
}

TEST(FlowLabel, StateRangesSetTheStatelessFlag) {
  StackConfig cfg;
  cfg.flowlabel_state_ranges = 1;
  Harness t(cfg);
  make_v6(t);
  Draws d(t);
  const uint32_t l1 = label_of(d.next());
  SocketId s = kNoSocket;
  EXPECT_EQ(connect6(t, &s, [](SocketId) {}).ip.flow_label, l1 | 0x80000u);
}

// IPv4 (here an AF_INET6 socket to a v4-mapped peer: IPv4 on the wire) has
// no flow label; the stack draws the hash all the same (Linux
// tcp_v4_connect: sk_set_txhash).
TEST(FlowLabel, Ipv4HasNone) {
  Harness t;
  const SocketId s = t.active_open();
  write(t, s, 10);
  const Tx d = t.expect_tx();
  EXPECT_EQ(d.ip.version, 4);
  EXPECT_EQ(d.ip.flow_label, 0u);
}

// An AF_INET6 listener on t.local_port; the peer's SYNs carry no timestamps.
// With `fastopen_qlen`, TCP_FASTOPEN is set on it first.
void listen6(Harness& t, int fastopen_qlen = 0) {
  t.listener = *t.stack().socket(true);
  ASSERT_EQ(t.stack().bind(t.listener, Endpoint{t.local, t.local_port}), Errc::kOk);
  if (fastopen_qlen) {
    ASSERT_EQ(set_int(t, t.listener, IPPROTO_TCP, TCP_FASTOPEN, fastopen_qlen), Errc::kOk);
  }
  ASSERT_EQ(t.stack().listen(t.now(), t.listener, 16), Errc::kOk);
  t.peer_ts = false;
}

// The SYN-ACK's timed retransmission goes out labelled `timed`, the one a
// repeated `syn` (with `data`) draws `repeated`, and neither counts as a
// timeout rehash.
void expect_synack_relabelled(Harness& t, const wire::TcpHeader& syn, std::span<const uint8_t> data,
                              uint32_t timed, uint32_t repeated) {
  t.run_next_timer();
  const Tx again = t.expect_tx();
  ASSERT_TRUE(again.has(SYN) && again.has(ACK));
  EXPECT_EQ(again.ip.flow_label, timed);
  t.inject_raw(syn, data);
  const Tx answer = t.expect_tx();
  ASSERT_TRUE(answer.has(SYN) && answer.has(ACK));
  EXPECT_EQ(answer.ip.flow_label, repeated);
  EXPECT_EQ(counter(t, Counter::TcpExtTCPTimeoutRehash), 0u);
}

// A passive open: the request's hash labels the SYN-ACK and, taken by the
// child (tcp_create_openreq_child: newsk->sk_txhash = treq->txhash), its data.
TEST(FlowLabel, SynAckAndTheChildsDataShareTheLabel) {
  Harness t;
  make_v6(t);
  Draws d(t);
  const uint32_t l1 = label_of(d.next());
  listen6(t);
  t.inject_raw(t.peer_syn(t.remote_port, t.peer_isn_, PeerOpts{1460, 7, true, false}));
  const Tx synack = t.expect_tx();
  EXPECT_EQ(synack.ip.flow_label, l1);
  t.iss_ = synack.h.seq;
  t.inject(ACK, 1, 1);
  const auto s = t.stack().accept(t.now(), t.listener, nullptr);
  ASSERT_TRUE(s.has_value());
  write(t, *s, 100);
  EXPECT_EQ(t.expect_tx().ip.flow_label, l1);
}

// tcp_rtx_synack: each SYN-ACK retransmission draws the request a new hash,
// uncounted (a request is not a socket: no timeout_rehash); so does the
// SYN-ACK a repeated SYN draws (tcp_check_req -> inet_rtx_syn_ack).
TEST(FlowLabel, SynAckRetransmissionDrawsANewHashUncounted) {
  Harness t;
  make_v6(t);
  Draws d(t);
  const uint32_t l1 = label_of(d.next());
  const uint32_t l2 = label_of(d.next());
  const uint32_t l3 = label_of(d.next());
  listen6(t);
  const auto syn = t.peer_syn(t.remote_port, t.peer_isn_, PeerOpts{1460, 7, true, false});
  t.inject_raw(syn);
  EXPECT_EQ(t.expect_tx().ip.flow_label, l1);
  expect_synack_relabelled(t, syn, {}, l2, l3);
}

// A Fast Open child is a full socket beside its request: its SYN-ACK is
// the request's (tcp_make_synack: the skb's hash is tcp_rsk(req)->txhash),
// so each SYN-ACK retransmission, timed (tcp_fastopen_synack_timer) or for
// a repeated SYN, goes under a new request hash, while the child's own
// hash (taken from the request at creation) labels its data throughout.
TEST(FlowLabel, FastOpenChildRedrawsTheRequestsHashNotItsOwn) {
  StackConfig cfg;
  cfg.tcp_fastopen = 0x2 | 0x200;  // server on, no cookie needed
  Harness t(cfg);
  make_v6(t);
  Draws d(t);
  const uint32_t l1 = label_of(d.next());
  const uint32_t l2 = label_of(d.next());
  const uint32_t l3 = label_of(d.next());
  listen6(t, 8);
  const std::array<uint8_t, 10> data{};
  const auto syn = t.peer_syn(t.remote_port, t.peer_isn_, PeerOpts{1460, 7, true, false});
  t.inject_raw(syn, data);
  const Tx synack = t.expect_tx();
  ASSERT_EQ(synack.h.ack, t.peer_isn_ + 11);  // the data is taken: a Fast Open child
  EXPECT_EQ(synack.ip.flow_label, l1);
  t.iss_ = synack.h.seq;
  expect_synack_relabelled(t, syn, data, l2, l3);
  t.inject(ACK, 11, 1);
  const auto s = t.stack().accept(t.now(), t.listener, nullptr);
  ASSERT_TRUE(s.has_value());
  while (t.pending() > 0) t.clear_tx();
  write(t, *s, 100);
  EXPECT_EQ(t.expect_tx().ip.flow_label, l1);
}

// tcp_rcv_spurious_retrans (Linux >= 6.7): data we have, under a label
// other than the last data's, repaths our ACKs (the dup ACK already goes on
// the new hash); the same label again, or the same data under the label it
// first came with, does not.
TEST(FlowLabel, DuplicateDataUnderANewLabelRehashes) {
  Harness t;
  make_v6(t);
  Draws d(t);
  const uint32_t l1 = label_of(d.next());
  const uint32_t l2 = label_of(d.next());
  const SocketId s = open6(t);
  (void)s;
  t.peer_flow_label = 0x11111;
  t.inject(ACK, 1, 1, 100);
  while (t.pending() > 0) t.clear_tx();
  t.advance(Duration::ms(300));  // any delayed ACK out
  t.clear_tx();
  t.inject(ACK, 1, 1, 100);  // the same label: no rehash, a dup ACK on l1
  ASSERT_GT(t.pending(), 0u);
  EXPECT_EQ(t.expect_tx().ip.flow_label, l1);
  EXPECT_EQ(counter(t, Counter::TcpExtTCPDuplicateDataRehash), 0u);
  t.peer_flow_label = 0x22222;
  t.inject(ACK, 1, 1, 100);  // the peer repathed: so do we
  ASSERT_GT(t.pending(), 0u);
  EXPECT_EQ(t.expect_tx().ip.flow_label, l2);
  EXPECT_EQ(counter(t, Counter::TcpExtTCPDuplicateDataRehash), 1u);
  EXPECT_EQ(counter(t, Counter::TcpExtTCPTimeoutRehash), 0u);
  t.inject(ACK, 1, 1, 100);  // remembered: no second rehash
  EXPECT_EQ(t.expect_tx().ip.flow_label, l2);
  EXPECT_EQ(counter(t, Counter::TcpExtTCPDuplicateDataRehash), 1u);
}

// tcp_v6_send_reset with no socket: the control socket labels the reset from
// the flow's own hash (skb_get_hash_flowi6), keyed here by the secret.
TEST(FlowLabel, ResetWithoutASocketUsesTheFlowHash) {
  Harness t;
  make_v6(t);
  t.peer_ts = false;
  t.inject_raw(t.peer_syn(t.remote_port, t.peer_isn_, PeerOpts{1460, 7, true, false}));  // nobody listens
  const Tx rst = t.expect_tx();
  ASSERT_TRUE(rst.has(RST));
  const FourTuple ft{Endpoint{t.local, t.local_port}, Endpoint{t.remote, t.remote_port}};
  const uint32_t want = label_of(tcp::flow_hash(t.stack().config().secret, ft));
  ASSERT_NE(want, 0u);
  EXPECT_EQ(rst.ip.flow_label, want);
}

}  // namespace
}  // namespace weir::test
