// The POSIX-shaped layer and the C++ handles, over two stacks on a pipe.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>

#include <cstring>

#include "api/posix_net.h"
#include "link/memory_pipe.h"
#include "weir/posix.h"
#include "weir/socket.h"

namespace weir {
namespace {

using test::Net;
using test::addr;

TEST(Posix, ConnectAcceptEchoWithErrnoSemantics) {
  Net n;
  posix::Api srv(n.b), cli(n.a);
  n.apis = {&srv, &cli};
  int l = srv.socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  ASSERT_GE(l, 3);
  sockaddr_in sa = addr(2, 9000);
  ASSERT_EQ(srv.bind(l, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(srv.listen(l, 16), 0);
  EXPECT_EQ(srv.accept(l, nullptr, nullptr), -1);
  EXPECT_EQ(srv.last_errno(), EAGAIN);

  int c = cli.socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(cli.fcntl(c, F_SETFL, O_NONBLOCK), 0);
  EXPECT_EQ(cli.fcntl(c, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
  EXPECT_EQ(cli.connect(c, reinterpret_cast<sockaddr*>(&sa), sizeof sa), -1);
  EXPECT_EQ(cli.last_errno(), EINPROGRESS);
  EXPECT_EQ(cli.connect(c, reinterpret_cast<sockaddr*>(&sa), sizeof sa), -1);
  EXPECT_EQ(cli.last_errno(), EALREADY);
  char buf[64];
  EXPECT_EQ(cli.read(c, buf, sizeof buf), -1);
  EXPECT_EQ(cli.last_errno(), EAGAIN);
  n.run(Duration::ms(50));
  pollfd p{c, POLLOUT, 0};
  EXPECT_EQ(cli.poll(&p, 1), 1);
  EXPECT_TRUE(p.revents & POLLOUT);
  int err = -1;
  socklen_t el = sizeof err;
  ASSERT_EQ(cli.getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el), 0);
  EXPECT_EQ(err, 0);

  sockaddr_in peer{};
  socklen_t pl = sizeof peer;
  int s = srv.accept(l, reinterpret_cast<sockaddr*>(&peer), &pl);
  ASSERT_GE(s, 0);
  EXPECT_EQ(ntohl(peer.sin_addr.s_addr), (10u << 24) | 1);
  EXPECT_EQ(cli.write(c, "hello", 5), 5);
  iovec iov[2] = {{const_cast<char*>(" wor"), 4}, {const_cast<char*>("ld"), 2}};
  EXPECT_EQ(cli.writev(c, iov, 2), 6);
  int outq = -1;
  EXPECT_EQ(cli.ioctl(c, SIOCOUTQ, &outq), 0);
  EXPECT_EQ(outq, 11);
  n.run(Duration::ms(50));
  EXPECT_EQ(cli.ioctl(c, SIOCOUTQ, &outq), 0);
  EXPECT_EQ(outq, 0);
  int inq = -1;
  EXPECT_EQ(srv.ioctl(s, FIONREAD, &inq), 0);
  EXPECT_EQ(inq, 11);
  EXPECT_EQ(srv.recv(s, buf, 5, MSG_PEEK), 5);
  EXPECT_EQ(std::memcmp(buf, "hello", 5), 0);
  EXPECT_EQ(srv.read(s, buf, sizeof buf), 11);
  EXPECT_EQ(std::memcmp(buf, "hello world", 11), 0);
  EXPECT_EQ(srv.recv(s, buf, sizeof buf, MSG_DONTWAIT), -1);
  EXPECT_EQ(srv.last_errno(), EAGAIN);

  // Half-close: the server sees EOF, can still write back.
  EXPECT_EQ(cli.shutdown(c, SHUT_WR), 0);
  n.run(Duration::ms(50));
  EXPECT_EQ(srv.read(s, buf, sizeof buf), 0);
  EXPECT_EQ(srv.write(s, "bye", 3), 3);
  n.run(Duration::ms(50));
  EXPECT_EQ(cli.read(c, buf, sizeof buf), 3);
  EXPECT_EQ(cli.write(c, "x", 1), -1);
  EXPECT_EQ(cli.last_errno(), EPIPE);
  EXPECT_EQ(srv.close(s), 0);
  EXPECT_EQ(srv.close(s), -1);
  EXPECT_EQ(srv.last_errno(), EBADF);
  EXPECT_EQ(cli.close(c), 0);
}

TEST(Posix, OptionsRoundTripAndUnknownIsENOPROTOOPT) {
  Net n;
  posix::Api api(n.a);
  int fd = api.socket(AF_INET, SOCK_STREAM, 0);
  int one = 1, v = 0;
  socklen_t l = sizeof v;
  ASSERT_EQ(api.setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
  ASSERT_EQ(api.getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &l), 0);
  EXPECT_EQ(v, 1);
  int sz = 100000;
  ASSERT_EQ(api.setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz), 0);
  l = sizeof v;
  ASSERT_EQ(api.getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &l), 0);
  EXPECT_EQ(v, 200000);  // Linux doubles
  EXPECT_EQ(api.setsockopt(fd, IPPROTO_TCP, 9999, &one, sizeof one), -1);
  EXPECT_EQ(api.last_errno(), ENOPROTOOPT);
  EXPECT_EQ(api.setsockopt(fd, SOL_SOCKET, SO_ERROR, &one, sizeof one), -1);
  EXPECT_EQ(api.last_errno(), ENOPROTOOPT);
  EXPECT_EQ(api.setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "nope", 4), -1);
  EXPECT_EQ(api.last_errno(), ENOENT);
  ASSERT_EQ(api.setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "reno", 4), 0);
  char name[16] = {};
  l = sizeof name;
  ASSERT_EQ(api.getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &l), 0);
  EXPECT_STREQ(name, "reno");
  int bad = 10;
  EXPECT_EQ(api.setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &bad, sizeof bad), -1);
  EXPECT_EQ(api.last_errno(), EINVAL);
  EXPECT_EQ(api.socket(AF_UNIX, SOCK_STREAM, 0), -1);
  EXPECT_EQ(api.last_errno(), EAFNOSUPPORT);
  EXPECT_EQ(api.read(77, &v, 1), -1);
  EXPECT_EQ(api.last_errno(), EBADF);
}

