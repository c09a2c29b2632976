// Out-of-order floods and a peer that never fills the hole: what the
// receiver holds (queued bytes plus a per-range overhead, Linux's truesize
// idea) never exceeds its receive buffer; pruning (Linux
// tcp_prune_ofo_queue: highest ranges first) or dropping the new segment
// (TcpExtTCPOFODrop) keeps it there, and the connection lives on: once the
// hole is filled, the stream continues byte-exact.
#include <gtest/gtest.h>

#include <random>

#include "adversarial/adv_helper.h"
#include "tcp/harness_helper.h"
#include "tcp/rcv_rig.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;
using tcp::testing::Rig;

TEST(OfoFlood, ReassemblyMemoryStaysWithinTheReceiveBuffer) {
  Rig rig(tcp::testing::linux_defaults());
  std::mt19937_64 rng(11);
  uint64_t max_charged = 0;
  const uint32_t wnd = rig.r.receive_window();
  ASSERT_GT(wnd, 4000u);
  // 50 000 segments anywhere in the window but never at offset 0: large
  // ones, and tiny ones (one byte every other byte) that cost a range each.
  for (int i = 0; i < 50000; ++i) {
    const bool tiny = i % 100 != 0;
    const uint32_t off = 2 + static_cast<uint32_t>(rng() % (wnd - 1500));
    rig.data(tiny ? off | 1 : off, tiny ? 1 : 1 + static_cast<uint32_t>(rng() % 1460));
    max_charged = std::max(max_charged, (rig.r.readable() + rig.r.ofo().mem()));
    ASSERT_LE((rig.r.readable() + rig.r.ofo().mem()), rig.r.rcvbuf()) << "after segment " << i;
  }
  measured("ofo.rcvbuf", rig.r.rcvbuf());
  measured("ofo.max_charged_bytes", static_cast<double>(max_charged));
  measured("ofo.ofo_drops", static_cast<double>(rig.c.get(Counter::TcpExtTCPOFODrop)));
  EXPECT_GT(max_charged, rig.r.rcvbuf() * 3 / 4) << "the flood must have reached the limit";
  // The hole fills: everything held next to it becomes readable, in order
  // and intact, and new data is still accepted.
  rig.data(0, 1);
  const size_t readable = rig.r.readable();
  ASSERT_GE(readable, 1u);
  std::vector<uint8_t> buf(readable);
  ASSERT_EQ(rig.r.read(rig.now(), buf, false, rig.c).bytes, readable);
  for (size_t i = 0; i < readable; ++i) ASSERT_EQ(buf[i], Rig::byte_at(static_cast<uint32_t>(i))) << i;
  const uint32_t next = static_cast<uint32_t>(rig.r.rcv_nxt() - rig.seq(0));
  EXPECT_GT(rig.data(next, 1000).in_order, 0u) << "the connection takes new in-order data";
}

