// The runner's own behaviour, independent of how complete the engine is:
// skips name their reason, parse errors and timing errors name the line,
// a wrong expected packet fails with both packets and a marked field.
#include <string>

#include <gtest/gtest.h>

#include "pkt/parser.h"
#include "pkt/report.h"
#include "pkt/runner.h"

namespace weir::pkt {
namespace {

const char* kServer = R"(`./defaults.sh`
    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
   +0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
   +0 bind(3, ..., ...) = 0
   +0 listen(3, 1) = 0
  +.1 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
)";

RunResult run(const std::string& text, IpVersion v = IpVersion::kIpv4) {
  auto s = parse_script(text, "t.pkt");
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().to_string());
  if (!s) return {};
  RunOptions opt;
  opt.ip_version = v;
  opt.run_code = false;
  return run_script(*s, text, opt);
}

TEST(PktRunner, UnsupportedShellCommandSkipsWithTheCommand) {
  RunResult r = run("`echo 3 > /proc/sys/vm/drop_caches`\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n");
  EXPECT_EQ(r.outcome, Outcome::kSkip);
  EXPECT_NE(r.reason.find("drop_caches"), std::string::npos) << r.reason;
}

TEST(PktRunner, UnsupportedSyscallSkipsWithItsName) {
  RunResult r = run("0 pipe2([5, 6], 0) = 0\n");
  EXPECT_EQ(r.outcome, Outcome::kSkip);
  EXPECT_EQ(r.reason, "unsupported system call pipe2()");
  EXPECT_EQ(r.line, 1);
}

TEST(PktRunner, PipeEndsReadWriteAndCloseAsLinux) {
  // pipe_read / pipe_write / pipe_release: bytes in order, EBADF on the
  // wrong end, EAGAIN when empty and non-blocking, 0 once no writer is left.
  RunResult r = run(
      "0 pipe([5, 6]) = 0\n"
      "+0 write(6, ..., 10) = 10\n"
      "+0 ioctl(5, FIONREAD, [10]) = 0\n"
      "+0 read(5, ..., 4) = 4\n"
      "+0 read(6, ..., 4) = -1 EBADF (Bad file descriptor)\n"
      "+0 write(5, ..., 4) = -1 EBADF (Bad file descriptor)\n"
      "+0 read(5, ..., 100) = 6\n"
      "+0 fcntl(5, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n"
      "+0 read(5, ..., 100) = -1 EAGAIN (Resource temporarily unavailable)\n"
      "+0 close(6) = 0\n"
      "+0 read(5, ..., 100) = 0\n");
  EXPECT_EQ(r.outcome, Outcome::kPass) << r.reason;
}

TEST(PktRunner, FastOpenClientCallsRun) {
  // Client-side Fast Open: TCP_FASTOPEN_CONNECT is taken, a Fast Open send
  // to an AF_UNSPEC address is EOPNOTSUPP (tcp_sendmsg_fastopen) and one
  // without a cached cookie reports EINPROGRESS on a non-blocking socket.
  RunResult r = run(
      "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n"
      "+0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n"
      "+0 setsockopt(3, SOL_TCP, TCP_FASTOPEN_CONNECT, [1], 4) = 0\n"
      "+0 sendto(3, ..., 10, MSG_FASTOPEN, AF_UNSPEC, ...) = -1 EOPNOTSUPP (Operation not supported)\n"
      "+0 sendto(3, ..., 10, MSG_FASTOPEN, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n");
  EXPECT_EQ(r.outcome, Outcome::kPass) << r.reason;
}

TEST(PktRunner, FastOpenListenerSocketOptionsWork) {
  // TCP_FASTOPEN sets the listener's queue; TCP_FASTOPEN_KEY takes 16 or 32
  // bytes (escapes decoded as packetdrill does), anything else is EINVAL.
  RunResult r = run(
      "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n"
      "+0 setsockopt(3, SOL_TCP, TCP_FASTOPEN, [5], 4) = 0\n"
      "+0 getsockopt(3, SOL_TCP, TCP_FASTOPEN, [5], [4]) = 0\n"
      "+0 setsockopt(3, SOL_TCP, TCP_FASTOPEN_KEY, \"\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08"
      "\\x09\\x0a\\x0b\\x0c\\x0d\\x0e\\x0f\\x10\", 16) = 0\n"
      "+0 setsockopt(3, SOL_TCP, TCP_FASTOPEN_KEY, \"\\x01\\x02\", 2) = -1 EINVAL (Invalid argument)\n");
  EXPECT_EQ(r.outcome, Outcome::kPass) << r.reason;
}

TEST(PktRunner, UnknownHeaderOptionSkips) {
  RunResult r = run("--wire_client\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n");
  EXPECT_EQ(r.outcome, Outcome::kSkip);
  EXPECT_EQ(r.reason, "unsupported option --wire_client");
}

