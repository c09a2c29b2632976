// SO_TIMESTAMPING's OPT_STATS (Linux tcp_get_timestamping_opt_stats): each
// transmit timestamp carries the connection's statistics as netlink
// attributes, in Linux's order and sizes (as Linux 6.18 reports them on
// loopback: 27 attributes, 256 bytes for an ACK timestamp), with the ACK's
// TTL only on ACK timestamps and the skb's departure time as TCP_NLA_EDT.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <cstring>
#include <map>

#include "tcp/harness_helper.h"
#include "tcp/opt_stats.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;
constexpr int kSoTimestamping = 37;
constexpr int kFlags = static_cast<int>(sof::TX_SCHED | sof::TX_SOFTWARE | sof::TX_ACK | sof::SOFTWARE |
                                        sof::OPT_ID | sof::OPT_TSONLY | sof::OPT_STATS);

struct Attrs {
  std::vector<uint16_t> order;
  std::map<uint16_t, uint64_t> value;
  std::map<uint16_t, size_t> size;
};

// nla_for_each_attr: 4-byte header, value, padding to 4.
Attrs parse(const std::vector<uint8_t>& b) {
  Attrs a;
  for (size_t i = 0; i + 4 <= b.size();) {
    uint16_t len = 0, type = 0;
    std::memcpy(&len, &b[i], 2);
    std::memcpy(&type, &b[i + 2], 2);
    EXPECT_GE(len, 4u);
    EXPECT_LE(i + len, b.size());
    if (len < 4 || i + len > b.size()) break;
    uint64_t v = 0;
    std::memcpy(&v, &b[i + 4], std::min<size_t>(len - 4u, 8));
    a.order.push_back(type);
    a.value[type] = v;
    a.size[type] = len - 4u;
    i += (len + 3u) & ~3u;
  }
  return a;
}

TEST(OptStats, AnAckTimestampCarriesLinuxsAttributesInLinuxsOrder) {
  Harness t;
  SocketId s = t.passive_open();
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, kSoTimestamping, int_opt(kFlags)), Errc::kOk);
  const Time sent = t.now();
  std::vector<uint8_t> d(3000, 0x5a);
  t.stack().send(t.now(), s, d);
  for (int i = 0; i < 3; ++i) t.expect_tx();
  t.advance(Duration::us(700));
  t.peer_ttl = 57;
  const TcpInfo before = *t.stack().tcp_info(s);
  t.inject(ACK, 1, 3001);

  ErrQueueEntry sched = next_error(t, s);
  ErrQueueEntry snd = next_error(t, s);
  ErrQueueEntry ack = next_error(t, s);
  EXPECT_EQ(ack.ee.ee_info, SCM_TSTAMP_ACK);
  ASSERT_TRUE(ack.opt_stats);
  EXPECT_EQ(ack.payload.size(), 256u);  // Linux 6.18's size for an ACK timestamp
  const Attrs a = parse(ack.payload);
  const std::vector<uint16_t> linux_order = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 16,
                                             17, 13, 14, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27};
  EXPECT_EQ(a.order, linux_order);
  const std::map<uint16_t, size_t> sizes = {{1, 8},  {2, 8},  {3, 8},  {4, 8},  {5, 8},  {6, 8},  {7, 8},
                                            {8, 4},  {9, 4},  {10, 4}, {11, 1}, {12, 1}, {13, 4}, {14, 1},
                                            {15, 4}, {16, 4}, {17, 4}, {18, 8}, {19, 8}, {20, 4}, {21, 4},
                                            {22, 4}, {23, 2}, {24, 4}, {25, 8}, {26, 1}, {27, 4}};
  EXPECT_EQ(a.size, sizes);
  EXPECT_EQ(a.value.at(tcp::nla::kDataSegsOut), 3u);
  EXPECT_EQ(a.value.at(tcp::nla::kBytesSent), 3000u);
  EXPECT_EQ(a.value.at(tcp::nla::kTotalRetrans), 0u);
  EXPECT_EQ(a.value.at(tcp::nla::kSndqSize), 0u);  // snd_una has moved to the ACK
  EXPECT_EQ(a.value.at(tcp::nla::kBytesNotsent), 0u);
  EXPECT_EQ(a.value.at(tcp::nla::kSndSsthresh), 0x7fffffffu);  // TCP_INFINITE_SSTHRESH
  EXPECT_EQ(a.value.at(tcp::nla::kCaState), 0u);
  EXPECT_EQ(a.value.at(tcp::nla::kTtl), 57u);  // the ACK's, not ours
  EXPECT_EQ(a.value.at(tcp::nla::kEdt), static_cast<uint64_t>(sent.ns()));  // the skb's transmission
  EXPECT_EQ(a.value.at(tcp::nla::kRehash), 0u);
  // Taken in tcp_clean_rtx_queue's walk, before the ACK's RTT sample
  // (tcp_ack_update_rtt after the walk) and before congestion control:
  // the RTT and cwnd are the ones the ACK found.
  EXPECT_EQ(a.value.at(tcp::nla::kSndCwnd), before.tcpi_snd_cwnd);
  EXPECT_EQ(a.value.at(tcp::nla::kSrtt), before.tcpi_rtt);
  EXPECT_NE(t.stack().tcp_info(s)->tcpi_rtt, before.tcpi_rtt);

  // SCHED and SND: no acknowledging segment, so no TTL (248 bytes); the
  // whole send was still queued and unacknowledged.
  for (const ErrQueueEntry* e : {&sched, &snd}) {
    ASSERT_TRUE(e->opt_stats);
    EXPECT_EQ(e->payload.size(), 248u);
    const Attrs b = parse(e->payload);
    EXPECT_EQ(b.value.count(tcp::nla::kTtl), 0u);
    EXPECT_EQ(b.order.size(), 26u);
    EXPECT_EQ(b.value.at(tcp::nla::kSndqSize), 3000u);
    EXPECT_EQ(b.value.at(tcp::nla::kEdt), static_cast<uint64_t>(sent.ns()));
  }
}

