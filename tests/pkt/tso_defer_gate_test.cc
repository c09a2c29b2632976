// TSO deferral applies where weir's device takes GSO super-packets
// (Netif::gso; src/tcp/tso_defer.h): the runner's tun0 does, until the
// script runs `ethtool -K tun0 tso off gso off`. The same exchange with
// each: deferred (in flight stays below cwnd, the send buffer grows and the
// writer gets POLLOUT, as Linux does) and not deferred.
#include <string>

#include <gtest/gtest.h>

#include "pkt/parser.h"
#include "pkt/runner.h"

namespace weir::pkt {
namespace {

RunResult run(const std::string& text) {
  auto s = parse_script(text, "t.pkt");
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().to_string());
  if (!s) return {};
  RunOptions opt;
  opt.run_code = false;
  return run_script(*s, text, opt);
}

std::string script(const std::string& device, const std::string& after_ack_20001) {
  return "`./defaults.sh\n"
         "sysctl -q net.ipv4.tcp_wmem=\"4096 60000 4194304\"\n"
         "sysctl -q net.ipv4.tcp_min_tso_segs=10\n" +
         device +
         "`\n"
         "    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n"
         "   +0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0\n"
         "   +0 bind(3, ..., ...) = 0\n"
         "   +0 listen(3, 1) = 0\n"
         "   +0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>\n"
         "   +0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>\n"
         " +.02 < . 1:1(0) ack 1 win 300\n"
         "   +0 accept(3, ..., ...) = 4\n"
         "   +0 fcntl(4, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n"
         "   +0 write(4, ..., 90000) = 67000\n"
         "   +0 > P. 1:10001(10000) ack 1\n"
         " +.02 < . 1:1(0) ack 10001 win 300\n"
         "   +0 > . 10001:30001(20000) ack 1\n"
         "   +0 poll([{fd=4, events=POLLOUT, revents=0}], 1, 0) = 0\n"
         " +.02 < . 1:1(0) ack 20001 win 300\n"
         "   +0 > P. 30001:48001(18000) ack 1\n" +
         after_ack_20001;
}

TEST(TsoDeferGate, GsoDeviceDefersThePartialSkbAndTheBufferGrows) {
  const RunResult r = run(script("", "   +0 poll([{fd=4, events=POLLOUT, revents=POLLOUT}], 1, 0) = 1\n"
                                     " +.02 < . 1:1(0) ack 30001 win 300\n"
                                     "   +0 > P. 48001:67001(19000) ack 1\n"));
  EXPECT_EQ(r.outcome, Outcome::kPass) << r.reason << " at line " << r.line;
}

TEST(TsoDeferGate, TsoAndGsoOffSendsThePartialBurstAtOnce) {
  const RunResult r = run(script("ethtool -K tun0 tso off gso off\n",
                                 "   +0 > P. 48001:50001(2000) ack 1\n"
                                 "   +0 poll([{fd=4, events=POLLOUT, revents=0}], 1, 0) = 0\n"));
  EXPECT_EQ(r.outcome, Outcome::kPass) << r.reason << " at line " << r.line;
}

TEST(TsoDeferGate, EitherOffloadKeepsDeferral) {
  const RunResult r = run(script("ethtool -K tun0 tso off\n",
                                 "   +0 poll([{fd=4, events=POLLOUT, revents=POLLOUT}], 1, 0) = 1\n"));
  EXPECT_EQ(r.outcome, Outcome::kPass) << r.reason << " at line " << r.line;
}

}  // namespace
}  // namespace weir::pkt