TEST(PktRunner, FirstEventMustBeAtZero) {
  RunResult r = run("1 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n");
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_EQ(r.reason, "first event should be at time 0");
}

TEST(PktRunner, WrongSyscallResultFailsWithBothValues) {
  RunResult r = run("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 close(3) = -1 EBADF (Bad file descriptor)\n");
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_EQ(r.reason, "close() expected -1 EBADF but returned 0");
  EXPECT_EQ(r.line, 2);
  EXPECT_EQ(r.script_line, "+0 close(3) = -1 EBADF (Bad file descriptor)");
}

TEST(PktRunner, MissingOutboundPacketFailsAfterTheTolerance) {
  // Nothing provokes a packet: the expectation at 0.1 s fails once the
  // tolerance (12.5 % of the 100 ms gap) has passed.
  RunResult r = run("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+.1 > S 0:0(0) <...>\n");
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_EQ(r.reason, "expected outbound packet at 0.100000 sec was not sent (waited until 0.112500 sec)");
}

// These need an engine that answers a SYN; they check the runner's matching.
TEST(PktRunner, WrongWindowInExpectedSynAckIsMarked) {
  RunResult r = run(std::string(kServer) + "+0 > S. 0:0(0) ack 1 win 1 <...>\n");
  ASSERT_EQ(r.outcome, Outcome::kFail) << r.reason;
  EXPECT_NE(r.reason.find("tcp_window: expected 1 vs actual"), std::string::npos) << r.reason;
  ASSERT_EQ(r.detail.size(), 3u);
  EXPECT_EQ(r.detail[0], "expected: S. 0:0(0) ack 1 win 1 <...>");
  EXPECT_EQ(r.detail[1].rfind("actual:   S. 0:0(0) ack 1 win ", 0), 0u) << r.detail[1];
  // The caret sits under the window field of the actual packet.
  size_t caret = r.detail[2].find('^');
  EXPECT_EQ(r.detail[1].substr(caret, 3), "win");
}

TEST(PktRunner, EarlyPacketIsATimingError) {
  RunResult r = run(std::string(kServer) + "+.5 > S. 0:0(0) ack 1 <...>\n");
  ASSERT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.reason.find("timing error: expected outbound packet at 0.600000 sec but happened at 0.100000 sec"),
            std::string::npos) << r.reason;
}

TEST(PktRunner, HandshakePassesInEveryIpVariant) {
  std::string s = std::string(kServer) + "+0 > S. 0:0(0) ack 1 <...>\n+.1 < . 1:1(0) ack 1 win 257\n+0 accept(3, ..., ...) = 4\n";
  for (IpVersion v : {IpVersion::kIpv4, IpVersion::kIpv6, IpVersion::kIpv4MappedIpv6}) {
    RunResult r = run(s, v);
    EXPECT_EQ(r.outcome, Outcome::kPass) << to_string(v) << ": " << r.reason;
    // Both directions are recorded for --pcap.
    EXPECT_GE(r.packets.size(), 3u);
  }
}

// SO_ZEROCOPY lives in the engine and carries over from the listener to
// the accepted child (Linux sk_clone_lock); a MSG_ZEROCOPY send's
// completion waits on the error queue: POLLERR, then recvmsg(MSG_ERRQUEUE)
// checked control message by control message, a mismatch naming the field.
TEST(PktRunner, ZerocopyCompletionIsCheckedFieldByField) {
  std::string s = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n"
                  "+0 setsockopt(3, SOL_SOCKET, SO_ZEROCOPY, [1], 4) = 0\n"
                  "+0 bind(3, ..., ...) = 0\n+0 listen(3, 1) = 0\n"
                  "+.1 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>\n"
                  "+0 > S. 0:0(0) ack 1 <...>\n+.1 < . 1:1(0) ack 1 win 257\n+0 accept(3, ..., ...) = 4\n"
                  "+0 getsockopt(4, SOL_SOCKET, SO_ZEROCOPY, [1], [4]) = 0\n"
                  "+0 setsockopt(4, SOL_SOCKET, SO_ZEROCOPY, [2], 4) = -1 EINVAL (Invalid argument)\n"
                  "+0 send(4, ..., 0, MSG_ZEROCOPY) = 0\n"
                  "+0 poll([{fd=4, events=POLLOUT, revents=POLLOUT}], 1, 0) = 1\n"
                  "+0 send(4, ..., 100, MSG_ZEROCOPY) = 100\n"
                  "+0 > P. 1:101(100) ack 1 <...>\n"
                  "+.1 < . 1:1(0) ack 101 win 257\n"
                  "+0 poll([{fd=4, events=POLLOUT, revents=POLLOUT|POLLERR}], 1, 0) = 1\n";
  auto recv = [](int data, bool v6 = false) {
    return std::string("+0 recvmsg(4, {msg_name(...)=..., msg_iov(1)=[{...,0}], msg_flags=MSG_ERRQUEUE, msg_control=[") +
           (v6 ? "{cmsg_level=SOL_IPV6, cmsg_type=IPV6_RECVERR" : "{cmsg_level=SOL_IP, cmsg_type=IP_RECVERR") +
           ", cmsg_data={ee_errno=0, "
           "ee_origin=SO_EE_ORIGIN_ZEROCOPY, ee_type=0, ee_code=SO_EE_CODE_ZEROCOPY_COPIED, ee_info=0, ee_data=" +
           std::to_string(data) + "}}]}, MSG_ERRQUEUE) = 0\n";
  };
  for (IpVersion v : {IpVersion::kIpv4, IpVersion::kIpv6, IpVersion::kIpv4MappedIpv6}) {
    RunResult r = run(s + recv(0, v != IpVersion::kIpv4), v);
    EXPECT_EQ(r.outcome, Outcome::kPass) << to_string(v) << ": " << r.reason;
  }
  RunResult r = run(s + recv(1));
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.reason.find("ee_data expected 1 but got 0"), std::string::npos) << r.reason;
}

