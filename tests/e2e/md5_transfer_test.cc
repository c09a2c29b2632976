// RFC 2385 end to end: two weir stacks with TCP_MD5SIG keys handshake and
// move data, every segment signed and verified; with mismatched keys the
// handshake never completes and the receiver counts the failures.
#include <gtest/gtest.h>

#include <linux/tcp.h>
#include <netinet/in.h>

#include <cstring>

#include "e2e/pair_helper.h"
#include "tcp/md5_sig.h"

namespace weir::test {
namespace {

std::vector<uint8_t> md5sig(const IpAddr& peer, const std::string& key) {
  return test::md5sig(peer, std::span(reinterpret_cast<const uint8_t*>(key.data()), key.size()));
}

struct Opened {
  SocketId client = kNoSocket;
  SocketId server = kNoSocket;
};

// a -> b on port 179 with a key on each side; the listener's key is what
// the accepted socket inherits.
Opened open_signed(Pair& p, const std::string& client_key, const std::string& server_key) {
  Opened o;
  SocketId l = *p.b().socket();
  p.b().bind(l, Endpoint{IpAddr::v4(10, 0, 0, 2), 179});
  EXPECT_EQ(p.b().setsockopt(p.now(), l, IPPROTO_TCP, TCP_MD5SIG, md5sig(IpAddr::v4(10, 0, 0, 1), server_key)),
            Errc::kOk);
  p.b().listen(p.now(), l, 16);
  o.client = *p.a().socket();
  EXPECT_EQ(p.a().setsockopt(p.now(), o.client, IPPROTO_TCP, TCP_MD5SIG,
                             md5sig(IpAddr::v4(10, 0, 0, 2), client_key)),
            Errc::kOk);
  p.a().connect(p.now(), o.client, Endpoint{IpAddr::v4(10, 0, 0, 2), 179});
  p.run_while([&] {
    auto r = p.b().accept(p.now(), l, nullptr);
    if (r) o.server = *r;
    return o.server == kNoSocket;
  }, p.now() + Duration::s(5));
  return o;
}

TEST(Md5Transfer, SignedHandshakeAndDataBothWays) {
  Pair p(PairOptions{});
  Opened o = open_signed(p, "bgp-key", "bgp-key");
  ASSERT_NE(o.server, kNoSocket);
  std::vector<uint8_t> data(100000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = pattern_byte(i);
  size_t sent = 0, got = 0;
  std::vector<uint8_t> buf(65536), received;
  p.run_while([&] {
    if (sent < data.size()) {
      auto w = p.a().send(p.now(), o.client, std::span(data).subspan(sent));
      if (w) sent += *w;
    }
    while (auto n = p.b().recv(p.now(), o.server, buf)) {
      if (*n == 0) break;
      received.insert(received.end(), buf.begin(), buf.begin() + static_cast<long>(*n));
      got += *n;
    }
    return got < data.size();
  }, p.now() + Duration::s(30));
  EXPECT_EQ(received, data);
  for (Stack* s : {&p.a(), &p.b()}) {
    EXPECT_EQ(s->counters().get(Counter::TcpExtTCPMD5Failure), 0u);
    EXPECT_EQ(s->counters().get(Counter::TcpExtTCPMD5NotFound), 0u);
    EXPECT_EQ(s->counters().get(Counter::TcpExtTCPMD5Unexpected), 0u);
  }
  auto info = p.a().tcp_info(o.client);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->tcpi_snd_mss, 1460u - 20u);  // SACK on, so no timestamps next to MD5
}

TEST(Md5Transfer, MismatchedKeysNeverConnect) {
  Pair p(PairOptions{});
  Opened o = open_signed(p, "client-key", "server-key");
  EXPECT_EQ(o.server, kNoSocket);
  EXPECT_GT(p.b().counters().get(Counter::TcpExtTCPMD5Failure), 0u);
}

}  // namespace
}  // namespace weir::test
