// CopyTx (link/packet_copy_tx.h), the slot array of --packet-tx copy,
// against a scripted sendmmsg: frames go out in order and intact, a
// partial send or EAGAIN/ENOBUFS keeps the unsent frames for the next
// flush, a refusal for good loses only the frame refused, a burst longer
// than one sendmmsg takes several, and every bound holds. No socket.
#include "link/packet_copy_tx.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <vector>

#include "link/packet_ring.h"

namespace weir::link {
namespace {

// What the fake kernel does at each call: take `take` messages (-1: all),
// or fail with `err` having taken none.
struct Step {
  int take = -1;
  int err = 0;
};

struct FakeKernel {
  std::deque<Step> script;             // consumed front first; empty: take all
  std::vector<std::vector<uint8_t>> wire;  // the frames taken, in order
  std::vector<unsigned> asked;         // n of each call
};
FakeKernel* fake = nullptr;

int fake_sendmmsg(int, mmsghdr* msgs, unsigned n, int flags) {
  EXPECT_EQ(flags & MSG_DONTWAIT, MSG_DONTWAIT);
  fake->asked.push_back(n);
  Step s;
  if (!fake->script.empty()) s = fake->script.front(), fake->script.pop_front();
  if (s.err) return errno = s.err, -1;
  const unsigned take = s.take < 0 ? n : static_cast<unsigned>(s.take);
  for (unsigned i = 0; i < take; ++i) {
    const msghdr& h = msgs[i].msg_hdr;
    EXPECT_EQ(h.msg_iovlen, 1u);
    EXPECT_EQ(h.msg_name, nullptr);
    const auto* p = static_cast<const uint8_t*>(h.msg_iov[0].iov_base);
    fake->wire.emplace_back(p, p + h.msg_iov[0].iov_len);
  }
  return static_cast<int>(take);
}

std::vector<uint8_t> frame(uint32_t seq, size_t len = 100) {
  std::vector<uint8_t> f(len);
  for (size_t i = 0; i < len; ++i) f[i] = static_cast<uint8_t>(seq * 7 + i);
  return f;
}

class CopyTxTest : public ::testing::Test {
 protected:
  void SetUp() override { fake = &k; }
  void TearDown() override { fake = nullptr; }
  // Queues frames [from, to) on `tx`, each accepted.
  void put(CopyTx& tx, uint32_t from, uint32_t to) {
    for (uint32_t i = from; i < to; ++i) ASSERT_EQ(tx.put(frame(i), st), XmitResult::kSent) << i;
  }
  void put_long(CopyTx& tx, uint32_t i) { ASSERT_EQ(tx.put(frame(i, 40000), st), XmitResult::kSent) << i; }
  // The wire holds frames [0, n) in order, intact, each once.
  void expect_wire(uint32_t n) {
    ASSERT_EQ(k.wire.size(), n);
    for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(k.wire[i], frame(i)) << i;
  }
  FakeKernel k;
  PacketRingStats st;
};

TEST_F(CopyTxTest, ABurstGoesInOneCallInOrderAndIntact) {
  CopyTx tx(8, 1514, fake_sendmmsg);
  put(tx, 0, 5);
  EXPECT_EQ(tx.pending(), 5u);
  tx.flush(3, st);
  expect_wire(5);
  EXPECT_EQ(k.asked, std::vector<unsigned>{5});
  EXPECT_EQ(tx.pending(), 0u);
  EXPECT_EQ(st.tx_frames, 5u);
  EXPECT_EQ(st.tx_bytes, 500u);
  EXPECT_EQ(st.tx_sends, 1u);
  EXPECT_EQ(st.tx_send_errors, 0u);
  tx.flush(3, st);  // nothing queued: no call
  EXPECT_EQ(st.tx_sends, 1u);
}

TEST_F(CopyTxTest, APartialSendKeepsTheRestForTheNextFlush) {
  CopyTx tx(8, 1514, fake_sendmmsg);
  put(tx, 0, 6);
  k.script = {{2, 0}};
  tx.flush(3, st);
  EXPECT_EQ(k.wire.size(), 2u);
  EXPECT_EQ(tx.pending(), 4u);
  EXPECT_EQ(st.tx_send_errors, 1u);
  // The freed slots take new frames behind the kept ones (the array wraps).
  put(tx, 6, 10);
  EXPECT_EQ(tx.pending(), 8u);
  tx.flush(3, st);
  expect_wire(10);
  EXPECT_EQ(tx.pending(), 0u);
}

TEST_F(CopyTxTest, EagainAndEnobufsKeepEveryFrame) {
  CopyTx tx(8, 1514, fake_sendmmsg);
  put(tx, 0, 4);
  k.script = {{0, ENOBUFS}, {0, EAGAIN}};
  tx.flush(3, st);
  EXPECT_EQ(tx.pending(), 4u);
  tx.flush(3, st);
  EXPECT_EQ(tx.pending(), 4u);
  EXPECT_TRUE(k.wire.empty());
  EXPECT_EQ(st.tx_send_errors, 2u);
  tx.flush(3, st);
  expect_wire(4);
  EXPECT_EQ(st.tx_send_dropped, 0u);
}

TEST_F(CopyTxTest, ARefusalForGoodLosesOnlyTheFrameRefused) {
  CopyTx tx(8, 1514, fake_sendmmsg);
  put(tx, 0, 4);
  k.script = {{0, EMSGSIZE}};
  tx.flush(3, st);  // frame 0 refused; the flush goes on with 1..3
  ASSERT_EQ(k.wire.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(k.wire[i], frame(i + 1));
  EXPECT_EQ(st.tx_send_dropped, 1u);
  EXPECT_EQ(tx.pending(), 0u);
}

TEST_F(CopyTxTest, ABurstLongerThanOneCallTakesSeveral) {
  CopyTx tx(3000, 1514, fake_sendmmsg);
  put(tx, 0, 3000);
  tx.flush(3, st);
  expect_wire(3000);
  EXPECT_EQ(k.asked, (std::vector<unsigned>{1024, 1024, 952}));
  EXPECT_EQ(st.tx_sends, 3u);
}

TEST_F(CopyTxTest, FullSlotsRefuseAndOversizeFramesAreLost) {
  CopyTx tx(4, 1514, fake_sendmmsg);
  put(tx, 0, 4);
  EXPECT_EQ(tx.put(frame(4), st), XmitResult::kDropped);
  EXPECT_EQ(st.tx_ring_full, 1u);
  EXPECT_EQ(tx.put(frame(5, 1515), st), XmitResult::kSent);  // lost, as on a wire
  EXPECT_EQ(st.tx_oversize, 1u);
  EXPECT_EQ(tx.pending(), 4u);
  EXPECT_EQ(st.tx_frames, 4u);
  tx.flush(3, st);
  expect_wire(4);
  EXPECT_EQ(tx.put(frame(4), st), XmitResult::kSent);  // the slots came back
}

// With PACKET_VNET_HDR every message is the virtio_net_hdr and the frame,
// and a message may be a super-packet far longer than a slot.
std::vector<uint8_t> with_vnet(const VnetHdr& h, const std::vector<uint8_t>& f) {
  std::vector<uint8_t> m(kVnetLen);
  encode_vnet(h, m.data());
  m.insert(m.end(), f.begin(), f.end());
  return m;
}

TEST_F(CopyTxTest, VnetMessagesCarryTheHeaderAndMayBeSuperPackets) {
  CopyTx tx(64, 1514, fake_sendmmsg, true);
  EXPECT_EQ(tx.max_frame(), 14u + 65535u);
  const VnetHdr gso{1, 1, 66, 1448, 34, 16};
  ASSERT_EQ(tx.put(frame(0), st), XmitResult::kSent);
  ASSERT_EQ(tx.put(frame(1, 40000), st, gso), XmitResult::kSent);
  EXPECT_EQ(tx.put(frame(2, 14 + 65536), st, gso), XmitResult::kSent);  // longer than 64 KB of IP: lost
  EXPECT_EQ(st.tx_oversize, 1u);
  tx.flush(3, st);
  ASSERT_EQ(k.wire.size(), 2u);
  EXPECT_EQ(k.wire[0], with_vnet(VnetHdr{}, frame(0)));
  EXPECT_EQ(k.wire[1], with_vnet(gso, frame(1, 40000)));
  EXPECT_EQ(st.tx_bytes, 40100u) << "frame bytes, not the headers";
}

// The bytes bound long messages: 64 slots of 1514 bytes (+ a header each)
// hold two 40 KB messages but not three; a message that does not fit
// before the end starts at the front once the kernel took the one there.
TEST_F(CopyTxTest, VnetBytesBoundLongMessagesAndWrapWhole) {
  CopyTx tx(64, 1514, fake_sendmmsg, true);
  put_long(tx, 0), put_long(tx, 1);
  EXPECT_EQ(tx.put(frame(2, 40000), st), XmitResult::kDropped) << "2 of 64 messages, but the bytes are taken";
  EXPECT_EQ(st.tx_ring_full, 1u);
  k.script = {{1, 0}};
  tx.flush(3, st);  // the kernel takes only the first
  ASSERT_EQ(tx.pending(), 1u);
  put_long(tx, 2);  // not before the end: at the front, where the first was
  EXPECT_EQ(tx.put(frame(3, 100), st), XmitResult::kDropped) << "the front is full up to the second";
  tx.flush(3, st);
  ASSERT_EQ(k.wire.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(k.wire[i], with_vnet(VnetHdr{}, frame(i, 40000))) << i;
  EXPECT_EQ(tx.pending(), 0u);
  put_long(tx, 4);  // empty again: everything is free
}

// A GSO run is built in place: open() lends room behind the queued
// messages, close() queues what was written there, in order with the rest.
TEST_F(CopyTxTest, AnOpenMessageIsBuiltInPlaceAndQueuedInOrder) {
  CopyTx plain(8, 1514, fake_sendmmsg);
  EXPECT_EQ(plain.open(1000), nullptr) << "runs need the vnet header";
  CopyTx tx(64, 1514, fake_sendmmsg, true);
  ASSERT_EQ(tx.put(frame(0), st), XmitResult::kSent);
  uint8_t* at = tx.open(65549);
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(tx.open(100), nullptr) << "one open message at a time";
  const auto run = frame(1, 30000);
  std::copy(run.begin(), run.end(), at);
  const VnetHdr gso{1, 1, 66, 1448, 34, 16};
  tx.close(gso, run.size(), st);
  ASSERT_EQ(tx.put(frame(2), st), XmitResult::kSent);
  tx.flush(3, st);
  ASSERT_EQ(k.wire.size(), 3u);
  EXPECT_EQ(k.wire[0], with_vnet(VnetHdr{}, frame(0)));
  EXPECT_EQ(k.wire[1], with_vnet(gso, run));
  EXPECT_EQ(k.wire[2], with_vnet(VnetHdr{}, frame(2)));
  EXPECT_EQ(st.tx_frames, 3u);
  EXPECT_EQ(st.tx_bytes, 30200u);
}

TEST(CopyTxGeometry, SlotsAreBounded) {
  PacketRingConfig c;
  auto g = copy_tx_geometry(c, 1514);
  ASSERT_TRUE(g) << g.error();
  EXPECT_EQ(g->frame_count, 1024u);
  EXPECT_EQ(g->frame_size, 1514u);
  EXPECT_EQ(g->bytes(), 1024u * 1514u);
  c.tx_frame_count = kMaxRingFrames;  // 1 Mi slots of 1514 bytes: over 1 GiB
  EXPECT_FALSE(copy_tx_geometry(c, 1514));
  c.tx_frame_count = 0;
  EXPECT_FALSE(copy_tx_geometry(c, 1514));
  c.tx_frame_count = kMaxRingFrames + 1;
  EXPECT_FALSE(copy_tx_geometry(c, 64));
}

}  // namespace
}  // namespace weir::link
