// TapSink on a socketpair standing in for a TAP fd (as tun_uring_test does
// for a TUN): whole Ethernet frames up to MTU + 14 bytes go out one write
// each; a longer one is counted and not written.
#include "link/tap.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <vector>

namespace weir::link {
namespace {

TEST(TapSink, WritesWholeFramesUpToMtuPlusHeader) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds), 0);
  TunDevice dev = TunDevice::adopt(fds[0], "tap", 1500, false, /*tap=*/true);
  EXPECT_TRUE(dev.tap());
  TapSink sink(dev);
  std::vector<uint8_t> frame(1514, 0xab);
  EXPECT_EQ(sink.send_frame(frame), XmitResult::kSent);
  std::vector<uint8_t> big(1515, 0xcd);
  EXPECT_EQ(sink.send_frame(big), XmitResult::kSent);  // lost, as on a wire
  std::vector<uint8_t> got(2000);
  EXPECT_EQ(::recv(fds[1], got.data(), got.size(), MSG_DONTWAIT), 1514);
  EXPECT_LT(::recv(fds[1], got.data(), got.size(), MSG_DONTWAIT), 0);  // nothing more
  EXPECT_EQ(dev.stats().tx_packets, 1u);
  EXPECT_EQ(dev.stats().tx_oversize, 1u);
  ::close(fds[1]);
}

TEST(TapSink, FullQueueIsRefused) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds), 0);
  int small = 4096;
  ::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  TunDevice dev = TunDevice::adopt(fds[0], "tap", 1500, false, true);
  TapSink sink(dev);
  std::vector<uint8_t> frame(1514, 1);
  XmitResult last = XmitResult::kSent;
  for (int i = 0; i < 1000 && last == XmitResult::kSent; ++i) last = sink.send_frame(frame);
  EXPECT_EQ(last, XmitResult::kDropped);
  EXPECT_GE(dev.stats().tx_refused, 1u);
  ::close(fds[1]);
}

}  // namespace
}  // namespace weir::link
