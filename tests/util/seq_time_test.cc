#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>

#include "weir/addr.h"
#include "weir/config.h"
#include "weir/seq.h"
#include "weir/time.h"

namespace weir {
namespace {

TEST(Seq32, OrdersAcrossWrap) {
  Seq32 a(0xfffffff0u), b(0x10u);
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(b > a);
  EXPECT_EQ(b - a, 0x20);
  EXPECT_EQ(seq_len(a, b), 0x20u);
  EXPECT_EQ(seq_len(b, a), 0u);  // never wraps to ~4G: seed 000's bug
}

TEST(SeqRange, ContainsAndOverlapsAcrossWrap) {
  SeqRange r{Seq32(0xfffffff0u), Seq32(0x10u)};
  EXPECT_EQ(r.len(), 0x20u);
  EXPECT_TRUE(r.contains(Seq32(0)));
  EXPECT_FALSE(r.contains(Seq32(0x10u)));
  EXPECT_TRUE(r.overlaps({Seq32(0x0fu), Seq32(0x20u)}));
  EXPECT_FALSE(r.overlaps({Seq32(0x10u), Seq32(0x20u)}));
  EXPECT_TRUE(r.covers({Seq32(0xfffffff8u), Seq32(0x8u)}));
}

TEST(Time, ArithmeticAndNever) {
  Time t = Time::zero() + Duration::ms(40);
  EXPECT_EQ(t.ns(), 40'000'000);
  EXPECT_EQ((t - Time::zero()).us(), 40'000);
  EXPECT_TRUE((Time::never() + Duration::s(1)).is_never());
}

TEST(IpAddr, ParsesAndPrintsBothFamilies) {
  auto a = IpAddr::parse("192.0.2.1");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->is_v4());
  EXPECT_EQ(a->to_string(), "192.0.2.1");
  auto b = IpAddr::parse("fd3d:fa7b:d17d::1");
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->is_v4());
  EXPECT_EQ(b->to_string(), "fd3d:fa7b:d17d::1");
  EXPECT_FALSE(IpAddr::parse("300.1.1.1"));
}

// IpAddr orders by its bytes, first to last (ordered tables depend on it
// for deterministic scans), in both words and at their boundary.
TEST(IpAddr, OrdersByBytesFirstToLast) {
  std::mt19937 rng(4291);
  for (int i = 0; i < 2000; ++i) {
    std::array<uint8_t, 16> x{}, y{};
    for (auto& b : x) b = static_cast<uint8_t>(rng() % 3);  // few values: many equal prefixes
    y = x;
    y[rng() % 16] = static_cast<uint8_t>(rng() % 3);
    const IpAddr a = IpAddr::v6(x), b = IpAddr::v6(y);
    const bool less = std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end());
    EXPECT_EQ(a < b, less) << a.to_string() << " " << b.to_string();
    EXPECT_EQ(a == b, x == y);
    EXPECT_EQ(b < a, !less && x != y);
  }
  EXPECT_LT(*IpAddr::parse("::ff"), *IpAddr::parse("::100"));      // not little-endian words
  EXPECT_LT(*IpAddr::parse("0:0:0:ff::"), *IpAddr::parse("0:0:0:100::"));
  EXPECT_LT(*IpAddr::parse("10.0.0.9"), *IpAddr::parse("10.0.1.0"));
  EXPECT_LT(*IpAddr::parse("255.255.255.255"), *IpAddr::parse("2001:db8::"));  // ::ffff:0:0/96 first
}

TEST(StackConfig, SetsBySysctlNameAndReportsBadValues) {
  StackConfig c;
  EXPECT_EQ(c.set("net.ipv4.tcp_sack", "0"), "");
  EXPECT_FALSE(c.tcp_sack);
  EXPECT_EQ(c.set("tcp_rmem", "4096 540000 15728640"), "");
  EXPECT_EQ(c.tcp_rmem[1], 540000u);
  EXPECT_NE(c.set("tcp_rmem", "4096 x"), "");
  EXPECT_NE(c.set("tcp_no_such_key", "1"), "");
  EXPECT_EQ(c.set("/proc/sys/net/ipv4/tcp_congestion_control", "reno"), "");
  EXPECT_EQ(c.tcp_congestion_control, "reno");
}

}  // namespace
}  // namespace weir
