// The packetdrill parser: grammar pieces, error positions, and the whole
// google/packetdrill TCP corpus from ../shared.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pkt/parser.h"

namespace weir::pkt {
namespace {

Script parse_ok(const std::string& text) {
  auto s = parse_script(text, "t.pkt");
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().to_string());
  return s ? *s : Script{};
}

std::string parse_err(const std::string& text) {
  auto s = parse_script(text, "t.pkt");
  EXPECT_FALSE(s.has_value());
  return s ? "" : s.error().to_string();
}

TEST(PktParser, HeaderOptionsKeepNameAndValue) {
  Script s = parse_ok("--tolerance_usecs=10000\n--strict_segments\n0 `true`\n");
  ASSERT_EQ(s.options.size(), 2u);
  EXPECT_EQ(s.options[0].first, "tolerance_usecs");
  EXPECT_EQ(s.options[0].second, "10000");
  EXPECT_EQ(s.options[1].first, "strict_segments");
  EXPECT_EQ(s.options[1].second, "");
}

TEST(PktParser, TimeSpecsAbsoluteRelativeAnyRangesAndBlocking) {
  Script s = parse_ok(
      "0 close(3) = 0\n+.1 close(3) = 0\n* > . 1:1(0) ack 1\n"
      "+.21~+.215 > P. 1:41(40) ack 1\n1.5~2 > . 1:1(0) ack 1\n+0...0.100 read(4, ..., 2000) = 2000\n");
  ASSERT_EQ(s.events.size(), 6u);
  EXPECT_EQ(s.events[0].time.kind, TimeKind::kAbsolute);
  EXPECT_EQ(s.events[1].time.kind, TimeKind::kRelative);
  EXPECT_EQ(s.events[1].time.start, Duration::ms(100));
  EXPECT_EQ(s.events[2].time.kind, TimeKind::kAny);
  EXPECT_EQ(s.events[3].time.kind, TimeKind::kRelativeRange);
  EXPECT_EQ(s.events[3].time.start, Duration::ms(210));
  EXPECT_EQ(s.events[3].time.end, Duration::ms(215));
  EXPECT_EQ(s.events[4].time.kind, TimeKind::kAbsoluteRange);
  EXPECT_EQ(s.events[4].time.end, Duration::s(2));
  ASSERT_TRUE(s.events[5].time.block_end.has_value());
  EXPECT_EQ(*s.events[5].time.block_end, Duration::ms(100));
}

TEST(PktParser, PacketLineWithFlagsSeqAckWinAndOptionsInOrder) {
  Script s = parse_ok(
      "0 < S. 0:0(0) ack 1 win 32792 <mss 1000,sackOK,TS val 100 ecr 7,nop,wscale 7,"
      "sack 1001:2001 3001:4001,FO abcd1234,eol>\n");
  const auto& p = std::get<PacketSpec>(s.events[0].action);
  EXPECT_TRUE(p.inbound);
  EXPECT_EQ(p.flags, 0x12);
  EXPECT_EQ(*p.ack, 1u);
  EXPECT_EQ(*p.win, 32792u);
  ASSERT_EQ(p.options.size(), 8u);
  EXPECT_EQ(p.options[0].kind, OptionSpec::Kind::kMss);
  EXPECT_EQ(p.options[0].a, 1000u);
  EXPECT_EQ(p.options[2].kind, OptionSpec::Kind::kTimestamp);
  EXPECT_EQ(p.options[2].a, 100u);
  EXPECT_EQ(p.options[2].b, 7u);
  EXPECT_EQ(p.options[5].kind, OptionSpec::Kind::kSack);
  ASSERT_EQ(p.options[5].blocks.size(), 2u);
  EXPECT_EQ(p.options[5].blocks[1].second, 4001u);
  EXPECT_EQ(p.options[6].text, "abcd1234");
  EXPECT_EQ(p.options[7].kind, OptionSpec::Kind::kEol);
}

TEST(PktParser, OutboundWithEcnBracketNoFlagsAndUncheckedOptions) {
  Script s = parse_ok("0 > [ect0] P. 1:1001(1000) ack 1 <...>\n+0 < - 1:1001(1000) win 20000\n"
                      "+0 > FP. 1:1(0) ack 1\n");
  const auto& p = std::get<PacketSpec>(s.events[0].action);
  EXPECT_FALSE(p.inbound);
  EXPECT_EQ(p.ecn, Ecn::kEct0);
  EXPECT_TRUE(p.options_any);
  EXPECT_EQ(p.len, 1000u);
  EXPECT_EQ(std::get<PacketSpec>(s.events[1].action).flags, 0);
  EXPECT_EQ(std::get<PacketSpec>(s.events[2].action).flags, 0x19);
}

TEST(PktParser, IcmpLines) {
  Script s = parse_ok("0 < icmp unreachable frag_needed mtu 840 [0:1000(1000)]\n");
  const auto& p = std::get<PacketSpec>(s.events[0].action);
  EXPECT_TRUE(p.icmp);
  EXPECT_EQ(p.icmp_type, "unreachable");
  EXPECT_EQ(p.icmp_code, "frag_needed");
  EXPECT_EQ(*p.icmp_mtu, 840u);
  EXPECT_EQ(p.seq_end, 1000u);
}

TEST(PktParser, SyscallsWithStructsListsErrnoAndNotes) {
  Script s = parse_ok(
      "0 sendmsg(4, {msg_name(...)=..., msg_iov(3)=[{..., 100}, {..., 200}, {..., 195}],\n"
      "  msg_flags=0}, MSG_MORE) = 495\n"
      "+0 read(4, ..., 4096) = -1 EAGAIN (Resource temporarily unavailable)\n"
      "+0 fcntl(3, F_GETFL) = 0x2 (flags O_RDWR)\n"
      "+0 poll([{fd=4, events=POLLIN|POLLOUT, revents=POLLOUT}], 1, 1000) = 1\n"
      "+0 setsockopt(3, SOL_SOCKET, SO_LINGER, {onoff=1, linger=0}, 8) = 0\n");
  const auto& sm = std::get<SyscallSpec>(s.events[0].action);
  EXPECT_EQ(sm.name, "sendmsg");
  const Expr* iov = sm.args[1].field("msg_iov");
  ASSERT_NE(iov, nullptr);
  EXPECT_EQ(iov->args[0].num, 3);
  EXPECT_EQ(iov->items[0].items.size(), 3u);
  EXPECT_EQ(iov->items[0].items[2].items[1].num, 195);
  const auto& rd = std::get<SyscallSpec>(s.events[1].action);
  EXPECT_EQ(rd.result.num, -1);
  EXPECT_EQ(rd.errno_name, "EAGAIN");
  EXPECT_EQ(rd.note, "Resource temporarily unavailable");
  EXPECT_EQ(std::get<SyscallSpec>(s.events[2].action).result.num, 2);
  const auto& pl = std::get<SyscallSpec>(s.events[3].action);
  const Expr* ev = pl.args[0].items[0].field("events");
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->items[0].kind, Expr::Kind::kOr);
}

