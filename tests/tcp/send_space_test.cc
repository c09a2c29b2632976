// The send buffer as Linux accounts it: sk_wmem_queued charges each skb its
// truesize, write() takes whole skbs while sk_stream_memory_free (sndbuf and
// TCP_NOTSENT_LOWAT), a writer is woken once a third of the buffer is free,
// and tcp_info's chronographs time busy / rwnd- / sndbuf-limited periods.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "tcp/harness_helper.h"
#include "tcp/send_buffer.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;
using tcp::Chrono;

std::vector<uint8_t> bytes(size_t n) { return std::vector<uint8_t>(n, 0x62); }

// The gtests epoll/notsent_lowat profile: peer MSS 1000, window 257 << 7 =
// 32896, so Linux's size_goal is 16 segments (tcp_bound_to_half_wnd).
PeerOpts gtest_peer() {
  PeerOpts o;
  o.mss = 1000;
  o.wscale = 7;
  o.ts = false;
  return o;
}

StackConfig wmem_default(uint32_t def) {
  StackConfig cfg;
  cfg.tcp_wmem = {4096, def, 4194304};
  return cfg;
}

TEST(SkbLedger, FreesOnlyWhollyAcknowledgedSkbs) {
  tcp::SkbLedger l;
  l.on_sent(Seq32(1001));
  l.on_sent(Seq32(3001));
  l.on_sent(Seq32(2001));  // below the last end: a retransmission, no new skb
  EXPECT_EQ(l.sent_skbs(), 2u);
  EXPECT_EQ(l.live(Seq32(2000)), 1u);  // 1001..3001 partly acked: still charged
  l.on_acked(Seq32(1001));
  EXPECT_EQ(l.sent_skbs(), 1u);
  l.on_acked(Seq32(3001));
  EXPECT_EQ(l.sent_skbs(), 0u);
}

TEST(SkbLedger, StaysBounded) {
  tcp::SkbLedger l;
  for (uint32_t i = 1; i <= tcp::SkbLedger::kMaxSkbs + 10; ++i) l.on_sent(Seq32(i * 100));
  EXPECT_EQ(l.sent_skbs(), tcp::SkbLedger::kMaxSkbs);
}

// on_sent with SND.UNA sets the wholly acknowledged skbs aside; every
// answer stays what the ledger without it gives, also across the bound's
// merges and after on_acked.
TEST(SkbLedger, SettingAcknowledgedSkbsAsideChangesNoAnswer) {
  tcp::SkbLedger plain, pruned;
  uint32_t una = 0;
  for (uint32_t i = 1; i <= 3 * tcp::SkbLedger::kMaxSkbs; ++i) {
    const Seq32 end(i * 100);
    if (i % 7 == 0) una = (i - 3) * 100 + 50;  // inside an skb now and then
    plain.on_sent(end);
    pruned.on_sent(end, Seq32(una));
    if (i % 500 == 0) pruned.on_sent(Seq32(i * 100 - 10), Seq32(una));  // a retransmission
    if (i % 500 == 0) plain.on_sent(Seq32(i * 100 - 10));
    ASSERT_EQ(plain.sent_skbs(), pruned.sent_skbs()) << i;
    ASSERT_EQ(plain.live(Seq32(una)), pruned.live(Seq32(una))) << i;
    if (i % 1000 == 0) {
      plain.on_acked(Seq32(una));
      pruned.on_acked(Seq32(una));
      ASSERT_EQ(plain.sent_skbs(), pruned.sent_skbs()) << i;
    }
  }
}

TEST(ChronoStats, HigherClockTakesOverAndStopResumesBusy) {
  tcp::ChronoStats c;
  const Time t0 = Time::zero() + Duration::s(1);
  c.start(t0, Chrono::kBusy);
  c.start(t0 + Duration::ms(10), Chrono::kRwndLimited);
  c.start(t0 + Duration::ms(20), Chrono::kBusy);  // lower: ignored
  c.stop(t0 + Duration::ms(110), Chrono::kRwndLimited, false);
  c.stop(t0 + Duration::ms(150), Chrono::kBusy, true);  // queues empty: nothing runs
  EXPECT_EQ(c.total(t0 + Duration::s(9), Chrono::kBusy), Duration::ms(50));
  EXPECT_EQ(c.total(t0 + Duration::s(9), Chrono::kRwndLimited), Duration::ms(100));
  EXPECT_EQ(c.running(), Chrono::kUnspec);
}

