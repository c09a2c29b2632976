// getsockopt(TCP_CC_INFO)'s payload (Linux union tcp_cc_info): BBR's struct
// tcp_bbr_info, nothing for CUBIC and Reno (no get_info in Linux).
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "pipe_helper.h"
#include "tcp/cc/bbr.h"
#include "tcp/cc/cc_info.h"
#include "tcp/cc/cubic.h"
#include "tcp/cc/reno.h"

namespace weir::cc {
namespace {

Time at(Duration d) { return Time::zero() + d; }

// 1000 packets/s of 1000 bytes, 50 ms base RTT.
test::PathConfig path() {
  test::PathConfig cfg;
  cfg.rtt = Duration::ms(50);
  cfg.rate_pps = 1000;
  cfg.buffer = 200;
  return cfg;
}

TEST(CcInfo, BbrReportsTcpBbrInfoFromItsModel) {
  Bbr bbr;
  test::Pipe pipe(bbr, path());
  pipe.run_until(at(Duration::s(3)));
  std::array<uint8_t, 64> buf;
  buf.fill(0xAA);
  ASSERT_EQ(cc_info(bbr, CcState{}, buf), sizeof(TcpBbrInfo));
  TcpBbrInfo b;
  std::memcpy(&b, buf.data(), sizeof b);
  EXPECT_EQ(buf[sizeof b], 0xAA);  // nothing beyond the struct
  TcpInfo i;
  bbr.get_info(i);
  const uint64_t bw = (uint64_t{b.bbr_bw_hi} << 32) | b.bbr_bw_lo;
  EXPECT_EQ(bw, i.bbr_bw);
  // The bottleneck: 1000 packets/s x 1000 bytes.
  EXPECT_NEAR(static_cast<double>(bw), 1e6, 1e6 * 0.05);
  EXPECT_GE(b.bbr_min_rtt, 50000u);
  EXPECT_LE(b.bbr_min_rtt, 52000u);
  EXPECT_EQ(b.bbr_pacing_gain, bbr.state().pacing_gain);
  EXPECT_EQ(b.bbr_cwnd_gain, bbr.state().cwnd_gain);
  EXPECT_GT(b.bbr_cwnd_gain, 0u);
}

TEST(CcInfo, BbrInfoIsTruncatedToTheCallersLength) {
  Bbr bbr;
  test::Pipe pipe(bbr, path());
  pipe.run_until(at(Duration::s(1)));
  std::array<uint8_t, 12> small;
  small.fill(0);
  ASSERT_EQ(cc_info(bbr, CcState{}, small), 12u);  // Linux: len = min(len, sz)
  TcpInfo i;
  bbr.get_info(i);
  uint32_t min_rtt;
  std::memcpy(&min_rtt, small.data() + 8, 4);
  EXPECT_EQ(min_rtt, i.bbr_min_rtt);
}

TEST(CcInfo, CubicAndRenoHaveNone) {
  Cubic cubic;
  Reno reno;
  std::array<uint8_t, 64> buf;
  buf.fill(0xAA);
  EXPECT_EQ(cc_info(cubic, CcState{}, buf), 0u);
  EXPECT_EQ(cc_info(reno, CcState{}, buf), 0u);
  EXPECT_EQ(buf[0], 0xAA);
}

}  // namespace
}  // namespace weir::cc
