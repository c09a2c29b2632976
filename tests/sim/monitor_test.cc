#include "sim/monitor.h"

#include <gtest/gtest.h>

#include "sim/metrics.h"
#include "wire/packet.h"

namespace weir::sim {
namespace {

// Builds flow 1's packets: client 10.0.0.1:40001 <-> server 10.0.0.2:5001.
struct Wire {
  PacketPool pool;
  Monitor mon{1};
  Packet* make(bool to_server, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t win, size_t len,
               std::optional<uint8_t> wscale = std::nullopt) {
    wire::IpInfo ip;
    ip.src = IpAddr::v4(10, 0, 0, to_server ? 1 : 2);
    ip.dst = IpAddr::v4(10, 0, 0, to_server ? 2 : 1);
    wire::TcpHeader h;
    h.src_port = to_server ? 40001 : 5001;
    h.dst_port = to_server ? 5001 : 40001;
    h.seq = Seq32(seq);
    h.ack = Seq32(ack);
    h.flags = flags;
    h.window = win;
    h.options.wscale = wscale;
    std::vector<uint8_t> payload(len, 1);
    return pool.make(wire::build_tcp_packet(ip, h, payload));
  }
  // Client sends; the packet reaches the server.
  void data(int64_t t_us, uint32_t seq, size_t len) {
    Packet* p = make(true, wire::tcp_flag::ACK, seq, 5001, 1000, len);
    mon.on_tx(Time::from_ns(t_us * 1000), *p);
    mon.on_rx(Time::from_ns(t_us * 1000 + 500), *p);
    pool.put(p);
  }
  // Server ACKs; the ACK reaches the client.
  void ack(int64_t t_us, uint32_t ack_no, uint16_t win) {
    Packet* p = make(false, wire::tcp_flag::ACK, 5001, ack_no, win, 0);
    mon.on_tx(Time::from_ns(t_us * 1000), *p);
    mon.on_rx(Time::from_ns(t_us * 1000 + 500), *p);
    pool.put(p);
  }
  void handshake(uint8_t client_ws, uint8_t server_ws, uint16_t synack_win) {
    Packet* syn = make(true, wire::tcp_flag::SYN, 1000, 0, 65535, 0, client_ws);
    mon.on_tx(Time::zero(), *syn);
    pool.put(syn);
    Packet* sa = make(false, wire::tcp_flag::SYN | wire::tcp_flag::ACK, 5000, 1001, synack_win, 0, server_ws);
    mon.on_tx(Time::zero(), *sa);
    mon.on_rx(Time::from_ns(1000), *sa);
    pool.put(sa);
  }
};

TEST(Monitor, CountsBytesSentPastTheLargestAdvertisedEdge) {
  Wire w;
  w.handshake(7, 3, 4000);  // SYN-ACK window is never scaled: edge 1001 + 4000
  w.ack(10, 1001, 500);     // scaled by 8: edge 1001 + 4000 (same)
  w.data(20, 1001, 1000);
  w.data(21, 2001, 1000);
  w.data(22, 3001, 1000);
  w.data(23, 4001, 1000);   // ends at 5001: exactly at the edge
  EXPECT_EQ(w.mon.flow(0).bytes_beyond_wnd, 0u);
  w.ack(30, 2001, 499);     // new edge 2001 + 499 * 8 = 5993
  w.data(31, 5001, 1000);   // ends 6001: 8 bytes past the largest edge (5993)
  EXPECT_EQ(w.mon.flow(0).bytes_beyond_wnd, 8u);
  EXPECT_EQ(w.mon.flow(0).segs_beyond_wnd, 1u);
  EXPECT_EQ(w.mon.flow(0).max_adv_wnd, 4000u);
}

TEST(Monitor, WindowIsNotScaledUnlessBothSidesOfferedScaling) {
  Wire w;
  Packet* syn = w.make(true, wire::tcp_flag::SYN, 1000, 0, 65535, 0);  // no wscale from the client
  w.mon.on_tx(Time::zero(), *syn);
  Packet* sa = w.make(false, wire::tcp_flag::SYN | wire::tcp_flag::ACK, 5000, 1001, 1000, 0, 7);
  w.mon.on_tx(Time::zero(), *sa);
  w.mon.on_rx(Time::zero(), *sa);
  w.ack(10, 1001, 2000);
  w.data(20, 1001, 1500);  // edge is 3001, not 1001 + 2000 << 7
  EXPECT_EQ(w.mon.flow(0).max_adv_wnd, 2000u);
  w.data(21, 2501, 1000);
  EXPECT_EQ(w.mon.flow(0).bytes_beyond_wnd, 500u);
}

TEST(Monitor, RetransmissionOfBytesAlreadyReceivedIsSpurious) {
  Wire w;
  w.handshake(7, 7, 60000);
  w.data(10, 1001, 1000);
  w.data(11, 2001, 1000);
  w.data(12, 2001, 1000);  // retransmitted, but 2001..3001 had arrived: spurious
  EXPECT_EQ(w.mon.flow(0).retrans_segs, 1u);
  EXPECT_EQ(w.mon.flow(0).spurious_segs, 1u);
  ASSERT_EQ(w.mon.flow(0).spurious_sent.size(), 1u);
  EXPECT_EQ(w.mon.flow(0).spurious_sent[0], Time::from_ns(12000));
}

TEST(Monitor, RetransmissionFillingAHoleIsNotSpurious) {
  Wire w;
  w.handshake(7, 7, 60000);
  // 1001..2001 is lost on the way (sent, never arrives).
  Packet* lost = w.make(true, wire::tcp_flag::ACK, 1001, 5001, 1000, 1000);
  w.mon.on_tx(Time::from_ns(10000), *lost);
  w.data(11, 2001, 1000);  // out of order at the receiver
  w.data(12, 1001, 1000);  // the retransmission fills the hole
  EXPECT_EQ(w.mon.flow(0).retrans_segs, 1u);
  EXPECT_EQ(w.mon.flow(0).spurious_segs, 0u);
  EXPECT_EQ(w.mon.flow(0).rcv_contig, 2000u);
}

TEST(Monitor, RttSamplesSkipRetransmittedSegments) {
  Wire w;
  w.handshake(7, 7, 60000);
  Packet* lost = w.make(true, wire::tcp_flag::ACK, 1001, 5001, 1000, 1000);
  w.mon.on_tx(Time::from_ns(10'000), *lost);
  w.data(20, 2001, 1000);
  w.ack(1020, 1001, 1000);   // duplicate ACK: covers nothing new
  w.data(5000, 1001, 1000);  // the retransmission
  w.ack(6000, 3001, 1000);   // covers both: only the never-retransmitted one is sampled
  EXPECT_EQ(w.mon.flow(0).rtt_samples, 1u);
  EXPECT_EQ(w.mon.flow(0).rtt_min, Duration::ns(5'980'500));
}

TEST(Metrics, JainIndexIsOneForEqualSharesAndOneOverNForOneHog) {
  EXPECT_DOUBLE_EQ(jain_index({5, 5, 5, 5}), 1.0);
  EXPECT_DOUBLE_EQ(jain_index({10, 0, 0, 0}), 0.25);
  EXPECT_NEAR(jain_index({1, 2, 3}), 36.0 / 42.0, 1e-12);
}

TEST(Metrics, PerRunExpectationMustHoldInEveryRun) {
  RunResult a, b;
  a.seed = 1;
  a.metrics["flow.1.goodput_mbps"] = 50;
  b.seed = 2;
  b.metrics["flow.1.goodput_mbps"] = 40;
  auto x = parse_expectation("flow.1.goodput_mbps >= 45");
  ASSERT_TRUE(x.has_value());
  auto res = check_expectations({*x}, {a, b}, {});
  ASSERT_EQ(res.size(), 1u);
  EXPECT_FALSE(res[0].pass);
  EXPECT_EQ(res[0].seed, 2u);
  EXPECT_EQ(res[0].measured, 40);
}

TEST(Metrics, MissingMetricFails) {
  RunResult a;
  auto res = check_expectations({*parse_expectation("flow.1.hystart_exit_cwnd >= 619")}, {a}, {});
  EXPECT_FALSE(res[0].pass);
  EXPECT_TRUE(res[0].missing);
}

// "contrast.<metric>" reads the contrast's runs and sweep; the original's
// metric of the same name does not count, and without a contrast the
// expectation is missing.
TEST(Metrics, ContrastExpectationsReadTheContrastsRuns) {
  SweepResult s;
  s.runs.resize(1);
  s.runs[0].metrics["flow.1.bytes_beyond_wnd"] = 0;
  s.sweep["median.flow.1.bytes_beyond_wnd"] = 0;
  const std::vector<Expectation> xs = {*parse_expectation("contrast.flow.1.bytes_beyond_wnd > 0"),
                                       *parse_expectation("contrast.median.flow.1.bytes_beyond_wnd > 0"),
                                       *parse_expectation("flow.1.bytes_beyond_wnd == 0")};
  auto res = check_expectations(xs, s);
  EXPECT_TRUE(res[0].missing);
  EXPECT_FALSE(res[0].pass);
  EXPECT_TRUE(res[2].pass);
  s.contrast = std::make_shared<SweepResult>();
  s.contrast->runs.resize(2);
  s.contrast->runs[0].metrics["flow.1.bytes_beyond_wnd"] = 1448;
  s.contrast->runs[1].metrics["flow.1.bytes_beyond_wnd"] = 0;
  s.contrast->runs[1].seed = 2;
  s.contrast->sweep["median.flow.1.bytes_beyond_wnd"] = 724;
  res = check_expectations(xs, s);
  EXPECT_FALSE(res[0].pass) << "a per-run contrast metric must hold in every contrast run";
  EXPECT_EQ(res[0].seed, 2u);
  EXPECT_TRUE(res[1].pass);
  EXPECT_EQ(res[1].measured, 724);
  EXPECT_TRUE(res[2].pass);
  s.contrast->runs[1].metrics["flow.1.bytes_beyond_wnd"] = 8;
  EXPECT_TRUE(check_expectations(xs, s)[0].pass);
}

TEST(Metrics, SweepMetricsCountWedgedRunsAndMedians) {
  std::vector<RunResult> runs(3);
  double c[] = {1.0, 3.0, 2.0};
  for (int i = 0; i < 3; ++i) {
    runs[i].metrics["all_completed"] = 1;
    runs[i].metrics["wedged"] = i == 1;
    runs[i].metrics["flow.1.completion_s"] = c[i];
  }
  auto s = sweep_metrics(runs, {});
  EXPECT_EQ(s["runs"], 3);
  EXPECT_EQ(s["wedged_runs"], 1);
  EXPECT_EQ(s["median.flow.1.completion_s"], 2.0);
  EXPECT_EQ(s["max.flow.1.completion_s"], 3.0);
  auto res = check_expectations({*parse_expectation("wedged_runs == 0")}, runs, s);
  EXPECT_FALSE(res[0].pass);
  EXPECT_EQ(res[0].measured, 1);
}

}  // namespace
}  // namespace weir::sim
