// Engine wiring of receiver hooks (Linux tcp_send_dupack): a retransmission
// lying entirely below RCV.NXT is answered at once with a D-SACK of it.
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

}  // namespace
}  // namespace weir::test
