// Two stacks over the memory pipe: handshake, bulk transfer each way,
// byte-exact, with and without impairments and options.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include "e2e/pair_helper.h"

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
