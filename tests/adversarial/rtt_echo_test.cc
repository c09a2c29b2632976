// Why a lossy ACK path can push the RTO to its 120 s cap (soak seeds 542 and
// 826, docs/reliability.md), pinned step by step as Linux does it:
//
// 1. The receiver drops a retransmission that lies wholly below the window's
//    left edge (rcv.wup) without updating TS.Recent, and its duplicate ACK
//    echoes the TSval of the last in-order segment it took (Linux
//    tcp_validate_incoming -> tcp_send_dupack; tcp_replace_ts_recent runs
//    only for segments that pass tcp_sequence; RFC 7323 §4.3).
// 2. The sender takes that echo as an RTT sample although the ACK covers
//    retransmitted data: Karn forbids only the sequence sample (Linux
//    tcp_clean_rtx_queue FLAG_RETRANS_DATA_ACKED), tcp_ack_update_rtt falls
//    back to the TSecr whenever the ACK acknowledges new data, and
//    tcp_rtt_tsopt_us refuses only an echo from the future or older than
//    INT_MAX microseconds (about 35 minutes). The sample spans the RTO wait.
//
// When the first ACK of a timeout episode is lost and a later duplicate ACK
// gets through, the sample is the episode's length and the RTO grows to
// about 9/8 of it; repeated, it reaches TCP_RTO_MAX. The soak keeps Linux's
// behaviour and reports such seeds with their RTO.
#include <gtest/gtest.h>

#include "adversarial/adv_helper.h"
#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

TEST(RttEcho, DuplicateAckForOldRetransmissionEchoesTheLastInOrderTsval) {
  Harness h;
  h.passive_open();
  h.inject(ACK, 1, 1, 100);  // TSval P1
  h.advance(Duration::ms(300));
  h.clear_tx();
  h.inject(ACK, 101, 1, 100);  // TSval P2, the last in-order segment
  const uint32_t p2 = h.peer_tsval + static_cast<uint32_t>(h.now().ms());
  h.advance(Duration::ms(300));  // its ACK goes out (and, in the story, is lost)
  h.clear_tx();
  h.advance(Duration::s(1));
  // The peer's retransmission of the first segment, with a fresh TSval.
  h.inject(ACK, 1, 1, 100);
  const uint32_t fresh = h.peer_tsval + static_cast<uint32_t>(h.now().ms());
  ASSERT_GT(fresh, p2);
  Tx dup = h.expect_tx();
  ASSERT_TRUE(dup.h.options.ts);
  EXPECT_EQ(h.rel_ack(dup), 201u);
  EXPECT_EQ(dup.h.options.ts->ecr, p2) << "TS.Recent is not taken from a segment below rcv.wup";
}

TEST(RttEcho, AckOfRetransmittedDataIsSampledFromItsEcho) {
  Harness h;
  PeerOpts o;
  o.sack = false;  // no tail loss probe (Linux schedules TLP only with SACK)
  const SocketId s = h.passive_open(o);
  std::vector<uint8_t> data(1000, 0x11);
  // One clean round trip of 50 ms.
  ASSERT_EQ(*h.stack().send(h.now(), s, data), data.size());
  h.expect_tx();
  h.advance(Duration::ms(50));
  h.inject(ACK, 1, 1 + 1000);
  const uint32_t srtt0 = h.stack().tcp_info(s)->tcpi_rtt;
  ASSERT_GT(srtt0, 0u);
  // The next segment's ACK is lost: the RTO retransmits it.
  ASSERT_EQ(*h.stack().send(h.now(), s, data), data.size());
  Tx orig = h.expect_tx();
  ASSERT_TRUE(orig.h.options.ts);
  const Time sent = h.now();
  h.run_next_timer();
  Tx rtx = h.expect_tx();
  ASSERT_EQ(h.rel_seq(rtx), h.rel_seq(orig)) << "the RTO retransmission";
  ASSERT_GE(h.stack().tcp_info(s)->tcpi_backoff, 1u);
  // A duplicate ACK echoing the original's TSval arrives 50 ms later.
  h.advance(Duration::ms(50));
  const Duration spanned = h.now() - sent;
  h.last_tsval = orig.h.options.ts->val;
  h.inject(ACK, 1, 1 + 2000);
  auto ti = h.stack().tcp_info(s);
  // Linux tcp_rtt_estimator: srtt += (m - srtt) / 8 with m the whole span.
  const int64_t expect = srtt0 + (spanned.us() - static_cast<int64_t>(srtt0)) / 8;
  EXPECT_NEAR(static_cast<double>(ti->tcpi_rtt), static_cast<double>(expect), 2000.0)
      << "the echo gives a sample spanning the RTO wait (" << spanned.us() << " us)";
  EXPECT_EQ(ti->tcpi_backoff, 0u) << "RFC 6298 (5.7): a valid sample resets the backoff";
  EXPECT_GT(ti->tcpi_rto, static_cast<uint32_t>(spanned.us())) << "the RTO now exceeds the span";
  measured("rtt_echo.sample_us", static_cast<double>(spanned.us()));
  measured("rtt_echo.rto_after_us", ti->tcpi_rto);
}

}  // namespace
}  // namespace weir::test