TEST(OptStats, ARetransmissionMovesTheDepartureTimeAndCountsTheRetransmit) {
  Harness t;
  SocketId s = t.passive_open();
  const int f = static_cast<int>(sof::TX_ACK | sof::SOFTWARE | sof::OPT_TSONLY | sof::OPT_STATS);
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, kSoTimestamping, int_opt(f)), Errc::kOk);
  std::vector<uint8_t> d(100, 0x5a);
  t.stack().send(t.now(), s, d);
  t.expect_tx();
  // No ACK: the loss probe resends the segment.
  Time last = t.now();
  for (int i = 0; i < 5 && t.stack().tcp_info(s)->tcpi_total_retrans == 0; ++i) last = t.run_next_timer();
  ASSERT_GE(t.stack().tcp_info(s)->tcpi_total_retrans, 1u);
  t.clear_tx();
  t.inject(ACK, 1, 101);
  ErrQueueEntry e = next_error(t, s);
  ASSERT_TRUE(e.opt_stats);
  const Attrs a = parse(e.payload);
  EXPECT_EQ(a.value.at(tcp::nla::kEdt), static_cast<uint64_t>(last.ns()));
  EXPECT_GE(a.value.at(tcp::nla::kTotalRetrans), 1u);
  EXPECT_EQ(a.value.at(tcp::nla::kDataSegsOut), 1u + a.value.at(tcp::nla::kTotalRetrans));
}

TEST(OptStats, WithoutTheFlagThereAreNoStatistics) {
  Harness t;
  SocketId s = t.passive_open();
  const int f = static_cast<int>(sof::TX_ACK | sof::SOFTWARE | sof::OPT_TSONLY);
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, kSoTimestamping, int_opt(f)), Errc::kOk);
  std::vector<uint8_t> d(100, 0x5a);
  t.stack().send(t.now(), s, d);
  t.expect_tx();
  t.inject(ACK, 1, 101);
  ErrQueueEntry e = next_error(t, s);
  EXPECT_FALSE(e.opt_stats);
  EXPECT_TRUE(e.payload.empty());
}

}  // namespace
}  // namespace weir::test
