// SHA-256 (FIPS 180-4), streaming, for `weir fetch`'s end-of-download
// checksum. Written here because no crypto library is a dependency yet.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace weir::driver {

class Sha256 {
 public:
  Sha256();
  // False: always the portable code (tests compare both paths).
  explicit Sha256(bool allow_simd);
  void update(std::span<const uint8_t> data);
  std::array<uint8_t, 32> finish();
  // Lower-case hex, as sha256sum prints it.
  std::string hex();

 private:
  // Compresses `n` consecutive 64-byte blocks: with the x86 SHA extensions
  // when the CPU has them (several times faster), else portable C++.
  void blocks(const uint8_t* p, size_t n);
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t used_ = 0;
  uint64_t total_ = 0;
  bool simd_ = false;
};

}  // namespace weir::driver
