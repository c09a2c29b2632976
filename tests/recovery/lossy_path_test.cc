// The scoreboard and the recovery machine over a seeded lossy, reordering
// path: a bulk transfer must complete, the counts must agree with a walk
// after every event, and the flight may never exceed what is outstanding.
// SACK and non-SACK receivers; RACK and dupthresh loss detection.
#include <gtest/gtest.h>

#include <map>
#include <queue>
#include <random>
#include <set>
#include <tuple>

#include "recovery/conn_fixture.h"

namespace weir::tcp::recovery {
namespace {

using tcp::testing::Conn;

struct PathParams {
  bool sack;
  int tcp_recovery;
  uint32_t seed;
  double data_loss;
  double ack_loss;
  int jitter_ms;  // reordering
};

class LossyPath : public ::testing::TestWithParam<PathParams> {};

// Receiver: cumulative point, out-of-order packets, RFC 2018 SACK blocks
// (the block holding the latest arrival first), RFC 2883 D-SACK,
// RFC 7323 ts_recent echo.
struct Receiver {
  uint32_t rcv_nxt = 0;                  // in packets
  std::set<uint32_t> ooo;
  uint32_t ts_recent = 0;
  struct Ack { uint32_t cum; std::vector<std::pair<uint32_t, uint32_t>> sacks; uint32_t ecr; };

