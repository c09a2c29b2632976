#include "weir/addr.h"

#include <arpa/inet.h>

#include <cstring>

#include <fmt/format.h>

namespace weir {

IpAddr IpAddr::v4(uint32_t host_order) {
  IpAddr a;
  a.b_[10] = 0xff;
  a.b_[11] = 0xff;
  a.b_[12] = static_cast<uint8_t>(host_order >> 24);
  a.b_[13] = static_cast<uint8_t>(host_order >> 16);
  a.b_[14] = static_cast<uint8_t>(host_order >> 8);
  a.b_[15] = static_cast<uint8_t>(host_order);
  return a;
}

IpAddr IpAddr::v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return v4((uint32_t{a} << 24) | (uint32_t{b} << 16) | (uint32_t{c} << 8) | d);
}

IpAddr IpAddr::v6(const std::array<uint8_t, 16>& bytes) {
  IpAddr a;
  a.b_ = bytes;
  return a;
}

std::optional<IpAddr> IpAddr::parse(std::string_view text) {
  std::string s(text);
  in_addr v4addr{};
  if (inet_pton(AF_INET, s.c_str(), &v4addr) == 1) return v4(ntohl(v4addr.s_addr));
  std::array<uint8_t, 16> b{};
  if (inet_pton(AF_INET6, s.c_str(), b.data()) == 1) return v6(b);
  return std::nullopt;
}

bool IpAddr::is_unspecified() const {
  if (is_v4()) return v4_host_order() == 0;
  for (uint8_t x : b_)
    if (x != 0) return false;
  return true;
}

std::string IpAddr::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (is_v4()) {
    in_addr a{};
    a.s_addr = htonl(v4_host_order());
    inet_ntop(AF_INET, &a, buf, sizeof buf);
  } else {
    inet_ntop(AF_INET6, b_.data(), buf, sizeof buf);
  }
  return buf;
}

std::string Endpoint::to_string() const {
  if (addr.is_v4()) return fmt::format("{}:{}", addr.to_string(), port);
  return fmt::format("[{}]:{}", addr.to_string(), port);
}

size_t FourTupleHash::operator()(const FourTuple& t) const noexcept {
  // FNV-1a over the tuple's 64-bit words (the byte-wise form cost ~120
  // instructions per received segment); demux only, not security (ISNs use
  // a keyed hash). The map is never iterated, so its order does not matter.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const uint8_t* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 1099511628211ull;
  };
  mix(t.local.addr.bytes().data());
  mix(t.local.addr.bytes().data() + 8);
  mix(t.remote.addr.bytes().data());
  mix(t.remote.addr.bytes().data() + 8);
  h = (h ^ (uint64_t{t.local.port} << 16 | t.remote.port)) * 1099511628211ull;
  return static_cast<size_t>(h ^ (h >> 32));  // high bits into the low ones the buckets use
}

}  // namespace weir
