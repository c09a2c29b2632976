#include "wire/checksum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace weir::wire {
namespace {

// Straightforward RFC 1071 reference: big-endian 16-bit words, folded at the end.
uint16_t reference_checksum(const std::vector<uint8_t>& d, uint32_t initial = 0) {
  uint64_t sum = initial;
  for (size_t i = 0; i < d.size(); i += 2) {
    uint16_t w = static_cast<uint16_t>(d[i] << 8);
    if (i + 1 < d.size()) w |= d[i + 1];
    sum += w;
  }
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

TEST(Checksum, Rfc1071WorkedExample) {
  // RFC 1071 §3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2 (folded).
  std::vector<uint8_t> d{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(csum_fold(csum_partial(d)), static_cast<uint16_t>(~0xddf2));
}

TEST(Checksum, KnownIpv4HeaderVector) {
  // A classic IPv4 header whose checksum field is 0xb861.
  std::vector<uint8_t> h{0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                         0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(csum_fold(csum_partial(h)), 0xb861);
  h[10] = 0xb8;
  h[11] = 0x61;
  EXPECT_EQ(csum_fold(csum_partial(h)), 0);  // a correct header verifies to zero
}

TEST(Checksum, MatchesReferenceForEveryLengthAndAlignment) {
  std::mt19937 rng(1071);
  std::vector<uint8_t> buf(300);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t off = 0; off < 8; ++off) {
    for (size_t len = 0; len + off <= buf.size(); ++len) {
      std::vector<uint8_t> d(buf.begin() + off, buf.begin() + off + len);
      std::span<const uint8_t> s(buf.data() + off, len);
      ASSERT_EQ(csum_fold(csum_partial(s, 0x1234)), reference_checksum(d, 0x1234))
          << "off " << off << " len " << len;
    }
  }
}

TEST(Checksum, AllOnesDataDoesNotOverflowAccumulator) {
  std::vector<uint8_t> d(65536 + 7, 0xff);
  EXPECT_EQ(csum_fold(csum_partial(d, 0xffffffffu)), reference_checksum(d, 0xffff) );
}

TEST(Checksum, PartialSumsChainOverEvenSplits) {
  std::mt19937 rng(7);
  std::vector<uint8_t> d(1500);
  for (auto& b : d) b = static_cast<uint8_t>(rng());
  std::span<const uint8_t> s(d);
  uint32_t chained = csum_partial(s.subspan(600), csum_partial(s.first(600)));
  EXPECT_EQ(csum_fold(chained), csum_fold(csum_partial(s)));
}

TEST(Checksum, PseudoHeaderV4MatchesExplicitBytes) {
  IpAddr src = IpAddr::v4(192, 0, 2, 1), dst = IpAddr::v4(198, 51, 100, 7);
  std::vector<uint8_t> ph{192, 0, 2, 1, 198, 51, 100, 7, 0, 6, 0x05, 0xdc};
  EXPECT_EQ(csum_fold(pseudo_header_sum(src, dst, 6, 1500)), reference_checksum(ph));
}

TEST(Checksum, PseudoHeaderV6MatchesExplicitBytes) {
  IpAddr src = *IpAddr::parse("2001:db8::1"), dst = *IpAddr::parse("fd00:1:2:3::abcd");
  std::vector<uint8_t> ph(src.bytes().begin(), src.bytes().end());
  ph.insert(ph.end(), dst.bytes().begin(), dst.bytes().end());
  // 32-bit length 0x00012345, three zero bytes, next header 6.
  for (uint8_t b : {0x00, 0x01, 0x23, 0x45, 0, 0, 0, 6}) ph.push_back(b);
  EXPECT_EQ(csum_fold(pseudo_header_sum(src, dst, 6, 0x12345)), reference_checksum(ph));
}

TEST(Checksum, IncrementalUpdateMatchesRecomputation) {
  std::mt19937 rng(1624);
  for (int iter = 0; iter < 2000; ++iter) {
    std::vector<uint8_t> d(40);
    for (auto& b : d) b = static_cast<uint8_t>(rng());
    uint16_t before = csum_fold(csum_partial(d));
    size_t at = 2 * (rng() % 20);
    uint16_t old_v = static_cast<uint16_t>(d[at] << 8 | d[at + 1]);
    uint16_t new_v = iter == 0 ? 0 : static_cast<uint16_t>(rng());
    d[at] = static_cast<uint8_t>(new_v >> 8);
    d[at + 1] = static_cast<uint8_t>(new_v);
    ASSERT_EQ(csum_update16(before, old_v, new_v), csum_fold(csum_partial(d)));
  }
}

TEST(Checksum, IncrementalUpdateRfc1624Example) {
  // RFC 1624 §3: the rest of the header sums to 0xCD7A and a field changes
  // from 0x5555 to 0x3285. Recomputation gives 0x0000; RFC 1141's formula
  // would give 0xFFFF.
  std::vector<uint8_t> d{0xcd, 0x7a, 0x55, 0x55};
  uint16_t before = csum_fold(csum_partial(d));
  EXPECT_EQ(before, 0xdd2f);
  EXPECT_EQ(csum_update16(before, 0x5555, 0x3285), 0x0000);
  d[2] = 0x32;
  d[3] = 0x85;
  EXPECT_EQ(csum_fold(csum_partial(d)), 0x0000);
}

// The fused copy and sum (csum_copy) must equal a memcpy followed by
// csum_partial: every length up to a few vector blocks (odd ones included),
// every source and destination alignment, a seed sum carried in.
TEST(Checksum, CopyAndSumEqualsCopyThenSum) {
  std::mt19937 rng(1624);
  std::vector<uint8_t> src(200);
  for (auto& b : src) b = static_cast<uint8_t>(rng());
  for (size_t soff = 0; soff < 4; ++soff) {
    for (size_t doff = 0; doff < 4; ++doff) {
      for (size_t len = 0; len + soff <= 180; ++len) {
        std::vector<uint8_t> dst(len + doff + 8, 0xee);
        std::span<const uint8_t> s(src.data() + soff, len);
        const uint32_t got = csum_copy(s, dst.data() + doff, 0xbeef);
        ASSERT_EQ(csum_fold(got), csum_fold(csum_partial(s, 0xbeef)))
            << "soff " << soff << " doff " << doff << " len " << len;
        ASSERT_TRUE(std::equal(s.begin(), s.end(), dst.begin() + static_cast<ptrdiff_t>(doff)));
        // Nothing written outside the destination.
        for (size_t i = 0; i < doff; ++i) ASSERT_EQ(dst[i], 0xee);
        for (size_t i = doff + len; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xee);
      }
    }
  }
}

// Past the point where the vector lanes are folded (1 MiB with AVX2) and all
// ones, the worst case for the lane sums; + 20 leaves a half vector after a
// full fold (it must wait for the next).
TEST(Checksum, CopyAndSumOfLongAllOnesData) {
  for (size_t n : {size_t{1} << 19, (size_t{1} << 20) + 33, (size_t{1} << 20) + 20}) {
    std::vector<uint8_t> d(n, 0xff), out(n);
    EXPECT_EQ(csum_fold(csum_copy(d, out.data(), 0xffffffffu)), reference_checksum(d, 0xffff));
    EXPECT_EQ(csum_fold(csum_partial(d)), reference_checksum(d));
    EXPECT_EQ(out, d);
  }
}

// A payload in two pieces (a wrapped ring): the second piece's sum added at
// its offset, odd or even, equals the sum of the contiguous bytes.
TEST(Checksum, PiecesAddedAtOddAndEvenOffsetsEqualTheWhole) {
  std::mt19937 rng(2018);
  std::vector<uint8_t> d(1461);
  for (auto& b : d) b = static_cast<uint8_t>(rng());
  std::span<const uint8_t> all(d);
  for (size_t cut : {0u, 1u, 2u, 3u, 17u, 730u, 731u, 1459u, 1460u, 1461u}) {
    std::vector<uint8_t> out(d.size());
    uint32_t sum = csum_add_at(0x1234, csum_copy(all.first(cut), out.data()), 0);
    sum = csum_add_at(sum, csum_copy(all.subspan(cut), out.data() + cut), cut);
    EXPECT_EQ(csum_fold(sum), csum_fold(csum_partial(all, 0x1234))) << "cut " << cut;
    EXPECT_EQ(out, d);
  }
}

}  // namespace
}  // namespace weir::wire
