// IP addresses and endpoints. IPv4 addresses are held in their IPv4-mapped
// IPv6 form (::ffff:a.b.c.d) so that one type serves both families and an
// AF_INET6 socket can talk to an IPv4 peer.
#pragma once

#include <array>
#include <bit>
#include <compare>
#include <cstring>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace weir {

class IpAddr {
 public:
  constexpr IpAddr() = default;
  static IpAddr v4(uint32_t host_order);
  static IpAddr v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d);
  static IpAddr v6(const std::array<uint8_t, 16>& bytes);
  // Parses dotted-quad or RFC 4291 text ("192.0.2.1", "fd00::1", "::ffff:1.2.3.4").
  static std::optional<IpAddr> parse(std::string_view text);

  // True for IPv4-mapped addresses (RFC 4291 §2.5.5.2 ::ffff:0:0/96).
  // Inline: the output path asks several times per packet.
  // Two word compares (memcpy keeps the loads endian- and alias-safe).
  bool is_v4() const {
    static constexpr uint8_t kMapped[4] = {0, 0, 0xff, 0xff};
    uint64_t head = 0;
    uint32_t mid = 0, want = 0;
    std::memcpy(&head, b_.data(), 8);
    std::memcpy(&mid, b_.data() + 8, 4);
    std::memcpy(&want, kMapped, 4);
    return head == 0 && mid == want;
  }
  uint32_t v4_host_order() const {
    return (uint32_t{b_[12]} << 24) | (uint32_t{b_[13]} << 16) | (uint32_t{b_[14]} << 8) | b_[15];
  }
  const std::array<uint8_t, 16>& bytes() const { return b_; }
  bool is_unspecified() const;
  std::string to_string() const;

  // Byte order (the defaulted form's), by two big-endian words: the
  // defaulted form called memcmp for each step of an ordered-map lookup
  // (the neighbour table, once per transmitted frame).
  std::strong_ordering operator<=>(const IpAddr& o) const {
    if (const uint64_t a = word(0), b = o.word(0); a != b) return a <=> b;
    return word(8) <=> o.word(8);
  }
  // Two word compares: the defaulted form called memcmp, twice per demux
  // lookup of every received segment.
  bool operator==(const IpAddr& o) const {
    uint64_t a[2], b[2];
    std::memcpy(a, b_.data(), 16);
    std::memcpy(b, o.b_.data(), 16);
    return a[0] == b[0] && a[1] == b[1];
  }

 private:
  uint64_t word(size_t at) const {
    uint64_t w = 0;
    std::memcpy(&w, b_.data() + at, 8);
    if constexpr (std::endian::native == std::endian::little) w = __builtin_bswap64(w);
    return w;
  }
  std::array<uint8_t, 16> b_{};
};

struct Endpoint {
  IpAddr addr;
  uint16_t port = 0;
  auto operator<=>(const Endpoint&) const = default;
  std::string to_string() const;
};

// A connection's identity as seen by this host.
struct FourTuple {
  Endpoint local;
  Endpoint remote;
  auto operator<=>(const FourTuple&) const = default;
};

struct FourTupleHash {
  size_t operator()(const FourTuple& t) const noexcept;
};

}  // namespace weir
