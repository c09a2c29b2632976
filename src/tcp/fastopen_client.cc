#include "tcp/fastopen_client.h"

#include <algorithm>

namespace weir::tcp::fastopen {

Blackhole::Verdict Blackhole::check(int timeout_s, Time now) const {
  if (timeout_s <= 0 || times_ == 0) return Verdict::kAllow;
  const int64_t multiplier = int64_t{1} << std::min(times_ - 1, 6);
  if (now < stamp_ + Duration::s(multiplier * timeout_s)) return Verdict::kPause;
  return Verdict::kProbe;  // tp->syn_fastopen_ch
}

bool Blackhole::disable(int timeout_s, Time now) {
  if (timeout_s <= 0) return false;
  stamp_ = now;
  times_ = std::min(times_ + 1, 64);  // the pause stops growing at 2^6
  return true;
}

const ClientEntry* ClientCache::get(const IpAddr& src, const IpAddr& dst) const {
  auto it = map_.find(Key{src, dst});
  return it == map_.end() ? nullptr : &it->second.e;
}

// Linux tcp_fastopen_cache_set: the MSS when known; the cookie when the
// SYN-ACK carried a valid one, else the experimental-option retry state only
// moves forward and only while no cookie is cached; SYN-data losses count
// up until a SYN-ACK without one resets them.
void ClientCache::set(const IpAddr& src, const IpAddr& dst, const CacheUpdate& u, Time now) {
  const Key k{src, dst};
  auto it = map_.find(k);
  if (it == map_.end()) {
    // Bounded: a new destination displaces the stalest one (tcpm_new's reclaim).
    if (map_.size() >= capacity_) evict_stalest();
    it = map_.emplace(k, Slot{}).first;
  }
  Slot& s = it->second;
  s.stamp = ++clock_;
  ClientEntry& e = s.e;
  if (u.mss) e.mss = u.mss;
  if (u.cookie && u.cookie->len > 0) {
    e.cookie.len = static_cast<uint8_t>(u.cookie->len);
    std::copy_n(u.cookie->cookie.begin(), e.cookie.len, e.cookie.val.begin());
    e.cookie_exp = u.cookie->exp;
  } else if (u.try_exp > e.try_exp && e.cookie.len == 0 && !e.cookie_exp) {
    e.try_exp = u.try_exp;
  }
  if (u.syn_lost) {
    ++e.syn_loss;
    e.last_syn_loss = now;
  } else {
    e.syn_loss = 0;
  }
}

// O(n) over a bounded table, only when a new destination arrives at a full one.
void ClientCache::evict_stalest() {
  auto oldest = std::min_element(map_.begin(), map_.end(),
                                 [](const auto& a, const auto& b) { return a.second.stamp < b.second.stamp; });
  if (oldest != map_.end()) map_.erase(oldest);
}

ClientDecision client_decide(int sysctl, bool no_cookie_opt, const ClientEntry* cached) {
  ClientDecision d;
  if (cached && cached->mss) d.mss_clamp = cached->mss;  // tcp_fastopen_cache_get's mss
  // tcp_fastopen_no_cookie: data without a cookie and without the option
  // (cookie->len = -1 leaves tcp_syn_options without OPTION_FAST_OPEN_COOKIE).
  if ((sysctl & kClientNoCookie) || no_cookie_opt) {
    d.send_data = true;
    return d;
  }
  wire::TcpFastOpen o;
  if (cached && cached->cookie.len > 0) {
    o.len = static_cast<int8_t>(cached->cookie.len);
    std::copy_n(cached->cookie.val.begin(), cached->cookie.len, o.cookie.begin());
    o.exp = cached->cookie_exp;
    d.send_data = true;
  } else {
    // RFC 7413 §4.1.1: a cookie request is the option with no cookie;
    // tcp_fastopen_cache_get asks in the experimental kind when try_exp == 1.
    o.len = 0;
    o.exp = cached && cached->try_exp == 1;
  }
  d.option = o;
  return d;
}

size_t syn_data_space(uint32_t mtu_mss, uint16_t mss_clamp, size_t want) {
  constexpr uint32_t kMaxTcpOptionSpace = 40;  // MAX_TCP_OPTION_SPACE
  constexpr uint32_t kMinSndMss = 48;          // TCP_MIN_SND_MSS
  uint32_t mss = std::min<uint32_t>(mtu_mss, mss_clamp);
  mss = std::max(mss, kMinSndMss);
  return std::min<size_t>(mss - kMaxTcpOptionSpace, want);
}

}  // namespace weir::tcp::fastopen
