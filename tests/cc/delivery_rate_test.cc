// Delivery-rate estimation (Linux tcp_rate.c semantics).
#include <gtest/gtest.h>

#include <vector>

#include "pipe_helper.h"
#include "tcp/cc/delivery_rate.h"
#include "tcp/cc/reno.h"

namespace weir::cc {
namespace {

Time at_ms(int64_t ms) { return Time::zero() + Duration::ms(ms); }

struct Sent {
  TxRateSnapshot snap;
  Time t;
  Seq32 end;
};

TEST(DeliveryRate, RateIsDeliveredOverTheLongerOfSendAndAckPhases) {
  DeliveryRate dr;
  std::vector<Sent> pkts;
  // Ten packets sent 1 ms apart from t = 0 (time zero is a real timestamp).
  for (uint32_t i = 0; i < 10; ++i)
    pkts.push_back({dr.on_packet_sent(at_ms(i), i), at_ms(i), Seq32(1000 * (i + 1))});
  EXPECT_TRUE(pkts[0].snap.valid);
  // ACKed one per ms from t = 100 ms.
  RateSample last;
  for (uint32_t i = 0; i < 10; ++i) {
    RateSample rs;
    dr.count_delivered(1, false);
    dr.on_packet_delivered(pkts[i].snap, pkts[i].t, pkts[i].end, false, false, rs);
    dr.generate(rs, 1, 0, false, Duration::ms(100), at_ms(100 + i));
    last = rs;
  }
  // The last ACK: 10 packets since the first was sent at 0 and its
  // delivered_time (0) -> ack phase 109 ms, send phase 9 ms.
  EXPECT_EQ(last.delivered, 10);
  EXPECT_EQ(last.snd_interval, Duration::ms(9));
  EXPECT_EQ(last.rcv_interval, Duration::ms(109));
  EXPECT_EQ(last.interval, Duration::ms(109));
  EXPECT_TRUE(last.valid());
  // tcpi_delivery_rate: 10 * 1000 B / 0.109 s.
  EXPECT_EQ(dr.delivery_rate_bytes_per_sec(1000), 10ull * 1000 * 1000000000 / 109000000);
  TcpInfo info;
  dr.fill_info(info, 1000);
  EXPECT_EQ(info.tcpi_delivered, 10u);
  EXPECT_EQ(info.tcpi_delivery_rate, dr.delivery_rate_bytes_per_sec(1000));
}

TEST(DeliveryRate, AckCompressionUsesTheSendPhase) {
  DeliveryRate dr;
  std::vector<Sent> pkts;
  for (uint32_t i = 0; i < 4; ++i)
    pkts.push_back({dr.on_packet_sent(at_ms(10 * i), i), at_ms(10 * i), Seq32(100 * (i + 1))});
  // All four ACKed by one stretch ACK at 100 ms: the most recently sent
  // packet starts the sample; ack phase = 100 ms, send phase = 30 ms.
  RateSample rs;
  for (auto& p : pkts) {
    dr.count_delivered(1, false);
    dr.on_packet_delivered(p.snap, p.t, p.end, false, false, rs);
  }
  EXPECT_EQ(rs.prior_delivered, 0u);
  dr.generate(rs, 4, 0, false, Duration::ms(50), at_ms(100));
  EXPECT_EQ(rs.delivered, 4);
  EXPECT_EQ(rs.interval, Duration::ms(100));
  EXPECT_EQ(rs.acked_sacked, 4u);
}

TEST(DeliveryRate, IntervalShorterThanMinRttIsNotASample) {
  DeliveryRate dr;
  TxRateSnapshot s = dr.on_packet_sent(at_ms(0), 0);
  RateSample rs;
  dr.count_delivered(1, false);
  dr.on_packet_delivered(s, at_ms(0), Seq32(100), false, false, rs);
  dr.generate(rs, 1, 0, false, Duration::ms(50), at_ms(20));
  EXPECT_FALSE(rs.valid());
  EXPECT_EQ(dr.delivery_rate_bytes_per_sec(1000), 0u);
}

TEST(DeliveryRate, NoDeliveredSnapshotOrRenegingGivesNoSample) {
  DeliveryRate dr;
  RateSample rs;
  dr.generate(rs, 0, 0, false, Duration::ms(1), at_ms(5));
  EXPECT_EQ(rs.delivered, -1);
  EXPECT_FALSE(rs.valid());
  TxRateSnapshot s = dr.on_packet_sent(at_ms(0), 0);
  RateSample rs2;
  dr.count_delivered(1, false);
  dr.on_packet_delivered(s, at_ms(0), Seq32(100), false, false, rs2);
  dr.generate(rs2, 1, 0, /*is_sack_reneg=*/true, Duration::ms(1), at_ms(50));
  EXPECT_FALSE(rs2.valid());
}

TEST(DeliveryRate, SackedPacketIsNotCountedAgainByTheCumulativeAck) {
  DeliveryRate dr;
  TxRateSnapshot a = dr.on_packet_sent(at_ms(0), 0);
  TxRateSnapshot b = dr.on_packet_sent(at_ms(1), 1);
  RateSample rs;
  dr.count_delivered(1, false);
  dr.on_packet_delivered(b, at_ms(1), Seq32(200), false, /*sacked=*/true, rs);
  dr.generate(rs, 1, 0, false, Duration::ms(10), at_ms(100));
  EXPECT_FALSE(b.valid);
  // The cumulative ACK covers a (fresh) and b (already SACKed): only a
  // may start the sample.
  RateSample rs2;
  dr.count_delivered(1, false);
  dr.on_packet_delivered(a, at_ms(0), Seq32(100), false, false, rs2);
  dr.on_packet_delivered(b, at_ms(1), Seq32(200), false, false, rs2);
  EXPECT_EQ(rs2.last_end_seq, Seq32(100));
}

TEST(DeliveryRate, AppLimitedMarksSamplesUntilTheBubbleIsAcked) {
  DeliveryRate dr;
  // Nothing to send, cwnd not full, no lost packets: app-limited, and the
  // bubble ends once the 3 packets in flight are delivered.
  dr.check_app_limited(0, 1000, 3, 10, 0, 0);
  EXPECT_EQ(dr.app_limited(), 3u);
  TxRateSnapshot s = dr.on_packet_sent(at_ms(0), 0);
  EXPECT_TRUE(s.is_app_limited);
  // cwnd-limited, or a full MSS still unsent, or lost not yet retransmitted: not app-limited.
  DeliveryRate d2;
  d2.check_app_limited(0, 1000, 10, 10, 0, 0);
  d2.check_app_limited(1000, 1000, 3, 10, 0, 0);
  d2.check_app_limited(0, 1000, 3, 10, 2, 1);
  EXPECT_EQ(d2.app_limited(), 0u);
  // Deliver 4 packets: delivered (4) passes the mark (3): cleared.
  RateSample rs;
  dr.count_delivered(4, false);
  dr.on_packet_delivered(s, at_ms(0), Seq32(100), false, false, rs);
  dr.generate(rs, 4, 0, false, Duration::ms(10), at_ms(100));
  EXPECT_EQ(dr.app_limited(), 0u);
  EXPECT_TRUE(rs.is_app_limited);  // the sample itself was app-limited
  EXPECT_TRUE(dr.rate_app_limited());
}

TEST(DeliveryRate, AppLimitedSampleDoesNotReplaceAHigherRate) {
  DeliveryRate dr;
  auto one = [&](Time sent, Time acked, bool app_limited) {
    if (app_limited) dr.check_app_limited(0, 1000, 0, 10, 0, 0);
    TxRateSnapshot s = dr.on_packet_sent(sent, 0);
    RateSample rs;
    dr.count_delivered(1, false);
    dr.on_packet_delivered(s, sent, Seq32(1), false, false, rs);
    dr.generate(rs, 1, 0, false, Duration::ms(1), acked);
  };
  one(at_ms(0), at_ms(10), false);  // 1 packet / 10 ms
  uint64_t r = dr.delivery_rate_bytes_per_sec(1000);
  EXPECT_EQ(r, 100000u);
  one(at_ms(20), at_ms(60), true);  // app-limited and lower: ignored
  EXPECT_EQ(dr.delivery_rate_bytes_per_sec(1000), r);
  EXPECT_FALSE(dr.rate_app_limited());
  one(at_ms(100), at_ms(105), true);  // app-limited but higher: taken
  EXPECT_EQ(dr.delivery_rate_bytes_per_sec(1000), 200000u);
  EXPECT_TRUE(dr.rate_app_limited());
}

TEST(DeliveryRate, MeasuresTheBottleneckRateOfAPath) {
  Reno reno;
  test::PathConfig cfg;
  cfg.rtt = Duration::ms(20);
  cfg.rate_pps = 1000;  // 1 MB/s with 1000-byte packets
  cfg.mss = 1000;
  test::Pipe pipe(reno, cfg);
  pipe.run_until(Time::zero() + Duration::s(2));
  uint64_t rate = pipe.tp.rate.delivery_rate_bytes_per_sec(cfg.mss);
  EXPECT_GT(rate, 980000u);
  EXPECT_LE(rate, 1000000u);  // never above the bottleneck
}

}  // namespace
}  // namespace weir::cc
