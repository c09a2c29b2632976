// SO_RCVTIMEO / SO_SNDTIMEO values (Linux sock_set_timeout /
// sock_get_timeout, HZ 1000): what setsockopt takes and getsockopt reads back.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <array>
#include <cstring>

#include "tcp/harness_helper.h"
#include "tcp/sock_timeo.h"

namespace weir::test {
namespace {

struct Tv {
  int64_t sec;
  int64_t usec;
  bool operator==(const Tv&) const = default;
};

std::span<const uint8_t> tv_opt(const Tv& tv, size_t len = sizeof(Tv)) {
  return std::span(reinterpret_cast<const uint8_t*>(&tv), len);
}

Tv get_tv(Stack& st, SocketId s, int name, size_t* len_out = nullptr) {
  std::array<uint8_t, 32> buf{};
  size_t len = 0;
  EXPECT_EQ(st.getsockopt(s, SOL_SOCKET, name, buf, &len), Errc::kOk);
  if (len_out) *len_out = len;
  Tv tv{};
  std::memcpy(&tv, buf.data(), sizeof tv);
  return tv;
}

TEST(SockTimeo, NewSocketWaitsForEverAndReadsZero) {
  Harness t;
  SocketId s = *t.stack().socket();
  size_t len = 0;
  EXPECT_EQ(get_tv(t.stack(), s, SO_RCVTIMEO, &len), (Tv{0, 0}));
  EXPECT_EQ(len, 16u);
  EXPECT_EQ(t.stack().rcvtimeo(s), Duration::infinite());
  EXPECT_EQ(t.stack().sndtimeo(s), Duration::infinite());
}

TEST(SockTimeo, MicrosecondsRoundUpToAJiffyAndReadBack) {
  Harness t;
  SocketId s = *t.stack().socket();
  // 1.5 s + 1 us: 1501 jiffies (DIV_ROUND_UP), read back as 1.501 s.
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_RCVTIMEO, tv_opt({1, 500001})), Errc::kOk);
  EXPECT_EQ(get_tv(t.stack(), s, SO_RCVTIMEO), (Tv{1, 501000}));
  EXPECT_EQ(t.stack().rcvtimeo(s), Duration::ms(1501));
  EXPECT_EQ(t.stack().sndtimeo(s), Duration::infinite());  // the two are separate
  // The _NEW option numbers (66, 67) are the same values.
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, tcp::kSoSndTimeoNew, tv_opt({0, 100000})), Errc::kOk);
  EXPECT_EQ(get_tv(t.stack(), s, SO_SNDTIMEO), (Tv{0, 100000}));
  EXPECT_EQ(t.stack().sndtimeo(s), Duration::ms(100));
  // {0, 0} is "no timeout" again.
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_RCVTIMEO, tv_opt({0, 0})), Errc::kOk);
  EXPECT_EQ(t.stack().rcvtimeo(s), Duration::infinite());
}

TEST(SockTimeo, NegativeSecondsMeanNoWaitAndBadValuesFail) {
  Harness t;
  SocketId s = *t.stack().socket();
  // A negative tv_sec: 0 jiffies, the call does not wait (read back as {0, 0}).
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_RCVTIMEO, tv_opt({-1, 0})), Errc::kOk);
  EXPECT_EQ(t.stack().rcvtimeo(s), Duration::zero());
  EXPECT_EQ(get_tv(t.stack(), s, SO_RCVTIMEO), (Tv{0, 0}));
  // tv_usec outside [0, 1e6): EDOM, the old value kept.
  EXPECT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_RCVTIMEO, tv_opt({1, 1000000})), Errc::kDom);
  EXPECT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_RCVTIMEO, tv_opt({1, -1})), Errc::kDom);
  EXPECT_EQ(t.stack().rcvtimeo(s), Duration::zero());
  // Shorter than a timeval: EINVAL.
  EXPECT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_SNDTIMEO, tv_opt({1, 0}, 8)), Errc::kInval);
  // Too many seconds for jiffies: for ever.
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_SNDTIMEO,
                                 tv_opt({tcp::kMaxScheduleTimeout / tcp::kHz, 0})), Errc::kOk);
  EXPECT_EQ(t.stack().sndtimeo(s), Duration::infinite());
}

TEST(SockTimeo, ShortGetBufferIsCutAndChildInheritsTheListeners) {
  Harness t;
  SocketId l = *t.stack().socket();
  t.stack().bind(l, Endpoint{t.local, 8080});
  ASSERT_EQ(t.stack().setsockopt(t.now(), l, SOL_SOCKET, SO_RCVTIMEO, tv_opt({2, 0})), Errc::kOk);
  std::array<uint8_t, 8> small{};
  size_t len = 0;
  ASSERT_EQ(t.stack().getsockopt(l, SOL_SOCKET, SO_RCVTIMEO, small, &len), Errc::kOk);
  EXPECT_EQ(len, 8u);  // sk_getsockopt: min(len, sizeof(tv))
  int64_t sec = 0;
  std::memcpy(&sec, small.data(), 8);
  EXPECT_EQ(sec, 2);
  t.stack().listen(t.now(), l, 8);
  t.listener = l;
  SocketId c = t.passive_open();
  EXPECT_EQ(t.stack().rcvtimeo(c), Duration::s(2));  // sk_clone_lock copies sk_rcvtimeo
}

}  // namespace
}  // namespace weir::test
