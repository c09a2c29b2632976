// `weir ss` lists the timewait socks, as ss does from inet_diag's walk of
// the established hash (inet_twsk_diag_fill): the state is tw_substate,
// the queues are empty and `-o` adds "timer:(timewait,<left>,0)".
#include <gtest/gtest.h>

#include "driver/ss_format.h"
#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

// iproute2 print_ms_timer.
TEST(TimewaitSs, TimerAsIproute2PrintsIt) {
  EXPECT_EQ(driver::ss_ms_timer(59'500), "59sec");
  EXPECT_EQ(driver::ss_ms_timer(5'250), "5.250ms");
  EXPECT_EQ(driver::ss_ms_timer(200), "200ms");
  EXPECT_EQ(driver::ss_ms_timer(60'000), "1min");
  EXPECT_EQ(driver::ss_ms_timer(61'500), "1min1sec");
  EXPECT_EQ(driver::ss_ms_timer(0), "");
}

// An orphan's TIME-WAIT (no application socket left) is listed, with the
// time its timer has left; once it expires, it is gone.
TEST(TimewaitSs, AnOrphansTimeWaitIsListed) {
  Harness t;
  SocketId s = t.active_open();
  ASSERT_EQ(t.stack().close(t.now(), s), Errc::kOk);
  ASSERT_TRUE(t.expect_tx().has(FIN));
  t.inject(FIN | ACK, 1, 2);
  ASSERT_EQ(t.rel_ack(t.expect_tx()), 2u);
  t.advance(Duration::ms(500));
  t.stack().advance(t.now());  // the listing reads the time the stack was last given
  const std::string out = driver::format_ss(t.stack(), {}, t.now(), true);
  EXPECT_NE(out.find("TIME-WAIT"), std::string::npos) << out;
  EXPECT_NE(out.find("192.0.2.1:50000 timer:(timewait,59sec,0)"), std::string::npos) << out;
  const std::vector<TimewaitSock> tw = t.stack().timewait_socks();
  ASSERT_EQ(tw.size(), 1u);
  EXPECT_EQ(tw[0].state, 6);
  EXPECT_EQ(tw[0].expires, Duration::ms(59'500));
  EXPECT_EQ(tw[0].remote.port, 50000);
  t.advance(Duration::s(60));
  EXPECT_TRUE(t.stack().timewait_socks().empty());
  EXPECT_EQ(driver::format_ss(t.stack(), {}, t.now(), true).find("TIME-WAIT"), std::string::npos);
}

// An orphan's FIN-WAIT-2 timewait stage shows its tw_substate.
TEST(TimewaitSs, AFinWait2TimewaitSockShowsItsSubstate) {
  Harness t;
  SocketId s = t.passive_open();
  ASSERT_EQ(t.stack().close(t.now(), s), Errc::kOk);
  ASSERT_TRUE(t.expect_tx().has(FIN));
  t.inject(ACK, 1, 2);
  const std::vector<TimewaitSock> tw = t.stack().timewait_socks();
  ASSERT_EQ(tw.size(), 1u);
  EXPECT_EQ(tw[0].state, 5);
  EXPECT_NE(driver::format_ss(t.stack(), {}, t.now(), false).find("FIN-WAIT-2"), std::string::npos);
}

}  // namespace
}  // namespace weir::test
