// Linux tcp_ack's sk_dst_confirm: which ACKs confirm the next hop's
// reachability (RFC 4861 §7.3.1's upper-layer hint), and that the
// confirmation rides on the next packet out (Netif::confirm_neighbor).
#include <gtest/gtest.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

// A passive open with 4 full segments in flight and the capture emptied;
// the handshake's own confirmation (its ACK acknowledged our SYN-ACK)
// rode on the first data segment and is forgotten.
SocketId four_in_flight(Harness& t) {
  SocketId s = t.passive_open();
  write(t, s, 1448 * 4);
  while (t.pending()) t.expect_tx();
  t.nif().confirms.clear();
  return s;
}

// An ACK from the peer acknowledging `ack` (relative), with SACK blocks
// [from, to) relative to our ISN + 1 when `to` > 0.
void ack_with_sack(Harness& t, uint32_t ack, uint32_t from = 0, uint32_t to = 0, uint16_t win = 65535) {
  wire::TcpHeader h;
  h.src_port = t.remote_port;
  h.dst_port = t.local_port;
  h.seq = t.peer_isn_ + 1;
  h.ack = t.iss_ + ack;
  h.flags = ACK;
  h.window = win;
  h.options.ts = wire::TcpTimestamps{t.peer_tsval + static_cast<uint32_t>(t.now().ms()), t.last_tsval};
  if (to > 0) h.options.add_sack(SeqRange{t.iss_ + 1 + from, t.iss_ + 1 + to});
  t.inject_raw(h);
}

TEST(NeighborConfirm, AnAckAdvancingSndUnaConfirmsOnTheNextPacketOut) {
  Harness t;
  SocketId s = four_in_flight(t);
  t.advance(Duration::ms(1));
  t.inject(ACK, 1, 1 + 1448);
  EXPECT_TRUE(t.nif().confirms.empty()) << "pending until a packet goes out";
  ASSERT_EQ(t.pending(), 0u);
  write(t, s, 100);
  ASSERT_EQ(t.nif().confirms.size(), 1u);
  EXPECT_EQ(t.nif().confirms[0].first, t.remote);
  EXPECT_EQ(t.nif().confirms[0].second, 0u) << "rides on the first packet after the ACK";
  ASSERT_GE(t.pending(), 1u);
  // Once: the packets after it carry nothing.
  write(t, s, 100);
  EXPECT_EQ(t.nif().confirms.size(), 1u);
}

TEST(NeighborConfirm, NewlySackedDataConfirms) {
  Harness t;
  four_in_flight(t);
  t.advance(Duration::ms(1));
  ack_with_sack(t, 1, 1448, 2 * 1448);  // FLAG_DATA_SACKED, SND.UNA unchanged
  t.advance(Duration::s(1));            // the RTO or RACK sends something
  ASSERT_GE(t.pending(), 1u);
  EXPECT_EQ(t.nif().confirms.size(), 1u);
}

TEST(NeighborConfirm, APureDuplicateAckConfirms) {
  Harness t;
  SocketId s = four_in_flight(t);
  t.advance(Duration::ms(1));
  ack_with_sack(t, 1);  // no data, same window, nothing acked: !FLAG_NOT_DUP
  write(t, s, 100);
  EXPECT_EQ(t.nif().confirms.size(), 1u);
}

TEST(NeighborConfirm, DataWithoutProgressOrAWindowUpdateDoesNotConfirm) {
  Harness t;
  SocketId s = four_in_flight(t);
  t.advance(Duration::ms(1));
  t.inject(ACK, 1, 1, 100);  // peer data, our data still unacknowledged: FLAG_DATA
  ack_with_sack(t, 1, 0, 0, 30000);  // a window update alone: FLAG_WIN_UPDATE
  t.advance(Duration::ms(100));  // the delayed ACK goes out
  write(t, s, 100);
  EXPECT_TRUE(t.nif().confirms.empty());
}

TEST(NeighborConfirm, NothingOutstandingConfirmsNothing) {
  Harness t;
  SocketId s = four_in_flight(t);
  t.advance(Duration::ms(1));
  t.inject(ACK, 1, 1 + 4 * 1448);  // everything acknowledged: a confirmation pends
  t.inject(ACK, 1, 1 + 4 * 1448, 100);
  t.advance(Duration::ms(100));  // our ACK of the peer's data carries it
  ASSERT_EQ(t.nif().confirms.size(), 1u);
  t.clear_tx();
  t.nif().confirms.clear();
  // tcp_ack's no_queue path: a duplicate ACK with nothing in flight.
  t.advance(Duration::ms(1));
  t.inject(ACK, 101, 1 + 4 * 1448);
  write(t, s, 100);
  ASSERT_GE(t.pending(), 1u);
  EXPECT_TRUE(t.nif().confirms.empty());
}

}  // namespace
}  // namespace weir::test
