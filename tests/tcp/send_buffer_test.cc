// SendBuffer::view hands the stack the send ring's bytes in place (one piece,
// or two where the ring wraps) for the copy-and-checksum into the packet.
#include "tcp/send_buffer.h"

#include <gtest/gtest.h>

#include <vector>

namespace weir::tcp {
namespace {

std::vector<uint8_t> joined(const std::array<std::span<const uint8_t>, 2>& v) {
  std::vector<uint8_t> out(v[0].begin(), v[0].end());
  out.insert(out.end(), v[1].begin(), v[1].end());
  return out;
}

TEST(SendBuffer, ViewEqualsCopyOutAcrossTheWrap) {
  SendBuffer b;
  std::vector<uint8_t> data(3000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13 + 1);
  ASSERT_EQ(b.append(data, 1 << 20), data.size());
  b.consume(2500);  // the front moves near the ring's end (4096)
  ASSERT_EQ(b.append(data, 1 << 20), data.size());
  ASSERT_EQ(b.capacity(), 4096u);  // no growth: the second append wrapped
  for (size_t off : {0u, 1u, 500u, 1595u, 1596u, 1597u, 3000u}) {
    for (size_t len : {0u, 1u, 2u, 1447u, 1448u}) {
      if (off + len > b.size()) continue;
      std::vector<uint8_t> want(len);
      b.copy_out(off, want);
      const auto v = b.view(off, len);
      EXPECT_EQ(joined(v), want) << "off " << off << " len " << len;
      EXPECT_EQ(v[0].size() + v[1].size(), len);
    }
  }
  // A range across the wrap comes in two pieces, the first ending at the ring's end.
  const auto v = b.view(1000, 1448);
  EXPECT_EQ(v[0].size(), 4096u - 2500u - 1000u);
  EXPECT_EQ(v[1].size(), 1448u - v[0].size());
}

}  // namespace
}  // namespace weir::tcp
