// Peers that stall: one holds a zero window forever (and answers every
// probe), one stops answering altogether. RFC 1122 §4.2.2.17: the sender
// keeps probing a zero window indefinitely while the peer answers; probes
// back off to TCP_RTO_MAX (120 s). Linux ends it only with TCP_USER_TIMEOUT
// (counted from the first probe the window stayed shut for, Linux
// icsk_probes_tstamp). A silent peer is given up after tcp_retries2 (Linux
// tcp_model_timeout: (2^10 - 1) x 200 ms + 6 x 120 s = 924.6 s) or after
// TCP_USER_TIMEOUT, with ETIMEDOUT.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <algorithm>
#include <cstring>

#include "adversarial/adv_helper.h"
#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

std::vector<uint8_t> int_opt(int v) {
  std::vector<uint8_t> b(sizeof v);
  std::memcpy(b.data(), &v, sizeof v);
  return b;
}

struct ProbeLog {
  std::vector<Time> at;
  bool ended = false;
  Errc err = Errc::kOk;
  Time ended_at;
};

// Runs timers until `limit`; the peer answers every segment with a zero
// window (when `answer`), else stays silent.
ProbeLog run_stalled(Harness& h, SocketId s, Duration limit, bool answer) {
  ProbeLog log;
  const Time end = h.now() + limit;
  while (h.now() < end) {
    if (h.stack().next_deadline() > end) break;
    h.run_next_timer();
    while (h.pending()) {
      h.expect_tx();
      log.at.push_back(h.now());
      if (answer) h.inject(ACK, 1, 1, 0, 0);
    }
    std::vector<uint8_t> b(1);
    auto r = h.stack().recv(h.now(), s, b);
    if (!r && r.error() != Errc::kAgain) {
      log.ended = true;
      log.err = r.error();
      log.ended_at = h.now();
      break;
    }
  }
  return log;
}

SocketId zero_window_conn(Harness& h) {
  PeerOpts o;
  o.ts = false;
  const SocketId s = h.active_open(o, 0);
  std::vector<uint8_t> d(1000, 7);
  EXPECT_TRUE(h.stack().send(h.now(), s, d).has_value());
  EXPECT_EQ(h.pending(), 0u) << "nothing may be sent into a zero window";
  return s;
}

TEST(Stall, ZeroWindowForeverProbesBackOffTo120sAndLives) {
  Harness h;
  const SocketId s = zero_window_conn(h);
  const ProbeLog log = run_stalled(h, s, Duration::s(3 * 3600), true);
  ASSERT_FALSE(log.ended) << "a peer answering the probes keeps the connection (RFC 1122 §4.2.2.17)";
  ASSERT_GE(log.at.size(), 20u);
  Duration max_gap, prev;
  for (size_t i = 1; i < log.at.size(); ++i) {
    const Duration gap = log.at[i] - log.at[i - 1];
    EXPECT_GE(gap + Duration::ms(1), prev) << "probe intervals never shrink (probe " << i << ")";
    max_gap = std::max(max_gap, gap);
    prev = gap;
  }
  measured("stall.zero_window.probes_in_3h", static_cast<double>(log.at.size()));
  measured("stall.zero_window.max_interval_s", max_gap.secs());
  EXPECT_EQ(max_gap, Duration::s(120)) << "backed off to TCP_RTO_MAX, not beyond";
  EXPECT_EQ(log.at.back() - log.at[log.at.size() - 2], Duration::s(120));
  EXPECT_EQ(h.stack().tcp_info(s)->tcpi_state, 1);
  EXPECT_EQ(counter(h.stack(), Counter::TcpExtTCPWinProbe), log.at.size());
}

// Linux >= 5.11 (icsk_probes_tstamp): TCP_USER_TIMEOUT counts from the
// first zero-window probe, so a peer answering every probe with a zero
// window does not hold the connection forever.
TEST(Stall, ZeroWindowForeverEndsAtUserTimeout) {
  Harness h;
  const SocketId s = zero_window_conn(h);
  ASSERT_EQ(h.stack().setsockopt(h.now(), s, IPPROTO_TCP, TCP_USER_TIMEOUT, int_opt(60000)), Errc::kOk);
  const Time start = h.now();
  const ProbeLog log = run_stalled(h, s, Duration::s(3600), true);
  ASSERT_TRUE(log.ended) << "TCP_USER_TIMEOUT ends a window that never opens (Linux >= 5.11)";
  EXPECT_EQ(log.err, Errc::kTimedOut);
  ASSERT_FALSE(log.at.empty());
  const Duration since_first = log.ended_at - log.at.front();
  measured("stall.zero_window.user_timeout_end_s", since_first.secs());
  EXPECT_GE(since_first, Duration::s(60));
  EXPECT_LE(log.ended_at - start, Duration::s(60) + Duration::s(2)) << "the probe timer is clamped to the timeout";
}

TEST(Stall, SilentPeerEndsAfterRetries2) {
  Harness h;
  PeerOpts o;
  o.ts = false;
  const SocketId s = h.active_open(o);
  std::vector<uint8_t> d(100, 1);
  ASSERT_TRUE(h.stack().send(h.now(), s, d).has_value());
  const Time sent = h.now();
  h.clear_tx();
  const ProbeLog log = run_stalled(h, s, Duration::s(3600), false);
  ASSERT_TRUE(log.ended);
  EXPECT_EQ(log.err, Errc::kTimedOut);
  const double t = (log.ended_at - sent).secs();
  measured("stall.silent.retries2_end_s", t);
  measured("stall.silent.retransmissions", static_cast<double>(log.at.size()));
  // (2^10 - 1) x 200 ms + 6 x 120 s from the first retransmission (Linux
  // retrans_stamp), which here is a tail loss probe 200 ms after sending.
  EXPECT_NEAR(t, 924.6, 1.0);
  EXPECT_EQ(log.at.size(), 16u) << "a tail loss probe and tcp_retries2 = 15 RTO retransmissions";
}

TEST(Stall, SilentPeerEndsAtUserTimeout) {
  Harness h;
  PeerOpts o;
  o.ts = false;
  const SocketId s = h.active_open(o);
  ASSERT_EQ(h.stack().setsockopt(h.now(), s, IPPROTO_TCP, TCP_USER_TIMEOUT, int_opt(10000)), Errc::kOk);
  std::vector<uint8_t> d(100, 1);
  ASSERT_TRUE(h.stack().send(h.now(), s, d).has_value());
  const Time sent = h.now();
  h.clear_tx();
  const ProbeLog log = run_stalled(h, s, Duration::s(3600), false);
  ASSERT_TRUE(log.ended);
  EXPECT_EQ(log.err, Errc::kTimedOut);
  const double t = (log.ended_at - sent).secs();
  measured("stall.silent.user_timeout_end_s", t);
  // Counted from the first retransmission (the tail loss probe at 200 ms),
  // the last RTO cut to the deadline (Linux tcp_clamp_rto_to_user_timeout).
  EXPECT_GE(t, 10.0);
  EXPECT_LE(t, 10.25);
}

}  // namespace
}  // namespace weir::test
