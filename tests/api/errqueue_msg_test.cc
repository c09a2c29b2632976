// recvmsg(MSG_ERRQUEUE)'s encoding (posix::put_error_msg) as Linux's
// ip_recv_error / ipv6_recv_error writes it: SCM_TIMESTAMPING first, then
// IP_RECVERR or IPV6_RECVERR with sock_extended_err and a zeroed offender;
// MSG_TRUNC for a payload longer than the iovec, MSG_CTRUNC and a cut
// message for a short control buffer (put_cmsg), MSG_ERRQUEUE always.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "weir/posix.h"

namespace weir {
namespace {

ErrQueueEntry zerocopy(uint32_t lo, uint32_t hi) {
  ErrQueueEntry e;
  e.ee.ee_origin = SO_EE_ORIGIN_ZEROCOPY;
  e.ee.ee_code = SO_EE_CODE_ZEROCOPY_COPIED;
  e.ee.ee_info = lo;
  e.ee.ee_data = hi;
  return e;
}

struct Msg {
  std::vector<uint8_t> data;
  iovec iov{};
  alignas(cmsghdr) uint8_t control[256]{};
  msghdr m{};
  Msg(size_t iov_len, size_t controllen) : data(iov_len) {
    iov = {data.data(), data.size()};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = controllen;
  }
};

TEST(ErrQueueMsg, ZerocopyRangeAtTheFamilysLevel) {
  for (bool v6 : {false, true}) {
    Msg msg(0, 256);
    EXPECT_EQ(posix::put_error_msg(zerocopy(3, 7), v6, &msg.m), 0u);
    EXPECT_EQ(msg.m.msg_flags, MSG_ERRQUEUE);  // no payload: no MSG_TRUNC
    cmsghdr* c = CMSG_FIRSTHDR(&msg.m);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->cmsg_level, v6 ? SOL_IPV6 : SOL_IP);
    EXPECT_EQ(c->cmsg_type, v6 ? IPV6_RECVERR : IP_RECVERR);
    EXPECT_EQ(c->cmsg_len, CMSG_LEN(16 + (v6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in))));
    SockExtendedErr ee;
    std::memcpy(&ee, CMSG_DATA(c), sizeof ee);
    EXPECT_EQ(ee.ee_origin, SO_EE_ORIGIN_ZEROCOPY);
    EXPECT_EQ(ee.ee_info, 3u);
    EXPECT_EQ(ee.ee_data, 7u);
    EXPECT_EQ(CMSG_NXTHDR(&msg.m, c), nullptr);
  }
}

TEST(ErrQueueMsg, TimestampComesFirstAndTheShortIovecTruncates) {
  ErrQueueEntry e;
  e.ee.ee_origin = SO_EE_ORIGIN_TIMESTAMPING;
  e.ee.ee_info = SCM_TSTAMP_ACK;
  e.tstamp = Time::from_ns(3'000'000'123);
  e.payload.assign(100, 0x55);
  Msg msg(10, 256);
  EXPECT_EQ(posix::put_error_msg(e, false, &msg.m), 10u);
  EXPECT_EQ(msg.m.msg_flags, MSG_ERRQUEUE | MSG_TRUNC);
  cmsghdr* c = CMSG_FIRSTHDR(&msg.m);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->cmsg_level, SOL_SOCKET);
  EXPECT_EQ(c->cmsg_type, 37);  // SCM_TIMESTAMPING
  timespec ts[3];
  std::memcpy(ts, CMSG_DATA(c), sizeof ts);
  EXPECT_EQ(ts[0].tv_sec, 3);
  EXPECT_EQ(ts[0].tv_nsec, 123);
  EXPECT_EQ(ts[2].tv_sec, 0);  // no hardware timestamp
  c = CMSG_NXTHDR(&msg.m, c);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->cmsg_type, IP_RECVERR);
}

TEST(ErrQueueMsg, AShortControlBufferCutsTheMessageWithCtrunc) {
  Msg msg(0, CMSG_LEN(8));
  posix::put_error_msg(zerocopy(0, 0), false, &msg.m);
  EXPECT_EQ(msg.m.msg_flags, MSG_ERRQUEUE | MSG_CTRUNC);
  EXPECT_EQ(msg.m.msg_controllen, CMSG_LEN(8));
  EXPECT_EQ(CMSG_FIRSTHDR(&msg.m)->cmsg_len, CMSG_LEN(8));
  Msg none(0, 0);
  posix::put_error_msg(zerocopy(0, 0), false, &none.m);
  EXPECT_EQ(none.m.msg_flags, MSG_ERRQUEUE | MSG_CTRUNC);
  EXPECT_EQ(none.m.msg_controllen, 0u);
}

// __sock_recv_timestamp: the statistics follow SCM_TIMESTAMPING as
// SCM_TIMESTAMPING_OPT_STATS, and they are the entry's data too.
TEST(ErrQueueMsg, OptStatsFollowTheTimestampAndAreTheData) {
  ErrQueueEntry e;
  e.ee.ee_origin = SO_EE_ORIGIN_TIMESTAMPING;
  e.ee.ee_info = SCM_TSTAMP_ACK;
  e.tstamp = Time::from_ns(5);
  e.payload = {8, 0, 8, 0, 10, 0, 0, 0, 5, 0, 26, 0, 57, 0, 0, 0};  // SND_CWND 10, TTL 57
  e.opt_stats = true;
  Msg msg(64, 256);
  EXPECT_EQ(posix::put_error_msg(e, false, &msg.m), e.payload.size());
  EXPECT_EQ(msg.m.msg_flags, MSG_ERRQUEUE);
  EXPECT_TRUE(std::equal(e.payload.begin(), e.payload.end(), msg.data.begin()));
  cmsghdr* c = CMSG_FIRSTHDR(&msg.m);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->cmsg_type, 37);  // SCM_TIMESTAMPING
  c = CMSG_NXTHDR(&msg.m, c);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->cmsg_level, SOL_SOCKET);
  EXPECT_EQ(c->cmsg_type, 54);  // SCM_TIMESTAMPING_OPT_STATS
  EXPECT_EQ(c->cmsg_len, CMSG_LEN(e.payload.size()));
  EXPECT_EQ(std::memcmp(CMSG_DATA(c), e.payload.data(), e.payload.size()), 0);
  c = CMSG_NXTHDR(&msg.m, c);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->cmsg_type, IP_RECVERR);
  // Without SOF_TIMESTAMPING_SOFTWARE reporting there is no timestamp, and
  // so no statistics message either ("if (!empty)"); the data stays.
  e.tstamp.reset();
  Msg bare(64, 256);
  EXPECT_EQ(posix::put_error_msg(e, false, &bare.m), e.payload.size());
  c = CMSG_FIRSTHDR(&bare.m);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->cmsg_type, IP_RECVERR);
}

}  // namespace
}  // namespace weir
