// The routes whose metrics differ from the device's defaults (Linux's FIB
// entries with RTAX_* metrics), matched by longest prefix. Bounded: a
// driver that keeps adding routes gets ENOBUFS, never unbounded memory
// (DESIGN: every table has a limit). A generation number changes on every
// update so that sockets can tell their cached route is stale (Linux bumps
// rt_genid / the fib6 serial number and dst_check fails).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "weir/errors.h"
#include "weir/route.h"

namespace weir {

class RouteTable {
 public:
  static constexpr size_t kDefaultCapacity = 256;

  explicit RouteTable(size_t capacity = kDefaultCapacity) : capacity_(capacity ? capacity : 1) {}

  // `ip route add|change|replace`: installs or replaces the route for the
  // same prefix. kInval: a prefix longer than the family's address;
  // kNoBufs: the table is full.
  Errc set(const Route& r);
  // The metrics of the longest prefix covering `dst` (all zero if none).
  RouteMetrics lookup(const IpAddr& dst) const;

  uint64_t generation() const { return gen_; }
  size_t size() const { return routes_.size(); }
  bool empty() const { return routes_.empty(); }

 private:
  size_t capacity_;
  uint64_t gen_ = 0;
  std::vector<Route> routes_;  // few entries: a linear longest-prefix scan
};

// True when the first `prefix_len` bits of `a` and `prefix` agree, counted
// over the IPv4 address for mapped (IPv4) prefixes.
bool prefix_match(const IpAddr& a, const IpAddr& prefix, uint8_t prefix_len);

}  // namespace weir
