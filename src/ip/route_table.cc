// Longest-prefix route metrics (see the header).
#include "ip/route_table.h"

namespace weir {

namespace {
// IPv4 prefixes count bits of the last four bytes of the mapped form.
uint8_t family_bits(const IpAddr& a) { return a.is_v4() ? 32 : 128; }
uint8_t first_bit(const IpAddr& a) { return a.is_v4() ? 96 : 0; }
}  // namespace

bool prefix_match(const IpAddr& a, const IpAddr& prefix, uint8_t prefix_len) {
  if (a.is_v4() != prefix.is_v4()) return false;
  const unsigned from = first_bit(prefix);
  const unsigned to = from + prefix_len;
  for (unsigned bit = from; bit < to; ++bit) {
    const uint8_t mask = static_cast<uint8_t>(0x80u >> (bit % 8));
    if ((a.bytes()[bit / 8] & mask) != (prefix.bytes()[bit / 8] & mask)) return false;
  }
  return true;
}

Errc RouteTable::set(const Route& r) {
  if (r.prefix_len > family_bits(r.dst)) return Errc::kInval;
  for (Route& have : routes_) {
    if (have.prefix_len == r.prefix_len && prefix_match(r.dst, have.dst, r.prefix_len)) {
      have.metrics = r.metrics;
      ++gen_;
      return Errc::kOk;
    }
  }
  if (routes_.size() >= capacity_) return Errc::kNoBufs;
  routes_.push_back(r);
  ++gen_;
  return Errc::kOk;
}

RouteMetrics RouteTable::lookup(const IpAddr& dst) const {
  const Route* best = nullptr;
  for (const Route& r : routes_)
    if ((!best || r.prefix_len > best->prefix_len) && prefix_match(dst, r.dst, r.prefix_len)) best = &r;
  return best ? best->metrics : RouteMetrics{};
}

}  // namespace weir
