// A per-destination path-MTU cache: what ICMP fragmentation-needed /
// packet-too-big taught us about a destination (RFC 1191 §6.3, RFC 8201
// §5.2), shared by every connection to it, forgotten after a while so a
// larger MTU is tried again. Linux keeps this as a route exception (IPv4
// fib_nh_exception, IPv6 rt6_exception) with ip_rt_mtu_expires = 600 s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <unordered_map>

#include "weir/addr.h"
#include "weir/time.h"

namespace weir {

class PmtuCache {
 public:
  // Linux bounds exceptions per next hop: 2048 hash buckets (IPv4
  // FNHE_HASH_SHIFT 11; IPv6 FIB6_EXCEPTION_BUCKET_SIZE 1024) with the
  // oldest entry of a chain reclaimed beyond depth 5 (FNHE_RECLAIM_DEPTH,
  // FIB6_MAX_DEPTH). weir has one next hop and one table for both
  // families, bounded as a whole; 4096 sits between the two Linux bounds.
  static constexpr size_t kDefaultCapacity = 4096;
  // Linux net.ipv4.route.mtu_expires (ip_rt_mtu_expires), also used for IPv6.
  static constexpr Duration kExpires = Duration::s(600);
  // Linux net.ipv4.route.min_pmtu (ip_rt_min_pmtu); IPv6's minimum link
  // MTU is 1280 (RFC 8200 §5).
  static constexpr uint32_t kMinPmtuV4 = 552;
  static constexpr uint32_t kMinPmtuV6 = 1280;

  explicit PmtuCache(size_t capacity = kDefaultCapacity) : capacity_(capacity ? capacity : 1) {}

  // Records that `dst` cannot take datagrams above `mtu` (clamped to the
  // family's minimum), expiring at now + kExpires. Only lowers: a value at
  // or above the one already known (or above `link_mtu`) changes nothing,
  // as Linux __ip_rt_update_pmtu. Returns true when the entry changed.
  bool learn(const IpAddr& dst, uint32_t mtu, uint32_t link_mtu, Time now);
  // The learnt PMTU toward `dst`, unless none or expired at `now`.
  std::optional<uint32_t> lookup(const IpAddr& dst, Time now) const;
  // Drops entries expired at `now` (entries age in insertion order).
  void expire(Time now);

  size_t size() const { return map_.size(); }
  bool empty() const { return map_.empty(); }
  size_t capacity() const { return capacity_; }
  uint64_t evictions() const { return evictions_; }

 private:
  struct Entry {
    IpAddr dst;
    uint32_t mtu = 0;
    Time expires;
  };
  struct AddrHash {
    size_t operator()(const IpAddr& a) const noexcept;
  };
  using Order = std::list<Entry>;  // oldest update first

  size_t capacity_;
  uint64_t evictions_ = 0;
  Order order_;
  std::unordered_map<IpAddr, Order::iterator, AddrHash> map_;
};

}  // namespace weir
