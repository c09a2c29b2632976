// The receive path: in-order and out-of-order data (with sequence wrap),
// duplicates and D-SACK (RFC 2883), SACK block order (RFC 2018 §4), FIN in
// and out of order, window trimming, memory bounds and pruning, the
// acceptability test, reads and tcp_info.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tcp/rcv_rig.h"

namespace weir::tcp {
namespace {

using testing::linux_defaults;
using testing::packetdrill_profile;
using testing::Rig;
using testing::RigOptions;

std::vector<uint8_t> read_all(Rig& rig) {
  std::vector<uint8_t> buf(rig.r.readable());
  rig.r.read(rig.now(), buf, false, rig.c);
  return buf;
}

void expect_stream(const std::vector<uint8_t>& got, uint32_t from) {
  for (uint32_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], Rig::byte_at(from + i)) << "byte " << from + i;
  }
}

TEST(Receiver, InOrderDataIsReadInOrderAndPeekLeavesIt) {
  Rig rig(linux_defaults());
  EXPECT_EQ(rig.data(0, 1000).in_order, 1000u);
  EXPECT_EQ(rig.data(1000, 500).in_order, 500u);
  EXPECT_EQ(rig.r.readable(), 1500u);
  EXPECT_EQ(rig.r.rcv_nxt(), rig.seq(1500));
  std::vector<uint8_t> buf(700);
  EXPECT_EQ(rig.r.read(rig.now(), buf, true, rig.c).bytes, 700u);
  expect_stream(buf, 0);
  EXPECT_EQ(rig.r.readable(), 1500u);
  EXPECT_EQ(rig.r.read(rig.now(), buf, false, rig.c).bytes, 700u);
  expect_stream(buf, 0);
  const auto rest = read_all(rig);
  ASSERT_EQ(rest.size(), 800u);
  expect_stream(rest, 700);
}

TEST(Receiver, OutOfOrderSegmentsMergeAcrossSequenceWrapAndDeliverWhenTheHoleFills) {
  RigOptions o;
  o.irs = Seq32(0xfffff000u);  // data crosses 2^32 at offset 0xfff
  Rig rig(linux_defaults(), o);
  EXPECT_TRUE(rig.data(2000, 1000).out_of_order);
  EXPECT_TRUE(rig.data(4000, 1000).out_of_order);
  EXPECT_EQ(rig.data(3000, 1000).ofo_queued, 1000u);  // bridges the two
  ASSERT_EQ(rig.r.ofo().size(), 1u);
  EXPECT_EQ(rig.r.ofo().blocks()[0].range, rig.range(2000, 5000));
  EXPECT_EQ(rig.r.readable(), 0u);
  const DataOutcome fill = rig.data(0, 2000);
  EXPECT_TRUE(fill.filled_hole);
  EXPECT_EQ(fill.in_order, 5000u);
  EXPECT_TRUE(rig.r.ofo().empty());
  EXPECT_EQ(rig.r.rcv_nxt(), rig.seq(5000));
  const auto got = read_all(rig);
  ASSERT_EQ(got.size(), 5000u);
  expect_stream(got, 0);
  EXPECT_EQ(rig.c.get(Counter::TcpExtTCPOFOQueue), 3u);
  TcpInfo info;
  rig.r.fill_info(info);
  EXPECT_EQ(info.tcpi_rcv_ooopack, 3u);
  EXPECT_EQ(info.tcpi_bytes_received, 5000u);
  EXPECT_EQ(info.tcpi_data_segs_in, 4u);
}

TEST(Receiver, PartlyOldSegmentIsTrimmedAndItsOldHeadDsacked) {
  Rig rig(linux_defaults());
  rig.data(0, 1000);
  const DataOutcome o = rig.data(600, 1000);  // 400 old, 600 new
  EXPECT_EQ(o.duplicate, 400u);
  EXPECT_EQ(o.in_order, 600u);
  EXPECT_EQ(rig.r.rcv_nxt(), rig.seq(1600));
  EXPECT_EQ(rig.c.get(Counter::TcpExtTCPDSACKOldSent), 1u);
  const auto s = rig.sacks();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], rig.range(600, 1000));  // RFC 2883 §4.1.1: below the cumulative ACK
  const auto got = read_all(rig);
  expect_stream(got, 0);
}

TEST(Receiver, FullDuplicateIsDsackedOnceAndAckedAtOnce) {
  Rig rig(linux_defaults());
  rig.data(0, 3000);
  const DataOutcome o = rig.data(1000, 1000);
  EXPECT_EQ(o.drop, RcvDrop::kDuplicate);
  EXPECT_TRUE(o.ack_now);
  EXPECT_EQ(rig.sacks(), (std::vector<SeqRange>{rig.range(1000, 2000)}));
  rig.send_ack();
  EXPECT_TRUE(rig.sacks().empty());  // RFC 2883 §4: each duplicate reported once
}

