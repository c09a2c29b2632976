// CopyRx (link/packet_copy_rx.h), the receive side of --ring-rx copy,
// against a scripted recvmmsg: frames reach the driver in order and intact
// with the ring's verdicts (the packet type from the sockaddr_ll, the
// checksum and VLAN bits and the length from PACKET_AUXDATA, truncation
// from MSG_TRUNC), a drain reads at most its limit and says whether it
// stopped there, and an empty socket costs one call. No socket.
#include "link/packet_copy_rx.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <vector>

namespace weir::link {
namespace {

struct Queued {
  std::vector<uint8_t> bytes;
  uint8_t pkttype = PACKET_HOST;
  uint32_t status = TP_STATUS_USER;
  bool aux = true;
};

struct FakeSocket {
  std::deque<Queued> queue;
  std::vector<unsigned> asked;  // n of each call
};
FakeSocket* fake = nullptr;

// What packet_recvmsg does per message: copy up to the iovec (MSG_TRUNC in
// msg_flags when cut), the sender's sockaddr_ll, and with PACKET_AUXDATA a
// tpacket_auxdata control message.
int fake_recvmmsg(int, mmsghdr* msgs, unsigned n, int flags, timespec*) {
  EXPECT_EQ(flags & MSG_DONTWAIT, MSG_DONTWAIT);
  fake->asked.push_back(n);
  if (fake->queue.empty()) return errno = EAGAIN, -1;
  unsigned i = 0;
  for (; i < n && !fake->queue.empty(); ++i) {
    Queued q = fake->queue.front();
    fake->queue.pop_front();
    msghdr& h = msgs[i].msg_hdr;
    const size_t room = h.msg_iov[0].iov_len;
    const size_t copied = std::min(room, q.bytes.size());
    std::memcpy(h.msg_iov[0].iov_base, q.bytes.data(), copied);
    msgs[i].msg_len = static_cast<unsigned>(copied);
    h.msg_flags = copied < q.bytes.size() ? MSG_TRUNC : 0;
    EXPECT_GE(h.msg_namelen, sizeof(sockaddr_ll));
    auto* ll = static_cast<sockaddr_ll*>(h.msg_name);
    *ll = {};
    ll->sll_pkttype = q.pkttype;
    if (!q.aux) {
      h.msg_controllen = 0;
      continue;
    }
    EXPECT_GE(h.msg_controllen, CMSG_SPACE(sizeof(tpacket_auxdata)));
    cmsghdr* c = CMSG_FIRSTHDR(&h);
    c->cmsg_level = SOL_PACKET;
    c->cmsg_type = PACKET_AUXDATA;
    c->cmsg_len = CMSG_LEN(sizeof(tpacket_auxdata));
    tpacket_auxdata a{};
    a.tp_status = q.status;
    a.tp_len = static_cast<uint32_t>(q.bytes.size());
    a.tp_snaplen = static_cast<uint32_t>(q.bytes.size());
    std::memcpy(CMSG_DATA(c), &a, sizeof a);
    h.msg_controllen = CMSG_SPACE(sizeof a);
  }
  return static_cast<int>(i);
}

std::vector<uint8_t> frame(uint32_t seq, size_t len = 100) {
  std::vector<uint8_t> f(len);
  for (size_t i = 0; i < len; ++i) f[i] = static_cast<uint8_t>(seq * 7 + i);
  return f;
}

struct Got {
  std::vector<std::vector<uint8_t>> frames;
  std::vector<bool> csum_valid;
};

class CopyRxTest : public ::testing::Test {
 protected:
  void SetUp() override { fake = &k; }
  void TearDown() override { fake = nullptr; }
  size_t drain(CopyRx& rx, uint32_t limit = UINT32_MAX) {
    return rx.drain(-1, st, [&](std::span<const uint8_t> f, bool ok) {
      got.frames.emplace_back(f.begin(), f.end());
      got.csum_valid.push_back(ok);
    }, limit);
  }
  FakeSocket k;
  PacketRingStats st;
  Got got;
};

TEST_F(CopyRxTest, FramesArriveInOrderAndIntactAcrossCalls) {
  for (uint32_t i = 0; i < 150; ++i) k.queue.push_back({frame(i, 60 + i)});
  CopyRx rx(64, 1514, fake_recvmmsg);
  EXPECT_EQ(drain(rx), 150u);
  ASSERT_EQ(got.frames.size(), 150u);
  for (uint32_t i = 0; i < 150; ++i) EXPECT_EQ(got.frames[i], frame(i, 60 + i)) << i;
  // 64 + 64 + 22: the short third call says the socket is empty.
  EXPECT_EQ(k.asked, (std::vector<unsigned>{64, 64, 64}));
  EXPECT_FALSE(rx.more());
  EXPECT_EQ(st.rx_frames, 150u);
  EXPECT_EQ(st.rx_wakeups, 1u);
}

TEST_F(CopyRxTest, ADrainStopsAtItsLimitAndSaysThereMayBeMore) {
  for (uint32_t i = 0; i < 100; ++i) k.queue.push_back({frame(i)});
  CopyRx rx(64, 1514, fake_recvmmsg);
  EXPECT_EQ(drain(rx, 16), 16u);
  EXPECT_TRUE(rx.more());
  EXPECT_EQ(k.asked, (std::vector<unsigned>{16}));
  EXPECT_EQ(drain(rx, 70), 70u);
  EXPECT_TRUE(rx.more());
  EXPECT_EQ(drain(rx, 70), 14u);
  EXPECT_FALSE(rx.more());
  ASSERT_EQ(got.frames.size(), 100u);
  for (uint32_t i = 0; i < 100; ++i) EXPECT_EQ(got.frames[i], frame(i)) << i;
}

TEST_F(CopyRxTest, AnEmptySocketCostsOneCall) {
  CopyRx rx(64, 1514, fake_recvmmsg);
  EXPECT_EQ(drain(rx), 0u);
  EXPECT_EQ(k.asked.size(), 1u);
  EXPECT_FALSE(rx.more());
  EXPECT_EQ(st.rx_wakeups, 0u);
}

TEST_F(CopyRxTest, VerdictsComeFromTheAddressTheAuxdataAndTruncation) {
  k.queue.push_back({frame(0), PACKET_OUTGOING});                                // our own: skipped
  k.queue.push_back({frame(1), PACKET_HOST, TP_STATUS_USER | TP_STATUS_CSUMNOTREADY});  // partial: valid
  k.queue.push_back({frame(2), PACKET_HOST, TP_STATUS_USER | TP_STATUS_CSUM_VALID});
  k.queue.push_back({frame(3), PACKET_HOST, TP_STATUS_USER | TP_STATUS_VLAN_VALID});   // another VLAN
  k.queue.push_back({frame(4, 1600)});                                          // cut to the slot
  k.queue.push_back({frame(5, 1600), PACKET_HOST, TP_STATUS_USER, false});      // cut, no auxdata
  k.queue.push_back({frame(6), PACKET_BROADCAST, TP_STATUS_USER, false});       // plain, no auxdata
  CopyRx rx(8, 1514, fake_recvmmsg);
  EXPECT_EQ(drain(rx), 7u);
  ASSERT_EQ(got.frames.size(), 3u);
  EXPECT_EQ(got.frames[0], frame(1));
  EXPECT_EQ(got.frames[1], frame(2));
  EXPECT_EQ(got.frames[2], frame(6));
  EXPECT_EQ(got.csum_valid, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(st.rx_outgoing, 1u);
  EXPECT_EQ(st.rx_vlan, 1u);
  EXPECT_EQ(st.rx_oversize, 2u);
  EXPECT_EQ(st.rx_csum_ok, 2u);
  EXPECT_EQ(st.rx_frames, 3u);
}

TEST(CopyRxFrame, TheAuxdataLengthBeatsWhatWasCopied) {
  const auto f = frame(0, 100);
  tpacket_auxdata a{};
  a.tp_status = TP_STATUS_USER;
  a.tp_len = 100;
  EXPECT_EQ(copy_rx_frame(f, 100, PACKET_HOST, &a, 1514).verdict, RxVerdict::kDeliver);
  a.tp_len = 200;  // the frame was longer than what reached us
  EXPECT_EQ(copy_rx_frame(f, 100, PACKET_HOST, &a, 1514).verdict, RxVerdict::kOversize);
  EXPECT_EQ(copy_rx_frame(f, 100, PACKET_OTHERHOST, nullptr, 1514).verdict, RxVerdict::kDeliver);
  EXPECT_EQ(copy_rx_frame(f, 100, PACKET_HOST, nullptr, 99).verdict, RxVerdict::kOversize);
}

}  // namespace
}  // namespace weir::link
