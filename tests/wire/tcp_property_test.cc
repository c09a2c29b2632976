// Seeded property tests: random headers and option lists survive
// emit -> parse -> emit unchanged, and random bytes never break the parsers.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "wire/packet.h"
#include "wire/tcp_header.h"

namespace weir::wire {
namespace {

class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}
  uint32_t u32() { return static_cast<uint32_t>(rng_()); }
  uint32_t below(uint32_t n) { return u32() % n; }
  bool coin() { return below(2) == 0; }

  void fixed_fields(TcpHeader& h) {
    h.src_port = static_cast<uint16_t>(u32());
    h.dst_port = static_cast<uint16_t>(u32());
    h.seq = Seq32(u32());
    h.ack = Seq32(u32());
    h.flags = static_cast<uint8_t>(u32());
    h.window = static_cast<uint16_t>(u32());
    h.urgent = static_cast<uint16_t>(u32());
  }

  // Options as Linux would send them: fields only, default layout.
  void linux_options(TcpOptions& o) {
    if (coin()) o.mss = static_cast<uint16_t>(u32());
    if (coin()) o.wscale = static_cast<uint8_t>(below(15));
    o.sack_permitted = coin();
    if (coin()) o.ts = TcpTimestamps{u32(), u32()};
    for (uint32_t n = below(5); n > 0; --n) o.add_sack({Seq32(u32()), Seq32(u32())});
  }

  // An explicit item list of random kinds that fits in 40 bytes.
  void item_options(TcpOptions& o) {
    size_t used = 0;
    for (int tries = 0; tries < 12; ++tries) {
      uint8_t kinds[] = {tcp_opt::NOP, tcp_opt::MSS, tcp_opt::WSCALE, tcp_opt::SACK_PERMITTED,
                         tcp_opt::TIMESTAMP, tcp_opt::SACK, 99, tcp_opt::FASTOPEN};
      uint8_t kind = kinds[below(sizeof kinds)];
      size_t len = add_item(o, kind, 40 - used);
      used += len;
    }
    if (used < 40 && coin()) push(o, tcp_opt::EOL, 0, 1);
  }

 private:
  void push(TcpOptions& o, uint8_t kind, uint8_t offset, uint8_t len) {
    o.items[o.item_count++] = TcpOptionItem{kind, offset, len};
  }

  // Adds one item of `kind` if it fits in `room`; returns its length or 0.
  size_t add_item(TcpOptions& o, uint8_t kind, size_t room) {
    switch (kind) {
      case tcp_opt::NOP: if (room < 1) return 0; push(o, kind, 0, 1); return 1;
      case tcp_opt::MSS:
        if (room < 4 || o.mss) return 0;
        o.mss = static_cast<uint16_t>(u32()); push(o, kind, 0, 4); return 4;
      case tcp_opt::WSCALE:
        if (room < 3 || o.wscale) return 0;
        o.wscale = static_cast<uint8_t>(u32()); push(o, kind, 0, 3); return 3;
      case tcp_opt::SACK_PERMITTED:
        if (room < 2 || o.sack_permitted) return 0;
        o.sack_permitted = true; push(o, kind, 0, 2); return 2;
      case tcp_opt::TIMESTAMP:
        if (room < 10 || o.ts) return 0;
        o.ts = TcpTimestamps{u32(), u32()}; push(o, kind, 0, 10); return 10;
      case tcp_opt::SACK: {
        if (room < 10 || o.sack_count) return 0;
        size_t n = 1 + below(static_cast<uint32_t>(std::min<size_t>(4, (room - 2) / 8)));
        for (size_t i = 0; i < n; ++i) o.add_sack({Seq32(u32()), Seq32(u32())});
        push(o, kind, 0, static_cast<uint8_t>(2 + 8 * n));
        return 2 + 8 * n;
      }
      default: {  // raw bytes: kind, len, random value
        size_t len = 2 + below(7);
        if (room < len || o.raw_len + len > kTcpOptionsMax) return 0;
        uint8_t off = o.raw_len;
        o.raw[off] = kind;
        o.raw[off + 1] = static_cast<uint8_t>(len);
        for (size_t i = 2; i < len; ++i) o.raw[off + i] = static_cast<uint8_t>(u32());
        o.raw_len = static_cast<uint8_t>(off + len);
        push(o, kind, off, static_cast<uint8_t>(len));
        return len;
      }
    }
  }

  std::mt19937 rng_;
};

std::vector<uint8_t> emit(const TcpHeader& h) {
  std::vector<uint8_t> out(kTcpHeaderMin + options_wire_len(h.options));
  EXPECT_EQ(emit_tcp(h, out), out.size());
  return out;
}

