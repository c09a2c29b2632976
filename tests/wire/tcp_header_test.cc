#include <gtest/gtest.h>

#include <vector>

#include "wire/tcp_header.h"

namespace weir::wire {
namespace {

std::vector<uint8_t> emit(const TcpHeader& h) {
  std::vector<uint8_t> out(kTcpHeaderMin + options_wire_len(h.options));
  EXPECT_EQ(emit_tcp(h, out), out.size());
  return out;
}

std::vector<uint8_t> option_bytes(const TcpHeader& h) {
  auto b = emit(h);
  return {b.begin() + kTcpHeaderMin, b.end()};
}

TcpHeader syn_with(bool mss, bool sack, bool ts, bool ws) {
  TcpHeader h;
  h.flags = tcp_flag::SYN;
  if (mss) h.options.mss = 1460;
  h.options.sack_permitted = sack;
  if (ts) h.options.ts = TcpTimestamps{100, 0};
  if (ws) h.options.wscale = 7;
  return h;
}

TEST(TcpEmit, SynWithTimestampsUsesLinuxLayout) {
  auto o = option_bytes(syn_with(true, true, true, true));
  std::vector<uint8_t> want{2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 100,
                            0, 0, 0, 0, 1, 3, 3, 7};
  EXPECT_EQ(o, want);
  EXPECT_EQ(format_options(syn_with(true, true, true, true).options),
            "<mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 7>");
}

TEST(TcpEmit, SynWithoutTimestampsUsesLinuxLayout) {
  auto h = syn_with(true, true, false, true);
  std::vector<uint8_t> want{2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7};
  EXPECT_EQ(option_bytes(h), want);
  EXPECT_EQ(format_options(h.options), "<mss 1460,nop,nop,sackOK,nop,wscale 7>");
}

TEST(TcpEmit, SynWithoutSackOmitsItAsLinuxDoes) {
  EXPECT_EQ(format_options(syn_with(true, false, false, true).options), "<mss 1460,nop,wscale 7>");
  EXPECT_EQ(format_options(syn_with(true, false, true, true).options),
            "<mss 1460,nop,nop,TS val 100 ecr 0,nop,wscale 7>");
  EXPECT_EQ(format_options(syn_with(true, false, false, false).options), "<mss 1460>");
}

TEST(TcpEmit, EstablishedSegmentPutsTimestampsThenSackBlocks) {
  TcpHeader h;
  h.flags = tcp_flag::ACK;
  h.options.ts = TcpTimestamps{7, 9};
  h.options.add_sack({Seq32(1000), Seq32(2000)});
  h.options.add_sack({Seq32(3000), Seq32(4000)});
  EXPECT_EQ(format_options(h.options), "<nop,nop,TS val 7 ecr 9,nop,nop,sack 1000:2000 3000:4000>");
  EXPECT_EQ(options_wire_len(h.options), 12u + 4 + 16);
}

TEST(TcpEmit, SackBlocksAreLimitedToWhatFits) {
  // With timestamps only three blocks fit in 40 bytes (Linux: TCP_NUM_SACKS
  // bounded by the remaining option space).
  TcpHeader h;
  h.options.ts = TcpTimestamps{1, 2};
  for (uint32_t i = 0; i < 4; ++i) h.options.add_sack({Seq32(i * 100), Seq32(i * 100 + 50)});
  EXPECT_EQ(options_wire_len(h.options), 12u + 4 + 24);
  h.options.ts.reset();
  EXPECT_EQ(options_wire_len(h.options), 4u + 32);
}

TEST(TcpEmit, NoOptionsGivesTwentyByteHeader) {
  TcpHeader h;
  h.src_port = 8080;
  h.dst_port = 443;
  h.seq = Seq32(0xdeadbeef);
  h.ack = Seq32(1);
  h.flags = tcp_flag::ACK | tcp_flag::PSH;
  h.window = 65535;
  h.urgent = 3;
  auto b = emit(h);
  ASSERT_EQ(b.size(), 20u);
  std::vector<uint8_t> want{0x1f, 0x90, 0x01, 0xbb, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1,
                            0x50, 0x18, 0xff, 0xff, 0, 0, 0, 3};
  EXPECT_EQ(b, want);
  EXPECT_EQ(format_options(h.options), "");
}

TEST(TcpEmit, RefusesTooSmallBuffer) {
  auto h = syn_with(true, true, true, true);
  std::vector<uint8_t> out(39);
  EXPECT_EQ(emit_tcp(h, out), 0u);
}

TEST(TcpEmit, ExplicitItemsAreEmittedInTheirOrder) {
  // packetdrill "<nop,mss 1000,eol>"-style scripts: exact order, padded.
  TcpHeader h;
  h.options.mss = 1000;
  h.options.items[0] = {tcp_opt::NOP, 0, 1};
  h.options.items[1] = {tcp_opt::MSS, 0, 4};
  h.options.items[2] = {tcp_opt::EOL, 0, 1};
  h.options.item_count = 3;
  std::vector<uint8_t> want{1, 2, 4, 0x03, 0xe8, 0, 0, 0};
  EXPECT_EQ(option_bytes(h), want);
  EXPECT_EQ(format_options(h.options), "<nop,mss 1000,eol>");
}

TEST(TcpEmit, UnknownKindsComeFromRawBytes) {
  TcpHeader h;
  h.options.raw = {};
  const uint8_t fo[] = {tcp_opt::FASTOPEN, 6, 0xaa, 0xbb, 0xcc, 0xdd};
  std::copy(std::begin(fo), std::end(fo), h.options.raw.begin());
  h.options.raw_len = 6;
  h.options.items[0] = {tcp_opt::FASTOPEN, 0, 6};
  h.options.items[1] = {tcp_opt::NOP, 0, 1};
  h.options.items[2] = {tcp_opt::NOP, 0, 1};
  h.options.item_count = 3;
  std::vector<uint8_t> want{34, 6, 0xaa, 0xbb, 0xcc, 0xdd, 1, 1};
  EXPECT_EQ(option_bytes(h), want);
  EXPECT_EQ(format_options(h.options), "<FO aabbccdd,nop,nop>");
}

TEST(TcpFormat, FlagsUsePacketdrillLetters) {
  using namespace tcp_flag;
  EXPECT_EQ(format_flags(SYN), "S");
  EXPECT_EQ(format_flags(SYN | ACK), "S.");
  EXPECT_EQ(format_flags(PSH | ACK), "P.");
  EXPECT_EQ(format_flags(FIN | ACK), "F.");
  EXPECT_EQ(format_flags(FIN | PSH | ACK), "FP.");
  EXPECT_EQ(format_flags(RST), "R");
  EXPECT_EQ(format_flags(RST | ACK), "R.");
  EXPECT_EQ(format_flags(SYN | ECE | CWR), "SEW");
  EXPECT_EQ(format_flags(ACK | URG), ".U");
}

}  // namespace
}  // namespace weir::wire
