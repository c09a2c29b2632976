// RFC 4821 PLPMTUD search (tcp/mtu_probe.h) as Linux keeps it in icsk_mtup:
// the probe size is the middle of [search_low, search_high], a probe needs
// data, window and cwnd behind it, success raises search_low, loss lowers
// search_high, and RTO black-hole detection turns the search on or halves
// the MSS.
#include <gtest/gtest.h>

#include "tcp/mtu_probe.h"

namespace weir::tcp {
namespace {

// IPv4, no options, the peer's MSS 1460: search_high starts at 1500.
MssMath v4(uint32_t opt_len = 0) {
  MssMath m;
  m.net_hdr = 20;
  m.opt_len = opt_len;
  m.mss_clamp = 1460;
  m.min_snd_mss = 48;
  return m;
}

MtupConfig always(uint32_t base_mss = 512) {
  MtupConfig c;
  c.mtu_probing = 2;
  c.base_mss = base_mss;
  return c;
}

// A sender with plenty of data, window and cwnd, at MSS 600.
ProbeInput ready(Time now = Time::from_ns(0)) {
  ProbeInput in;
  in.now = now;
  in.cwnd = 11;
  in.mss_cache = 600;
  in.reordering = 3;
  in.unsent = 4000;
  in.snd_wnd = 50000;
  in.wnd_room = 50000;
  return in;
}

TEST(MssMath, MtuAndMssConvertWithHeadersAndOptions) {
  EXPECT_EQ(v4().mtu_to_mss(640), 600u);
  EXPECT_EQ(v4(12).mtu_to_mss(640), 588u);  // timestamps
  EXPECT_EQ(v4().mss_to_mtu(512), 552u);
  EXPECT_EQ(v4(12).mss_to_mtu(512), 564u);
  EXPECT_EQ(v4().mtu_to_mss(9000), 1460u);  // clamped to the peer's MSS
  EXPECT_EQ(v4().mtu_to_mss(60), 48u);      // tcp_min_snd_mss
}

TEST(MtuProbe, InitSpansBaseMssToPeerMss) {
  MtuProbe p;
  p.init(always(), v4(), Time::from_ns(0));
  EXPECT_TRUE(p.enabled());
  EXPECT_EQ(p.search_low(), 552u);
  EXPECT_EQ(p.search_high(), 1500u);
  MtupConfig off = always();
  off.mtu_probing = 1;  // only after a black hole
  p.init(off, v4(), Time::from_ns(0));
  EXPECT_FALSE(p.enabled());
}

TEST(MtuProbe, SyncLowersSearchHighAndBoundsMssBySearchLow) {
  MtuProbe p;
  p.init(always(), v4(), Time::from_ns(0));
  EXPECT_EQ(p.sync(1400, 1360, v4()), 512u);  // RFC 4821 §7.3: the size known to work
  EXPECT_EQ(p.search_high(), 1400u);
  EXPECT_EQ(p.sync(1500, 1460, v4()), 512u);  // a larger PMTU never raises it back
  EXPECT_EQ(p.search_high(), 1400u);
  MtuProbe off;
  off.init(MtupConfig{}, v4(), Time::from_ns(0));
  EXPECT_EQ(off.sync(1500, 1460, v4()), 1460u);  // tcp_mtu_probing=0: the MSS is untouched
}

TEST(MtuProbe, ProbeIsTheMiddleOfTheSearchRange) {
  MtuProbe p;
  p.init(always(), v4(), Time::from_ns(0));
  const auto d = p.decide(always(), v4(), ready());
  ASSERT_EQ(d.verdict, MtuProbe::Verdict::kProbe);
  EXPECT_EQ(d.size, 986u);  // mtu_to_mss((1500 + 552) / 2 = 1026)
}

TEST(MtuProbe, ProbeNeedsDataWindowAndCwnd) {
  MtuProbe p;
  p.init(always(), v4(), Time::from_ns(0));
  // size_needed = 986 + (reordering + 1) * 600 = 3386.
  ProbeInput in = ready();
  in.unsent = 3385;
  EXPECT_EQ(p.decide(always(), v4(), in).verdict, MtuProbe::Verdict::kNo);
  in = ready();
  in.snd_wnd = 3385;
  EXPECT_EQ(p.decide(always(), v4(), in).verdict, MtuProbe::Verdict::kNo);
  in = ready();
  in.wnd_room = 3385;  // the window will open: hold new data back
  EXPECT_EQ(p.decide(always(), v4(), in).verdict, MtuProbe::Verdict::kWait);
  in = ready();
  in.cwnd = 10;  // Linux wants cwnd >= 11
  EXPECT_EQ(p.decide(always(), v4(), in).verdict, MtuProbe::Verdict::kNo);
  in = ready();
  in.in_flight = 10;  // the probe and one more must fit: wait to drain
  EXPECT_EQ(p.decide(always(), v4(), in).verdict, MtuProbe::Verdict::kWait);
  in = ready();
  in.ca_open = false;
  EXPECT_EQ(p.decide(always(), v4(), in).verdict, MtuProbe::Verdict::kNo);
  in = ready();
  in.sack_pending = true;
  EXPECT_EQ(p.decide(always(), v4(), in).verdict, MtuProbe::Verdict::kNo);
}

TEST(MtuProbe, OneProbeAtATime) {
  MtuProbe p;
  p.init(always(), v4(), Time::from_ns(0));
  p.on_probe_sent(Seq32(1), Seq32(987), v4());
  EXPECT_EQ(p.probe_size(), 1026u);
  EXPECT_EQ(p.decide(always(), v4(), ready()).verdict, MtuProbe::Verdict::kNo);
}

TEST(MtuProbe, SuccessRaisesSearchLowAndTheMss) {
  MtuProbe p;
  p.init(always(), v4(), Time::from_ns(0));
  p.on_probe_sent(Seq32(1), Seq32(987), v4());
  EXPECT_FALSE(p.acked_by(Seq32(986)));
  EXPECT_TRUE(p.acked_by(Seq32(987)));
  // cwnd keeps its bytes: 10 * 640 / 1026.
  EXPECT_EQ(p.cwnd_after_success(10, p.probe_size(), v4(), 600), 6u);
  p.on_success();
  EXPECT_EQ(p.search_low(), 1026u);
  EXPECT_EQ(p.probe_size(), 0u);
  EXPECT_EQ(p.sync(1500, 1460, v4()), 986u);
  // The next probe is the middle of the remaining range.
  const auto d = p.decide(always(), v4(), ready());
  ASSERT_EQ(d.verdict, MtuProbe::Verdict::kProbe);
  EXPECT_EQ(d.size, v4().mtu_to_mss((1500 + 1026) / 2));
}

TEST(MtuProbe, LossAtTheProbeLowersSearchHigh) {
  MtuProbe p;
  p.init(always(), v4(), Time::from_ns(0));
  p.on_probe_sent(Seq32(1), Seq32(987), v4());
  EXPECT_TRUE(p.lost_at(Seq32(1)));
  EXPECT_FALSE(p.lost_at(Seq32(2)));  // a loss elsewhere is congestion
  p.on_failure();
  EXPECT_EQ(p.search_high(), 1025u);
  EXPECT_EQ(p.search_low(), 552u);
  EXPECT_FALSE(p.lost_at(Seq32(1)));
  const auto d = p.decide(always(), v4(), ready());
  ASSERT_EQ(d.verdict, MtuProbe::Verdict::kProbe);
  EXPECT_EQ(d.size, v4().mtu_to_mss((1025 + 552) / 2));
}

TEST(MtuProbe, SearchStopsBelowThresholdAndRestartsAfterInterval) {
  MtuProbe p;
  MtupConfig c = always();
  p.init(c, v4(), Time::from_ns(0));
  for (int i = 0; i < 20 && p.search_high() - p.search_low() >= c.probe_threshold; ++i) {
    const auto d = p.decide(c, v4(), ready());
    ASSERT_EQ(d.verdict, MtuProbe::Verdict::kProbe);
    p.on_probe_sent(Seq32(1), Seq32(1) + d.size, v4());
    p.on_success();  // the path takes everything up to 1500
  }
  EXPECT_LT(p.search_high() - p.search_low(), c.probe_threshold);
  EXPECT_EQ(p.decide(c, v4(), ready()).verdict, MtuProbe::Verdict::kNo);
  // RFC 4821 §7.7: after tcp_probe_interval the search restarts from today's MSS.
  const Time later = Time::from_ns(0) + c.probe_interval;
  EXPECT_EQ(p.decide(c, v4(), ready(later)).verdict, MtuProbe::Verdict::kNo);
  EXPECT_EQ(p.search_low(), v4().mss_to_mtu(600));
  EXPECT_EQ(p.search_high(), 1500u);
  EXPECT_EQ(p.decide(c, v4(), ready(later)).verdict, MtuProbe::Verdict::kProbe);
}

TEST(MtuProbe, BlackHoleTurnsSearchOnThenHalvesTheMss) {
  MtupConfig c = always(1024);
  c.mtu_probing = 1;
  MtuProbe p;
  p.init(c, v4(), Time::from_ns(0));
  ASSERT_FALSE(p.enabled());
  p.on_blackhole(c, v4(), Time::from_ns(0));
  EXPECT_TRUE(p.enabled());
  EXPECT_EQ(p.search_low(), 1064u);  // unchanged: base_mss 1024 + 40
  EXPECT_EQ(p.sync(1500, 1460, v4()), 1024u);
  p.on_blackhole(c, v4(), Time::from_ns(0));
  EXPECT_EQ(p.search_low(), 512u + 40);  // half of 1024
  p.on_blackhole(c, v4(), Time::from_ns(0));
  EXPECT_EQ(p.search_low(), 256u + 40);
  c.probe_floor = 200;
  p.on_blackhole(c, v4(), Time::from_ns(0));
  EXPECT_EQ(p.search_low(), 200u + 40);  // tcp_mtu_probe_floor
  MtupConfig off = c;
  off.mtu_probing = 0;
  MtuProbe q;
  q.init(off, v4(), Time::from_ns(0));
  q.on_blackhole(off, v4(), Time::from_ns(0));
  EXPECT_FALSE(q.enabled());  // tcp_mtu_probing=0: no black-hole detection
}

}  // namespace
}  // namespace weir::tcp