TEST(PktParser, CommandsAndCodeBlocks) {
  Script s = parse_ok("`../common/defaults.sh\nsysctl -q net.ipv4.tcp_sack=0`\n"
                      "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n"
                      "+.01 %{\nassert tcpi_snd_cwnd == 7, tcpi_snd_cwnd\n}%\n");
  ASSERT_EQ(s.events.size(), 3u);
  EXPECT_FALSE(s.events[0].timed);
  EXPECT_NE(std::get<CommandSpec>(s.events[0].action).text.find("tcp_sack=0"), std::string::npos);
  EXPECT_EQ(std::get<CodeSpec>(s.events[2].action).text,
            "\nassert tcpi_snd_cwnd == 7, tcpi_snd_cwnd\n");
  EXPECT_EQ(s.events[2].pos.line, 4);
}

TEST(PktParser, DefinesSubstituteWords) {
  auto s = parse_script("0 setsockopt(3, LEVEL, 1, [1], 4) = 0\n", "t.pkt", {{"LEVEL", "6"}});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(std::get<SyscallSpec>(s->events[0].action).args[1].num, 6);
}

TEST(PktParser, ErrorsNameFileLineColumnAndWhatWasExpected) {
  EXPECT_EQ(parse_err("0 close(3) = 0\n+0 < S 0:0 win 1\n"),
            "t.pkt:2:12: expected '(' before the length in 'start:end(len)', got word 'win'");
  EXPECT_EQ(parse_err("0 close(3) 0\n"),
            "t.pkt:1:12: expected '=' and the expected result of close(), got integer '0'");
  EXPECT_EQ(parse_err("0 < S. 0:0(0) ack 1 <mss 1460,\n"),
            "t.pkt:2:1: expected a TCP option (nop, eol, mss, wscale, sackOK, sack, TS, FO, FOEXP, md5), "
            "got end of file");
  EXPECT_EQ(parse_err("0 %{ x = 1\n"), "t.pkt:1:3: unterminated code block: expected '}%'");
  EXPECT_EQ(parse_err("+0 < Q 0:0(0) win 1\n"),
            "t.pkt:1:6: expected TCP flags (a combination of F S R P . E W A U, or -), got word 'Q'");
}

// The first error is the one reported, even when the rest of the script
// (unclosed lists, notes, option lists) would produce more; parsing ends.
TEST(PktParser, FirstErrorWinsAndUnclosedConstructsTerminate) {
  EXPECT_EQ(parse_err("0 poll([{fd=3, events=POLLIN} 1, 0) = 0\n+0 < [ect0 S 0:0(0)\n"),
            "t.pkt:1:31: expected ',' or ']' in the list, got integer '1'");
  EXPECT_EQ(parse_err("0 close(3) = -1 EBADF (Bad file"), "t.pkt:1:32: expected ')' closing the note, got end of file");
  EXPECT_EQ(parse_err("0 < [ect0, tos"), "t.pkt:1:15: expected a TOS value after 'tos', got end of file");
  EXPECT_EQ(parse_err("0 < S 0:0(0) <mss 1460 nop>"),
            "t.pkt:1:24: expected ',' or '>' in the TCP option list, got word 'nop'");
  EXPECT_EQ(parse_err("0 foo(1, 2"), "t.pkt:1:11: expected ',' or ')' in the argument list, got end of file");
}

// Every script of google/packetdrill's TCP corpus parses (when ../shared is present).
TEST(PktParser, ParsesEveryScriptInTheGtestsTcpCorpus) {
  namespace fs = std::filesystem;
  fs::path dir = WEIR_SOURCE_DIR "/../shared/packetdrill/gtests-tcp";
  if (!fs::is_directory(dir)) GTEST_SKIP() << dir << " is absent";
  int n = 0;
  std::vector<std::string> failures;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() != ".pkt") continue;
    ++n;
    auto s = parse_file(e.path().string());
    if (!s) failures.push_back(s.error().to_string());
    else if (s->events.empty()) failures.push_back(e.path().string() + ": no events");
  }
  EXPECT_GE(n, 150);
  for (const auto& f : failures) ADD_FAILURE() << f;
}

}  // namespace
}  // namespace weir::pkt