// SO_TIMESTAMPING flags weir does not record skip the script, precisely.
TEST(PktRunner, UnmodelledTimestampingFlagsSkip) {
  std::string s = std::string(kServer) + "+0 > S. 0:0(0) ack 1 <...>\n+.1 < . 1:1(0) ack 1 win 257\n"
                  "+0 accept(3, ..., ...) = 4\n"
                  "+0 setsockopt(4, SOL_SOCKET, SO_TIMESTAMPING, [SOF_TIMESTAMPING_TX_HARDWARE], 4) = 0\n";
  RunResult r = run(s);
  EXPECT_EQ(r.outcome, Outcome::kSkip);
  EXPECT_NE(r.reason.find("SO_TIMESTAMPING flags 0x1"), std::string::npos) << r.reason;
}

// IP_MTU_DISCOVER is kept by the runner with Linux's argument checks
// (ip_setsockopt), IP_TOS is the engine's (a one-byte value read as
// do_ip_setsockopt reads it); getsockopt reads both back.
TEST(PktRunner, IpLevelOptionsBehaveAsOnLinux) {
  const std::string s = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n"
                        "+0 getsockopt(3, SOL_IP, IP_MTU_DISCOVER, [1], [4]) = 0\n"
                        "+0 setsockopt(3, SOL_IP, IP_MTU_DISCOVER, [IP_PMTUDISC_DONT], 1) = 0\n"
                        "+0 getsockopt(3, SOL_IP, IP_MTU_DISCOVER, [IP_PMTUDISC_DONT], [4]) = 0\n"
                        "+0 setsockopt(3, SOL_IP, IP_MTU_DISCOVER, [6], 4) = -1 EINVAL (Invalid argument)\n"
                        "+0 setsockopt(3, SOL_IP, IP_TOS, [4], 1) = 0\n"
                        "+0 getsockopt(3, SOL_IP, IP_TOS, [4], [4]) = 0\n";
  for (IpVersion v : {IpVersion::kIpv4, IpVersion::kIpv6}) {
    RunResult r = run(s, v);
    EXPECT_EQ(r.outcome, Outcome::kPass) << to_string(v) << ": " << r.reason;
  }
}

// A failure inside a blocking call that completes later names that call's
// line, not the line the timeline had reached.
TEST(PktRunner, BlockingCallFailureNamesItsOwnLine) {
  std::string s = std::string(kServer) +
                  "+0 > S. 0:0(0) ack 1 <...>\n+.1 < . 1:1(0) ack 1 win 257\n+0 accept(3, ..., ...) = 4\n"
                  "+0...0.1 read(4, ..., 100) = 99\n"
                  "+.1 < P. 1:101(100) ack 1 win 257\n";
  RunResult r = run(s);
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_EQ(r.reason, "read() expected result 99 but returned 100");
  EXPECT_EQ(r.line, 10);
}

TEST(PktRunner, VariantsFollowTheScriptName) {
  EXPECT_EQ(variants_for("a/basic-v6.pkt"), std::vector<IpVersion>{IpVersion::kIpv6});
  EXPECT_EQ(variants_for("a/basic-v4.pkt").size(), 2u);
  EXPECT_EQ(variants_for("a/basic.pkt").size(), 3u);
}

TEST(PktReport, TotalsLineIsExact) {
  std::vector<ScriptRun> runs(3);
  runs[1].result.outcome = Outcome::kFail;
  runs[2].result.outcome = Outcome::kSkip;
  EXPECT_EQ(format_totals(runs), "1 passed, 1 failed, 1 skipped");
}

}  // namespace
}  // namespace weir::pkt