TEST(Posix, ConnectToClosedPortIsRefused) {
  Net n;
  posix::Api cli(n.a);
  int c = cli.socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in sa = addr(2, 1);
  EXPECT_EQ(cli.connect(c, reinterpret_cast<sockaddr*>(&sa), sizeof sa), -1);
  n.run(Duration::ms(50));
  pollfd p{c, POLLOUT, 0};
  cli.poll(&p, 1);
  EXPECT_TRUE(p.revents & POLLERR);
  int err = 0;
  socklen_t el = sizeof err;
  cli.getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el);
  EXPECT_EQ(err, ECONNREFUSED);
}

TEST(Posix, BlockingConnectUsesTheBlockHook) {
  Net n;
  auto l = TcpListener::listen(n.b, n.now, Endpoint{IpAddr::v4(10, 0, 0, 2), 7000});
  ASSERT_TRUE(l.has_value());
  posix::Api cli(n.a);
  cli.set_block_hook([&](int, short, Time) {
    n.run(Duration::ms(10));
    cli.set_now(n.now);
    return true;
  });
  int c = cli.socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa = addr(2, 7000);
  EXPECT_EQ(cli.connect(c, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  auto s = l->accept(n.now);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->connected());
  EXPECT_EQ(cli.write(c, "abc", 3), 3);
  n.run(Duration::ms(10));
  uint8_t buf[8];
  auto r = s->recv(n.now, buf);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 3u);
}

TEST(SocketHandles, ListenerAndSocketRoundTrip) {
  Net n;
  auto l = TcpListener::listen(n.b, n.now, Endpoint{IpAddr::v4(10, 0, 0, 2), 8000});
  ASSERT_TRUE(l.has_value());
  auto again = TcpListener::listen(n.b, n.now, Endpoint{IpAddr::v4(10, 0, 0, 2), 8000});
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error(), Errc::kAddrInUse);
  auto c = TcpSocket::connect(n.a, n.now, Endpoint{IpAddr::v4(10, 0, 0, 2), 8000});
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->connected());
  n.run(Duration::ms(20));
  EXPECT_TRUE(c->connected());
  EXPECT_TRUE(l->pending());
  Endpoint peer;
  auto s = l->accept(n.now, &peer);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(peer, *c->local());
  EXPECT_EQ(*s->peer(), *c->local());
  const uint8_t msg[] = {1, 2, 3};
  EXPECT_EQ(*c->send(n.now, msg), 3u);
  n.run(Duration::ms(20));
  EXPECT_TRUE(s->readable());
  uint8_t in[8];
  EXPECT_EQ(*s->recv(n.now, in), 3u);
  EXPECT_EQ(s->recv(n.now, in).error(), Errc::kAgain);
  EXPECT_EQ(c->close(n.now), Errc::kOk);
  n.run(Duration::ms(20));
  EXPECT_EQ(*s->recv(n.now, in), 0u);  // end of stream
}

}  // namespace
}  // namespace weir