// RFC 2883 §4 (2): a duplicate of held out-of-order data is reported first,
// followed by the block that contains it.
TEST(Receiver, DuplicateOfOutOfOrderDataIsDsackedBeforeItsBlock) {
  Rig rig(linux_defaults());
  rig.data(0, 1000);
  rig.data(2000, 1000);
  rig.data(4000, 1000);
  const DataOutcome o = rig.data(2200, 500);
  EXPECT_EQ(o.duplicate, 500u);
  EXPECT_EQ(rig.c.get(Counter::TcpExtTCPDSACKOfoSent), 1u);
  EXPECT_EQ(rig.c.get(Counter::TcpExtTCPOFOMerge), 1u);
  const auto s = rig.sacks();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], rig.range(2200, 2700));
  EXPECT_EQ(s[1], rig.range(2000, 3000));
  EXPECT_EQ(s[2], rig.range(4000, 5000));
}

// RFC 2018 §4: the first block holds the most recent arrival; then the other
// blocks, most recent first; the caller's limit (3 with timestamps) holds.
TEST(Receiver, SackBlocksPutTheLatestArrivalFirst) {
  Rig rig(linux_defaults());
  rig.data(0, 1000);
  rig.data(2000, 1000);  // A
  rig.data(4000, 1000);  // B
  rig.data(6000, 1000);  // C
  rig.data(8000, 1000);  // D
  EXPECT_EQ(rig.sacks(4), (std::vector<SeqRange>{rig.range(8000, 9000), rig.range(6000, 7000),
                                                  rig.range(4000, 5000), rig.range(2000, 3000)}));
  rig.data(3000, 500);  // A grows
  EXPECT_EQ(rig.sacks(3), (std::vector<SeqRange>{rig.range(2000, 3500), rig.range(8000, 9000),
                                                  rig.range(6000, 7000)}));
  rig.data(1000, 1000);  // fills the first hole: A joins the in-order data
  EXPECT_EQ(rig.r.rcv_nxt(), rig.seq(3500));
  EXPECT_EQ(rig.sacks(4), (std::vector<SeqRange>{rig.range(8000, 9000), rig.range(6000, 7000),
                                                  rig.range(4000, 5000)}));
}

TEST(Receiver, NoSackBlocksWithoutSackAndNoDsackWhenDisabled) {
  RigOptions o;
  o.sack_ok = false;
  Rig nosack(linux_defaults(), o);
  nosack.data(0, 1000);
  nosack.data(2000, 1000);
  nosack.data(0, 1000);
  EXPECT_TRUE(nosack.sacks().empty());
  EXPECT_EQ(nosack.c.get(Counter::TcpExtTCPDSACKOldSent), 0u);

  ReceiverConfig cfg = linux_defaults();
  cfg.tcp_dsack = false;
  Rig nodsack(cfg);
  nodsack.data(0, 1000);
  nodsack.data(2000, 1000);
  nodsack.data(0, 1000);
  EXPECT_EQ(nodsack.sacks(), (std::vector<SeqRange>{nodsack.range(2000, 3000)}));
}

// Linux queues an out-of-order FIN inside its segment, so the SACK block
// covers the FIN's sequence number too.
TEST(Receiver, OutOfOrderFinIsSackedAndTakesEffectWhenReached) {
  Rig rig(linux_defaults());
  rig.data(0, 1000);
  const DataOutcome o = rig.data(2000, 1000, true);
  EXPECT_TRUE(o.out_of_order);
  EXPECT_FALSE(o.fin);
  EXPECT_EQ(rig.sacks(), (std::vector<SeqRange>{rig.range(2000, 3001)}));
  // Data beyond the FIN does not exist: dropped.
  rig.data(3000, 500);
  EXPECT_EQ(rig.r.ofo().bytes(), 1000u);
  const DataOutcome fill = rig.data(1000, 1000);
  EXPECT_TRUE(fill.fin);
  EXPECT_TRUE(fill.ack_now);
  EXPECT_TRUE(rig.r.fin_received());
  EXPECT_EQ(rig.r.rcv_nxt(), rig.seq(3001));
  EXPECT_EQ(read_all(rig).size(), 3000u);
  EXPECT_TRUE(rig.r.eof());
}

TEST(Receiver, BareOutOfOrderFinIsItsOwnSackBlock) {
  Rig rig(linux_defaults());
  rig.data(2000, 0, true);
  EXPECT_EQ(rig.sacks(), (std::vector<SeqRange>{rig.range(2000, 2001)}));
  const DataOutcome fill = rig.data(0, 2000);
  EXPECT_TRUE(fill.fin);
  EXPECT_EQ(rig.r.rcv_nxt(), rig.seq(2001));
}