// Linux's prune counters (tcp_prune_queue, tcp_prune_ofo_queue): every
// attempt to make room counts TcpExtPruneCalled; one that drops held ranges
// counts TcpExtOfoPruned; one that still finds no room counts
// TcpExtRcvPruned (and the segment is dropped, TcpExtTCPOFODrop). Ranges are
// pruned only above where the new segment lands.
TEST(OfoFlood, PruningIsCountedAsLinuxCountsIt) {
  Rig rig(tcp::testing::linux_defaults());
  const uint32_t wnd = rig.r.receive_window();
  auto get = [&](Counter k) { return rig.c.get(k); };
  // Ascending one-byte segments, each its own range: once the buffer is
  // full, every new one lands above all held ranges, so nothing may be
  // pruned and the segment itself goes.
  uint32_t off = 3;
  while (get(Counter::TcpExtPruneCalled) == 0 && off + 2 < wnd) {
    rig.data(off, 1);
    off += 2;
  }
  ASSERT_EQ(get(Counter::TcpExtPruneCalled), 1u) << "the flood reached the buffer";
  for (int i = 0; i < 10; ++i, off += 2) EXPECT_EQ(rig.data(off, 1).drop, tcp::RcvDrop::kNoMemory);
  EXPECT_EQ(get(Counter::TcpExtPruneCalled), 11u);
  EXPECT_EQ(get(Counter::TcpExtRcvPruned), 11u);
  EXPECT_EQ(get(Counter::TcpExtTCPOFODrop), 11u);
  EXPECT_EQ(get(Counter::TcpExtOfoPruned), 0u) << "nothing above the new segment to prune";
  // A segment below the held ranges: the highest ranges make room for it.
  const uint64_t held = rig.r.ofo().mem();
  EXPECT_EQ(rig.data(1, 1).drop, tcp::RcvDrop::kNone);
  EXPECT_EQ(get(Counter::TcpExtPruneCalled), 12u);
  EXPECT_EQ(get(Counter::TcpExtOfoPruned), 1u);
  EXPECT_EQ(get(Counter::TcpExtRcvPruned), 11u) << "room was made";
  EXPECT_LE(rig.r.ofo().mem(), held);
  // In-order data into a full buffer prunes out-of-order data too (Linux
  // tcp_data_queue -> tcp_try_rmem_schedule); it is taken.
  EXPECT_GE(rig.data(0, 1000).in_order, 1000u);
  EXPECT_EQ(get(Counter::TcpExtPruneCalled), 13u);
  EXPECT_EQ(get(Counter::TcpExtOfoPruned), 2u);
  measured("ofo.prune_called", static_cast<double>(get(Counter::TcpExtPruneCalled)));
  measured("ofo.ofo_pruned", static_cast<double>(get(Counter::TcpExtOfoPruned)));
  measured("ofo.rcv_pruned", static_cast<double>(get(Counter::TcpExtRcvPruned)));
}

// The same through the stack: a flood beyond any hole for ten receive
// buffers' worth of data, then the missing segment and a retransmission of
// what was pruned; the application reads the exact stream.
TEST(OfoFlood, PeerThatNeverFillsTheHoleDoesNotKillTheConnection) {
  Harness h;
  PeerOpts o;
  o.ts = false;
  const SocketId s = h.passive_open(o);
  auto bytes = [](uint32_t from, uint32_t len) {
    std::vector<uint8_t> p(len);
    for (uint32_t i = 0; i < len; ++i) p[i] = static_cast<uint8_t>((from + i) * 7 + 3);
    return p;
  };
  std::mt19937_64 rng(12);
  const uint32_t kSpan = 120000;  // within the advertised window
  for (int i = 0; i < 20000; ++i) {
    const uint32_t off = 1000 + static_cast<uint32_t>(rng() % kSpan);
    const uint32_t len = 1 + static_cast<uint32_t>(rng() % 1000);
    h.inject_payload(ACK, 1 + off, 1, bytes(off, len));
    h.clear_tx();
  }
  const ConnSnapshot mid = snapshot(h.stack(), s);
  EXPECT_EQ(mid.state, 1);
  measured("ofo.stack.ofo_queued", static_cast<double>(counter(h.stack(), Counter::TcpExtTCPOFOQueue)));
  measured("ofo.stack.ofo_drops", static_cast<double>(counter(h.stack(), Counter::TcpExtTCPOFODrop)));
  // The peer finally sends the stream in order (as its retransmissions would).
  std::vector<uint8_t> got, want = bytes(0, kSpan);
  for (uint32_t off = 0; off < kSpan; off += 1000) {
    h.inject_payload(ACK, 1 + off, 1, bytes(off, 1000));
    drain(h.stack(), h.now(), s, got);
    h.clear_tx();
  }
  drain(h.stack(), h.now(), s, got);
  ASSERT_GE(got.size(), kSpan);
  got.resize(kSpan);
  EXPECT_EQ(got, want);
  EXPECT_EQ(snapshot(h.stack(), s).state, 1);
}

}  // namespace
}  // namespace weir::test
