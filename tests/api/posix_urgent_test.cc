// Urgent data end to end through the POSIX layer, two stacks on a pipe:
// send(MSG_OOB) on one side, SIOCATMARK, POLLPRI, recv(MSG_OOB) and a read
// that steps over the byte on the other (Linux semantics, RFC 6093 §4).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/ioctl.h>

#include <cstring>

#include "api/posix_net.h"
#include "link/memory_pipe.h"
#include "weir/posix.h"

namespace weir {
namespace {

using test::Net;

TEST(PosixUrgent, OobByteCrossesTheWireAndLeavesTheStream) {
  Net n;
  posix::Api srv(n.b), cli(n.a);
  n.apis = {&srv, &cli};
  int l = srv.socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in sa = test::addr(2, 9000);
  ASSERT_EQ(srv.bind(l, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(srv.listen(l, 4), 0);
  int c = cli.socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  EXPECT_EQ(cli.connect(c, reinterpret_cast<sockaddr*>(&sa), sizeof sa), -1);
  n.run(Duration::ms(50));
  int s = srv.accept4(l, nullptr, nullptr, SOCK_NONBLOCK);
  ASSERT_GE(s, 0);

  EXPECT_EQ(cli.send(c, "abc", 3, 0), 3);
  EXPECT_EQ(cli.send(c, "!", 1, MSG_OOB), 1);  // '!' is the urgent byte
  EXPECT_EQ(cli.send(c, "def", 3, 0), 3);
  n.run(Duration::ms(50));

  pollfd p{s, POLLIN | POLLPRI, 0};
  ASSERT_EQ(srv.poll(&p, 1), 1);
  EXPECT_EQ(p.revents & (POLLIN | POLLPRI), POLLIN | POLLPRI);
  char buf[16];
  EXPECT_EQ(srv.read(s, buf, sizeof buf), 3);  // stops at the mark
  EXPECT_EQ(std::memcmp(buf, "abc", 3), 0);
  int mark = -1;
  ASSERT_EQ(srv.ioctl(s, SIOCATMARK, &mark), 0);
  EXPECT_EQ(mark, 1);
  char oob = 0;
  EXPECT_EQ(srv.recv(s, &oob, 1, MSG_OOB), 1);
  EXPECT_EQ(oob, '!');
  EXPECT_EQ(srv.recv(s, &oob, 1, MSG_OOB), -1);
  EXPECT_EQ(srv.last_errno(), EINVAL);
  EXPECT_EQ(srv.read(s, buf, sizeof buf), 3);  // the byte is not in the stream
  EXPECT_EQ(std::memcmp(buf, "def", 3), 0);
}

}  // namespace
}  // namespace weir
