// ECN (RFC 3168) as Linux does it: negotiation on the handshake, the IP ECN
// field on what we send, the ECE echo of a CE mark until CWR, and the
// sender's once-per-window reaction with CWR.
#include <gtest/gtest.h>

#include "harness_helper.h"
#include "tcp/cc/cc.h"
#include "wire/packet.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

constexpr uint8_t kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3;
constexpr uint8_t kOptEcn = 8, kOptEcnSeen = 16;  // TCPI_OPT_ECN, TCPI_OPT_ECN_SEEN

uint8_t ecn_of(const Tx& t) { return t.ip.tos & 3; }

// A segment from the peer with the given IP ECN field (no TCP options but
// the SYN's MSS).
void send_ip(Harness& t, uint8_t flags, uint32_t seq, uint32_t ack, uint32_t len, uint8_t ecn) {
  wire::TcpHeader h;
  h.src_port = t.remote_port;
  h.dst_port = t.local_port;
  h.seq = t.peer_isn_ + seq;
  h.ack = (flags & ACK) ? t.iss_ + ack : Seq32(0);
  h.flags = flags;
  h.window = 65535;
  if (flags & SYN) h.options.mss = 1460;
  std::vector<uint8_t> payload(len, 0x5a);
  wire::IpInfo ip;
  ip.src = t.remote;
  ip.dst = t.local;
  ip.tos = ecn;
  const std::vector<uint8_t> bytes = wire::build_tcp_packet(ip, h, payload);
  t.inject_bytes(bytes);
}

// listen(), the peer's SYN with `syn_flags` and `syn_ecn`, our SYN-ACK
// (returned in *synack), the peer's ACK, accept(). No TCP options but MSS
// 1460 on the SYN.
SocketId open_with(Harness& t, uint8_t syn_flags, uint8_t syn_ecn, Tx* synack) {
  t.listener = *t.stack().socket();
  EXPECT_EQ(t.stack().bind(t.listener, Endpoint{t.local, t.local_port}), Errc::kOk);
  EXPECT_EQ(t.stack().listen(t.now(), t.listener, 16), Errc::kOk);
  t.peer_ts = false;
  send_ip(t, SYN | syn_flags, 0, 0, 0, syn_ecn);
  *synack = t.expect_tx();
  t.iss_ = synack->h.seq;
  send_ip(t, ACK, 1, 1, 0, kNotEct);
  auto s = t.stack().accept(t.now(), t.listener, nullptr);
  EXPECT_TRUE(s.has_value());
  return s ? *s : kNoSocket;
}

SocketId ecn_open(Harness& t) {
  Tx synack;
  return open_with(t, ECE | CWR, kNotEct, &synack);
}

TEST(Ecn, ServerAcceptsEcnSetupSynWithEceOnlySynAck) {
  Harness t;
  Tx synack;
  const SocketId s = open_with(t, ECE | CWR, kNotEct, &synack);
  EXPECT_TRUE(synack.has(ECE));   // RFC 3168 §6.1.1: ECN-setup SYN-ACK
  EXPECT_FALSE(synack.has(CWR));
  EXPECT_EQ(ecn_of(synack), kNotEct);  // a SYN-ACK is never ECN-capable
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_options & kOptEcn, kOptEcn);
}

TEST(Ecn, SynWithoutBothFlagsIsNotEcnSetup) {
  Harness t;
  Tx synack;
  const SocketId s = open_with(t, ECE, kNotEct, &synack);
  EXPECT_FALSE(synack.has(ECE));
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_options & kOptEcn, 0);
  write(t, s, 100);
  EXPECT_EQ(ecn_of(t.expect_tx()), kNotEct);  // no ECN: data is not-ECT
}

TEST(Ecn, EcnCapableSynIsRefused) {
  Harness t;
  Tx synack;
  open_with(t, ECE | CWR, kEct0, &synack);
  EXPECT_FALSE(synack.has(ECE));  // Linux tcp_ecn_create_request: !ect
}

TEST(Ecn, TcpEcnZeroNeverAccepts) {
  StackConfig cfg;
  cfg.tcp_ecn = 0;
  Harness t(cfg);
  Tx synack;
  open_with(t, ECE | CWR, kNotEct, &synack);
  EXPECT_FALSE(synack.has(ECE));
}

TEST(Ecn, ClientAsksOnlyWithTcpEcnOneAndNotOnSynRetransmission) {
  {
    Harness t;  // tcp_ecn = 2 (Linux default): accept, never ask
    const SocketId s = *t.stack().socket();
    t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port});
    const Tx syn = t.expect_tx();
    EXPECT_FALSE(syn.has(ECE) || syn.has(CWR));
  }
  StackConfig cfg;
  cfg.tcp_ecn = 1;
  Harness t(cfg);
  const SocketId s = *t.stack().socket();
  t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port});
  const Tx syn = t.expect_tx();
  EXPECT_TRUE(syn.has(ECE) && syn.has(CWR));
  EXPECT_EQ(ecn_of(syn), kNotEct);
  t.run_next_timer();  // SYN RTO
  const Tx again = t.expect_tx();
  ASSERT_TRUE(again.has(SYN));
  EXPECT_FALSE(again.has(ECE) || again.has(CWR));  // tcp_ecn_clear_syn (fallback)
}