TEST(Receiver, NothingIsAcceptedAfterTheFin) {
  Rig rig(linux_defaults());
  rig.data(0, 100, true);
  const DataOutcome o = rig.data(101, 100);
  EXPECT_EQ(o.drop, RcvDrop::kAfterFin);
  EXPECT_TRUE(o.ack_now);
  EXPECT_EQ(rig.r.readable(), 100u);
  // A retransmitted FIN is a duplicate (D-SACKed, ACKed again).
  const DataOutcome again = rig.data(0, 100, true);
  EXPECT_EQ(again.drop, RcvDrop::kDuplicate);
  EXPECT_EQ(rig.sacks(), (std::vector<SeqRange>{rig.range(0, 101)}));
}

TEST(Receiver, TextBeyondTheWindowIsTrimmedOrDropped) {
  RigOptions o;
  o.rcvbuf = 5000;  // 10000 buffer, 5000 window
  Rig rig(linux_defaults(), o);
  rig.send_ack();
  const uint32_t wnd = rig.r.receive_window();
  ASSERT_GT(wnd, 0u);
  const DataOutcome at_edge = rig.data(wnd, 100);
  EXPECT_EQ(at_edge.drop, RcvDrop::kOutOfWindow);
  EXPECT_TRUE(at_edge.ack_now);
  const DataOutcome straddle = rig.data(wnd - 50, 100, true);
  EXPECT_EQ(straddle.trimmed, 50u);
  EXPECT_EQ(straddle.ofo_queued, 50u);
  EXPECT_EQ(rig.r.ofo().blocks().back().range.end, rig.r.right_edge());
  EXPECT_TRUE(rig.sacks().back().end == rig.r.right_edge());  // the FIN went with the tail
  const DataOutcome whole = rig.data(0, wnd + 500);
  EXPECT_EQ(whole.trimmed, 500u);
  EXPECT_EQ(rig.r.rcv_nxt(), rig.r.right_edge());
}

TEST(Receiver, AcceptabilityFollowsLinuxTcpSequence) {
  Rig rig(linux_defaults());
  rig.send_ack();
  const uint32_t wnd = rig.r.receive_window();
  EXPECT_TRUE(rig.r.acceptable(rig.seq(0), 0));
  EXPECT_TRUE(rig.r.acceptable(rig.seq(wnd), 0));  // a zero-window probe at the edge
  EXPECT_TRUE(rig.r.acceptable(rig.seq(wnd), 100));  // ACK processed, text dropped later
  EXPECT_FALSE(rig.r.acceptable(rig.seq(wnd + 1), 100));
  rig.data(0, 3000);
  rig.send_ack();  // rcv.wup = rcv.nxt = 3000
  EXPECT_TRUE(rig.r.acceptable(rig.seq(2000), 1000));  // ends at rcv.wup
  EXPECT_FALSE(rig.r.acceptable(rig.seq(1000), 1000));
  rig.r.on_unacceptable(rig.seq(1000), 1000, rig.c);
  EXPECT_EQ(rig.c.get(Counter::TcpExtDelayedACKLost), 1u);
  EXPECT_EQ(rig.sacks(), (std::vector<SeqRange>{rig.range(1000, 2000)}));
}

// A peer spraying tiny out-of-order segments is charged per range: memory
// stays within the buffer, the highest ranges go first (Linux
// tcp_prune_ofo_queue), and what cannot fit is counted as TcpExtTCPOFODrop.
TEST(Receiver, OutOfOrderMemoryIsBoundedAndPrunedFromTheTop) {
  RigOptions o;
  o.rcvbuf = 8000;  // 16000 bytes of buffer
  Rig rig(linux_defaults(), o);
  rig.send_ack();
  const uint32_t wnd = rig.r.receive_window();
  for (uint32_t off = 2; off + 1 < wnd; off += 2) {
    rig.data(off, 1);
    ASSERT_LE(rig.r.readable() + rig.r.ofo().mem(), rig.r.rcvbuf());
  }
  EXPECT_GT(rig.c.get(Counter::TcpExtTCPOFODrop), 0u);
  ASSERT_FALSE(rig.r.ofo().empty());
  EXPECT_EQ(rig.r.ofo().blocks().front().range.begin, rig.seq(2));  // low ranges kept
  // Arrivals below held ranges push the highest ones out instead.
  const Seq32 top_before = rig.r.ofo().blocks().back().range.begin;
  rig.data(1, 1);  // joins [2,3): no new range, fits
  EXPECT_EQ(rig.r.ofo().blocks().back().range.begin, top_before);
  // In-order data makes room by pruning the out-of-order queue.
  const DataOutcome in = rig.data(0, 1);
  EXPECT_GT(in.in_order, 0u);
  EXPECT_LE(rig.r.readable() + rig.r.ofo().mem(), rig.r.rcvbuf());
}

