// The advertised window: Linux-calibrated initial values, window scaling
// limits (seed 001), never shrinking (RFC 9293 MUST-35, seed 000), scale
// rounding (RFC 7323 §2.4), clamps, zero windows and autotuning bounds.
#include <gtest/gtest.h>

#include <random>

#include "tcp/rcv_rig.h"

namespace weir::tcp {
namespace {

using testing::linux_defaults;
using testing::packetdrill_profile;
using testing::Rig;
using testing::RigOptions;

// ---- Linux calibration ----------------------------------------------------------

// Linux with default sysctls offers "win 64240 ... wscale 7" on its SYN
// (tcp_select_initial_window: 64 KB of tcp_rmem[1]'s half, in whole 1460-byte
// segments) and "win 502" on the ACK that follows (64240 rounded up to 128).
TEST(RcvWindow, LinuxDefaultsGiveSyn64240Wscale7ThenWin502) {
  Receiver r(linux_defaults());
  const InitialWindow iw = r.select_initial_window(1460, true);
  EXPECT_EQ(iw.rcv_wscale, 7);
  EXPECT_EQ(iw.syn_window, 64240);
  EXPECT_EQ(iw.rcv_wnd, 64240u);
  RcvNegotiated n;
  n.irs = Seq32(5);
  n.wscale_ok = true;
  n.peer_mss = 1460;
  n.sack_ok = true;
  r.on_syn(Time::zero(), n);
  Counters c;
  EXPECT_EQ(r.select_window(c), 502);
  EXPECT_EQ(r.rcv_wnd(), 502u << 7);
  EXPECT_EQ(r.window_clamp(), 65536u);  // tcp_full_space(131072)
}

// packetdrill's profile (tcp_rmem 4096 540000 15728640): "S. ... wscale 8"
// with win 65535, then "win 256" on the first ACK (as in the gtests'
// fastopen/server/client-ack-dropped-then-recovery-ms-timestamps.pkt).
TEST(RcvWindow, PacketdrillProfileGivesWscale8Syn65535ThenWin256) {
  Rig rig(packetdrill_profile());
  EXPECT_EQ(rig.r.rcv_wscale(), 8);
  EXPECT_EQ(rig.r.syn_window(), 65535);
  EXPECT_EQ(rig.send_ack(), 256);
  EXPECT_EQ(rig.r.window_clamp(), 270000u);  // half of 540000
}

TEST(RcvWindow, ScaleComesFromTheLargestPossibleBuffer) {
  ReceiverConfig cfg = linux_defaults();
  cfg.tcp_rmem[2] = 4u << 20;  // ilog2 = 22 -> 7
  EXPECT_EQ(Receiver(cfg).select_initial_window(1460, true).rcv_wscale, 7);
  cfg.tcp_rmem[2] = 65535;
  cfg.rmem_max = 65535;
  EXPECT_EQ(Receiver(cfg).select_initial_window(1460, true).rcv_wscale, 0);
  cfg.rmem_max = 1u << 30;  // net.core.rmem_max counts too; capped at 14
  EXPECT_EQ(Receiver(cfg).select_initial_window(1460, true).rcv_wscale, 14);
  EXPECT_EQ(Receiver(cfg).select_initial_window(1460, false).rcv_wscale, 0);
}

TEST(RcvWindow, WindowClampSetBeforeConnectLimitsTheScale) {
  Receiver r(packetdrill_profile());
  ASSERT_EQ(r.set_window_clamp(100000), Errc::kOk);  // ilog2(100000) = 16 -> shift 1
  const InitialWindow iw = r.select_initial_window(1460, true);
  EXPECT_EQ(iw.rcv_wscale, 1);
  EXPECT_EQ(iw.window_clamp, 100000u);
}

// ---- seed 001: windows must fit what the scale can express -----------------------

ReceiverConfig big_rmem_max() {
  ReceiverConfig cfg = linux_defaults();
  cfg.rmem_max = 1u << 20;
  return cfg;
}

TEST(RcvWindow, UnscaledConnectionWithBigBufferKeepsEverythingWithin65535) {
  RigOptions o;
  o.wscale_ok = false;
  o.rcvbuf = 256 * 1024;  // iperf -w 256K: sk_rcvbuf 512K
  Rig rig(big_rmem_max(), o);
  EXPECT_EQ(rig.r.rcvbuf(), 512u * 1024);
  EXPECT_EQ(rig.r.rcv_wscale(), 0);
  EXPECT_LE(rig.r.rcv_wnd(), 65535u);
  EXPECT_LE(rig.r.window_clamp(), 65535u);
  EXPECT_LE(rig.r.rcv_ssthresh(), 65535u);
  EXPECT_EQ(rig.send_ack(), 65535);
  // TCP_WINDOW_CLAMP and SO_RCVLOWAT cannot push it past 16 bits either.
  ASSERT_EQ(rig.r.set_window_clamp(1u << 20), Errc::kOk);
  EXPECT_EQ(rig.r.window_clamp(), 65535u);
  EXPECT_EQ(rig.send_ack(), 65535);
}

TEST(RcvWindow, PeerWithoutWindowScalingTurnsOffOurOfferedScale) {
  Receiver r(linux_defaults());
  r.select_initial_window(1460, true);  // we offered 7 on our SYN
  EXPECT_EQ(r.rcv_wscale(), 7);
  RcvNegotiated n;
  n.irs = Seq32(1);
  n.wscale_ok = false;  // the SYN-ACK had no WSopt (RFC 7323 §2.2)
  r.on_syn(Time::zero(), n);
  EXPECT_EQ(r.rcv_wscale(), 0);
  EXPECT_LE(r.window_clamp(), 65535u);
  Counters c;
  EXPECT_LE(r.select_window(c), 65535);
  EXPECT_EQ(r.rcv_wnd() >> 0, r.rcv_wnd());
}

TEST(RcvWindow, RcvlowatGrowsTheBufferButClampsToTheRepresentableWindow) {
  RigOptions o;
  o.wscale_ok = false;
  Rig rig(linux_defaults(), o);
  ASSERT_EQ(rig.r.set_rcvlowat(100000), Errc::kOk);
  EXPECT_EQ(rig.r.rcvbuf(), 200000u);      // tcp_space_from_win(100000)
  EXPECT_EQ(rig.r.window_clamp(), 65535u);  // not 100000: nothing larger can be announced
  // With scaling the clamp follows SO_RCVLOWAT itself (Linux tcp_set_rcvlowat).
  Rig scaled(linux_defaults());
  ASSERT_EQ(scaled.r.set_rcvlowat(100000), Errc::kOk);
  EXPECT_EQ(scaled.r.window_clamp(), 100000u);
  // With SO_RCVBUF set, SO_RCVLOWAT is capped at half the buffer and does
  // not grow it.
  RigOptions locked;
  locked.rcvbuf = 10000;
  Rig l(linux_defaults(), locked);
  ASSERT_EQ(l.r.set_rcvlowat(100000), Errc::kOk);
  EXPECT_EQ(l.r.rcvbuf(), 20000u);
}

TEST(RcvWindow, WindowClampScaledConnectionIsCappedAt65535ShiftedBySeven) {
  Rig rig(linux_defaults());
  ASSERT_EQ(rig.r.set_window_clamp(1u << 30), Errc::kOk);
  EXPECT_EQ(rig.r.window_clamp(), 65535u << 7);
  EXPECT_EQ(rig.r.set_window_clamp(0), Errc::kInval);  // only before the handshake
}

// TCP_WINDOW_CLAMP shrinks the window as data uses it up, never by pulling
// the edge back (RFC 9293 MUST-35), and ends at the clamp rounded up to one
// scale unit (RFC 7323 §2.4).
TEST(RcvWindow, WindowClampTakesEffectWithoutShrinking) {
  Rig rig(packetdrill_profile());
  ASSERT_EQ(rig.send_ack(), 256);
  ASSERT_EQ(rig.r.set_window_clamp(20000), Errc::kOk);
  EXPECT_EQ(rig.r.rcv_ssthresh(), 20000u);
  Seq32 edge = rig.r.right_edge();
  uint32_t off = 0;
  uint16_t field = 0;
  for (int i = 0; i < 80; ++i) {
    rig.data(off, 1000);
    off += 1000;
    rig.read(1000);
    field = rig.send_ack();
    ASSERT_GE(rig.r.right_edge() - edge, 0) << "edge moved left at step " << i;
    edge = rig.r.right_edge();
  }
  EXPECT_EQ(field, (20000 + 255) / 256);
}

// ---- never shrink, scale rounding --------------------------------------------------

ReceiverConfig scale3_config() {
  ReceiverConfig cfg = linux_defaults();
  cfg.tcp_rmem[2] = 1u << 18;  // ilog2 18 -> shift 3 (granularity 8 bytes)
  return cfg;
}

// Seed 000: a window rounded DOWN to the 8-byte unit of scale 3 moves the
// right edge left by a few bytes. Filling the buffer with odd-sized segments
// and no reads makes the remaining window a non-multiple of 8 while the
// buffer-based window is smaller: it must be rounded UP.
TEST(RcvWindow, ScaleThreeRoundsTheRemainingWindowUp) {
  RigOptions o;
  o.rcvbuf = 20000;  // 40000 bytes of buffer, 20000 of window
  Rig rig(scale3_config(), o);
  ASSERT_EQ(rig.r.rcv_wscale(), 3);
  rig.send_ack();
  Seq32 edge = rig.r.right_edge();
  uint32_t off = 0;
  int rounded_up = 0;
  while (true) {
    const uint32_t room = rig.r.receive_window();
    if (room == 0) break;
    const uint32_t len = std::min<uint32_t>(room, 1001);
    rig.data(off, len);
    off += len;
    const uint32_t cur = rig.r.receive_window();
    const uint16_t field = rig.send_ack();
    ASSERT_EQ(uint32_t{field} << 3, rig.r.rcv_wnd());
    ASSERT_GE(rig.r.right_edge() - edge, 0) << "right edge moved left";
    if (cur % 8 != 0 && rig.r.rcv_wnd() == (cur + 7) / 8 * 8) ++rounded_up;
    edge = rig.r.right_edge();
  }
  EXPECT_GT(rounded_up, 0) << "the round-up path was never exercised";
  EXPECT_EQ(rig.r.right_edge(), rig.r.rcv_nxt());  // filled to a zero window
}

// Property: across random arrivals (in order, out of order, duplicates,
// beyond the window), random reads, buffer and clamp changes, the right edge
// never moves left and the window always fits the scale.
TEST(RcvWindow, RightEdgeIsMonotonicUnderRandomTraffic) {
  for (const uint32_t rmem_max_shift : {15u, 18u, 22u, 23u}) {
    std::mt19937 rng(4242 + rmem_max_shift);
    ReceiverConfig cfg = linux_defaults();
    cfg.tcp_rmem[2] = (1u << rmem_max_shift) - 1;
    cfg.rmem_max = cfg.tcp_rmem[2];
    RigOptions o;
    o.irs = Seq32(0xffff0000u);  // cross the wrap during the run
    o.wscale_ok = rmem_max_shift != 15;
    Rig rig(cfg, o);
    const uint32_t ws = rig.r.rcv_wscale();
    rig.send_ack();
    Seq32 edge = rig.r.right_edge();
    for (int step = 0; step < 4000; ++step) {
      rig.advance(Duration::us(100 + rng() % 3000));
      const uint32_t dice = rng() % 100;
      const uint32_t nxt_off = static_cast<uint32_t>(rig.r.rcv_nxt() - rig.seq(0));
      if (dice < 55) {
        // A sender honouring the last window, sometimes jumping ahead.
        const uint32_t ahead = (rng() % 4 == 0) ? (rng() % 8) * 1460 : 0;
        const uint32_t len = 1 + rng() % 1460;
        const auto out = rig.data(nxt_off + ahead, len);
        ASSERT_LE(rig.r.rcv_nxt() - edge, 0) << "accepted past the right edge";
        if (out.ack_now) rig.send_ack();
      } else if (dice < 60) {
        rig.data(nxt_off > 3000 ? nxt_off - 3000 : 0, 1 + rng() % 2000);  // old data
      } else if (dice < 63) {
        rig.data(nxt_off + 200000, 1000);  // far beyond the window
      } else if (dice < 85) {
        rig.read(rng() % 20000);
      } else if (dice < 88) {
        rig.r.set_rcvbuf(2048 + rng() % 300000);  // shrink or grow under traffic
      } else if (dice < 90) {
        rig.r.set_window_clamp(2048 + rng() % 300000);
      } else {
        rig.send_ack();
      }
      const uint16_t field = rig.send_ack();
      ASSERT_EQ(uint32_t{field} << ws, rig.r.rcv_wnd());
      ASSERT_LE(rig.r.rcv_wnd(), 65535u << ws);
      ASSERT_LE(rig.r.window_clamp(), 65535u << ws);
      ASSERT_LE(rig.r.rcv_ssthresh(), rig.r.window_clamp());
      ASSERT_GE(rig.r.right_edge() - edge, 0) << "edge moved left at step " << step;
      edge = rig.r.right_edge();
    }
  }
}

// ---- zero window ------------------------------------------------------------------

TEST(RcvWindow, ZeroWindowIsAnnouncedDroppedIntoAndReopenedByAReadUpdate) {
  Rig rig(linux_defaults());
  rig.send_ack();
  uint32_t off = 0;
  for (int i = 0; i < 200 && rig.r.receive_window() > 0; ++i) {
    const uint32_t len = std::min<uint32_t>(rig.r.receive_window(), 1460);
    rig.data(off, len);
    off += len;
    rig.send_ack();
  }
  ASSERT_EQ(rig.r.receive_window(), 0u);
  EXPECT_EQ(rig.c.get(Counter::TcpExtTCPToZeroWindowAdv), 1u);
  EXPECT_GT(rig.r.readable(), 60000u);  // the whole window's worth is queued

  const DataOutcome o = rig.data(off, 1460);  // the sender ignores the zero window
  EXPECT_EQ(o.drop, RcvDrop::kZeroWindow);
  EXPECT_EQ(o.in_order, 0u);
  EXPECT_TRUE(o.ack_now);
  EXPECT_EQ(rig.c.get(Counter::TcpExtTCPZeroWindowDrop), 1u);
  rig.send_ack();

  // A small read is not worth a window update (SWS avoidance)...
  bool update = true;
  rig.read(100, &update);
  EXPECT_FALSE(update);
  // ...draining the buffer is.
  rig.read(1u << 20, &update);
  EXPECT_TRUE(update);
  EXPECT_GT(rig.send_ack(), 0);
  EXPECT_EQ(rig.c.get(Counter::TcpExtTCPFromZeroWindowAdv), 1u);
}

TEST(RcvWindow, BareFinIsAcceptedIntoAZeroWindow) {
  Rig rig(linux_defaults());
  rig.send_ack();
  uint32_t off = 0;
  while (rig.r.receive_window() > 0) {
    const uint32_t len = std::min<uint32_t>(rig.r.receive_window(), 1460);
    rig.data(off, len);
    off += len;
    rig.send_ack();
  }
  const DataOutcome o = rig.data(off, 0, true);
  EXPECT_TRUE(o.fin);
  EXPECT_TRUE(rig.r.fin_received());
  EXPECT_EQ(rig.r.rcv_nxt(), rig.seq(off + 1));
}

// ---- autotuning ------------------------------------------------------------------

// A sender doubling its window every 10 ms RTT while the application reads
// everything: the buffer grows (Linux dynamic right-sizing), never past
// tcp_rmem[2], and the clamp never past 65535 << shift.
struct AutotuneResult {
  uint32_t rcvbuf = 0;
  uint32_t clamp = 0;
  TcpInfo info;
  uint32_t max_field = 0;
};

AutotuneResult run_autotune(const ReceiverConfig& cfg, const RigOptions& o, int rounds) {
  Rig rig(cfg, o);
  AutotuneResult res;
  rig.send_ack();
  uint32_t off = 0;
  uint32_t cwnd = 10 * 1460;
  for (int round = 0; round < rounds; ++round) {
    const uint32_t burst = std::min(cwnd, rig.r.receive_window());
    for (uint32_t sent = 0; sent + 1460 <= burst; sent += 1460) {
      rig.advance(Duration::us(20));
      if (rig.data(off, 1460).ack_now) res.max_field = std::max<uint32_t>(res.max_field, rig.send_ack());
      off += 1460;
      rig.read(1460);
    }
    if (rig.r.ack_pending()) res.max_field = std::max<uint32_t>(res.max_field, rig.send_ack());
    rig.advance(Duration::ms(10));
    cwnd *= 2;
  }
  res.rcvbuf = rig.r.rcvbuf();
  res.clamp = rig.r.window_clamp();
  rig.r.fill_info(res.info);
  return res;
}

TEST(RcvWindow, AutotuningGrowsTheBufferUpToTcpRmemMax) {
  ReceiverConfig cfg = linux_defaults();
  cfg.tcp_rmem[2] = 1u << 20;
  const AutotuneResult r = run_autotune(cfg, RigOptions{}, 14);
  EXPECT_EQ(r.rcvbuf, 1u << 20);  // grew, and stopped exactly at the limit
  EXPECT_EQ(r.clamp, (1u << 20) / 2);
  EXPECT_GT(r.info.tcpi_rcv_rtt, 0u);
  EXPECT_LT(r.info.tcpi_rcv_rtt, 100000u);
  EXPECT_GT(r.info.tcpi_rcv_space, 10u * 1460);
  EXPECT_GT(r.max_field << 7, 65536u);  // the announced window grew too
}

TEST(RcvWindow, AutotuningWithoutScalingNeverPassesSixteenBits) {
  RigOptions o;
  o.wscale_ok = false;
  const AutotuneResult r = run_autotune(linux_defaults(), o, 12);
  EXPECT_GT(r.rcvbuf, 131072u);
  EXPECT_EQ(r.clamp, 65535u);
  EXPECT_LE(r.max_field, 65535u);
}

TEST(RcvWindow, SoRcvbufTurnsAutotuningOff) {
  RigOptions o;
  o.rcvbuf = 100000;
  const AutotuneResult r = run_autotune(linux_defaults(), o, 12);
  EXPECT_EQ(r.rcvbuf, 200000u);
}

TEST(RcvWindow, ModerateRcvbufOffKeepsTheBuffer) {
  ReceiverConfig cfg = linux_defaults();
  cfg.tcp_moderate_rcvbuf = false;
  const AutotuneResult r = run_autotune(cfg, RigOptions{}, 12);
  EXPECT_EQ(r.rcvbuf, 131072u);
}

}  // namespace
}  // namespace weir::tcp
