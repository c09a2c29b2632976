// IP addresses and endpoints. IPv4 addresses are held in their IPv4-mapped
// IPv6 form (::ffff:a.b.c.d) so that one type serves both families and an
// AF_INET6 socket can talk to an IPv4 peer.
#pragma once

#include <array>
#include <compare>
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

  bool is_v4() const;  // true for IPv4-mapped addresses
  uint32_t v4_host_order() const;
  const std::array<uint8_t, 16>& bytes() const { return b_; }
  bool is_unspecified() const;
  std::string to_string() const;

  auto operator<=>(const IpAddr&) const = default;

 private:
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