TEST(Receiver, InOrderDataOverAShrunkBufferIsDroppedAndCounted) {
  Rig rig(packetdrill_profile());
  rig.send_ack();  // 65536 announced
  rig.r.set_rcvbuf(2000);  // 4608 bytes: the announced window no longer fits
  uint32_t off = 0;
  DataOutcome o;
  for (int i = 0; i < 10 && o.drop == RcvDrop::kNone; ++i) {
    o = rig.data(off, 1460);
    off += o.in_order;
  }
  EXPECT_EQ(o.drop, RcvDrop::kNoMemory);
  EXPECT_TRUE(o.ack_now);
  EXPECT_EQ(rig.c.get(Counter::TcpExtTCPRcvQDrop), 1u);
  EXPECT_LE(rig.r.readable(), rig.r.rcvbuf());
}

TEST(Receiver, TimestampEchoesGiveASmoothedReceiverRtt) {
  RigOptions o;
  o.timestamps = true;
  Rig rig(linux_defaults(), o);
  auto seg = [&](uint32_t off, uint32_t tsecr, Duration age) {
    std::vector<uint8_t> p(1448, 0);
    DataSegment s;
    s.seq = rig.seq(off);
    s.payload = p;
    s.tsecr = tsecr;
    s.tsecr_age = age;
    rig.r.on_data(rig.now(), s, rig.rto, rig.c);
  };
  seg(0, 1, Duration::ms(80));
  TcpInfo info;
  rig.r.fill_info(info);
  EXPECT_EQ(info.tcpi_rcv_rtt, 80000u);
  seg(1448, 1, Duration::ms(500));  // same TSecr again: not a new sample
  rig.r.fill_info(info);
  EXPECT_EQ(info.tcpi_rcv_rtt, 80000u);
  seg(2896, 2, Duration::ms(160));  // 1/8 gain: 80 + (160 - 80) / 8
  rig.r.fill_info(info);
  EXPECT_EQ(info.tcpi_rcv_rtt, 90000u);
}

TEST(Receiver, InfoReportsReceiveFields) {
  Rig rig(packetdrill_profile());
  rig.send_ack();
  rig.data(0, 1460);
  rig.data(1460, 1460);
  TcpInfo info;
  rig.r.fill_info(info);
  EXPECT_EQ(info.tcpi_rcv_wscale, 8);
  EXPECT_EQ(info.tcpi_rcv_mss, 1460u);
  EXPECT_EQ(info.tcpi_ato, 40000u);
  EXPECT_EQ(info.tcpi_rcv_wnd, 65536u);
  EXPECT_EQ(info.tcpi_rcv_space, 14600u);  // TCP_INIT_CWND * advmss
  EXPECT_EQ(info.tcpi_rcv_ssthresh, 65535u + 2 * 2920);  // tcp_grow_window: 2 x advmss each
  EXPECT_EQ(info.tcpi_bytes_received, 2920u);
  EXPECT_EQ(info.tcpi_data_segs_in, 2u);
}

// Random segments, reorderings and duplicates from a seeded generator: the
// application reads exactly the stream that was sent, in order.
TEST(Receiver, RandomReorderingAndDuplicationDeliversTheExactStream) {
  std::mt19937 rng(99);
  RigOptions o;
  o.irs = Seq32(0xfffe0000u);
  Rig rig(packetdrill_profile(), o);
  rig.send_ack();
  const uint32_t total = 400000;
  std::vector<uint8_t> got;
  uint32_t sent_hi = 0;
  while (got.size() < total) {
    const uint32_t nxt = static_cast<uint32_t>(rig.r.rcv_nxt() - rig.seq(0));
    const uint32_t wnd = rig.r.receive_window();
    uint32_t off = nxt;
    if (rng() % 3 == 0 && wnd > 3000) off = nxt + rng() % (wnd - 2000);
    if (rng() % 10 == 0 && nxt > 2000) off = nxt - rng() % 2000;
    const uint32_t len = std::min<uint32_t>(1 + rng() % 1460, total - std::min(off, total));
    if (len > 0) {
      const DataOutcome out = rig.data(off, len);
      if (out.ack_now) rig.send_ack();
      sent_hi = std::max(sent_hi, off + len);
    }
    if (rng() % 4 == 0) {
      const auto chunk = read_all(rig);
      got.insert(got.end(), chunk.begin(), chunk.end());
      rig.send_ack();
    }
    rig.advance(Duration::us(50));
  }
  ASSERT_EQ(got.size(), total);
  expect_stream(got, 0);
  EXPECT_GE(sent_hi, total);
}

}  // namespace
}  // namespace weir::tcp
