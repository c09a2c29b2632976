// Linux tcp_tso_should_defer's decision table (net/ipv4/tcp_output.c, the
// 2025 "vs large RTT" form): each test moves one input across one of
// Linux's conditions from a case that defers, so dropping or loosening that
// condition fails it.
#include <gtest/gtest.h>

#include "tcp/tso_defer.h"

namespace weir::tcp {
namespace {

// mss 1000, cwnd 30, srtt 20 ms, the head sent one srtt ago (its ACK is due
// now), the last departure 0.5 ms ago, the peer's window 38400 (chunk for
// tcp_tso_win_divisor 3: min(38400, 30000) / 3 = 10000), full burst 10
// segments. 27 in flight: 3000 bytes of cwnd for a 2500-byte tail skb, so
// neither window limits it: application-limited.
TsoDeferInput app_limited() {
  TsoDeferInput in;
  in.since_last_send = Duration::us(500);
  in.cwnd = 30;
  in.in_flight = 27;
  in.mss = 1000;
  in.snd_wnd = 38400;
  in.send_win = 30000;
  in.skb_len = 2500;
  in.skb_is_tail = true;
  in.max_segs = 10;
  in.win_divisor = 3;
  in.have_head = true;
  in.srtt = Duration::ms(20);
  in.head_age = Duration::ms(20);
  return in;
}

// The same with 28 in flight and a 9000-byte skb: 2000 bytes of cwnd.
TsoDeferInput cwnd_limited() {
  TsoDeferInput in = app_limited();
  in.in_flight = 28;
  in.skb_len = 9000;
  return in;
}

TEST(TsoDefer, BaseCasesDefer) {
  EXPECT_EQ(tso_should_defer(app_limited()), TsoDefer::kAppLimited);
  EXPECT_EQ(tso_should_defer(cwnd_limited()), TsoDefer::kCwndLimited);
}

TEST(TsoDefer, RecoveryAndLossSendNow) {
  TsoDeferInput in = cwnd_limited();
  in.in_recovery = true;
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
}

// "Avoid bursty behavior by allowing defer only if the last write was
// recent (1 ms)": tcp_clock_cache - tcp_wstamp_ns - NSEC_PER_MSEC > 0 sends.
TEST(TsoDefer, OnlyWithinOneMillisecondOfTheLastDeparture) {
  TsoDeferInput in = cwnd_limited();
  in.since_last_send = Duration::ms(2);
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
  in.since_last_send = Duration::us(1001);
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
  in.since_last_send = Duration::us(999);
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kCwndLimited);
  // A departure stamp in the future (paced packets waiting) is recent.
  in.since_last_send = -Duration::ms(3);
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kCwndLimited);
  // weir's one departure from Linux here: exactly 1 ms counts as past
  // (virtual time; see tso_defer.cc).
  in.since_last_send = Duration::ms(1);
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
}

TEST(TsoDefer, FullSizedBurstSendsNow) {
  TsoDeferInput in = cwnd_limited();
  in.max_segs = 2;  // limit 2000 >= 2 * mss
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
  in.max_segs = 3;
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kCwndLimited);
}

// "Middle in queue won't get any more data, full sendable already?"
TEST(TsoDefer, SkbBeforeTheTailSendsWhenItFitsWhole) {
  TsoDeferInput in = app_limited();
  in.skb_is_tail = false;  // limit 3000 >= 2500
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
  in.skb_len = 3001;       // does not fit: waits for cwnd
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kCwndLimited);
}

// "If at least some fraction of a window is available, just use it."
TEST(TsoDefer, MoreThanAWinDivisorShareOfTheWindowSendsNow) {
  TsoDeferInput in = cwnd_limited();
  in.max_segs = 20;
  in.in_flight = 20;  // limit 10000 = min(38400, 30000) / 3
  in.skb_len = 12000;
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
  in.in_flight = 21;  // 9000
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kCwndLimited);
  // The share is of min(snd_wnd, cwnd * mss): a small peer window lowers it.
  in.snd_wnd = 27000;
  in.send_win = 27000;  // chunk 9000
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
}

// tcp_tso_win_divisor 0: defer only while at most tcp_max_tso_deferred_mss
// (3) segments fit.
TEST(TsoDefer, WinDivisorZeroDefersUpToThreeSegments) {
  TsoDeferInput in = cwnd_limited();
  in.win_divisor = 0;
  in.max_segs = 20;
  in.in_flight = 27;  // limit 3000: not more than 3 * mss
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kCwndLimited);
  in.in_flight = 26;  // 4000
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
}

// The head's ACK is expected at head->tstamp + srtt; more than
// min(srtt/2, 1 ms) from now, do not defer.
TEST(TsoDefer, HeadAckMustBeDueWithinHalfSrttCappedAtOneMillisecond) {
  TsoDeferInput in = cwnd_limited();
  in.head_age = Duration::ms(10);  // ACK 10 ms away: the pre-2025 srtt/2 rule would defer
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
  in.head_age = Duration::us(18900);  // 1.1 ms away
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
  in.head_age = Duration::us(19100);  // 0.9 ms
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kCwndLimited);
  in.head_age = Duration::ms(30);  // overdue
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kCwndLimited);
  // A short path: the threshold is srtt/2 = 0.4 ms.
  in.srtt = Duration::us(800);
  in.head_age = Duration::us(300);  // 0.5 ms away
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
  in.head_age = Duration::us(500);  // 0.3 ms
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kCwndLimited);
  // Nothing in flight to wait for.
  in.have_head = false;
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kSendNow);
}

// Cwnd-limited and rwnd-limited deferrals wait even for an skb that will
// get no more data; an application-limited one does not.
TEST(TsoDefer, WindowLimitedWaitsForClosedSkbsAppLimitedDoesNot) {
  TsoDeferInput in = cwnd_limited();
  in.skb_closed = true;
  EXPECT_EQ(tso_should_defer(in), TsoDefer::kCwndLimited);
  TsoDeferInput r = cwnd_limited();
  r.in_flight = 20;    // cong_win 10000
  r.max_segs = 20;
  r.snd_wnd = 9000;    // chunk 3000
  r.send_win = 2000;   // limit 2000 < chunk
  r.skb_closed = true;
  EXPECT_EQ(tso_should_defer(r), TsoDefer::kRwndLimited);
  r.skb_len = 1999;    // the skb fits the peer's window: not rwnd-limited, and closed
  EXPECT_EQ(tso_should_defer(r), TsoDefer::kSendNow);
  // Not cwnd-limited (the skb fits cwnd) and closed (FIN or MSG_EOR): send.
  TsoDeferInput a = app_limited();
  a.skb_closed = true;
  EXPECT_EQ(tso_should_defer(a), TsoDefer::kSendNow);
  // cwnd_limited() whose skb fits the cwnd left is application-limited.
  TsoDeferInput c = cwnd_limited();
  c.skb_len = 1999;
  EXPECT_EQ(tso_should_defer(c), TsoDefer::kAppLimited);
}

}  // namespace
}  // namespace weir::tcp
