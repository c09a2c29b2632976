// Deterministic unit tests of the real-network driver's pure parts: SHA-256,
// HTTP parsing, byte ranges, URL and path mapping, the chargen pattern, the
// timing histogram and the ss/nstat layouts. No device, no clock.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/app.h"
#include "driver/departure.h"
#include "driver/histogram.h"
#include "driver/http.h"
#include "driver/netns.h"
#include "driver/reactor.h"
#include "driver/sha256.h"
#include "driver/ss_format.h"

namespace weir::driver {
namespace {

std::string sha_of(std::string_view s) {
  Sha256 h;
  h.update({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
  return h.hex();
}

TEST(Sha256, MatchesFips180Vectors) {
  EXPECT_EQ(sha_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, StreamingInOddPiecesEqualsOneShot) {
  std::string data(100000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 131 + 7) % 251);
  Sha256 h;
  size_t off = 0, step = 1;
  while (off < data.size()) {
    size_t n = std::min(step, data.size() - off);
    h.update({reinterpret_cast<const uint8_t*>(data.data()) + off, n});
    off += n;
    step = step * 3 % 197 + 1;
  }
  EXPECT_EQ(h.hex(), sha_of(data));
}

TEST(Sha256, MillionAs) {
  EXPECT_EQ(sha_of(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, HardwarePathEqualsPortablePath) {
  // On a CPU with the SHA extensions the default object takes the SHA-NI
  // path; the portable one must agree on every length around block edges.
  std::vector<uint8_t> data(4096 + 130);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>((i * 197 + 11) % 253);
  for (size_t len : {0, 55, 56, 63, 64, 65, 127, 128, 129, 1000, 4096 + 130}) {
    Sha256 fast, slow(false);
    fast.update({data.data(), len});
    slow.update({data.data(), len});
    EXPECT_EQ(fast.hex(), slow.hex()) << "length " << len;
  }
}

// RFC 9112 §7.1: sizes in hex, extensions and trailers ignored, the body
// the same however the bytes are split across reads.
TEST(Http, ChunkedDecodingIsIndependentOfHowTheBytesArrive) {
  const std::string wire =
      "5;name=val\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT";
  for (size_t step : {1, 2, 3, 7, 100}) {
    http::ChunkedDecoder d;
    std::string body;
    size_t off = 0;
    while (off < wire.size() && !d.done()) {
      auto used = d.feed(std::string_view(wire).substr(off, step), body);
      ASSERT_TRUE(used) << used.error();
      off += *used;
    }
    EXPECT_TRUE(d.done()) << "step " << step;
    EXPECT_EQ(body, "helloabcdefghijklmnopqrstuvwxyz") << "step " << step;
    EXPECT_EQ(wire.substr(off), "NEXT") << "bytes after the message are not consumed";
  }
}

TEST(Http, ChunkedDecodingRejectsMalformedFraming) {
  for (std::string bad : {"zz\r\n", "\r\n", "3\r\nabcX", "3\rX", "10000000000000000\r\n"}) {
    http::ChunkedDecoder d;
    std::string body;
    EXPECT_FALSE(d.feed(bad, body)) << bad;
  }
  http::ChunkedDecoder d;
  std::string body;
  ASSERT_TRUE(d.feed("4\r\nabcd\r\n", body));
  EXPECT_FALSE(d.done()) << "no last chunk yet";
}

TEST(Http, ParsesRequestHeadWithCaseInsensitiveFields) {
  auto h = http::parse_head("GET /a/b?x=1 HTTP/1.1\r\nHost: x\r\nRANGE:  bytes=1-2 \r\nConnection: Close");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->a, "GET");
  EXPECT_EQ(h->b, "/a/b?x=1");
  EXPECT_EQ(h->c, "HTTP/1.1");
  EXPECT_EQ(h->field("range").value_or(""), "bytes=1-2");
  EXPECT_FALSE(http::keep_alive(*h, "HTTP/1.1"));
}

TEST(Http, RejectsWhitespaceBeforeColonAndMissingSpaces) {
  EXPECT_FALSE(http::parse_head("GET / HTTP/1.1\r\nHost : x"));
  EXPECT_FALSE(http::parse_head("GARBAGE"));
}

TEST(Http, KeepAliveDefaultsDifferBetween10And11) {
  auto h = http::parse_head("GET / HTTP/1.0\r\nHost: x");
  ASSERT_TRUE(h);
  EXPECT_FALSE(http::keep_alive(*h, "HTTP/1.0"));
  EXPECT_TRUE(http::keep_alive(*h, "HTTP/1.1"));
  auto k = http::parse_head("GET / HTTP/1.0\r\nConnection: keep-alive");
  EXPECT_TRUE(http::keep_alive(*k, "HTTP/1.0"));
}

TEST(Http, RangesFollowRfc9110) {
  http::ByteRange r;
  EXPECT_EQ(http::parse_range("bytes=0-99", 1000, &r), http::RangeResult::kOk);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.last, 99u);
  EXPECT_EQ(http::parse_range("bytes=900-", 1000, &r), http::RangeResult::kOk);
  EXPECT_EQ(r.last, 999u);
  EXPECT_EQ(http::parse_range("bytes=-10", 1000, &r), http::RangeResult::kOk);
  EXPECT_EQ(r.first, 990u);
  EXPECT_EQ(http::parse_range("bytes=-5000", 1000, &r), http::RangeResult::kOk);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(http::parse_range("bytes=500-99999", 1000, &r), http::RangeResult::kOk);
  EXPECT_EQ(r.last, 999u);  // clamped to the representation
  EXPECT_EQ(http::parse_range("bytes=1000-", 1000, &r), http::RangeResult::kUnsatisfiable);
  EXPECT_EQ(http::parse_range("bytes=5-1", 1000, &r), http::RangeResult::kNone);
  EXPECT_EQ(http::parse_range("bytes=0-1,5-6", 1000, &r), http::RangeResult::kNone);
  EXPECT_EQ(http::parse_range("items=0-1", 1000, &r), http::RangeResult::kNone);
}

TEST(Http, UrlsNeedIpLiteralsAndBracketIpv6) {
  auto u = http::parse_url("http://192.0.2.1:8080/x/y");
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->addr.is_v4());
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->target, "/x/y");
  EXPECT_EQ(u->host, "192.0.2.1:8080");
  auto v = http::parse_url("http://[fd00::1]/");
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->addr.is_v4());
  EXPECT_EQ(v->port, 80);
  EXPECT_FALSE(http::parse_url("http://example.com/"));
  EXPECT_FALSE(http::parse_url("https://192.0.2.1/"));
  EXPECT_FALSE(http::parse_url("http://192.0.2.1:70000/"));
  EXPECT_FALSE(u->raw);
}

TEST(Http, TcpUrlsNameARawStreamByAddressAndPort) {
  auto u = http::parse_url("tcp://192.0.2.1:19");
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->raw);
  EXPECT_TRUE(u->addr.is_v4());
  EXPECT_EQ(u->port, 19);
  auto v = http::parse_url("tcp://[fd00::1]:9000");
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->raw);
  EXPECT_FALSE(v->addr.is_v4());
  EXPECT_EQ(v->port, 9000);
  auto no_port = http::parse_url("tcp://192.0.2.1");
  ASSERT_FALSE(no_port);
  EXPECT_EQ(no_port.error(), "tcp:// needs a port");
  auto path = http::parse_url("tcp://192.0.2.1:19/x");
  ASSERT_FALSE(path);
  EXPECT_EQ(path.error(), "tcp:// takes no path");
  EXPECT_FALSE(http::parse_url("udp://192.0.2.1:19"));
}