// Linux tcp_sendmsg_locked: the check is made only when a new skb is needed,
// and every skb is filled to size_goal; gtests epoll_out_edge.pkt's
// write(59000) = 58000 with tcp_wmem[1] 50000 (a byte count would stop at 50000).
TEST(SendSpace, WriteTakesWholeSkbsWhileWmemIsBelowSndbuf) {
  Harness t(wmem_default(50000));
  SocketId s = t.passive_open(gtest_peer(), 257);
  auto d = bytes(59000);
  auto w = t.stack().send(t.now(), s, d);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w, 58000u);
  EXPECT_EQ(t.stack().poll(s) & ev::OUT, 0u);
}

// Linux tcp_stream_memory_free: no new skb while the unsent bytes reach
// TCP_NOTSENT_LOWAT (notsent-lowat-setsockopt.pkt: 26000 of 59000).
TEST(SendSpace, NotsentLowatStopsTheWriteAtTheNextSkb) {
  Harness t(wmem_default(262144));
  SocketId s = t.passive_open(gtest_peer(), 257);
  int lowat = 4000;
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_NOTSENT_LOWAT, int_opt(lowat)), Errc::kOk);
  auto d = bytes(59000);
  auto w = t.stack().send(t.now(), s, d);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w, 26000u);
  auto again = t.stack().send(t.now(), s, d);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error(), Errc::kAgain);
}

// Linux sk_stream_write_space: POLLOUT (and a blocked writer's wake-up) only
// once free space is at least half of what is queued (blocking-write.pkt:
// SO_SNDBUF 21000 -> 42000; the ACK of 30001 leaves it blocked, 36001 wakes it).
TEST(SendSpace, WriterIsWokenOnlyOnceAThirdOfTheBufferIsFree) {
  Harness t;
  PeerOpts o = gtest_peer();
  o.wscale = 0;
  o.sack = false;
  SocketId s = t.passive_open(o, 50000);
  int sz = 21000;
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_SNDBUF, int_opt(sz)), Errc::kOk);
  auto d = bytes(61000);
  auto w = t.stack().send(t.now(), s, d);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w, 60000u);  // skbs of 25000 (half the peer's window)
  t.advance(Duration::ms(100));
  t.inject(ACK, 1, 10001, 0, 50000);
  EXPECT_EQ(t.stack().poll(s) & ev::OUT, 0u);
  t.advance(Duration::ms(100));
  t.inject(ACK, 1, 30001, 0, 50000);
  EXPECT_EQ(t.stack().poll(s) & ev::OUT, 0u);  // 30000 + skb overhead > 2/3 of 42000
  t.advance(Duration::ms(100));
  t.inject(ACK, 1, 36001, 0, 50000);
  EXPECT_NE(t.stack().poll(s) & ev::OUT, 0u);
}

// Linux tcp_write_xmit: tcp_chrono_start(TCP_CHRONO_RWND_LIMITED) while the
// next segment does not fit the peer's window (tcp-info-rwnd-limited.pkt).
TEST(SendSpace, RwndLimitedTimeRunsWhileTheWindowIsClosed) {
  Harness t;
  SocketId s = t.active_open({}, 0);
  auto d = bytes(1000);
  ASSERT_TRUE(t.stack().send(t.now(), s, d).has_value());
  t.advance(Duration::ms(100));
  t.inject(ACK, 1, 1, 0, 0);  // the window stays shut; the stack's clock moves on
  auto i = t.stack().tcp_info(s);
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(i->tcpi_rwnd_limited, 100000u);
  EXPECT_EQ(i->tcpi_busy_time, 100000u);
  EXPECT_EQ(i->tcpi_sndbuf_limited, 0u);
}

}  // namespace
}  // namespace weir::test
