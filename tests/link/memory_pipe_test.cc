#include "link/memory_pipe.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace weir::link {
namespace {

Time at(int64_t ms) { return Time::from_ns(ms * 1000000); }

std::vector<uint8_t> pkt(uint8_t tag, size_t len = 40) { return std::vector<uint8_t>(len, tag); }

struct Got {
  Side to;
  uint8_t tag;
  Time when;
};

std::vector<Got> deliver(MemoryPipe& p, Time now) {
  std::vector<Got> got;
  p.deliver_due(now, [&](Side to, std::span<const uint8_t> b) { got.push_back({to, b[0], now}); });
  return got;
}

TEST(MemoryPipe, HoldsPacketsUntilTheirDelayHasPassed) {
  MemoryPipe p({.delay = Duration::ms(10)});
  p.set_now(at(0));
  p.a().transmit(pkt(1));
  EXPECT_EQ(p.queued(Side::A), 1u);
  EXPECT_EQ(p.next_delivery(), at(10));
  EXPECT_TRUE(deliver(p, at(9)).empty());
  auto got = deliver(p, at(10));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].to, Side::B);
  EXPECT_EQ(got[0].tag, 1);
  EXPECT_TRUE(p.next_delivery().is_never());
  EXPECT_EQ(p.stats(Side::A).delivered, 1u);
}

TEST(MemoryPipe, DeliversBothDirectionsInDueThenTransmitOrder) {
  MemoryPipe p({.delay = Duration::ms(5)});
  p.set_now(at(0));
  p.b().transmit(pkt(1));
  p.a().transmit(pkt(2));
  p.set_now(at(1));
  p.a().transmit(pkt(3));
  p.b().transmit(pkt(4));
  auto got = deliver(p, at(100));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].tag, 1);
  EXPECT_EQ(got[0].to, Side::A);
  EXPECT_EQ(got[1].tag, 2);
  EXPECT_EQ(got[1].to, Side::B);
  EXPECT_EQ(got[2].tag, 3);
  EXPECT_EQ(got[3].tag, 4);
}

TEST(MemoryPipe, ZeroDelayRepliesSentDuringDeliveryArriveInTheSameCall) {
  MemoryPipe p;
  p.set_now(at(0));
  p.a().transmit(pkt(1));
  std::vector<uint8_t> order;
  p.deliver_due(at(0), [&](Side to, std::span<const uint8_t> b) {
    order.push_back(b[0]);
    if (to == Side::B && b[0] == 1) p.b().transmit(pkt(2));  // reply
  });
  EXPECT_EQ(order, (std::vector<uint8_t>{1, 2}));
}

// Delivered buffers are reused by later transmits: a reused buffer carries
// exactly the new packet (length and bytes), the ring keeps FIFO order
// across its growth and wrap, and the pool never holds more buffers than
// were ever queued at once.
TEST(MemoryPipe, ReusedBuffersCarryExactlyTheNewPacketInOrder) {
  MemoryPipe p({.delay = Duration::ms(1), .queue_limit = 1000});
  std::vector<std::vector<uint8_t>> got;
  auto sink = [&](Side, std::span<const uint8_t> b) { got.emplace_back(b.begin(), b.end()); };
  uint8_t tag = 0;
  int64_t t = 0;
  for (int round = 0; round < 5; ++round) {
    p.set_now(at(t));
    const size_t burst = 100 + 70 * round;  // grows the ring, then wraps it
    for (size_t i = 0; i < burst; ++i) {
      ++tag;
      p.a().transmit(pkt(tag, i % 2 ? 1500 : 40 + i % 7));  // long and short alternate
    }
    got.clear();
    t += 1;
    p.deliver_due(at(t), sink);
    ASSERT_EQ(got.size(), burst);
    for (size_t i = 0; i < burst; ++i) {
      const uint8_t want = static_cast<uint8_t>(tag - burst + 1 + i);
      EXPECT_EQ(got[i], pkt(want, i % 2 ? 1500 : 40 + i % 7)) << "round " << round << " packet " << i;
    }
    EXPECT_LE(p.pooled(), burst);
  }
  EXPECT_EQ(p.pooled(), 100u + 70 * 4);  // the largest burst's buffers, kept for reuse
}

TEST(MemoryPipe, BoundedQueueCountsTailDrops) {
  MemoryPipe p({.delay = Duration::ms(1), .queue_limit = 3});
  for (uint8_t i = 0; i < 5; ++i) p.a().transmit(pkt(i));
  EXPECT_EQ(p.queued(Side::A), 3u);
  EXPECT_EQ(p.stats(Side::A).sent, 3u);
  EXPECT_EQ(p.stats(Side::A).dropped_full, 2u);
  auto got = deliver(p, at(1));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].tag, 2);  // the first three survive
}

TEST(MemoryPipe, RefusingDeviceReportsLocalDropsUntilItAcceptsAgain) {
  MemoryPipe p({.delay = Duration::ms(1)});
  p.set_refuse(Side::A, true);
  EXPECT_EQ(p.a().try_transmit(pkt(1)), XmitResult::kDropped);
  EXPECT_EQ(p.b().try_transmit(pkt(2)), XmitResult::kSent);  // only A's device refuses
  EXPECT_EQ(p.queued(Side::A), 0u);
  EXPECT_EQ(p.stats(Side::A).dropped_refused, 1u);
  EXPECT_EQ(p.stats(Side::A).sent, 0u);
  p.set_refuse(Side::A, false);
  EXPECT_EQ(p.a().try_transmit(pkt(3)), XmitResult::kSent);
  auto got = deliver(p, at(1));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].tag, 2);
  EXPECT_EQ(got[1].tag, 3);
}