TEST(Http, TargetsNeverEscapeTheRoot) {
  EXPECT_EQ(http::target_to_path("/srv", "/a%20b?q").value_or(""), "/srv/a b");
  EXPECT_EQ(http::target_to_path("/srv", "/d/").value_or(""), "/srv/d/index.html");
  EXPECT_FALSE(http::target_to_path("/srv", "/../etc/passwd"));
  EXPECT_FALSE(http::target_to_path("/srv", "/a/%2e%2e/%2e%2e/x"));
  EXPECT_FALSE(http::target_to_path("/srv", "/a%00b"));
  EXPECT_FALSE(http::target_to_path("/srv", "relative"));
  EXPECT_EQ(http::target_to_path("/srv", "/a..b").value_or(""), "/srv/a..b");
}

TEST(Chargen, LinesShiftByOneAndEndInCrLf) {
  std::array<uint8_t, 148> b;
  chargen_fill(0, b);
  EXPECT_EQ(b[0], ' ');
  EXPECT_EQ(b[71], ' ' + 71);
  EXPECT_EQ(b[72], '\r');
  EXPECT_EQ(b[73], '\n');
  EXPECT_EQ(b[74], '!');  // the second line starts one character later
  std::array<uint8_t, 10> tail;
  chargen_fill(74 + 3, tail);  // an offset continues the same stream
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), b.begin() + 77));
}

// The generator copies one 95-line period; any offset, across the period's
// end and far into the stream, must give RFC 864's formula byte for byte.
TEST(Chargen, EveryOffsetMatchesTheLineFormula) {
  auto expect = [](uint64_t pos) {
    const uint64_t line = pos / 74, col = pos % 74;
    if (col == 72) return uint8_t{'\r'};
    if (col == 73) return uint8_t{'\n'};
    return static_cast<uint8_t>(' ' + (line + col) % 95);
  };
  for (uint64_t start : {uint64_t{0}, uint64_t{7030 - 5}, uint64_t{123457}, uint64_t{1} << 40}) {
    std::array<uint8_t, 20000> b;
    chargen_fill(start, b);
    for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i], expect(start + i)) << start << "+" << i;
  }
}

