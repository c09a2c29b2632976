// Receiver side of loss recovery: what a duplicate (an unnecessary
// retransmission) tells the sender.
#include <gtest/gtest.h>

#include "../tcp/rcv_rig.h"

namespace weir::tcp::testing {
namespace {

// Linux tcp_sequence() accepts a segment ending exactly at rcv.wup (the last
// advertised point), and tcp_data_queue() then counts every wholly old,
// text-bearing segment as TcpExtDelayedACKLost, D-SACKs it and quick-ACKs.
// A receiver that counted only duplicates ending BELOW rcv.wup misses this.
TEST(ReceiverDuplicate, EndingExactlyAtTheAdvertisedPointCountsDelayedAckLost) {
  Rig rig(linux_defaults());
  rig.send_ack();
  rig.data(0, 3000);
  rig.send_ack();  // rcv.wup = rcv.nxt = 3000
  ASSERT_TRUE(rig.r.acceptable(rig.seq(2000), 1000));
  const DataOutcome o = rig.data(2000, 1000);  // ends at rcv.wup exactly
  EXPECT_EQ(o.drop, RcvDrop::kDuplicate);
  EXPECT_TRUE(o.ack_now);
  EXPECT_EQ(rig.c.get(Counter::TcpExtDelayedACKLost), 1u);
  EXPECT_EQ(rig.sacks(), (std::vector<SeqRange>{rig.range(2000, 3000)}));
}

// Between rcv.wup and rcv.nxt (data received but not yet ACKed) a duplicate
// is counted the same way: Linux does not look at rcv.wup in tcp_data_queue().
TEST(ReceiverDuplicate, AboveTheAdvertisedPointCountsToo) {
  Rig rig(linux_defaults());
  rig.send_ack();
  rig.data(0, 3000);  // not yet ACKed: rcv.wup stays 0
  const DataOutcome o = rig.data(1000, 1000);
  EXPECT_EQ(o.drop, RcvDrop::kDuplicate);
  EXPECT_EQ(rig.c.get(Counter::TcpExtDelayedACKLost), 1u);
}

// A pure ACK (no text) is no duplicate.
TEST(ReceiverDuplicate, EmptySegmentIsNotCounted) {
  Rig rig(linux_defaults());
  rig.send_ack();
  rig.data(0, 3000);
  rig.send_ack();
  rig.data(3000, 0);
  EXPECT_EQ(rig.c.get(Counter::TcpExtDelayedACKLost), 0u);
}

}  // namespace
}  // namespace weir::tcp::testing
