// Two stacks over the memory pipe: handshake, bulk transfer each way,
// byte-exact, with and without impairments and options.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include "e2e/pair_helper.h"
#include "sanitizer_build.h"

namespace weir::test {
namespace {

struct TransferResult {
  uint64_t sent = 0;
  uint64_t received = 0;
  uint64_t sent_sum = 0;
  uint64_t recv_sum = 0;
  bool eof = false;
  Time finished;
};

// Sends `total` bytes from `from` to `to` then closes; reads to EOF.
TransferResult transfer(Pair& p, Stack& from, SocketId fs, Stack& to, SocketId ts, uint64_t total,
                        Time limit) {
  TransferResult r;
  StreamSum out, in;
  std::vector<uint8_t> chunk(16384), buf(65536);
  bool closed = false;
  p.run_while([&] {
    while (r.sent < total) {
      size_t n = std::min<uint64_t>(chunk.size(), total - r.sent);
      for (size_t i = 0; i < n; ++i) chunk[i] = pattern_byte(r.sent + i);
      auto w = from.send(p.now(), fs, std::span(chunk.data(), n));
      if (!w || *w == 0) break;
      out.add(std::span(chunk.data(), *w));
      r.sent += *w;
    }
    if (r.sent == total && !closed) {
      from.shutdown(p.now(), fs, SHUT_WR);
      closed = true;
    }
    for (;;) {
      auto n = to.recv(p.now(), ts, buf);
      if (!n) break;
      if (*n == 0) {
        r.eof = true;
        break;
      }
      in.add(std::span(buf.data(), *n));
      r.received += *n;
    }
    return !r.eof;
  }, limit);
  r.sent_sum = out.h;
  r.recv_sum = in.h;
  r.finished = p.now();
  return r;
}

TEST(Transfer, HandshakeEstablishesBothEnds) {
  Pair p(PairOptions{});
  auto [c, s] = p.connect();
  ASSERT_NE(s, kNoSocket);
  EXPECT_EQ(p.a().tcp_info(c)->tcpi_state, 1);
  EXPECT_EQ(p.b().tcp_info(s)->tcpi_state, 1);
  EXPECT_EQ(p.a().counters().get(Counter::TcpActiveOpens), 1u);
  EXPECT_EQ(p.b().counters().get(Counter::TcpPassiveOpens), 1u);
}

TEST(Transfer, OneMegabyteClientToServerByteExact) {
  Pair p(PairOptions{});
  auto [c, s] = p.connect();
  ASSERT_NE(s, kNoSocket);
  auto r = transfer(p, p.a(), c, p.b(), s, 1 << 20, p.now() + Duration::s(60));
  EXPECT_TRUE(r.eof);
  EXPECT_EQ(r.received, r.sent);
  EXPECT_EQ(r.recv_sum, r.sent_sum);
}

}  // namespace
}  // namespace weir::test

