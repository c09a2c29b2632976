// Fast Open cookies as Linux computes them: SipHash-2-4 (checked against the
// reference vectors of the SipHash paper) over the SYN's addresses under the
// net.ipv4.tcp_fastopen_key words. The expected cookies are the ones the
// packetdrill suite hard-codes: TFO_COOKIE (run_all.py's define for the
// defaults.sh key a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4 and packetdrill's
// default addresses) and fastopen/server/simple1.pkt's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tcp/fastopen.h"
#include "util/siphash.h"

namespace weir::tcp::fastopen {
namespace {

std::string hex(const Cookie& c) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < c.len; ++i) {
    s += d[c.val[i] >> 4];
    s += d[c.val[i] & 15];
  }
  return s;
}

TEST(SipHash24, PaperReferenceVectors) {
  // Appendix A: key 00 01 .. 0f, message 00 01 .. 0e -> a129ca6149be45e5.
  SipKey k{0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
  std::vector<uint8_t> m;
  for (uint8_t i = 0; i < 15; ++i) m.push_back(i);
  EXPECT_EQ(siphash24(k, m), 0xa129ca6149be45e5ull);
  // The empty message (first line of the reference vectors file).
  EXPECT_EQ(siphash24(k, {}), 0x726fdb47dd0e0e31ull);
}

TEST(FastOpenKey, ParsesFourHexWordsAndABackup) {
  auto k = parse_keys("a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->primary.k0, 0xb2b2b2b2a1a1a1a1ull);
  EXPECT_EQ(k->primary.k1, 0xd4d4d4d4c3c3c3c3ull);
  EXPECT_FALSE(k->backup);
  auto two = parse_keys("1-2-3-4,5-6-7-8\n");
  ASSERT_TRUE(two && two->backup);
  EXPECT_EQ(two->backup->k0, 0x0000000600000005ull);
  EXPECT_FALSE(parse_keys("1-2-3"));
  EXPECT_FALSE(parse_keys("1-2-3-4-5"));
  EXPECT_FALSE(parse_keys("xyz-2-3-4"));
}

std::string cookie(const char* key, const char* src, const char* dst) {
  auto k = parse_keys(key);
  EXPECT_TRUE(k);
  return k ? hex(make_cookie(k->primary, *IpAddr::parse(src), *IpAddr::parse(dst))) : "";
}

constexpr const char* kDefaultsKey = "a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4";
constexpr const char* kZeroKey = "0-0-0-0";

// The SYN comes from the remote (script) address to the local one. The
// runner's addresses and defines (src/pkt/runner.cc) are those of the
// current run_all.py and the kernel's ksft_runner.sh.
TEST(FastOpenCookie, MatchesTheRunnersTfoCookieDefines) {
  EXPECT_EQ(cookie(kDefaultsKey, "192.0.2.1", "192.168.0.1"), "3021b9d889017eeb");
  EXPECT_EQ(cookie(kDefaultsKey, "fd3d:fa7b:d17d::1", "fd3d:a0b:17d6::1"), "c1d1e9742a47a9bc");
  EXPECT_EQ(cookie(kZeroKey, "192.0.2.1", "192.168.0.1"), "b7c12350a90dc8f5");
  EXPECT_EQ(cookie(kZeroKey, "fd3d:fa7b:d17d::1", "fd3d:a0b:17d6::1"), "82af1a8f9a205c34");
}

// The runner used to pass older run_all.py defines: the same key, but that
// script's older local addresses.
TEST(FastOpenCookie, OlderRunAllDefinesAreForOtherAddresses) {
  EXPECT_EQ(cookie(kDefaultsKey, "192.0.2.1", "192.168.0.2"), "de4f234f0f433a55");
  EXPECT_EQ(cookie(kDefaultsKey, "2001:db8::1", "fd3d:fa7b:d17d::"), "6aa6ae70c288023b");
}

TEST(FastOpenCookie, MatchesSimple1Script) {
  auto k = parse_keys("a0bf63f7-ed803d81-cd641d30-cebc4a90");
  ASSERT_TRUE(k);
  EXPECT_EQ(hex(make_cookie(k->primary, *IpAddr::parse("10.248.0.2"), *IpAddr::parse("192.168.0.2"))),
            "00abaaabe8e954c2");
}

TEST(FastOpenCookie, CheckNamesTheKeyThatMadeIt) {
  auto k = parse_keys("1-2-3-4,5-6-7-8");
  ASSERT_TRUE(k);
  IpAddr a = *IpAddr::parse("192.0.2.1"), b = *IpAddr::parse("192.168.0.1");
  EXPECT_EQ(check_cookie(*k, a, b, make_cookie(k->primary, a, b)), 1);
  EXPECT_EQ(check_cookie(*k, a, b, make_cookie(*k->backup, a, b)), 2);
  // The addresses are ordered: the reverse direction's cookie is not valid.
  EXPECT_EQ(check_cookie(*k, a, b, make_cookie(k->primary, b, a)), 0);
  Cookie short4 = make_cookie(k->primary, a, b);
  short4.len = 4;
  EXPECT_EQ(check_cookie(*k, a, b, short4), 0);
}

}  // namespace
}  // namespace weir::tcp::fastopen
