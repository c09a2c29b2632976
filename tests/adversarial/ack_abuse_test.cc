// A receiver that lies with its ACKs to make the sender go faster:
// optimistic ACKs (for data never sent: RFC 5961 §5.2 drops them with a
// challenge ACK), ACK division (RFC 3465 §2.3: cwnd grows by what is
// acknowledged, and Linux counts whole packets, so splitting an ACK buys
// nothing) and duplicate-ACK spoofing (RFC 6675 / Linux PRR: a flood of
// duplicates cannot inflate cwnd, and the sender sends no more than the
// packets the duplicates claim left the network).
#include <gtest/gtest.h>

#include "adversarial/adv_helper.h"
#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

PeerOpts peer(bool sack) {
  PeerOpts o;
  o.ts = false;
  o.sack = sack;
  return o;
}

void ack(Harness& h, uint32_t rel_ack, std::initializer_list<std::pair<uint32_t, uint32_t>> sacks = {}) {
  wire::TcpHeader t;
  t.src_port = h.remote_port;
  t.dst_port = h.local_port;
  t.seq = h.peer_isn_ + 1;
  t.ack = h.iss_ + rel_ack;
  t.flags = ACK;
  t.window = 65535;
  for (auto [b, e] : sacks) t.options.add_sack(SeqRange{h.iss_ + b, h.iss_ + e});
  h.inject_raw(t);
}

uint32_t queue(Harness& h, SocketId s, size_t n) {
  std::vector<uint8_t> d(n, 0x42);
  auto w = h.stack().send(h.now(), s, d);
  return w ? static_cast<uint32_t>(*w) : 0;
}

// Data segments in what the stack has sent since the last clear.
uint32_t data_out(Harness& h) {
  uint32_t n = 0;
  while (h.pending()) n += !h.expect_tx().payload.empty();
  return n;
}

TEST(AckAbuse, OptimisticAckForUnsentDataIsDroppedSilently) {
  Harness h;
  const SocketId s = h.active_open(peer(true));
  queue(h, s, 100000);
  const uint32_t flight = data_out(h);
  ASSERT_EQ(flight, 10u);
  const ConnSnapshot before = snapshot(h.stack(), s);
  const uint32_t nxt = 1 + flight * 1460;
  uint32_t answered = 0;
  for (uint32_t k = 1; k <= 100; ++k) {
    ack(h, nxt + k * 1460);  // data the sender has not sent yet
    answered += static_cast<uint32_t>(h.pending());
    EXPECT_EQ(data_out(h), 0u) << "no new data in reply to an optimistic ACK";
  }
  const ConnSnapshot after = snapshot(h.stack(), s);
  measured("ackabuse.optimistic.challenge_acks", answered);
  EXPECT_EQ(after.snd_cwnd, before.snd_cwnd);
  EXPECT_EQ(after.bytes_acked, before.bytes_acked);
  EXPECT_EQ(after.unacked, before.unacked);
  // Linux tcp_rcv_established discards an ACK above SND.NXT without a reply
  // (tcp_ack: SKB_DROP_REASON_TCP_ACK_UNSENT_DATA), so none is answered.
  EXPECT_EQ(answered, 0u);
}

TEST(AckAbuse, AckDivisionGrowsCwndByPacketsAcknowledgedNotByAcks) {
  Harness h;
  const SocketId s = h.active_open(peer(true));
  queue(h, s, 200000);
  ASSERT_EQ(data_out(h), 10u);
  const uint32_t cwnd0 = snapshot(h.stack(), s).snd_cwnd;
  // Every segment acknowledged in ten pieces: 100 ACKs for 10 packets.
  uint32_t acks = 0;
  for (uint32_t seg = 0; seg < 10; ++seg) {
    for (uint32_t piece = 1; piece <= 10; ++piece) {
      ack(h, 1 + seg * 1460 + piece * 146);
      ++acks;
      h.clear_tx();
      h.advance(Duration::us(100));
    }
  }
  const uint32_t cwnd = snapshot(h.stack(), s).snd_cwnd;
  measured("ackabuse.division.acks", acks);
  measured("ackabuse.division.cwnd_after", cwnd);
  // Slow start: +1 per packet acknowledged (RFC 3465 with L = 2 allows at
  // most +2 per ACK of a full segment; a packet counting sender, +1).
  EXPECT_LE(cwnd, cwnd0 + 10) << "ACK division must not buy cwnd";
  EXPECT_GE(cwnd, cwnd0 + 9) << "the data really was acknowledged";
}

TEST(AckAbuse, SpoofedDuplicateAcksDoNotInflateCwnd) {
  for (bool sack : {false, true}) {
    Harness h;
    const SocketId s = h.active_open(peer(sack));
    queue(h, s, 1000000);
    ASSERT_EQ(data_out(h), 10u);
    const uint32_t cwnd0 = snapshot(h.stack(), s).snd_cwnd;
    constexpr uint32_t kDupAcks = 1000;
    uint32_t sent = 0, max_cwnd = 0, max_in_flight = 0;
    for (uint32_t i = 0; i < kDupAcks; ++i) {
      ack(h, 1);  // the same ACK again and again, no SACK information
      sent += data_out(h);
      const ConnSnapshot c = snapshot(h.stack(), s);
      max_cwnd = std::max(max_cwnd, c.snd_cwnd);
      // Linux tcp_packets_in_flight: packets_out - (sacked_out + lost_out) + retrans_out.
      max_in_flight = std::max(max_in_flight, c.unacked - (c.sacked + c.lost) + c.retrans);
      h.advance(Duration::us(1));
    }
    const std::string tag = sack ? "ackabuse.dupacks.sack." : "ackabuse.dupacks.reno.";
    measured(tag + "segments_sent", sent);
    measured(tag + "max_cwnd", max_cwnd);
    measured(tag + "max_in_flight", max_in_flight);
    // No inflation: RFC 5681 §3.2 step 4 would add one SMSS per duplicate;
    // Linux (and weir) keep cwnd and count the duplicate as a departure.
    EXPECT_LE(max_cwnd, cwnd0) << "sack " << sack;
    EXPECT_LE(max_in_flight, cwnd0) << "sack " << sack;
    if (sack) {
      // A SACK peer's duplicate without a SACK block reports no departure
      // (Linux counts dupacks only for !tcp_is_sack): nothing is sent.
      EXPECT_EQ(sent, 0u);
    } else {
      // Without SACK each duplicate is taken as one packet leaving the network
      // (RFC 5681 §3.2, Linux tcp_add_reno_sack, capped at packets_out by
      // tcp_limit_reno_sacked), so recovery may send one packet per duplicate
      // (RFC 6937 PRR) plus the fast retransmission, never more: the spoofer
      // gets a clocked flow within cwnd, not a burst.
      EXPECT_LE(sent, 1u + kDupAcks);
      EXPECT_GE(sent, 1u) << "the third duplicate starts fast retransmit";
    }
    EXPECT_EQ(snapshot(h.stack(), s).state, 1);
  }
}

}  // namespace
}  // namespace weir::test
