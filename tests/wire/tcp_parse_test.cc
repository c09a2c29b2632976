#include <gtest/gtest.h>

#include <vector>

#include "wire/tcp_header.h"

namespace weir::wire {
namespace {

// A 20-byte header followed by `opts`, data offset set to cover them.
std::vector<uint8_t> header_with(const std::vector<uint8_t>& opts) {
  static constexpr uint8_t kFixed[20] = {0x00, 0x50, 0x1f, 0x90, 0, 0, 0, 1, 0, 0,
                                         0,    2,    0,    0x12, 0x10, 0x00, 0, 0, 0, 0};
  std::vector<uint8_t> b(sizeof kFixed + opts.size());
  for (size_t i = 0; i < b.size(); ++i) b[i] = i < sizeof kFixed ? kFixed[i] : opts[i - sizeof kFixed];
  b[12] = static_cast<uint8_t>((b.size() / 4) << 4);
  return b;
}

TcpParseError parse_error(const std::vector<uint8_t>& b) {
  auto r = parse_tcp(b);
  EXPECT_FALSE(r.has_value());
  return r ? TcpParseError::kTooManySackBlocks : r.error();
}

TEST(TcpParse, ReadsFixedFields) {
  auto r = parse_tcp(header_with({}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->src_port, 80);
  EXPECT_EQ(r->dst_port, 8080);
  EXPECT_EQ(r->seq, Seq32(1));
  EXPECT_EQ(r->ack, Seq32(2));
  EXPECT_EQ(r->flags, tcp_flag::SYN | tcp_flag::ACK);
  EXPECT_EQ(r->window, 0x1000);
  EXPECT_EQ(r->data_offset, 5);
  EXPECT_EQ(r->options.item_count, 0);
}

TEST(TcpParse, ReadsLinuxSynOptions) {
  auto r = parse_tcp(header_with({2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 100, 0, 0, 0, 0,
                                  1, 3, 3, 7}));
  ASSERT_TRUE(r);
  const TcpOptions& o = r->options;
  EXPECT_EQ(o.mss, 1460);
  EXPECT_TRUE(o.sack_permitted);
  ASSERT_TRUE(o.ts);
  EXPECT_EQ(o.ts->val, 100u);
  EXPECT_EQ(o.ts->ecr, 0u);
  EXPECT_EQ(o.wscale, 7);
  EXPECT_EQ(o.item_count, 5);
  EXPECT_EQ(format_options(o), "<mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 7>");
}

TEST(TcpParse, ReadsSackBlocks) {
  auto r = parse_tcp(header_with({1, 1, 5, 18, 0, 0, 0, 10, 0, 0, 0, 20, 0xff, 0xff, 0xff, 0xf0,
                                  0, 0, 0, 5}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->options.sack_count, 2);
  EXPECT_EQ(r->options.sack[0], (SeqRange{Seq32(10), Seq32(20)}));
  EXPECT_EQ(r->options.sack[1], (SeqRange{Seq32(0xfffffff0u), Seq32(5)}));
}

TEST(TcpParse, StopsAtEndOfOptionList) {
  // Bytes after EOL are padding, even if they look like a broken option.
  auto r = parse_tcp(header_with({2, 4, 0x05, 0xb4, 0, 2, 0, 9}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->options.mss, 1460);
  EXPECT_EQ(r->options.item_count, 2);
  EXPECT_EQ(r->options.items[1].kind, tcp_opt::EOL);
}

TEST(TcpParse, KeepsUnknownKindsRaw) {
  auto r = parse_tcp(header_with({1, 1, 99, 6, 0xa, 0xb, 0xc, 0xd}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->options.item_count, 3);
  const TcpOptionItem& it = r->options.items[2];
  EXPECT_EQ(it.kind, 99);
  EXPECT_EQ(it.offset, 2);
  EXPECT_EQ(it.len, 6);
  EXPECT_EQ(r->options.raw[it.offset + 5], 0xd);
  EXPECT_EQ(format_options(r->options), "<nop,nop,kind 99 len 6 0a0b0c0d>");
}

TEST(TcpParse, RejectsShortSegment) {
  std::vector<uint8_t> b = header_with({});
  b.pop_back();
  EXPECT_EQ(parse_error(b), TcpParseError::kTruncated);
  EXPECT_EQ(parse_error({}), TcpParseError::kTruncated);
}

TEST(TcpParse, RejectsDataOffsetBelowFive) {
  for (uint8_t doff = 0; doff < 5; ++doff) {
    auto b = header_with({});
    b[12] = static_cast<uint8_t>(doff << 4);
    EXPECT_EQ(parse_error(b), TcpParseError::kBadDataOffset) << int{doff};
  }
}

TEST(TcpParse, RejectsDataOffsetPastSegment) {
  auto b = header_with({1, 1, 1, 1});
  b[12] = 0x70;  // claims 28 bytes, has 24
  EXPECT_EQ(parse_error(b), TcpParseError::kTruncated);
}

TEST(TcpParse, RejectsOptionRunningPastHeader) {
  EXPECT_EQ(parse_error(header_with({1, 1, 8, 10})), TcpParseError::kOptionOverrun);
  EXPECT_EQ(parse_error(header_with({1, 1, 1, 2})), TcpParseError::kOptionOverrun);  // no length byte
}

TEST(TcpParse, RejectsZeroAndOneLengthOptions) {
  EXPECT_EQ(parse_error(header_with({99, 0, 1, 1})), TcpParseError::kOptionBadLength);
  EXPECT_EQ(parse_error(header_with({99, 1, 1, 1})), TcpParseError::kOptionBadLength);
}

TEST(TcpParse, RejectsKnownOptionsWithWrongLength) {
  EXPECT_EQ(parse_error(header_with({2, 3, 5, 1})), TcpParseError::kOptionBadLength);          // MSS
  EXPECT_EQ(parse_error(header_with({3, 4, 7, 1})), TcpParseError::kOptionBadLength);          // WS
  EXPECT_EQ(parse_error(header_with({4, 3, 0, 1})), TcpParseError::kOptionBadLength);          // SACKOK
  EXPECT_EQ(parse_error(header_with({8, 8, 0, 0, 0, 0, 0, 0})), TcpParseError::kOptionBadLength);  // TS
  EXPECT_EQ(parse_error(header_with({5, 2, 1, 1})), TcpParseError::kOptionBadLength);          // empty SACK
  EXPECT_EQ(parse_error(header_with({5, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})),
            TcpParseError::kOptionBadLength);  // SACK not 2+8n
}

TEST(TcpParse, ErrorNamesAreDistinct) {
  EXPECT_STRNE(to_string(TcpParseError::kTruncated), to_string(TcpParseError::kBadDataOffset));
  EXPECT_STRNE(to_string(TcpParseError::kOptionOverrun), to_string(TcpParseError::kOptionBadLength));
}

}  // namespace
}  // namespace weir::wire