  Ack on_packet(uint32_t pkt, uint32_t tsval) {
    Ack a;
    bool dup = pkt < rcv_nxt || ooo.count(pkt);
    if (pkt <= rcv_nxt) ts_recent = tsval;
    if (!dup) {
      if (pkt == rcv_nxt) {
        ++rcv_nxt;
        while (ooo.erase(rcv_nxt)) ++rcv_nxt;
      } else {
        ooo.insert(pkt);
      }
    }
    a.cum = rcv_nxt;
    a.ecr = ts_recent;
    if (dup) a.sacks.push_back({pkt, pkt + 1});
    auto block_of = [&](uint32_t p) {
      uint32_t b = p, e = p + 1;
      while (ooo.count(b - 1) && b - 1 >= rcv_nxt) --b;
      while (ooo.count(e)) ++e;
      return std::pair<uint32_t, uint32_t>{b, e};
    };
    if (!dup && pkt > rcv_nxt) a.sacks.push_back(block_of(pkt));
    for (auto it = ooo.rbegin(); it != ooo.rend() && a.sacks.size() < 3;) {
      auto blk = block_of(*it);
      bool have = false;
      for (auto& s : a.sacks) have = have || (s == blk);
      if (!have) a.sacks.push_back(blk);
      it = std::make_reverse_iterator(ooo.lower_bound(blk.first));
    }
    return a;
  }
};

TEST_P(LossyPath, BulkTransferCompletesWithExactCounts) {
  const PathParams p = GetParam();
  constexpr uint32_t kPackets = 1500;
  Conn c(p.sack, 0xFFFF0000u, p.tcp_recovery);
  c.auto_retransmit = false;
  std::mt19937 rng(p.seed);
  std::uniform_real_distribution<double> u(0, 1);
  // Events: (time, order, is_ack, packet or ack index).
  using Ev = std::tuple<int64_t, uint64_t, bool, uint32_t, uint32_t>;
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> net;
  std::vector<Receiver::Ack> acks;
  Receiver rx;
  uint64_t order = 0;
  auto xmit = [&](uint32_t pkt) {
    if (u(rng) < p.data_loss) return;
    const int64_t t = (c.now() + Duration::ms(40 + static_cast<int>(rng() % (p.jitter_ms + 1)))).ns();
    net.push({t, order++, false, pkt, c.tsval()});
  };
  auto pump = [&] {
    // Retransmit lost packets first, then new data, within cwnd.
    Seq32 from = c.sb().high_ack();
    while (c.sb().in_flight() < c.tp().snd_cwnd) {
      if (auto i = c.sb().next_lost(from)) {
        const SeqRange r = c.sb().at(*i).seq;
        ASSERT_TRUE(c.sb().on_retransmit(r, Conn::kMss, c.now()).has_value());
        c.machine().on_retransmit(1, c.tsval());
        xmit(static_cast<uint32_t>((r.begin - c.seq(0)) / static_cast<int32_t>(Conn::kMss)));
        from = r.end;
        continue;
      }
      const uint32_t next = static_cast<uint32_t>((c.sb().high_data() - c.seq(0)) / static_cast<int32_t>(Conn::kMss));
      if (next >= kPackets) break;
      c.send(1);
      xmit(next);
    }
  };
  Time last_progress = c.now();
  uint64_t rtos = 0;
  Time reo = Time::never();
  pump();
  int guard = 0;
  while (c.sb().high_ack() != c.seq(kPackets * Conn::kMss) && ++guard < 200000) {
    const Time rto_at = last_progress + Duration::ms(400);
    Time next = net.empty() ? Time::never() : Time::from_ns(std::get<0>(net.top()));
    if (min(rto_at, reo) < next) {
      c.advance(min(rto_at, reo) - c.now());
      if (reo <= rto_at) {
        reo = Time::never();
        auto out = c.reo_timeout();
        reo = out.reo_timeout;
      } else {
        c.rto();
        ++rtos;
        last_progress = c.now();
      }
      pump();
      continue;
    }
    auto [t, o, is_ack, a, b] = net.top();
    net.pop();
    c.advance(Time::from_ns(t) - c.now());
    if (!is_ack) {
      acks.push_back(rx.on_packet(a, b));
      if (u(rng) >= p.ack_loss) net.push({(c.now() + Duration::ms(40)).ns(), order++, true, static_cast<uint32_t>(acks.size() - 1), 0});
      continue;
    }
    const Receiver::Ack& ack = acks[a];
    const Seq32 before = c.sb().high_ack();
    std::vector<std::pair<uint32_t, uint32_t>> bytes;
    for (auto [sb, se] : ack.sacks) bytes.push_back({sb * Conn::kMss, se * Conn::kMss});
    RecoveryResult out;
    switch (bytes.size()) {
      case 0: out = c.ack(ack.cum * Conn::kMss, {}, ack.ecr, true); break;
      case 1: out = c.ack(ack.cum * Conn::kMss, {bytes[0]}, ack.ecr, true); break;
      case 2: out = c.ack(ack.cum * Conn::kMss, {bytes[0], bytes[1]}, ack.ecr, true); break;
      default: out = c.ack(ack.cum * Conn::kMss, {bytes[0], bytes[1], bytes[2]}, ack.ecr, true); break;
    }
    if (!out.reo_timeout.is_never()) reo = out.reo_timeout;
    if (c.sb().high_ack() != before) last_progress = c.now();
    // Slow growth outside recovery stands in for congestion avoidance.
    if (c.state() <= CaState::Disorder && c.sb().high_ack() != before) {
      c.tp().snd_cwnd = std::min(c.tp().snd_cwnd + 1, 40u);
    }
    ASSERT_LE(c.sb().in_flight(), c.sb().packets_out() + 0u);
    ASSERT_EQ(c.sb().check_invariants(), "");
    pump();
  }
  EXPECT_EQ(c.sb().high_ack(), c.seq(kPackets * Conn::kMss)) << "transfer stalled";
  EXPECT_EQ(c.sb().packets_out(), 0u);
  EXPECT_EQ(c.sb().in_flight(), 0u);
  EXPECT_EQ(c.sb().sacked_out(), 0u);
  EXPECT_EQ(c.sb().lost_out(), 0u);
  EXPECT_EQ(c.sb().retrans_out(), 0u);
  const uint64_t recoveries =
      c.count(Counter::TcpExtTCPSackRecovery) + c.count(Counter::TcpExtTCPRenoRecovery);
  if (p.data_loss > 0) {
    EXPECT_GT(recoveries + rtos, 0u) << "losses were repaired somehow";
  }
  if (p.sack && p.jitter_ms > 0) {
    EXPECT_GT(c.machine().reord_seen(), 0u) << "reordering noticed";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Paths, LossyPath,
    ::testing::Values(PathParams{true, 1, 1, 0.03, 0.01, 20}, PathParams{true, 1, 2, 0.0, 0.0, 30},
                      PathParams{true, 0, 3, 0.03, 0.01, 10}, PathParams{false, 1, 4, 0.02, 0.01, 0},
                      PathParams{false, 1, 5, 0.02, 0.0, 15}, PathParams{true, 1, 6, 0.10, 0.05, 25}));

}  // namespace
}  // namespace weir::tcp::recovery
