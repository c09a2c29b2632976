// The seed faults (StackConfig::fault_seed*) and route_quickack: set by
// their sysctl-style keys, off by default, and each reaches the code it
// switches. The faults' effects are pinned next to the tests they break
// (seed_window_test, undo_test, scoreboard_seed002_test, hystart_test) and
// in the lab's contrasts.
#include <gtest/gtest.h>

#include "tcp/cc/cc.h"
#include "tcp/harness_helper.h"
#include "weir/config.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

TEST(SeedFaults, OffByDefaultAndSetByTheirKeys) {
  StackConfig c;
  EXPECT_FALSE(c.fault_seed000_usable_wraps || c.fault_seed001_rcv_wnd_unclamped ||
               c.fault_seed002_sacked_acked_leak || c.fault_seed003_undo_without_proof ||
               c.fault_seed004_hystart_round_start || c.route_quickack);
  for (const char* k : {"fault_seed000_usable_wraps", "fault_seed001_rcv_wnd_unclamped", "fault_seed002_sacked_acked_leak",
                        "fault_seed003_undo_without_proof", "fault_seed004_hystart_round_start", "route_quickack"})
    EXPECT_EQ(c.set(k, "1"), "") << k;
  EXPECT_TRUE(c.fault_seed000_usable_wraps && c.fault_seed001_rcv_wnd_unclamped && c.fault_seed002_sacked_acked_leak &&
              c.fault_seed003_undo_without_proof && c.fault_seed004_hystart_round_start && c.route_quickack);
  EXPECT_NE(c.set("fault_seed005_none", "1"), "");
}

TEST(SeedFaults, Seed004KeyReachesCubicsHystart) {
  StackConfig c;
  EXPECT_FALSE(weir::cc::options_from(c).hystart_seed004_bug);
  c.fault_seed004_hystart_round_start = true;
  EXPECT_TRUE(weir::cc::options_from(c).hystart_seed004_bug);
}

// Counts the immediate ACKs for 40 full segments arriving 1 ms apart, well
// after the handshake's quick-ACK credit is spent.
int immediate_acks(bool route_quickack) {
  StackConfig cfg;
  cfg.route_quickack = route_quickack;
  Harness t(cfg);
  SocketId s = t.passive_open(PeerOpts{});
  if (s == kNoSocket) return -1;
  std::vector<uint8_t> sink(1 << 20);
  uint32_t seq = 1;
  int acks = 0;
  for (int i = 0; i < 60; ++i) {
    t.advance(Duration::ms(1));
    t.inject(ACK, seq, 1, 1448);
    seq += 1448;
    t.stack().recv(t.now(), s, sink);
    bool acked = false;
    while (t.pending()) acked |= t.expect_tx().h.ack == t.peer_isn_ + seq;
    if (i >= 20) acks += acked;
  }
  return acks;
}

// Linux tcp_in_quickack_mode: a route with the quickack metric ACKs every
// segment; without it, every second one (RFC 9293 §3.8.6.3).
TEST(SeedFaults, RouteQuickackAcksEverySegment) {
  EXPECT_EQ(immediate_acks(true), 40);
  EXPECT_EQ(immediate_acks(false), 20);
}

}  // namespace
}  // namespace weir::test
