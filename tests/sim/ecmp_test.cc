// The ECMP switch's hash (src/sim/ecmp.h): deterministic under a seed, a
// function of the flow key only, and for IPv6 of the flow label, so that a
// new label moves a flow to another of n paths with probability (n-1)/n
// (RFC 6438 §3; what PLB's rehash relies on).
#include "sim/ecmp.h"

#include <gtest/gtest.h>

#include "util/splitmix.h"

namespace weir::sim {
namespace {

// An IPv6 TCP segment header (RFC 8200 §3) with the given flow label and ports.
std::vector<uint8_t> v6_packet(uint32_t label, uint16_t sport, uint16_t dport, uint8_t hop_limit = 64) {
  std::vector<uint8_t> b(60, 0);
  b[0] = 0x60;
  b[1] = static_cast<uint8_t>((label >> 16) & 0xf);
  b[2] = static_cast<uint8_t>(label >> 8);
  b[3] = static_cast<uint8_t>(label);
  b[5] = 20;
  b[6] = 6;
  b[7] = hop_limit;
  b[8] = 0xfd;
  b[15] = 1;
  b[23] = 1;
  b[24] = 0xfd;
  b[39] = 2;
  b[40] = static_cast<uint8_t>(sport >> 8);
  b[41] = static_cast<uint8_t>(sport);
  b[42] = static_cast<uint8_t>(dport >> 8);
  b[43] = static_cast<uint8_t>(dport);
  return b;
}

std::vector<uint8_t> v4_packet(uint16_t sport, uint16_t dport, uint8_t ttl = 64) {
  std::vector<uint8_t> b(40, 0);
  b[0] = 0x45;
  b[8] = ttl;
  b[9] = 6;
  b[12] = 10;
  b[15] = 1;
  b[16] = 10;
  b[19] = 2;
  b[20] = static_cast<uint8_t>(sport >> 8);
  b[21] = static_cast<uint8_t>(sport);
  b[22] = static_cast<uint8_t>(dport >> 8);
  b[23] = static_cast<uint8_t>(dport);
  return b;
}

TEST(EcmpHash, SamePacketAndSeedGiveTheSameHash) {
  auto p = v6_packet(0x12345, 40001, 5001);
  EXPECT_EQ(ecmp_hash(p, 7), ecmp_hash(p, 7));
  // Fields outside the flow key (hop limit, payload) do not move the flow.
  auto q = v6_packet(0x12345, 40001, 5001, 3);
  q[50] = 0xaa;
  EXPECT_EQ(ecmp_hash(p, 7), ecmp_hash(q, 7));
  auto a = v4_packet(40001, 5001);
  auto b = v4_packet(40001, 5001, 9);
  EXPECT_EQ(ecmp_hash(a, 7), ecmp_hash(b, 7));
}

TEST(EcmpHash, SeedsGiveIndependentPlacements) {
  // Two seeds agree on a flow's path (of 2) about half the time, as two
  // routers with their own fib_multipath_hash_seed would.
  int same = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    auto p = v6_packet(static_cast<uint32_t>(i), 40001, 5001);
    same += ecmp_pick(ecmp_hash(p, 1), 2) == ecmp_pick(ecmp_hash(p, 2), 2);
  }
  EXPECT_NEAR(static_cast<double>(same) / n, 0.5, 0.04);
}

// A new flow label (PLB's rehash) moves the flow with probability (n-1)/n,
// and the labels spread evenly over the paths.
void expect_label_moves(size_t paths) {
  uint64_t rng = 99;
  const int n = 6000;
  int moved = 0;
  std::vector<int> per_path(paths, 0);
  for (int i = 0; i < n; ++i) {
    const uint32_t l1 = static_cast<uint32_t>(splitmix64(rng)) & 0xfffff;
    const uint32_t l2 = static_cast<uint32_t>(splitmix64(rng)) & 0xfffff;
    const size_t a = ecmp_pick(ecmp_hash(v6_packet(l1, 40001, 5001), 5), paths);
    const size_t b = ecmp_pick(ecmp_hash(v6_packet(l2, 40001, 5001), 5), paths);
    moved += a != b;
    ++per_path[a];
  }
  const double expect = static_cast<double>(paths - 1) / static_cast<double>(paths);
  EXPECT_NEAR(static_cast<double>(moved) / n, expect, 0.03) << paths << " paths";
  for (int c : per_path) EXPECT_NEAR(static_cast<double>(c) / n, 1.0 / static_cast<double>(paths), 0.03);
}

TEST(EcmpHash, NewFlowLabelMovesTheFlowWithProbabilityNMinusOneOverN) {
  expect_label_moves(2);
  expect_label_moves(3);
  expect_label_moves(4);
}

TEST(EcmpHash, PortsAreInTheKey) {
  int moved = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    const uint16_t sp = static_cast<uint16_t>(10000 + i);
    moved += ecmp_pick(ecmp_hash(v4_packet(sp, 5001), 3), 2) != ecmp_pick(ecmp_hash(v4_packet(sp + 1, 5001), 3), 2);
  }
  EXPECT_NEAR(static_cast<double>(moved) / n, 0.5, 0.04);
}

TEST(EcmpHash, HashThresholdCutsTheHashSpaceIntoEqualRegions) {
  // RFC 2992 §2.2: region i holds hashes in [i * 2^32 / n, (i + 1) * 2^32 / n).
  EXPECT_EQ(ecmp_pick(0, 3), 0u);
  EXPECT_EQ(ecmp_pick(0x55555555, 3), 0u);
  EXPECT_EQ(ecmp_pick(0x55555556, 3), 1u);
  EXPECT_EQ(ecmp_pick(0xffffffff, 3), 2u);
  EXPECT_EQ(ecmp_pick(0x7fffffff, 2), 0u);
  EXPECT_EQ(ecmp_pick(0x80000000, 2), 1u);
}

TEST(EcmpHash, DestinationOfBothFamilies) {
  IpAddr d;
  ASSERT_TRUE(ip_destination(v4_packet(1, 2), &d));
  EXPECT_EQ(d, IpAddr::v4(10, 0, 0, 2));
  ASSERT_TRUE(ip_destination(v6_packet(1, 1, 2), &d));
  std::array<uint8_t, 16> a{};
  a[0] = 0xfd;
  a[15] = 2;
  EXPECT_EQ(d, IpAddr::v6(a));
  std::vector<uint8_t> junk(10, 0x11);
  EXPECT_FALSE(ip_destination(junk, &d));
}

}  // namespace
}  // namespace weir::sim
