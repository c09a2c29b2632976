// The Fast Open option (RFC 7413 §4.1.1) on the wire: kind 34 and the
// experimental kind 254 with magic 0xF989, parsed as Linux's
// tcp_parse_fastopen_option reads them and written where and how Linux's
// tcp_options_write puts them (last, padded with NOP NOP to a word).
#include <gtest/gtest.h>

#include <vector>

#include "wire/tcp_header.h"

namespace weir::wire {
namespace {

std::vector<uint8_t> header_with(const std::vector<uint8_t>& opts) {
  std::vector<uint8_t> b(20 + opts.size(), 0);
  for (size_t i = 0; i < opts.size(); ++i) b[20 + i] = opts[i];
  b[12] = static_cast<uint8_t>((b.size() / 4) << 4);
  b[13] = tcp_flag::SYN;
  return b;
}

std::optional<TcpFastOpen> parsed(const std::vector<uint8_t>& opts) {
  auto h = parse_tcp(header_with(opts));
  EXPECT_TRUE(h);
  return h ? h->options.fastopen : std::nullopt;
}

TEST(TcpFastOpenOption, ParsesKind34CookieAndRequest) {
  auto fo = parsed({34, 10, 1, 2, 3, 4, 5, 6, 7, 8, 1, 1});
  ASSERT_TRUE(fo);
  EXPECT_FALSE(fo->exp);
  ASSERT_EQ(fo->len, 8);
  EXPECT_EQ(fo->cookie[0], 1);
  EXPECT_EQ(fo->cookie[7], 8);
  auto req = parsed({34, 2, 1, 1});
  ASSERT_TRUE(req);
  EXPECT_EQ(req->len, 0);
}

TEST(TcpFastOpenOption, ParsesExperimentalOnlyWithTheMagic) {
  auto fo = parsed({254, 8, 0xF9, 0x89, 9, 8, 7, 6});
  ASSERT_TRUE(fo);
  EXPECT_TRUE(fo->exp);
  EXPECT_EQ(fo->len, 4);
  EXPECT_EQ(fo->cookie[0], 9);
  // Another experiment's magic is not Fast Open (RFC 6994).
  EXPECT_FALSE(parsed({254, 8, 0x12, 0x34, 9, 8, 7, 6}));
}

TEST(TcpFastOpenOption, OddLengthIgnoredOtherBadLengthsInvalid) {
  // Linux: an odd cookie length is ignored; an even one outside 4..16 is -1.
  EXPECT_FALSE(parsed({34, 5, 1, 2, 3, 1, 1, 1}));
  auto two = parsed({34, 4, 1, 2});
  ASSERT_TRUE(two);
  EXPECT_EQ(two->len, -1);
}

TEST(TcpFastOpenOption, EmitsLastAndPadsLikeLinux) {
  TcpHeader h;
  h.flags = tcp_flag::SYN | tcp_flag::ACK;
  h.options.mss = 1460;
  h.options.sack_permitted = true;
  TcpFastOpen fo;
  fo.len = 8;
  for (int i = 0; i < 8; ++i) fo.cookie[i] = static_cast<uint8_t>(0xa0 + i);
  h.options.fastopen = fo;
  std::vector<uint8_t> out(60);
  const size_t n = emit_tcp(h, out);
  // MSS(4) NOP NOP SACK-permitted(2) FO(10) NOP NOP.
  ASSERT_EQ(n, 20u + 20u);
  const std::vector<uint8_t> want_fo = {34, 10, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 1, 1};
  EXPECT_EQ(std::vector<uint8_t>(out.begin() + 28, out.begin() + 40), want_fo);
  auto back = parse_tcp(std::span<const uint8_t>(out.data(), n));
  ASSERT_TRUE(back && back->options.fastopen);
  EXPECT_EQ(back->options.fastopen->len, 8);

  // The experimental form: kind, length, magic, cookie; 12 bytes, no padding.
  h.options.fastopen->exp = true;
  const size_t m = emit_tcp(h, out);
  ASSERT_EQ(m, 20u + 8u + 12u);
  const std::vector<uint8_t> want_exp = {254, 12, 0xF9, 0x89, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7};
  EXPECT_EQ(std::vector<uint8_t>(out.begin() + 28, out.begin() + 40), want_exp);

  // A cookie request: FO with length 2, then NOP NOP.
  h.options.fastopen = TcpFastOpen{};
  const size_t r = emit_tcp(h, out);
  ASSERT_EQ(r, 20u + 8u + 4u);
  EXPECT_EQ(std::vector<uint8_t>(out.begin() + 28, out.begin() + 32), (std::vector<uint8_t>{34, 2, 1, 1}));
}

}  // namespace
}  // namespace weir::wire