TEST(ErrorHistogram, BucketsAndFractions) {
  ErrorHistogram h;
  h.add(Duration::us(3));
  h.add(Duration::us(40));
  h.add(Duration::us(50));
  h.add(Duration::us(51));
  h.add(-Duration::us(5));  // early counts as on time
  EXPECT_EQ(h.count(), 5u);
  EXPECT_DOUBLE_EQ(h.fraction_within(Duration::us(50)), 4.0 / 5.0);
  EXPECT_EQ(h.max(), Duration::us(51));
  EXPECT_EQ(h.percentile_bound(0.8), Duration::us(50));
  EXPECT_EQ(h.percentile_bound(1.0), Duration::us(100));
  ErrorHistogram g;
  g.add(Duration::ms(20));
  h.merge(g);
  EXPECT_EQ(h.bucket(ErrorHistogram::kBuckets - 1), 1u);
  EXPECT_NE(h.format().find("samples 6"), std::string::npos);
}

TEST(SsFormat, StateNamesAndRatesAsIproute2PrintsThem) {
  EXPECT_STREQ(ss_state_name(1), "ESTAB");
  EXPECT_STREQ(ss_state_name(10), "LISTEN");
  EXPECT_STREQ(ss_state_name(6), "TIME-WAIT");
  EXPECT_EQ(ss_rate(231.7e6), "231.7Mbps");
  EXPECT_EQ(ss_rate(2.5e9), "2.5Gbps");
}

TEST(SsFormat, InfoLineHasLinuxFieldNamesAndHidesInfiniteSsthresh) {
  TcpInfo i;
  i.ca_name = "cubic";
  i.tcpi_options = 7;
  i.tcpi_snd_wscale = 7;
  i.tcpi_rcv_wscale = 9;
  i.tcpi_rto = 204000;
  i.tcpi_rtt = 1500;
  i.tcpi_rttvar = 750;
  i.tcpi_snd_mss = 1448;
  i.tcpi_snd_cwnd = 10;
  i.tcpi_snd_ssthresh = 0x7fffffff;
  std::string l = ss_info_line(i);
  EXPECT_NE(l.find("\t ts sack cubic wscale:7,9 "), std::string::npos) << l;
  EXPECT_NE(l.find("rto:204 rtt:1.5/0.75"), std::string::npos) << l;
  EXPECT_NE(l.find("cwnd:10"), std::string::npos);
  EXPECT_EQ(l.find(" ssthresh:"), std::string::npos) << l;
  EXPECT_NE(l.find("send 77.2Mbps"), std::string::npos) << l;  // 10 * 1448 * 8 / 1.5 ms
  i.tcpi_snd_ssthresh = 20;
  EXPECT_NE(ss_info_line(i).find(" ssthresh:20 "), std::string::npos);
  EXPECT_EQ(l.find(" rehash:"), std::string::npos) << l;  // shown only once the path moved
  i.tcpi_rehash = 2;
  EXPECT_NE(ss_info_line(i).find(" rehash:2"), std::string::npos);
}

TEST(Nstat, ListsNonZeroCountersByLinuxName) {
  Counters c;
  c.inc(Counter::TcpPassiveOpens, 3);
  std::string s = format_nstat(c);
  EXPECT_EQ(s.rfind("#kernel\n", 0), 0u);
  EXPECT_NE(s.find("TcpPassiveOpens                 3"), std::string::npos) << s;
  EXPECT_EQ(s.find("TcpActiveOpens"), std::string::npos);
  EXPECT_NE(format_nstat(c, true).find("TcpActiveOpens"), std::string::npos);
}

TEST(Cidr, ParsesBothFamiliesAndRejectsBadPrefixes) {
  auto a = parse_cidr("192.0.2.1/24");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->prefix, 24);
  EXPECT_FALSE(a->v6);
  auto b = parse_cidr("fd00::1");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->prefix, 128);
  EXPECT_TRUE(b->v6);
  EXPECT_FALSE(parse_cidr("192.0.2.1/33"));
  EXPECT_FALSE(parse_cidr("nonsense/8"));
}

TEST(SpinWindow, StartsAtTheCapAndShrinksToObservedWakeUpLatenessPlusMargin) {
  driver::SpinWindow w(Duration::us(100));
  EXPECT_EQ(w.window(), Duration::us(100));
  for (int i = 0; i < 1000; ++i) w.observe(Duration::us(10));
  EXPECT_EQ(w.window(), Duration::us(10) + driver::SpinWindow::kMargin);
}

