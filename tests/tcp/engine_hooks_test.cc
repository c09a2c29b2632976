// Engine wiring of receiver hooks: D-SACK for old retransmissions (Linux
// tcp_send_dupack), SRTT-bounded SACK compression, raw TSecr for the receiver RTT.
#include <gtest/gtest.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

// RFC 2883 §4 / Linux tcp_send_dupack: the duplicate's ACK carries its range
// as the first SACK block (below the cumulative ACK), and the receiver counts
// TcpExtDelayedACKLost. Without the hook the reply is a plain duplicate ACK.
TEST(EngineHooks, OldRetransmissionGetsDsackAndDelayedAckLost) {
  Harness t;
  t.passive_open();
  t.inject(ACK, 1, 1, 1000);
  t.advance(Duration::ms(300));  // the first data is ACKed (quick-ACK or delayed)
  t.clear_tx();
  const uint64_t lost_before = t.stack().counters().get(Counter::TcpExtDelayedACKLost);
  // The peer retransmits the first half of what we hold: it ends below the
  // last advertised point (Linux rcv_wup), so it fails the sequence check.
  t.inject(ACK, 1, 1, 500);
  ASSERT_GE(t.pending(), 1u);
  Tx a = t.expect_tx();
  EXPECT_EQ(t.rel_ack(a), 1001u);
  ASSERT_GE(a.h.options.sack_count, 1u);
  EXPECT_EQ(a.h.options.sack[0].end, a.h.ack - 500);  // the duplicate's own range
  EXPECT_EQ(seq_len(a.h.options.sack[0].begin, a.h.options.sack[0].end), 500u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtDelayedACKLost), lost_before + 1);
}

// Linux tcp_sack_compress via the engine's srtt: once the quick ACKs and
// three duplicate ACKs went out at once, further out-of-order data is SACKed after 5 % of the
// RTT. The receiver has no RTT of its own here (no timestamps, no in-order
// data), so the sender-side SRTT is the only bound (the handshake's ~0
// sample then a 10 ms one: SRTT 1.25 ms, delay 62.5 us); without
// it the compressed SACK would go out at once.
TEST(EngineHooks, SackCompressionDelayFollowsSrtt) {
  Harness t;
  PeerOpts o;
  o.ts = false;
  t.peer_ts = false;
  SocketId s = t.passive_open(o);
  std::vector<uint8_t> d(100, 0x61);
  ASSERT_EQ(*t.stack().send(t.now(), s, d), 100u);
  t.expect_tx();
  t.advance(Duration::ms(10));
  t.inject(ACK, 1, 101);  // SRTT 1.25 ms
  t.clear_tx();
  // A hole at [1, 1001), then out-of-order segments: each is answered at
  // once (quick ACKs, then three duplicate ACKs) until compression starts.
  bool compressed = false;
  for (uint32_t i = 0; i < 40 && !compressed; ++i) {
    t.inject(ACK, 1001 + 100 * i, 101, 100);
    compressed = t.pending() == 0;
    t.clear_tx();
  }
  ASSERT_TRUE(compressed);
  ASSERT_EQ(t.stack().tcp_info(s)->tcpi_rtt, 1250u);
  t.advance(Duration::us(30));
  EXPECT_EQ(t.pending(), 0u) << "compressed for 5% of SRTT (62.5 us)";
  t.advance(Duration::us(40));
  ASSERT_EQ(t.pending(), 1u);
  Tx a = t.expect_tx();
  EXPECT_EQ(t.rel_ack(a), 1u);
  EXPECT_GE(a.h.options.sack_count, 1u);
}

// Linux tcp_rcv_rtt_measure_ts: a TSecr already sampled is not sampled again
// (rcv_rtt_last_tsecr), so a second segment echoing the same (older and older)
// TSval does not inflate the receiver's RTT. Needs the raw TSecr from the
// engine; without it the second segment adds a 30 ms sample (12.5 ms EWMA).
TEST(EngineHooks, RepeatedTsecrIsSampledOnceForReceiverRtt) {
  Harness t;
  SocketId s = t.passive_open();
  t.advance(Duration::ms(10));
  t.inject(ACK, 1, 1, 1448);  // echoes the SYN-ACK's TSval: a 10 ms sample
  t.clear_tx();
  t.advance(Duration::ms(20));
  t.inject(ACK, 1 + 1448, 1, 1448);  // the same echo, now 30 ms old
  t.clear_tx();
  auto info = t.stack().tcp_info(s);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->tcpi_rcv_rtt, 10000u);
}

}  // namespace
}  // namespace weir::test
