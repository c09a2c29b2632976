// TCP Fast Open, client side (RFC 7413 §4.1), as Linux does it: the
// per-destination cache of cookies and MSS (net/ipv4/tcp_metrics.c
// tcp_fastopen_cache_get/set, RFC 7413 §4.1.3 "the client caches the
// cookie"), and the decision what the SYN carries (tcp_fastopen.c
// tcp_fastopen_cookie_check, tcp_output.c tcp_send_syn_data). Pure: the
// stack owns the cache, the connection the per-connection state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "tcp/fastopen.h"
#include "weir/addr.h"
#include "weir/time.h"
#include "wire/tcp_header.h"

namespace weir::tcp::fastopen {

// One destination's Fast Open metrics (Linux struct tcp_fastopen_metrics).
struct ClientEntry {
  uint16_t mss = 0;        // the peer's last SYN-ACK MSS; 0: unknown
  Cookie cookie;           // len 0: none cached
  bool cookie_exp = false; // the cookie came in the experimental option
  uint8_t try_exp = 0;     // 1: request with the experimental option next; 2: back to RFC 7413
  uint16_t syn_loss = 0;   // consecutive SYN-data losses (blackhole accounting)
  Time last_syn_loss;
};

// What a SYN-ACK teaches (tcp_rcv_fastopen_synack -> tcp_fastopen_cache_set).
struct CacheUpdate {
  uint16_t mss = 0;                            // 0: keep
  std::optional<wire::TcpFastOpen> cookie;     // stored only when len > 0
  bool syn_lost = false;
  uint8_t try_exp = 0;
};

// Bounded cache keyed by (source, destination) address, as Linux's
// tcp_metrics keys by saddr/daddr. Linux bounds each hash bucket
// (TCP_METRICS_RECLAIM_DEPTH) and reclaims the stalest entry; here the whole
// table is bounded and the least recently updated entry is evicted.
class ClientCache {
 public:
  static constexpr size_t kDefaultCapacity = 1024;
  explicit ClientCache(size_t capacity = kDefaultCapacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  const ClientEntry* get(const IpAddr& src, const IpAddr& dst) const;
  void set(const IpAddr& src, const IpAddr& dst, const CacheUpdate& u, Time now);
  void flush() { map_.clear(); }  // `ip tcp_metrics flush all`
  size_t size() const { return map_.size(); }
  size_t capacity() const { return capacity_; }

 private:
  using Key = std::pair<IpAddr, IpAddr>;
  struct Slot {
    ClientEntry e;
    uint64_t stamp = 0;  // update order (Linux tcpm_stamp)
  };
  void evict_stalest();
  size_t capacity_;
  uint64_t clock_ = 0;
  std::map<Key, Slot> map_;
};

// Linux tcp_fastopen_active_disable / tcp_fastopen_active_should_disable:
// a middlebox that black-holes Fast Open connections pauses active Fast
// Open on the whole stack, for tcp_fastopen_blackhole_timeout_sec doubled
// per consecutive pause (at most 64 times); 0 never pauses. Once a pause
// has run out, the next Fast Open connection is a probe: if it receives
// data the pauses are forgotten (tcp_fastopen_active_disable_ofo_check).
class Blackhole {
 public:
  enum class Verdict { kAllow, kProbe, kPause };
  Verdict check(int timeout_s, Time now) const;
  // True when a pause started (TcpExtTCPFastOpenBlackhole).
  bool disable(int timeout_s, Time now);
  void forget() { times_ = 0; }
  int times() const { return times_; }

 private:
  Time stamp_;
  int times_ = 0;
};

// What the SYN of an active Fast Open carries (tcp_fastopen_cookie_check +
// tcp_send_syn_data + tcp_syn_options).
struct ClientDecision {
  bool send_data = false;                  // data rides on the SYN
  std::optional<wire::TcpFastOpen> option; // FO/FOEXP in the SYN; nullopt: none
  uint16_t mss_clamp = 0;                  // cached peer MSS bounding the SYN's data; 0: advmss
};

// Linux tcp_fastopen_cookie_check: a cached cookie, or the no-cookie mode
// (sysctl TFO_CLIENT_NO_COOKIE or TCP_FASTOPEN_NO_COOKIE), allows data;
// otherwise the SYN requests a cookie (an empty option, in the experimental
// kind when the cache says try_exp == 1). No-cookie SYNs carry no option.
ClientDecision client_decide(int sysctl, bool no_cookie_opt, const ClientEntry* cached);

// RFC 7413 §4.1.1 / Linux tcp_send_syn_data: the data that fits in the SYN
// is the MSS from the path MTU (clamped by the cached MSS), less
// MAX_TCP_OPTION_SPACE (40) reserved for options middleboxes may add.
size_t syn_data_space(uint32_t mtu_mss, uint16_t mss_clamp, size_t want);

}  // namespace weir::tcp::fastopen