void expect_same_values(const TcpHeader& a, const TcpHeader& b, size_t sack_kept) {
  EXPECT_EQ(a.src_port, b.src_port);
  EXPECT_EQ(a.dst_port, b.dst_port);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.ack, b.ack);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.window, b.window);
  EXPECT_EQ(a.urgent, b.urgent);
  EXPECT_EQ(a.options.mss, b.options.mss);
  EXPECT_EQ(a.options.wscale, b.options.wscale);
  EXPECT_EQ(a.options.sack_permitted, b.options.sack_permitted);
  EXPECT_EQ(a.options.ts, b.options.ts);
  ASSERT_EQ(b.options.sack_count, sack_kept);
  for (size_t i = 0; i < sack_kept; ++i) EXPECT_EQ(a.options.sack[i], b.options.sack[i]);
}

TEST(TcpProperty, LinuxLayoutRoundTrips) {
  Gen g(20240601);
  for (int iter = 0; iter < 5000; ++iter) {
    TcpHeader h;
    g.fixed_fields(h);
    g.linux_options(h.options);
    auto bytes = emit(h);
    ASSERT_LE(bytes.size(), 60u);
    ASSERT_EQ(bytes.size() % 4, 0u);
    auto p = parse_tcp(bytes);
    ASSERT_TRUE(p) << to_string(p.error()) << " iter " << iter;
    // Blocks that did not fit in 40 bytes are dropped, as Linux does.
    TcpOptions no_sack = h.options;
    no_sack.sack_count = 0;
    size_t room = kTcpOptionsMax - options_wire_len(no_sack);
    size_t fit = room >= 12 ? (room - 4) / 8 : 0;
    size_t kept = std::min<size_t>(h.options.sack_count, fit);
    expect_same_values(h, *p, kept);
    // Re-emitting the parsed header (now with explicit items) is byte-exact.
    ASSERT_EQ(emit(*p), bytes) << "iter " << iter;
  }
}

TEST(TcpProperty, ExplicitItemsRoundTripByteExactly) {
  Gen g(7323);
  for (int iter = 0; iter < 5000; ++iter) {
    TcpHeader h;
    g.fixed_fields(h);
    g.item_options(h.options);
    auto bytes = emit(h);
    auto p = parse_tcp(bytes);
    ASSERT_TRUE(p) << to_string(p.error()) << " iter " << iter;
    expect_same_values(h, *p, h.options.sack_count);
    // Items agree on kind and length, in order (parse adds EOL padding items
    // only up to the first EOL, which ends the list).
    size_t n = h.options.item_count;
    ASSERT_GE(p->options.item_count, n);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(p->options.items[i].kind, h.options.items[i].kind);
      EXPECT_EQ(p->options.items[i].len, h.options.items[i].len);
    }
    EXPECT_EQ(emit(*p), bytes);
    EXPECT_EQ(format_options(p->options).empty(), n == 0 && p->options.item_count == 0);
  }
}

TEST(TcpProperty, RandomBytesNeverBreakTheHeaderParser) {
  Gen g(1);
  std::vector<uint8_t> buf;
  int parsed = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    buf.resize(g.below(64));
    for (auto& b : buf) b = static_cast<uint8_t>(g.u32());
    if (buf.size() > 12 && g.coin()) buf[12] = static_cast<uint8_t>((5 + g.below(11)) << 4);
    auto r = parse_tcp(buf);
    if (!r) continue;
    ++parsed;
    // Whatever parsed must fit the segment and re-emit to a valid header.
    ASSERT_LE(size_t{r->data_offset} * 4, buf.size());
    ASSERT_LE(r->options.sack_count, kMaxSackBlocks);
    auto again = parse_tcp(emit(*r));
    ASSERT_TRUE(again);
    (void)format_options(r->options);
  }
  EXPECT_GT(parsed, 100);  // the generator does reach the option parser
}

TEST(TcpProperty, RandomDatagramsNeverBreakPacketParsers) {
  Gen g(2);
  IpInfo ip;
  ip.src = IpAddr::v4(10, 0, 0, 1);
  ip.dst = IpAddr::v4(10, 0, 0, 2);
  TcpHeader h;
  h.options.mss = 1000;
  h.options.ts = TcpTimestamps{1, 2};
  auto base = build_tcp_packet(ip, h, {});
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> d = base;
    // Mutate a few bytes and sometimes cut or extend the datagram.
    for (uint32_t k = 1 + g.below(4); k > 0; --k) d[g.below(uint32_t(d.size()))] = uint8_t(g.u32());
    if (g.coin()) d.resize(g.below(uint32_t(d.size() + 8)), 0xee);
    auto p = parse_tcp_packet(d, g.coin());
    if (p) {
      ASSERT_GE(p->payload.data(), d.data());
      ASSERT_LE(p->payload.data() + p->payload.size(), d.data() + d.size());
    }
    (void)parse_icmp_error(d);
  }
}

}  // namespace
}  // namespace weir::wire