namespace weir::test {
namespace {

struct Case {
  const char* name;
  bool wscale, ts, sack;
  double loss, dup, reorder;
  bool server_to_client;
};

class TransferMatrix : public ::testing::TestWithParam<Case> {};

TEST_P(TransferMatrix, ByteExactUnderImpairments) {
  const Case& k = GetParam();
  PairOptions o;
  for (StackConfig* c : {&o.a_cfg, &o.b_cfg}) {
    c->tcp_window_scaling = k.wscale;
    c->tcp_timestamps = k.ts;
    c->tcp_sack = k.sack;
  }
  o.loss = k.loss;
  o.duplicate = k.dup;
  o.reorder = k.reorder;
  o.seed = 7;
  Pair p(o);
  auto [c, s] = p.connect();
  ASSERT_NE(s, kNoSocket);
  const uint64_t total = 2 << 20;
  auto r = k.server_to_client ? transfer(p, p.b(), s, p.a(), c, total, p.now() + Duration::s(600))
                              : transfer(p, p.a(), c, p.b(), s, total, p.now() + Duration::s(600));
  EXPECT_TRUE(r.eof) << "received " << r.received << " of " << total;
  EXPECT_EQ(r.received, total);
  EXPECT_EQ(r.recv_sum, r.sent_sum);
  auto ia = p.a().tcp_info(c);
  EXPECT_EQ((ia->tcpi_options & 1) != 0, k.ts);
  EXPECT_EQ((ia->tcpi_options & 2) != 0, k.sack);
  EXPECT_EQ((ia->tcpi_options & 4) != 0, k.wscale);
  if (k.loss > 0) {
    EXPECT_GT(p.dropped, 0u);
  }
  Stack& sender = k.server_to_client ? p.b() : p.a();
  const uint64_t retrans = sender.counters().get(Counter::TcpRetransSegs);
  const uint64_t rtos = sender.counters().get(Counter::TcpExtTCPTimeouts);
  ::testing::Test::RecordProperty("virtual_ms", static_cast<int>((r.finished - Time::zero()).ms()));
  EXPECT_LT(r.finished - Time::zero(), Duration::s(30)) << k.name << " retrans " << retrans << " rto " << rtos;
}

INSTANTIATE_TEST_SUITE_P(
    Options, TransferMatrix,
    ::testing::Values(Case{"all_on_clean", true, true, true, 0, 0, 0, false},
                      Case{"all_off_clean", false, false, false, 0, 0, 0, true},
                      Case{"all_on_loss", true, true, true, 0.01, 0, 0, false},
                      Case{"all_on_loss_reverse", true, true, true, 0.01, 0, 0, true},
                      Case{"nosack_loss", true, true, false, 0.01, 0, 0, false},
                      Case{"nots_loss", true, false, true, 0.01, 0, 0, true},
                      Case{"nowscale_loss", false, true, true, 0.01, 0, 0, false},
                      Case{"all_off_loss_dup_reorder", false, false, false, 0.01, 0.01, 0.02, false},
                      Case{"all_on_loss_dup_reorder", true, true, true, 0.02, 0.02, 0.03, true},
                      Case{"dup_reorder_only", true, true, true, 0, 0.05, 0.05, false}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace weir::test

namespace weir::test {
namespace {

// The full-size run: 1 GiB each way, byte-exact (a checksum of each
// stream), with loss, duplication and reordering injected by the pipe, once
// with window scaling, timestamps and SACK on and once with all three off.
// About 10 s of CPU per direction in an optimised build; the sanitizer build
// (-O0, ASan) moves 64 MiB each way instead, so the suite stays within CI's
// time, and says so in the test's output.

struct LongCase {
  const char* name;
  bool options_on;
};

class TransferLong : public ::testing::TestWithParam<LongCase> {};

TEST_P(TransferLong, OneGibibyteEachWayImpairedByteExact) {
  PairOptions o;
  for (StackConfig* c : {&o.a_cfg, &o.b_cfg}) {
    c->tcp_window_scaling = GetParam().options_on;
    c->tcp_timestamps = GetParam().options_on;
    c->tcp_sack = GetParam().options_on;
  }
  o.loss = 0.001;
  o.duplicate = 0.001;
  o.reorder = 0.002;
  o.delay = Duration::ms(1);
  const uint64_t total = kSanitized ? uint64_t{64} << 20 : uint64_t{1} << 30;
  ::testing::Test::RecordProperty("bytes_each_way", std::to_string(total));
  Pair p(o);
  auto [c, s] = p.connect();
  ASSERT_NE(s, kNoSocket);
  auto up = transfer(p, p.a(), c, p.b(), s, total, p.now() + Duration::s(36000));
  EXPECT_TRUE(up.eof);
  EXPECT_EQ(up.received, total);
  EXPECT_EQ(up.recv_sum, up.sent_sum);
  EXPECT_GT(p.a().counters().get(Counter::TcpRetransSegs), 0u);  // the impairments did bite
  o.seed = 2;
  Pair q(o);
  auto [c2, s2] = q.connect();
  ASSERT_NE(s2, kNoSocket);
  auto down = transfer(q, q.b(), s2, q.a(), c2, total, q.now() + Duration::s(36000));
  EXPECT_TRUE(down.eof);
  EXPECT_EQ(down.received, total);
  EXPECT_EQ(down.recv_sum, down.sent_sum);
}

INSTANTIATE_TEST_SUITE_P(Options, TransferLong,
                         ::testing::Values(LongCase{"all_on", true}, LongCase{"all_off", false}),
                         [](const ::testing::TestParamInfo<LongCase>& i) { return std::string(i.param.name); });

// Linux tcp_rate_gen via the engine: the delivery rate seen by a bulk sender
// over a 20 Mbit/s bottleneck is the bottleneck's payload rate (at least
// 1448 of every 1500 IP bytes), not zero and not above the link.
TEST(Transfer, DeliveryRateMatchesBottleneckRate) {
  PairOptions o;
  o.delay = Duration::ms(10);
  o.rate_bps_to_b = 20'000'000;
  Pair p(o);
  auto [c, s] = p.connect();
  ASSERT_NE(s, kNoSocket);
  auto r = transfer(p, p.a(), c, p.b(), s, 4 << 20, p.now() + Duration::s(60));
  ASSERT_EQ(r.received, 4u << 20);
  auto info = p.a().tcp_info(c);
  ASSERT_TRUE(info.has_value());
  const double link_bytes_per_s = 20e6 / 8;
  EXPECT_GT(info->tcpi_delivery_rate, 0.9 * link_bytes_per_s * 1448 / 1500);
  EXPECT_LE(info->tcpi_delivery_rate, link_bytes_per_s);
  EXPECT_GE(info->tcpi_delivered, (4u << 20) / 1460);  // every data packet, at most one MSS each
}

// Remembers the sequence number of the first data packet sent.
class FirstSendSink : public TraceSink {
 public:
  void record(const TraceSample& s) override {
    if (s.event == TraceEvent::kSend && !seen) {
      seen = true;
      first_seq = static_cast<uint32_t>(s.a);
    }
  }
  bool seen = false;
  uint32_t first_seq = 0;
};

// Seed 004 through the engine: CUBIC's HyStart ACK-train detector ends slow
// start once the ACK train of a round spans half the base RTT. HyStart's
// rounds end at SND.NXT, so the cc view of it must be current from init on;
// with a stale SND.NXT of 0 and an ISN in the upper half of the sequence
// space no round ever starts and only a loss ends slow start. The test picks
// a connection whose ISN is in that upper half.
TEST(Transfer, HystartAckTrainEndsSlowStartBeforeLoss) {
  PairOptions o;
  o.delay = Duration::ms(20);
  o.rate_bps_to_b = 20'000'000;
  o.a_cfg.tcp_congestion_control = "cubic";
  bool tested = false;
  for (uint16_t port = 80; port < 120 && !tested; ++port) {
    Pair p(o);
    FirstSendSink sink;
    p.a().set_trace(&sink);
    auto [c, s] = p.connect(port);
    ASSERT_NE(s, kNoSocket);
    auto r = transfer(p, p.a(), c, p.b(), s, 8 << 20, p.now() + Duration::s(60));
    ASSERT_EQ(r.received, 8u << 20);
    ASSERT_TRUE(sink.seen);
    if (sink.first_seq < 0x80000000u) continue;
    tested = true;
    auto info = p.a().tcp_info(c);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->hystart_exit_reason, 1);  // ACK train
    // BDP: 20 Mbit/s x 40 ms = ~67 packets.
    EXPECT_GE(info->hystart_exit_cwnd, 40u);
    EXPECT_EQ(info->tcpi_total_retrans, 0u);
  }
  EXPECT_TRUE(tested) << "no connection had an ISN in the upper half";
}

class CountingSink : public TraceSink {
 public:
  void record(const TraceSample& s) override { ++n[static_cast<size_t>(s.event)]; }
  size_t n[16] = {};
};

TEST(Transfer, TraceHookSeesStatesSendsAcksAndRetransmits) {
  PairOptions o;
  o.loss = 0.02;
  Pair p(o);
  CountingSink sink;
  p.a().set_trace(&sink);
  auto [c, s] = p.connect();
  ASSERT_NE(s, kNoSocket);
  auto r = transfer(p, p.a(), c, p.b(), s, 1 << 20, p.now() + Duration::s(120));
  EXPECT_EQ(r.received, 1u << 20);
  EXPECT_GE(sink.n[static_cast<size_t>(TraceEvent::kState)], 2u);  // SYN-SENT, ESTABLISHED, ...
  EXPECT_GT(sink.n[static_cast<size_t>(TraceEvent::kSend)], 500u);
  EXPECT_GT(sink.n[static_cast<size_t>(TraceEvent::kAck)], 100u);
  EXPECT_GT(sink.n[static_cast<size_t>(TraceEvent::kRetransmit)], 0u);
}

struct ReadyLog {
  int calls = 0;
  uint32_t last = 0;
  static void fn(void* ctx, SocketId, uint32_t events) {
    auto* self = static_cast<ReadyLog*>(ctx);
    ++self->calls;
    self->last = events;
  }
};

TEST(Transfer, ReadyCallbackReportsReadable) {
  Pair p(PairOptions{});
  ReadyLog log;
  auto [c, s] = p.connect();
  ASSERT_NE(s, kNoSocket);
  p.b().set_ready_callback(&ReadyLog::fn, &log);
  const uint8_t msg[] = {1, 2, 3, 4};
  p.a().send(p.now(), c, msg);
  p.run_until(p.now() + Duration::ms(100));
  EXPECT_GT(log.calls, 0);
  EXPECT_NE(p.b().poll(s) & ev::IN, 0u);
}

}  // namespace
}  // namespace weir::test
