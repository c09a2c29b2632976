// The per-destination path-MTU cache (Linux route exceptions, see the header).
#include "ip/pmtu_cache.h"

#include <algorithm>

namespace weir {

size_t PmtuCache::AddrHash::operator()(const IpAddr& a) const noexcept {
  // FNV-1a over the 16 address bytes: destinations are chosen by peers,
  // so the table must not degrade on structured addresses.
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : a.bytes()) h = (h ^ b) * 1099511628211ull;
  return static_cast<size_t>(h);
}

bool PmtuCache::learn(const IpAddr& dst, uint32_t mtu, uint32_t link_mtu, Time now) {
  expire(now);
  // Linux __ip_rt_update_pmtu: below ip_rt_min_pmtu the minimum is used.
  mtu = std::max(mtu, dst.is_v4() ? kMinPmtuV4 : kMinPmtuV6);
  if (mtu > link_mtu) return false;  // RFC 1191 §6.3: never raise above the link
  auto it = map_.find(dst);
  if (it != map_.end()) {
    Entry& e = *it->second;
    if (mtu > e.mtu) return false;
    // Linux: the same value only refreshes the expiry once half of it has run.
    if (mtu == e.mtu && now < e.expires - kExpires / 2) return false;
    e.mtu = mtu;
    e.expires = now + kExpires;
    order_.splice(order_.end(), order_, it->second);  // now the newest
    return true;
  }
  if (mtu == link_mtu) return false;  // nothing to remember
  if (map_.size() >= capacity_) {
    // Linux fnhe_oldest / rt6_exception_remove_oldest: reclaim the oldest.
    map_.erase(order_.front().dst);
    order_.pop_front();
    ++evictions_;
  }
  order_.push_back(Entry{dst, mtu, now + kExpires});
  map_.emplace(dst, std::prev(order_.end()));
  return true;
}

std::optional<uint32_t> PmtuCache::lookup(const IpAddr& dst, Time now) const {
  if (map_.empty()) return std::nullopt;
  auto it = map_.find(dst);
  if (it == map_.end()) return std::nullopt;
  const Entry& e = *it->second;
  // Linux ipv4_mtu / rt6_check_expired: an expired exception no longer applies.
  if (now >= e.expires) return std::nullopt;
  return e.mtu;
}

void PmtuCache::expire(Time now) {
  // Every entry lives kExpires from its last update and updates move it to
  // the back, so the list is in expiry order.
  while (!order_.empty() && now >= order_.front().expires) {
    map_.erase(order_.front().dst);
    order_.pop_front();
  }
}

}  // namespace weir
