// RFC 5961: an off-path attacker who knows the 4-tuple but not the sequence
// numbers injects RSTs, SYNs and data. Only an RST at exactly RCV.NXT
// resets; anything else in the window draws a challenge ACK, limited to one
// per tcp_invalid_ratelimit (500 ms) per socket and tcp_challenge_ack_limit
// per second per stack. Timestamps are off so that PAWS is not what stops
// the attacker.
#include <gtest/gtest.h>

#include <random>

#include "adversarial/adv_helper.h"
#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

PeerOpts no_ts() {
  PeerOpts o;
  o.ts = false;
  return o;
}

// An attacker's segment: the right ports, absolute seq/ack of its choosing.
void spoof(Harness& h, uint8_t flags, Seq32 seq, Seq32 ack, size_t len = 0) {
  wire::TcpHeader t;
  t.src_port = h.remote_port;
  t.dst_port = h.local_port;
  t.seq = seq;
  t.ack = ack;
  t.flags = flags;
  t.window = 65535;
  std::vector<uint8_t> junk(len, 0xee);
  h.inject_raw(t, junk);
}

std::vector<uint8_t> legit_bytes(uint32_t from, uint32_t len) {
  std::vector<uint8_t> p(len);
  for (uint32_t i = 0; i < len; ++i) p[i] = static_cast<uint8_t>((from + i) * 131 + 7);
  return p;
}

TEST(BlindInjection, RandomGuessesNeitherResetNorCorruptTheStream) {
  Harness h;
  const SocketId s = h.passive_open(no_ts());
  std::mt19937_64 rng(5961);
  std::vector<uint8_t> expect, got;
  uint32_t seq = 1;
  const uint64_t challenge0 = counter(h.stack(), Counter::TcpExtTCPChallengeACK);
  const Time t0 = h.now();
  uint64_t guesses = 0;
  for (int seg = 0; seg < 100; ++seg) {
    auto p = legit_bytes(seq, 1000);
    h.inject_payload(ACK | PSH, seq, 1, p);
    expect.insert(expect.end(), p.begin(), p.end());
    seq += 1000;
    for (int g = 0; g < 100; ++g, ++guesses) {
      h.advance(Duration::us(100));
      const uint8_t kinds[] = {RST, RST | ACK, SYN, ACK | PSH};
      const uint8_t f = kinds[rng() % 4];
      spoof(h, f, Seq32(static_cast<uint32_t>(rng())), Seq32(static_cast<uint32_t>(rng())), f == (ACK | PSH) ? 100 : 0);
    }
    drain(h.stack(), h.now(), s, got);
    h.clear_tx();
  }
  const double secs = (h.now() - t0).secs();
  const uint64_t challenges = counter(h.stack(), Counter::TcpExtTCPChallengeACK) - challenge0;
  measured("blind.guesses", static_cast<double>(guesses));
  measured("blind.challenge_acks", static_cast<double>(challenges));
  EXPECT_EQ(snapshot(h.stack(), s).state, 1) << "the connection must stay ESTABLISHED";
  EXPECT_EQ(counter(h.stack(), Counter::TcpEstabResets), 0u);
  EXPECT_EQ(got, expect) << "the stream must be byte-exact";
  // One per 500 ms per socket: ceil(secs / 0.5) + 1 at most.
  EXPECT_LE(challenges, static_cast<uint64_t>(secs / 0.5) + 1);
}

TEST(BlindInjection, InWindowRstDrawsOneChallengeAckPerHalfSecond) {
  Harness h;
  const SocketId s = h.passive_open(no_ts());
  h.clear_tx();
  const Seq32 rcv_nxt = h.peer_isn_ + 1;
  spoof(h, RST, rcv_nxt + 1000, Seq32(0));
  ASSERT_EQ(h.pending(), 1u) << "an in-window RST draws a challenge ACK";
  Tx c = h.expect_tx();
  EXPECT_TRUE(c.has(ACK) && !c.has(RST));
  EXPECT_EQ(c.h.ack, rcv_nxt);
  h.advance(Duration::ms(100));
  for (int i = 0; i < 50; ++i) spoof(h, RST, rcv_nxt + 2000 + static_cast<uint32_t>(i), Seq32(0));
  EXPECT_EQ(h.pending(), 0u) << "within 500 ms of the last one: no more challenge ACKs";
  EXPECT_EQ(counter(h.stack(), Counter::TcpExtTCPACKSkippedChallenge), 50u);
  h.advance(Duration::ms(401));
  spoof(h, RST, rcv_nxt + 3000, Seq32(0));
  EXPECT_EQ(h.pending(), 1u) << "500 ms later a challenge ACK goes out again";
  h.clear_tx();
  measured("challenge.per_socket_interval_ms", 500);
  EXPECT_EQ(snapshot(h.stack(), s).state, 1);
  // The control: the exact RST (the peer's answer to a challenge) resets.
  spoof(h, RST, rcv_nxt, Seq32(0));
  std::vector<uint8_t> buf(16);
  auto r = h.stack().recv(h.now(), s, buf);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), Errc::kConnReset);
}

TEST(BlindInjection, InWindowSynAndBadAckDataAreChallengedNotAccepted) {
  Harness h;
  const SocketId s = h.passive_open(no_ts());
  h.clear_tx();
  const ConnSnapshot before = snapshot(h.stack(), s);
  const Seq32 rcv_nxt = h.peer_isn_ + 1;
  spoof(h, SYN, rcv_nxt + 500, Seq32(0));
  EXPECT_EQ(counter(h.stack(), Counter::TcpExtTCPSYNChallenge), 1u);
  EXPECT_EQ(h.pending(), 1u) << "RFC 5961 §4.2: a challenge ACK";
  h.clear_tx();
  h.advance(Duration::ms(600));
  // Data at RCV.NXT whose ACK acknowledges data never sent: not accepted.
  // Linux (tcp_rcv_established) drops it silently in ESTABLISHED rather than
  // with RFC 5961 §5.2's challenge ACK.
  spoof(h, ACK | PSH, rcv_nxt, h.iss_ + 1 + 100000, 100);
  EXPECT_EQ(h.pending(), 0u);
  h.clear_tx();
  std::vector<uint8_t> got;
  drain(h.stack(), h.now(), s, got);
  EXPECT_TRUE(got.empty()) << "data with an unacceptable ACK is not delivered";
  EXPECT_EQ(snapshot(h.stack(), s), before) << describe(snapshot(h.stack(), s));
}

// Linux tcp_challenge_ack_limit: a stack-wide budget per second, so that an
// attacker cannot use many connections to make the host flood.
TEST(BlindInjection, ChallengeAcksAreLimitedStackWide) {
  StackConfig cfg;
  cfg.tcp_challenge_ack_limit = 5;
  Harness h(cfg);
  std::vector<std::pair<uint16_t, Seq32>> conns;
  for (uint16_t i = 0; i < 20; ++i) {
    h.remote_port = static_cast<uint16_t>(40000 + i);
    h.passive_open(no_ts());
    conns.push_back({h.remote_port, h.peer_isn_ + 1});
  }
  h.advance_to(Time::zero() + Duration::s(200));  // a fresh one-second budget
  h.clear_tx();
  for (auto [port, nxt] : conns) {
    h.remote_port = port;
    spoof(h, RST, nxt + 10, Seq32(0));
  }
  measured("challenge.global_per_s", static_cast<double>(h.pending()));
  EXPECT_EQ(h.pending(), 5u);
  EXPECT_EQ(counter(h.stack(), Counter::TcpExtTCPChallengeACK), 5u);
}

}  // namespace
}  // namespace weir::test
