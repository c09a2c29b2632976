#include "sim/link.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "wire/packet.h"

namespace weir::sim {
namespace {

struct Arrival {
  int64_t t_ns;
  uint64_t uid;
  std::vector<uint8_t> bytes;
  bool duplicate;
};

struct Collector final : Node {
  PacketPool* pool;
  std::vector<Arrival> got;
  void receive(Time now, Packet* p) override {
    got.push_back({now.ns(), p->uid, p->bytes, p->meta.duplicate});
    pool->put(p);
  }
};

struct Bench {
  EventLoop loop;
  PacketPool pool;
  Collector sink;
  Link link;
  explicit Bench(const LinkConfig& cfg, uint64_t seed = 1)
      : link("test", cfg, loop, pool, Rng(seed)) {
    sink.pool = &pool;
    link.connect(&sink);
  }
  // Sends `n` packets of `size` bytes at time `t`; returns their uids.
  std::vector<uint64_t> burst(int n, size_t size = 1500, int64_t t_ns = 0, uint32_t payload = 1) {
    std::vector<uint64_t> uids;
    loop.run_until(Time::from_ns(t_ns));
    for (int i = 0; i < n; ++i) {
      Packet* p = pool.get();
      p->bytes.assign(size, static_cast<uint8_t>(i));
      p->meta.len = payload;
      uids.push_back(p->uid);
      link.send(loop.now(), p);
    }
    return uids;
  }
  void drain() { loop.run_until(Time::from_ns(Duration::s(1000).ns())); }
};

// Sends one packet every `gap` for `n` packets.
void paced(Bench& b, int n, Duration gap, size_t size = 100) {
  for (int i = 0; i < n; ++i) b.burst(1, size, gap.ns() * i);
  b.drain();
}

TEST(Link, SerialisesAtTheRateThenAddsPropagationDelay) {
  LinkConfig cfg;
  cfg.rate_bps = 12'000'000;  // 1500 bytes = 1 ms
  cfg.delay = Duration::ms(10);
  Bench b(cfg);
  b.burst(3);
  b.drain();
  ASSERT_EQ(b.sink.got.size(), 3u);
  EXPECT_EQ(b.sink.got[0].t_ns, Duration::ms(11).ns());
  EXPECT_EQ(b.sink.got[1].t_ns, Duration::ms(12).ns());
  EXPECT_EQ(b.sink.got[2].t_ns, Duration::ms(13).ns());
}

TEST(Link, SerialisationRoundsUpToTheNanosecond) {
  EXPECT_EQ(Link::serialisation(1, 3).ns(), 2666666667);
  EXPECT_EQ(Link::serialisation(1500, 1'000'000'000).ns(), 12000);
  EXPECT_EQ(Link::serialisation(1500, 0).ns(), 0);
}

TEST(Link, AccessRateSpacesABurstBeforeTheQueue) {
  LinkConfig cfg;
  cfg.access_rate_bps = 120'000'000;  // 100 us per 1500 B
  Bench b(cfg);
  b.burst(2);
  b.drain();
  ASSERT_EQ(b.sink.got.size(), 2u);
  EXPECT_EQ(b.sink.got[0].t_ns, 100000);
  EXPECT_EQ(b.sink.got[1].t_ns, 200000);
}

TEST(Link, DropTailQueueLimitedInPackets) {
  LinkConfig cfg;
  cfg.rate_bps = 12'000'000;
  cfg.queue_packets = 3;
  Bench b(cfg);
  auto uids = b.burst(10);
  b.drain();
  // One on the wire plus three queued survive; the tail is dropped.
  ASSERT_EQ(b.sink.got.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(b.sink.got[i].uid, uids[i]);
  EXPECT_EQ(b.link.stats().drop_queue, 6u);
  EXPECT_EQ(b.link.stats().max_queue_packets, 3u);
}

TEST(Link, DropTailQueueLimitedInBytes) {
  LinkConfig cfg;
  cfg.rate_bps = 12'000'000;
  cfg.queue_packets = 0;
  cfg.queue_bytes = 2500;
  Bench b(cfg);
  b.burst(5, 1000);
  b.drain();
  EXPECT_EQ(b.sink.got.size(), 3u);  // 1 in service + 2 x 1000 B queued
  EXPECT_EQ(b.link.stats().drop_queue, 2u);
}

TEST(Link, BernoulliLossMatchesItsProbability) {
  LinkConfig cfg;
  cfg.loss = 0.01;
  Bench b(cfg, 99);
  b.burst(200000, 60);
  b.drain();
  double rate = static_cast<double>(b.link.stats().drop_loss) / 200000;
  EXPECT_NEAR(rate, 0.01, 0.0015);
  EXPECT_EQ(b.sink.got.size() + b.link.stats().drop_loss, 200000u);
}

TEST(Link, GilbertElliottLossHasStationaryRateAndBurstLength) {
  LinkConfig cfg;
  cfg.loss_model = LossModel::kGilbertElliott;
  cfg.ge_p = 0.01;
  cfg.ge_r = 0.25;  // mean bad run: 4 packets
  Bench b(cfg, 5);
  const int n = 400000;
  auto uids = b.burst(n, 60);
  b.drain();
  std::vector<bool> lost(n, true);
  size_t k = 0;
  for (int i = 0; i < n && k < b.sink.got.size(); ++i)
    if (b.sink.got[k].uid == uids[i]) {
      lost[i] = false;
      ++k;
    }
  int losses = 0, bursts = 0;
  for (int i = 0; i < n; ++i) {
    losses += lost[i];
    if (lost[i] && (i == 0 || !lost[i - 1])) ++bursts;
  }
  // pi_bad = p / (p + r); losses only in the bad state.
  EXPECT_NEAR(static_cast<double>(losses) / n, 0.01 / 0.26, 0.006);
  EXPECT_NEAR(static_cast<double>(losses) / bursts, 4.0, 0.4);
}

TEST(Link, ExplicitPatternDropsExactlyThoseEligiblePackets) {
  LinkConfig cfg;
  cfg.drop_packets = {12, 5, 7};
  cfg.impair_data_only = true;
  Bench b(cfg);
  std::vector<uint64_t> data_uids;
  for (int i = 1; i <= 15; ++i) {
    auto u = b.burst(1, 100, 0, 1);      // data packet i
    data_uids.push_back(u[0]);
    b.burst(1, 60, 0, 0);                // a pure ACK: not counted, never dropped
  }
  b.drain();
  EXPECT_EQ(b.link.stats().drop_pattern, 3u);
  std::vector<uint64_t> got;
  for (auto& a : b.sink.got) got.push_back(a.uid);
  for (int i : {5, 7, 12}) EXPECT_EQ(std::count(got.begin(), got.end(), data_uids[i - 1]), 0);
  for (int i : {1, 4, 6, 8, 11, 13, 15}) EXPECT_EQ(std::count(got.begin(), got.end(), data_uids[i - 1]), 1);
  EXPECT_EQ(got.size(), 27u);
}

TEST(Link, DuplicationDeliversCopiesAfterTheOriginal) {
  LinkConfig cfg;
  cfg.duplicate = 0.05;
  Bench b(cfg, 3);
  b.burst(100000, 60);
  b.drain();
  uint64_t dups = b.link.stats().duplicated;
  EXPECT_NEAR(static_cast<double>(dups) / 100000, 0.05, 0.004);
  EXPECT_EQ(b.sink.got.size(), 100000u + dups);
  size_t marked = 0;
  for (size_t i = 0; i < b.sink.got.size(); ++i)
    if (b.sink.got[i].duplicate) {
      ++marked;
      ASSERT_GT(i, 0u);
      EXPECT_EQ(b.sink.got[i].bytes, b.sink.got[i - 1].bytes);
    }
  EXPECT_EQ(marked, dups);
}

std::vector<uint8_t> tcp_datagram(uint8_t flags, uint16_t window, size_t payload, uint8_t tos = 0,
                                  bool v6 = false) {
  wire::IpInfo ip;
  ip.version = v6 ? 6 : 4;
  ip.src = v6 ? *IpAddr::parse("fd00::1") : IpAddr::v4(10, 0, 0, 1);
  ip.dst = v6 ? *IpAddr::parse("fd00::2") : IpAddr::v4(10, 0, 0, 2);
  ip.tos = tos;
  wire::TcpHeader h;
  h.src_port = 40001;
  h.dst_port = 5001;
  h.seq = Seq32(1000);
  h.ack = Seq32(2000);
  h.flags = flags;
  h.window = window;
  std::vector<uint8_t> data(payload, 0x5a);
  return wire::build_tcp_packet(ip, h, data);
}

TEST(Link, CorruptionFlipsOneBitThatTheChecksumCatches) {
  LinkConfig cfg;
  cfg.corrupt = 1.0;
  Bench b(cfg, 11);
  auto original = tcp_datagram(wire::tcp_flag::ACK, 1000, 200);
  ASSERT_TRUE(wire::parse_tcp_packet(original).has_value());
  for (int i = 0; i < 200; ++i) {
    Packet* p = b.pool.make(original);
    b.link.send(b.loop.now(), p);
  }
  b.drain();
  ASSERT_EQ(b.sink.got.size(), 200u);
  for (auto& a : b.sink.got) {
    int bits = 0;
    for (size_t i = 0; i < original.size(); ++i) bits += __builtin_popcount(original[i] ^ a.bytes[i]);
    EXPECT_EQ(bits, 1);
    EXPECT_FALSE(wire::parse_tcp_packet(a.bytes).has_value());
  }
}

TEST(Link, WindowRetreatLowersEveryNthPureAckAndKeepsTheChecksumValid) {
  LinkConfig cfg;
  cfg.retreat_every = 2;
  cfg.retreat_units = 1;
  Bench b(cfg);
  for (int i = 0; i < 4; ++i) b.link.send(b.loop.now(), b.pool.make(tcp_datagram(wire::tcp_flag::ACK, 1000, 0)));
  b.link.send(b.loop.now(), b.pool.make(tcp_datagram(wire::tcp_flag::ACK, 1000, 100)));  // data: untouched
  b.drain();
  ASSERT_EQ(b.sink.got.size(), 5u);
  std::vector<int> windows;
  for (auto& a : b.sink.got) {
    auto parsed = wire::parse_tcp_packet(a.bytes);
    ASSERT_TRUE(parsed.has_value());
    windows.push_back(parsed->tcp.window);
  }
  EXPECT_EQ(windows, (std::vector<int>{1000, 999, 1000, 999, 1000}));
}

TEST(Link, JitterWithoutReorderingKeepsOrderAndBounds) {
  LinkConfig cfg;
  cfg.delay = Duration::ms(100);
  cfg.jitter = Duration::ms(15);
  cfg.jitter_reorder = false;
  Bench b(cfg, 21);
  paced(b, 5000, Duration::us(200));
  ASSERT_EQ(b.sink.got.size(), 5000u);
  for (size_t i = 1; i < b.sink.got.size(); ++i) ASSERT_LT(b.sink.got[i - 1].uid, b.sink.got[i].uid);
  for (auto& a : b.sink.got) {
    int64_t sent = static_cast<int64_t>(a.uid - 1) * Duration::us(200).ns();
    ASSERT_GE(a.t_ns - sent, Duration::ms(85).ns());
    ASSERT_LE(a.t_ns - sent, Duration::ms(115).ns() + Duration::ms(30).ns());
  }
}

TEST(Link, JitterWithReorderingSpreadsUniformlyAndReorders) {
  LinkConfig cfg;
  cfg.delay = Duration::ms(100);
  cfg.jitter = Duration::ms(15);
  Bench b(cfg, 22);
  paced(b, 5000, Duration::us(200));
  int inversions = 0;
  double sum = 0;
  for (size_t i = 0; i < b.sink.got.size(); ++i) {
    int64_t sent = static_cast<int64_t>(b.sink.got[i].uid - 1) * Duration::us(200).ns();
    int64_t d = b.sink.got[i].t_ns - sent;
    ASSERT_GE(d, Duration::ms(85).ns());
    ASSERT_LE(d, Duration::ms(115).ns());
    sum += static_cast<double>(d);
    if (i && b.sink.got[i].uid < b.sink.got[i - 1].uid) ++inversions;
  }
  EXPECT_NEAR(sum / 5000 / 1e6, 100.0, 0.5);
  EXPECT_GT(inversions, 1000);
}

TEST(Link, ReorderHoldDelaysTheChosenFractionByExactlyTheHold) {
  LinkConfig cfg;
  cfg.delay = Duration::ms(1);
  cfg.reorder = 0.25;
  cfg.reorder_hold = Duration::us(15);
  Bench b(cfg, 8);
  const int n = 20000;
  paced(b, n, Duration::us(12));
  std::vector<bool> held(n + 2, false);
  int n_held = 0;
  for (auto& a : b.sink.got) {
    int64_t d = a.t_ns - static_cast<int64_t>(a.uid - 1) * Duration::us(12).ns();
    ASSERT_TRUE(d == Duration::ms(1).ns() || d == Duration::ms(1).ns() + Duration::us(15).ns()) << d;
    held[a.uid] = d != Duration::ms(1).ns();
    n_held += held[a.uid];
  }
  EXPECT_EQ(static_cast<uint64_t>(n_held), b.link.stats().reordered);
  EXPECT_NEAR(n_held / static_cast<double>(n), 0.25, 0.01);
  // A 15 us hold at 12 us spacing lets exactly the next packet overtake,
  // unless that one is held too.
  int overtaken = 0, inversions = 0;
  for (int u = 1; u < n; ++u) overtaken += held[u] && !held[u + 1];
  for (size_t i = 1; i < b.sink.got.size(); ++i) inversions += b.sink.got[i].uid < b.sink.got[i - 1].uid;
  EXPECT_EQ(inversions, overtaken);
}

TEST(Link, ReorderGapSendsEveryNthPacketWithoutDelay) {
  LinkConfig cfg;
  cfg.delay = Duration::ms(10);
  cfg.reorder = 1.0;
  cfg.reorder_gap = 5;
  Bench b(cfg, 2);
  paced(b, 20, Duration::ms(1));
  // Packets 5, 10, 15, 20 (uids) skip the 10 ms delay.
  for (auto& a : b.sink.got) {
    int64_t d = a.t_ns - static_cast<int64_t>(a.uid - 1) * Duration::ms(1).ns();
    EXPECT_EQ(d, a.uid % 5 == 0 ? 0 : Duration::ms(10).ns()) << a.uid;
  }
  EXPECT_EQ(b.link.stats().reordered, 4u);
}

TEST(Link, CoDelKeepsSojournNearTargetUnderOverload) {
  LinkConfig cfg;
  cfg.rate_bps = 10'000'000;
  cfg.queue_packets = 10000;
  cfg.aqm = Aqm::kCoDel;
  Bench b(cfg, 4);
  // Offer 12.5 Mbit/s of 1500-byte packets for 20 s: 1.25 times the rate.
  paced(b, 20834, Duration::us(960), 1500);
  EXPECT_GT(b.link.stats().drop_codel, 1000u);
  EXPECT_EQ(b.link.stats().drop_queue, 0u);
  double mean_sojourn_ms = b.link.stats().sum_sojourn_ns / static_cast<double>(b.link.stats().dequeued) / 1e6;
  // An unresponsive 25 % overload: CoDel needs a few seconds of rising drop
  // rate to catch up, then holds the queue near target.
  EXPECT_LT(mean_sojourn_ms, 300.0);
  // The same overload with drop-tail fills the queue: seconds of delay.
  LinkConfig dt = cfg;
  dt.aqm = Aqm::kDropTail;
  Bench b2(dt, 4);
  paced(b2, 20834, Duration::us(960), 1500);
  double dt_sojourn_ms = b2.link.stats().sum_sojourn_ns / static_cast<double>(b2.link.stats().dequeued) / 1e6;
  EXPECT_GT(dt_sojourn_ms, 1000.0);
}

TEST(Link, CoDelDoesNotDropBelowTarget) {
  LinkConfig cfg;
  cfg.rate_bps = 10'000'000;
  cfg.aqm = Aqm::kCoDel;
  Bench b(cfg, 4);
  paced(b, 5000, Duration::us(1500), 1500);  // 80 % load, spaced: no standing queue
  EXPECT_EQ(b.link.stats().drop_codel, 0u);
  EXPECT_EQ(b.sink.got.size(), 5000u);
}

// The ECN field of each delivered packet, in order.
std::vector<int> delivered_ecn(const Bench& b, bool v6 = false) {
  std::vector<int> out;
  for (const auto& a : b.sink.got) {
    auto parsed = wire::parse_tcp_packet(a.bytes);  // also checks the IPv4 header checksum
    EXPECT_TRUE(parsed.has_value());
    out.push_back(parsed ? parsed->ip.tos & 3 : -1);
    EXPECT_EQ(parsed ? parsed->ip.version : 0, v6 ? 6 : 4);
  }
  return out;
}

TEST(Link, StepMarkingSetsCeOnEctArrivalsAtTheThresholdOnly) {
  LinkConfig cfg;
  cfg.rate_bps = 12'000'000;
  cfg.queue_packets = 100;
  cfg.ecn_threshold = 3;
  for (bool v6 : {false, true}) {
    Bench b(cfg);
    // A burst of 6: the first starts transmitting at once, so the queue the
    // 5th arrival sees holds 3 (2nd-4th): it and the 6th are marked; a
    // not-ECT 7th is only queued (the AQM cannot mark it).
    auto send = [&](uint8_t ecn) {
      b.link.send(b.loop.now(), b.pool.make(tcp_datagram(wire::tcp_flag::ACK, 1000, 1000, ecn, v6)));
    };
    for (int i = 0; i < 6; ++i) send(2);
    send(0);
    b.drain();
    EXPECT_EQ(delivered_ecn(b, v6), (std::vector<int>{2, 2, 2, 2, 3, 3, 0}));
    EXPECT_EQ(b.link.stats().ce_marked, 2u);
    EXPECT_EQ(b.link.stats().drops(), 0u);
  }
}

TEST(Link, CoDelWithEcnMarksEctPacketsInsteadOfDropping) {
  LinkConfig cfg;
  cfg.rate_bps = 10'000'000;
  cfg.queue_packets = 10000;
  cfg.aqm = Aqm::kCoDel;
  cfg.codel.ecn = true;
  Bench b(cfg, 4);
  // The overload of CoDelKeepsSojournNearTargetUnderOverload, all ECT(0):
  // CoDel signals by marking, nothing is lost.
  for (int i = 0; i < 5000; ++i) {
    b.loop.run_until(Time::from_ns(Duration::us(960).ns() * i));
    b.link.send(b.loop.now(), b.pool.make(tcp_datagram(wire::tcp_flag::ACK, 1000, 1400, 2)));
  }
  b.drain();
  EXPECT_EQ(b.sink.got.size(), 5000u);
  EXPECT_EQ(b.link.stats().drop_codel, 0u);
  EXPECT_GT(b.link.stats().ce_marked, 10u);
  const auto ecn = delivered_ecn(b);
  EXPECT_EQ(static_cast<uint64_t>(std::count(ecn.begin(), ecn.end(), 3)), b.link.stats().ce_marked);
  // Not-ECT traffic through the same AQM is dropped as before.
  Bench b2(cfg, 4);
  for (int i = 0; i < 5000; ++i) {
    b2.loop.run_until(Time::from_ns(Duration::us(960).ns() * i));
    b2.link.send(b2.loop.now(), b2.pool.make(tcp_datagram(wire::tcp_flag::ACK, 1000, 1400, 0)));
  }
  b2.drain();
  EXPECT_GT(b2.link.stats().drop_codel, 10u);
  EXPECT_EQ(b2.link.stats().ce_marked, 0u);
}

TEST(Link, SameSeedGivesIdenticalDeliveries) {
  LinkConfig cfg;
  cfg.delay = Duration::ms(5);
  cfg.jitter = Duration::ms(2);
  cfg.loss = 0.05;
  cfg.duplicate = 0.02;
  Bench a(cfg, 77), b(cfg, 77), c(cfg, 78);
  paced(a, 3000, Duration::us(100));
  paced(b, 3000, Duration::us(100));
  paced(c, 3000, Duration::us(100));
  ASSERT_EQ(a.sink.got.size(), b.sink.got.size());
  bool same_as_c = a.sink.got.size() == c.sink.got.size();
  for (size_t i = 0; i < a.sink.got.size(); ++i) {
    EXPECT_EQ(a.sink.got[i].t_ns, b.sink.got[i].t_ns);
    EXPECT_EQ(a.sink.got[i].uid, b.sink.got[i].uid);
    if (same_as_c && a.sink.got[i].t_ns != c.sink.got[i].t_ns) same_as_c = false;
  }
  EXPECT_FALSE(same_as_c);
}

}  // namespace
}  // namespace weir::sim