TEST(SpinWindow, JumpsToANewWorstCaseAndForgetsItSlowly) {
  driver::SpinWindow w(Duration::us(100));
  for (int i = 0; i < 1000; ++i) w.observe(Duration::us(5));
  w.observe(Duration::us(60));
  EXPECT_EQ(w.window(), Duration::us(65));
  // One ordinary wake-up takes off 1/64, not the whole excursion.
  w.observe(Duration::us(5));
  EXPECT_GT(w.window(), Duration::us(60));
  EXPECT_LT(w.window(), Duration::us(65));
  for (int i = 0; i < 1000; ++i) w.observe(Duration::us(5));
  EXPECT_EQ(w.window(), Duration::us(10));
}

TEST(SpinWindow, NeverExceedsTheCapAndZeroMeansNoSpinning) {
  driver::SpinWindow w(Duration::us(100));
  w.observe(Duration::ms(30));  // a stall of the whole machine
  EXPECT_EQ(w.window(), Duration::us(100));
  // The decay starts from the cap, not from 30 ms: ten ordinary wake-ups
  // bring it to ~85 us (from 30 ms they would leave it at ~26 ms).
  for (int i = 0; i < 10; ++i) w.observe(Duration::us(5));
  EXPECT_LT(w.window(), Duration::us(95));
  driver::SpinWindow off(Duration::zero());
  off.observe(Duration::us(50));
  EXPECT_EQ(off.window(), Duration::zero());
}

Time at_us(int64_t us) { return Time::from_ns(us * 1000); }

TEST(Departure, DueWhileWaitingIsBlamedOnTheWaitEvenBehindABacklogOfWrites) {
  // Slept from 0 to 300 (woke late), due at 100: the wake-up, although by
  // the time this packet was written the backlog's earlier writes had run
  // past its due time too.
  using P = DepartureContext::Phase;
  DepartureContext c{P::kTimer, at_us(0), at_us(300), true, at_us(340)};
  EXPECT_EQ(classify_late(at_us(100), c), LateCause::kWakeSleep);
  c.slept = false;  // the same with a poll that returned late: preempted
  EXPECT_EQ(classify_late(at_us(100), c), LateCause::kWakeSpin);
  // A batch read entered after a late wake-up: the wait, not the read.
  c.phase = P::kRead;
  EXPECT_EQ(classify_late(at_us(100), c), LateCause::kWakeSpin);
}

TEST(Departure, DueWhileWorkingIsTheWriteInProgressElseTheReadElseTheLoop) {
  using P = DepartureContext::Phase;
  // Awake since 300; due at 320 while a write ran until 340.
  DepartureContext c{P::kTimer, at_us(0), at_us(300), true, at_us(340)};
  EXPECT_EQ(classify_late(at_us(320), c), LateCause::kWrite);
  // No write running at 320.
  c.prev_write_end = at_us(310);
  EXPECT_EQ(classify_late(at_us(320), c), LateCause::kOther);
  c.phase = P::kRead;
  EXPECT_EQ(classify_late(at_us(320), c), LateCause::kRead);
}

TEST(Departure, RecordBlamesOnlyPacketsBeyondTheLimitAndTimesEveryWrite) {
  DepartureRecord r(Duration::us(50));
  DepartureContext c{DepartureContext::Phase::kTimer, at_us(0), at_us(900), true, at_us(0)};
  r.add(at_us(990), at_us(1010), at_us(1030), c);  // 20 us late: on time
  c.prev_write_end = at_us(1030);
  r.add(at_us(1000), at_us(1070), at_us(1080), c);  // 70 us late, behind the write
  EXPECT_EQ(r.all().count(), 2u);
  EXPECT_EQ(r.late(LateCause::kWrite).count(), 1u);
  EXPECT_EQ(r.late(LateCause::kWakeSleep).count(), 0u);
  EXPECT_EQ(r.late(LateCause::kOther).count(), 0u);
  EXPECT_EQ(r.write_time().max(), Duration::us(20));
  DepartureRecord other;
  other.merge(r);
  EXPECT_EQ(other.late(LateCause::kWrite).count(), 1u);
  EXPECT_NE(r.format_causes().find("tun-write"), std::string::npos);
}

TEST(Departure, GapsOverTheAckTrainLimitAreSplitIntoModelledAndAdded) {
  DepartureRecord r(Duration::us(50), Duration::ms(2));
  DepartureContext c{};
  r.add(at_us(0), at_us(10), at_us(20), c);
  r.add(at_us(500), at_us(3000), at_us(3010), c);  // model 0.5 ms apart, left 3 ms apart
  r.add(at_us(6000), at_us(6010), at_us(6020), c);  // 3 ms apart in the model as well
  r.add(at_us(6500), at_us(6510), at_us(6520), c);  // no gap
  EXPECT_EQ(r.gaps_added(), 1u);
  EXPECT_EQ(r.gaps_modelled(), 1u);
}

}  // namespace
}  // namespace weir::driver
