// TCP_NOTSENT_LOWAT: getsockopt returns the socket's own value (0 by
// default, as Linux's tp->notsent_lowat), while writability follows the
// socket value or else the sysctl tcp_notsent_lowat.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

int get_int(Harness& t, SocketId s, int name) {
  int v = -1;
  size_t len = sizeof v;
  EXPECT_EQ(t.stack().getsockopt(s, IPPROTO_TCP, name, std::span(reinterpret_cast<uint8_t*>(&v), sizeof v), &len),
            Errc::kOk);
  return v;
}

TEST(NotsentLowat, GetsockoptDefaultIsZeroEvenWithTheSysctlSet) {
  StackConfig cfg;
  cfg.tcp_notsent_lowat = 4000;
  Harness t(cfg);
  SocketId s = t.passive_open();
  EXPECT_EQ(get_int(t, s, TCP_NOTSENT_LOWAT), 0);
}

TEST(NotsentLowat, GetsockoptReturnsWhatWasSet) {
  Harness t;
  SocketId s = t.passive_open();
  int v = 4000;
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_NOTSENT_LOWAT,
                                 std::span(reinterpret_cast<const uint8_t*>(&v), sizeof v)),
            Errc::kOk);
  EXPECT_EQ(get_int(t, s, TCP_NOTSENT_LOWAT), 4000);
}

TEST(NotsentLowat, SysctlBoundsWritabilityWhenTheSocketHasNoValue) {
  StackConfig cfg;
  cfg.tcp_notsent_lowat = 1000;
  Harness t(cfg);
  SocketId s = t.passive_open({}, 0);  // zero window: nothing leaves
  std::vector<uint8_t> d(1500, 1);
  ASSERT_TRUE(t.stack().send(t.now(), s, d).has_value());
  EXPECT_EQ(t.stack().poll(s) & ev::OUT, 0u);  // 1500 unsent >= 1000
}

}  // namespace
}  // namespace weir::test
