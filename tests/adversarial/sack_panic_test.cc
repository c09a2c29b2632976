// The SACK-panic class (Linux CVE-2019-11477, -11478, -11479): a peer that
// advertises a tiny MSS, SACKs pieces of packets so as to fragment the
// retransmission queue, or SACKs every other packet. The send MSS never goes
// below tcp_min_snd_mss (48), SACK blocks never split a queued packet (only
// whole packets are credited, Linux tcp_match_skb_to_sack), so the
// scoreboard holds at most one entry per packet sent and each ACK does work
// bounded by its blocks.
#include <gtest/gtest.h>

#include "adversarial/adv_helper.h"
#include "tcp/harness_helper.h"
#include "tcp/scoreboard.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

// An ACK from the peer carrying SACK blocks (relative to our ISN).
void sack_ack(Harness& h, uint32_t ack, std::initializer_list<std::pair<uint32_t, uint32_t>> blocks,
              uint16_t win = 65535) {
  wire::TcpHeader t;
  t.src_port = h.remote_port;
  t.dst_port = h.local_port;
  t.seq = h.peer_isn_ + 1;
  t.ack = h.iss_ + ack;
  t.flags = ACK;
  t.window = win;
  for (auto [b, e] : blocks) t.options.add_sack(SeqRange{h.iss_ + b, h.iss_ + e});
  h.inject_raw(t);
}

PeerOpts peer(uint16_t mss) {
  PeerOpts o;
  o.mss = mss;
  o.ts = false;
  return o;
}

// Sends `n` bytes from the app and collects what goes out now.
std::vector<Tx> write_and_collect(Harness& h, SocketId s, size_t n) {
  std::vector<uint8_t> data(n, 0x5a);
  size_t off = 0;
  while (off < n) {
    auto w = h.stack().send(h.now(), s, std::span(data).subspan(off));
    if (!w || *w == 0) break;
    off += *w;
  }
  std::vector<Tx> out;
  while (h.pending()) out.push_back(h.expect_tx());
  return out;
}

TEST(SackPanic, TinyAdvertisedMssIsRaisedToMinSndMss) {
  for (uint16_t adv : {1, 8, 40, 47}) {
    Harness h;
    const SocketId s = h.active_open(peer(adv));
    auto ti = h.stack().tcp_info(s);
    ASSERT_TRUE(ti);
    EXPECT_EQ(ti->tcpi_snd_mss, 48u) << "peer MSS " << adv;
    auto segs = write_and_collect(h, s, 4800);
    ASSERT_FALSE(segs.empty());
    for (const Tx& t : segs) EXPECT_LE(t.payload.size(), 48u);
    EXPECT_EQ(segs.front().payload.size(), 48u) << "segments are never smaller than the minimum";
    if (adv == 1) measured("sackpanic.min_snd_mss", ti->tcpi_snd_mss);
  }
}

// CVE-2019-11478: blocks covering odd bytes inside every packet would cut
// the queue into one-byte pieces. Nothing is credited, nothing is split.
TEST(SackPanic, SackingEveryOtherByteDoesNotFragmentTheQueue) {
  Harness h;
  const SocketId s = h.active_open(peer(1460));
  auto segs = write_and_collect(h, s, 10 * 1460);
  ASSERT_EQ(segs.size(), 10u);
  const uint32_t entries0 = h.stack().tcp_info(s)->tcpi_unacked;
  uint64_t replies = 0;
  const int kAcks = 5000;
  for (int i = 0; i < kAcks; ++i) {
    const uint32_t base = 1 + 2 * static_cast<uint32_t>(i % 7000) + 1;
    sack_ack(h, 1, {{base, base + 1}, {base + 2, base + 3}, {base + 4, base + 5}});
    replies += h.pending();
    h.clear_tx();
    h.advance(Duration::us(10));
  }
  auto ti = h.stack().tcp_info(s);
  measured("sackpanic.byte_sacks.entries_after", ti->tcpi_unacked);
  measured("sackpanic.byte_sacks.segments_out_per_ack", static_cast<double>(replies) / kAcks);
  EXPECT_EQ(ti->tcpi_unacked, entries0) << "SACK blocks never split a packet";
  EXPECT_EQ(ti->tcpi_sacked, 0u) << "a packet is SACKed only when covered whole";
  // At most the lost-marked packets are retransmitted once each, plus a
  // window's worth of new data: the ACK flood does not multiply output.
  EXPECT_LE(replies, 2u * entries0);
  // The connection is alive and completes once the peer acknowledges.
  sack_ack(h, 1 + 10 * 1460, {});
  EXPECT_EQ(h.stack().tcp_info(s)->tcpi_unacked, 0u);
  EXPECT_EQ(h.stack().tcp_info(s)->tcpi_state, 1);
}

// SACKing every other packet: the scoreboard holds one entry per packet
// sent (memory bounded by the send buffer / MSS) and each packet is
// credited once however often the blocks are repeated.
TEST(SackPanic, SackingEveryOtherPacketCreditsEachPacketOnce) {
  Harness h;
  const SocketId s = h.active_open(peer(48));
  // Grow the window: acknowledge flights until 400 packets are out.
  uint32_t una = 1;
  auto flight = write_and_collect(h, s, 400 * 48);
  for (int round = 0; round < 12; ++round) {
    const uint32_t nxt = h.rel_seq(flight.back()) + static_cast<uint32_t>(flight.back().payload.size());
    if (h.stack().tcp_info(s)->tcpi_unacked >= 200) break;
    una = nxt;
    sack_ack(h, una, {});
    auto more = write_and_collect(h, s, 400 * 48);
    while (h.pending()) more.push_back(h.expect_tx());
    if (!more.empty()) flight = more;
    h.advance(Duration::ms(1));
  }
  h.clear_tx();
  const uint32_t n = h.stack().tcp_info(s)->tcpi_unacked;
  ASSERT_GE(n, 100u);
  // Every other packet SACKed, four blocks per ACK, walking the window, then
  // the same blocks again many times (duplicate SACKs).
  uint64_t acks = 0;
  for (int rep = 0; rep < 20; ++rep) {
    for (uint32_t k = 1; k + 8 <= n; k += 8) {
      auto blk = [&](uint32_t j) { return std::pair{una + (k + j) * 48, una + (k + j + 1) * 48}; };
      sack_ack(h, una, {blk(0), blk(2), blk(4), blk(6)});
      ++acks;
      h.clear_tx();
    }
  }
  auto ti = h.stack().tcp_info(s);
  const size_t entry_bytes = sizeof(tcp::ScoreboardEntry);
  measured("sackpanic.every_other.acks", static_cast<double>(acks));
  measured("sackpanic.every_other.entries", ti->tcpi_unacked);
  measured("sackpanic.every_other.sacked", ti->tcpi_sacked);
  measured("sackpanic.every_other.scoreboard_bytes", static_cast<double>(ti->tcpi_unacked * entry_bytes));
  EXPECT_EQ(ti->tcpi_unacked, n) << "one entry per packet, never more";
  // At most the odd packets; at least a quarter (a send() that returned
  // short can leave one packet off the 48-byte grid the blocks assume).
  EXPECT_LE(ti->tcpi_sacked, n / 2 + 1);
  EXPECT_GE(ti->tcpi_sacked, n / 4);
  // Memory per connection: the send buffer's bytes over the minimum MSS
  // entries at most (4 MB / 48 with the largest tcp_wmem).
  EXPECT_LE(static_cast<uint64_t>(ti->tcpi_unacked), 4194304u / 48u);
  EXPECT_EQ(ti->tcpi_state, 1);
}

}  // namespace
}  // namespace weir::test
