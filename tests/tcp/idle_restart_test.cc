// Slow start after idle (RFC 5681 §4.1, Linux tcp_slow_start_after_idle):
// a zero window held the sender idle; the ACK that opens it restarts the
// congestion window before the first burst (Linux tcp_ack_update_window ->
// tcp_slow_start_after_idle_check), as gtests slow_start/
// slow-start-after-win-update.pkt expects.
#include <gtest/gtest.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

struct Grown {
  SocketId s;
  uint32_t acked;
};

// A connection whose cwnd grew in slow start, all data acknowledged by an
// ACK that closes the window; 20000 more bytes then wait.
Grown grow_then_close_window(Harness& t) {
  t.peer_ts = false;
  SocketId s = t.passive_open(PeerOpts{.mss = 1000, .ts = false});
  std::vector<uint8_t> d(26000, 1);
  EXPECT_EQ(*t.stack().send(t.now(), s, d), 26000u);
  uint32_t acked = 0;
  for (int round = 0; round < 3 && acked < 26000; ++round) {
    t.advance(Duration::ms(100));
    uint32_t sent_to = acked;
    while (t.pending() > 0) {
      Tx x = t.expect_tx();
      sent_to = std::max<uint32_t>(sent_to, t.rel_seq(x) - 1 + static_cast<uint32_t>(x.payload.size()));
    }
    acked = sent_to;
    t.inject(ACK, 1, 1 + acked, 0, acked >= 26000 ? 0 : 65535);
  }
  std::vector<uint8_t> more(20000, 2);
  EXPECT_EQ(*t.stack().send(t.now(), s, more), 20000u);
  EXPECT_EQ(t.pending(), 0u);  // the window is closed
  return {s, acked};
}

TEST(IdleRestart, WindowOpeningAfterIdleRestartsCwndBeforeTheBurst) {
  StackConfig cfg;
  cfg.tcp_slow_start_after_idle = 1;
  Harness t(cfg);
  Grown g = grow_then_close_window(t);
  ASSERT_EQ(g.acked, 26000u);
  const uint32_t grown = t.stack().tcp_info(g.s)->tcpi_snd_cwnd;
  ASSERT_GT(grown, 20u);
  // Zero-window probes for 3 s: no data is sent, so the sender is idle far
  // longer than an RTO; the probes leave cwnd alone.
  t.advance(Duration::s(3));
  t.clear_tx();
  ASSERT_EQ(t.stack().tcp_info(g.s)->tcpi_snd_cwnd, grown);
  t.inject(ACK, 1, 1 + g.acked, 0, 65535);
  // Restarted to the initial window (Linux tcp_cwnd_restart), so the burst
  // is at most 10 segments, not `grown`.
  EXPECT_EQ(t.stack().tcp_info(g.s)->tcpi_snd_cwnd, 10u);
  uint32_t segs = 0;
  while (t.pending() > 0)
    if (!t.expect_tx().payload.empty()) ++segs;
  EXPECT_EQ(segs, 10u);
}

TEST(IdleRestart, WindowOpeningWithoutIdleKeepsCwnd) {
  StackConfig cfg;
  cfg.tcp_slow_start_after_idle = 1;
  Harness t(cfg);
  Grown g = grow_then_close_window(t);
  const uint32_t grown = t.stack().tcp_info(g.s)->tcpi_snd_cwnd;
  t.advance(Duration::ms(50));  // shorter than the RTO
  t.inject(ACK, 1, 1 + g.acked, 0, 65535);
  EXPECT_EQ(t.stack().tcp_info(g.s)->tcpi_snd_cwnd, grown);
}

TEST(IdleRestart, DisabledBySysctlKeepsCwnd) {
  StackConfig cfg;
  cfg.tcp_slow_start_after_idle = 0;
  Harness t(cfg);
  Grown g = grow_then_close_window(t);
  const uint32_t grown = t.stack().tcp_info(g.s)->tcpi_snd_cwnd;
  t.advance(Duration::s(3));
  t.clear_tx();
  t.inject(ACK, 1, 1 + g.acked, 0, 65535);
  EXPECT_EQ(t.stack().tcp_info(g.s)->tcpi_snd_cwnd, grown);
}

}  // namespace
}  // namespace weir::test