TEST(Ecn, NewDataIsEct0AndPureAcksAreNotEct) {
  Harness t;
  const SocketId s = ecn_open(t);
  write(t, s, 1000);
  const Tx data = t.expect_tx();
  EXPECT_EQ(ecn_of(data), kEct0);
  send_ip(t, ACK | PSH, 1, 1001, 10, kEct0);
  const Tx ack = t.expect_tx();  // quick-ACK mode at start
  EXPECT_EQ(t.rel_ack(ack), 11u);
  EXPECT_EQ(ecn_of(ack), kNotEct);
  EXPECT_FALSE(ack.has(ECE));
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_options & kOptEcnSeen, kOptEcnSeen);
  EXPECT_EQ(t.stack().counters().get(Counter::IpExtInECT0Pkts), 1u);
}

TEST(Ecn, RetransmissionIsNotEct) {
  Harness t;
  const SocketId s = ecn_open(t);
  write(t, s, 1000);
  EXPECT_EQ(ecn_of(t.expect_tx()), kEct0);
  t.run_next_timer();  // RTO
  const Tx rtx = t.expect_tx();
  EXPECT_EQ(t.rel_seq(rtx), 1u);
  EXPECT_EQ(rtx.payload.size(), 1000u);
  EXPECT_EQ(ecn_of(rtx), kNotEct);  // RFC 3168 §6.1.5
}

TEST(Ecn, CeMarkIsEchoedUntilCwr) {
  Harness t;
  const SocketId s = ecn_open(t);
  send_ip(t, ACK, 1, 1, 100, kCe);
  Tx a = t.expect_tx();
  EXPECT_TRUE(a.has(ECE));
  EXPECT_EQ(t.stack().counters().get(Counter::IpExtInCEPkts), 1u);
  send_ip(t, ACK, 101, 1, 100, kEct1);
  a = t.expect_tx();
  EXPECT_TRUE(a.has(ECE)) << "ECE repeats until CWR (RFC 3168 §6.1.3)";
  write(t, s, 100);
  const Tx data = t.expect_tx();
  EXPECT_TRUE(data.has(ECE));
  EXPECT_EQ(ecn_of(data), kEct0);
  // Data after our data within the ATO: ping-pong (delayed ACKs), but CWR
  // on data is ACKed at once (Linux tcp_ecn_accept_cwr: ICSK_ACK_NOW).
  send_ip(t, ACK | CWR, 201, 101, 100, kEct0);
  ASSERT_EQ(t.pending(), 1u);
  a = t.expect_tx();
  EXPECT_EQ(t.rel_ack(a), 301u);
  EXPECT_FALSE(a.has(ECE));
  send_ip(t, ACK, 301, 101, 100, kEct0);
  if (t.pending() == 0) t.run_next_timer();  // the delayed ACK
  EXPECT_FALSE(t.expect_tx().has(ECE));
}

TEST(Ecn, CeMarkOnNonEcnConnectionIsIgnored) {
  Harness t;
  Tx synack;
  open_with(t, 0, kNotEct, &synack);
  send_ip(t, ACK, 1, 1, 100, kCe);
  EXPECT_FALSE(t.expect_tx().has(ECE));
}

TEST(Ecn, EceReducesOncePerWindowAndCwrGoesOutOnce) {
  Harness t;
  const SocketId s = ecn_open(t);
  write(t, s, 10 * 1460);
  for (int i = 0; i < 10; ++i) t.expect_tx();
  send_ip(t, ACK | ECE, 1, 1 + 2 * 1460, 0, kNotEct);
  TcpInfo i = *t.stack().tcp_info(s);
  EXPECT_EQ(i.tcpi_ca_state, static_cast<uint8_t>(CaState::CWR));
  const uint32_t ssthresh = i.tcpi_snd_ssthresh;
  EXPECT_EQ(ssthresh, 10u * 717 / 1024);  // CUBIC's beta
  t.clear_tx();
  write(t, s, 2 * 1460);
  const Tx first = t.expect_tx();
  EXPECT_TRUE(first.has(CWR));
  EXPECT_EQ(ecn_of(first), kEct0);
  if (t.pending()) {
    EXPECT_FALSE(t.expect_tx().has(CWR)) << "CWR once per reduction";
  }
  // More ECE for data sent before the reduction: nothing more.
  send_ip(t, ACK | ECE, 1, 1 + 4 * 1460, 0, kNotEct);
  i = *t.stack().tcp_info(s);
  EXPECT_EQ(i.tcpi_snd_ssthresh, ssthresh);
  EXPECT_EQ(i.tcpi_ca_state, static_cast<uint8_t>(CaState::CWR));
  t.clear_tx();
  write(t, s, 1460);
  if (t.pending()) {
    EXPECT_FALSE(t.expect_tx().has(CWR));
  }
  EXPECT_GE(t.stack().counters().get(Counter::TcpExtTCPDeliveredCE), 4u);
}

}  // namespace
}  // namespace weir::test
