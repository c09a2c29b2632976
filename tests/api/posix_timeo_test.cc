// SO_RCVTIMEO / SO_SNDTIMEO on blocking calls through the POSIX layer: the
// block hook runs virtual time up to the socket's deadline, and the call
// then returns as Linux's does (EAGAIN, EINPROGRESS, or a partial count).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <vector>

#include "api/posix_net.h"
#include "weir/posix.h"

namespace weir {
namespace {

using test::Net;
using test::addr;

// Blocking calls wait in 5 ms steps, never past their deadline.
void install_hook(Net& n, posix::Api& api, int* waits) {
  api.set_block_hook([&n, waits](int, short, Time deadline) {
    ++*waits;
    n.run(std::min(Duration::ms(5), deadline - n.now));
    return true;
  });
}

void set_tv(posix::Api& api, int fd, int name, long sec, long usec) {
  timeval tv{sec, usec};
  ASSERT_EQ(api.setsockopt(fd, SOL_SOCKET, name, &tv, sizeof tv), 0);
}

struct Pair {
  Net n;
  posix::Api srv{n.b};
  posix::Api cli{n.a};
  int l = -1, s = -1, c = -1;
  int waits = 0;
  Pair() {
    n.apis = {&srv, &cli};
    l = srv.socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in sa = addr(2, 9000);
    srv.bind(l, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    srv.listen(l, 8);
    c = cli.socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    cli.connect(c, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    n.run(Duration::ms(20));
    s = srv.accept(l, nullptr, nullptr);
    cli.fcntl(c, F_SETFL, 0);  // blocking from here on
    install_hook(n, cli, &waits);
  }
};

TEST(PosixTimeo, BlockingRecvFailsWithEagainAtTheTimeout) {
  Pair p;
  ASSERT_GE(p.s, 0);
  set_tv(p.cli, p.c, SO_RCVTIMEO, 0, 100000);
  const Time start = p.n.now;
  char buf[16];
  EXPECT_EQ(p.cli.recv(p.c, buf, sizeof buf, 0), -1);
  EXPECT_EQ(p.cli.last_errno(), EAGAIN);
  EXPECT_EQ(p.n.now - start, Duration::ms(100));
  // Data that arrives in time is returned as usual.
  EXPECT_EQ(p.srv.write(p.s, "hi", 2), 2);
  EXPECT_EQ(p.cli.recv(p.c, buf, sizeof buf, 0), 2);
}

TEST(PosixTimeo, NegativeSecondsDoNotWait) {
  Pair p;
  set_tv(p.cli, p.c, SO_RCVTIMEO, -1, 0);
  char buf[16];
  EXPECT_EQ(p.cli.recv(p.c, buf, sizeof buf, 0), -1);
  EXPECT_EQ(p.cli.last_errno(), EAGAIN);
  EXPECT_EQ(p.waits, 0);
}

TEST(PosixTimeo, BlockingSendReturnsWhatItQueuedAtTheTimeout) {
  Pair p;
  const int small = 4096;
  p.srv.setsockopt(p.s, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  p.cli.setsockopt(p.c, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  set_tv(p.cli, p.c, SO_SNDTIMEO, 0, 200000);
  const Time start = p.n.now;
  std::vector<uint8_t> big(1 << 20, 'x');
  const ssize_t r = p.cli.send(p.c, big.data(), big.size(), 0);
  EXPECT_GT(r, 0);  // tcp_sendmsg_locked: copied, not EAGAIN
  EXPECT_LT(r, static_cast<ssize_t>(big.size()));
  EXPECT_EQ(p.n.now - start, Duration::ms(200));
  // Nothing more fits now: the next send times out with nothing queued.
  const Time again = p.n.now;
  EXPECT_EQ(p.cli.send(p.c, big.data(), big.size(), 0), -1);
  EXPECT_EQ(p.cli.last_errno(), EAGAIN);
  EXPECT_EQ(p.n.now - again, Duration::ms(200));
}

TEST(PosixTimeo, BlockingConnectReturnsEinprogressAtTheSendTimeout) {
  Net n;
  posix::Api cli(n.a);
  n.apis = {&cli};
  int waits = 0;
  install_hook(n, cli, &waits);
  int c = cli.socket(AF_INET, SOCK_STREAM, 0);
  set_tv(cli, c, SO_SNDTIMEO, 0, 300000);
  sockaddr_in nobody = addr(9, 80);  // no host answers: the SYN goes unanswered
  const Time start = n.now;
  EXPECT_EQ(cli.connect(c, reinterpret_cast<sockaddr*>(&nobody), sizeof nobody), -1);
  EXPECT_EQ(cli.last_errno(), EINPROGRESS);
  EXPECT_EQ(n.now - start, Duration::ms(300));
  EXPECT_EQ(n.a.poll(cli.socket_id(c)) & ev::OUT, 0u);  // the handshake goes on
}

TEST(PosixTimeo, BlockingAcceptFailsWithEagainAtTheReceiveTimeout) {
  Net n;
  posix::Api srv(n.b);
  n.apis = {&srv};
  int waits = 0;
  install_hook(n, srv, &waits);
  int l = srv.socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa = addr(2, 9100);
  srv.bind(l, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  srv.listen(l, 8);
  set_tv(srv, l, SO_RCVTIMEO, 1, 0);
  const Time start = n.now;
  EXPECT_EQ(srv.accept(l, nullptr, nullptr), -1);
  EXPECT_EQ(srv.last_errno(), EAGAIN);
  EXPECT_EQ(n.now - start, Duration::s(1));
}

}  // namespace
}  // namespace weir