TEST(MemoryPipe, PathLossIsNotReportedToTheSender) {
  MemoryPipe p({.mtu = 100, .queue_limit = 1});
  p.set_filter([](Side, std::span<const uint8_t> b) { return b[0] != 9; });
  EXPECT_EQ(p.a().try_transmit(pkt(1, 101)), XmitResult::kSent);  // oversize: lost on the path
  EXPECT_EQ(p.a().try_transmit(pkt(9)), XmitResult::kSent);       // filtered: lost on the path
  EXPECT_EQ(p.a().try_transmit(pkt(2)), XmitResult::kSent);
  EXPECT_EQ(p.a().try_transmit(pkt(3)), XmitResult::kSent);       // tail drop in the pipe
  EXPECT_EQ(p.stats(Side::A).dropped_full, 1u);
  EXPECT_EQ(p.stats(Side::A).dropped_refused, 0u);
}

TEST(MemoryPipe, DropsPacketsLargerThanMtu) {
  MemoryPipe p({.mtu = 100});
  EXPECT_EQ(p.a().mtu(), 100u);
  p.a().transmit(pkt(1, 100));
  p.a().transmit(pkt(2, 101));
  EXPECT_EQ(p.stats(Side::A).dropped_oversize, 1u);
  EXPECT_EQ(deliver(p, at(0)).size(), 1u);
}

TEST(MemoryPipe, FilterDropsChosenPackets) {
  MemoryPipe p;
  int n = 0;
  p.set_filter([&](Side from, std::span<const uint8_t>) { return !(from == Side::A && n++ == 1); });
  for (uint8_t i = 0; i < 3; ++i) p.a().transmit(pkt(i));
  p.b().transmit(pkt(9));
  auto got = deliver(p, at(0));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].tag, 0);
  EXPECT_EQ(got[1].tag, 2);
  EXPECT_EQ(got[2].tag, 9);
  EXPECT_EQ(p.stats(Side::A).dropped_filter, 1u);
}

TEST(MemoryPipe, TimeNeverGoesBackwards) {
  MemoryPipe p({.delay = Duration::ms(10)});
  p.set_now(at(50));
  p.set_now(at(20));
  EXPECT_EQ(p.now(), at(50));
  p.a().transmit(pkt(1));
  EXPECT_EQ(p.next_delivery(), at(60));
}

// A toy engine: a timer that starts a ping, and an echo of each packet until
// `count` round trips. Enough to check that pump_until interleaves timers and
// deliveries in virtual time.
struct Pinger {
  Netif& nif;
  std::string name;
  Time timer = Time::never();
  int echoes_left = 0;
  std::vector<std::pair<Time, uint8_t>> rx;

  void input(Time now, std::span<const uint8_t> b) {
    rx.push_back({now, b[0]});
    if (echoes_left-- > 0) {
      std::vector<uint8_t> out(b.begin(), b.end());
      ++out[0];
      nif.transmit(out);
    }
  }
  void advance(Time now) {
    if (timer <= now) {
      timer = Time::never();
      nif.transmit(pkt(0));
    }
  }
  Time next_deadline() const { return timer; }
};

TEST(MemoryPipe, PumpRunsTimersAndRoundTripsInVirtualTime) {
  MemoryPipe p({.delay = Duration::ms(25)});
  Pinger a{p.a(), "a", at(100), 2, {}};
  Pinger b{p.b(), "b", Time::never(), 2, {}};
  Time end = pump_until(p, a, b, at(0), at(10000));
  // a sends 0 at 100; b gets it at 125 and answers 1; a gets 1 at 150 ...
  ASSERT_EQ(b.rx.size(), 3u);
  ASSERT_EQ(a.rx.size(), 2u);
  EXPECT_EQ(b.rx[0], std::make_pair(at(125), uint8_t{0}));
  EXPECT_EQ(a.rx[0], std::make_pair(at(150), uint8_t{1}));
  EXPECT_EQ(b.rx[1], std::make_pair(at(175), uint8_t{2}));
  EXPECT_EQ(a.rx[1], std::make_pair(at(200), uint8_t{3}));
  EXPECT_EQ(b.rx[2], std::make_pair(at(225), uint8_t{4}));
  EXPECT_EQ(end, at(225));  // nothing left to do
}

TEST(MemoryPipe, PumpStopsAtTheLimit) {
  MemoryPipe p({.delay = Duration::ms(25)});
  Pinger a{p.a(), "a", at(100), 100, {}};
  Pinger b{p.b(), "b", Time::never(), 100, {}};
  EXPECT_EQ(pump_until(p, a, b, at(0), at(160)), at(160));
  EXPECT_EQ(b.rx.size(), 1u);
  EXPECT_EQ(a.rx.size(), 1u);
  EXPECT_EQ(p.queued(Side::A), 1u);  // the reply sent at 150, due 175
}

}  // namespace
}  // namespace weir::link
