// The neighbour table: Linux's NUD state machine (net/core/neighbour.c)
// for one device, shared by ARP (RFC 826) and IPv6 neighbour discovery
// (RFC 4861 §7.3). It holds no pointer to the link: the link passes a
// NeighborOutput into each call, through which the table solicits and
// releases queued packets, and `now`. No clock, no timers of its own: every
// entry has a deadline, and advance(now) runs the expired ones.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <vector>

#include "link/ether.h"
#include "weir/addr.h"
#include "weir/time.h"

namespace weir::link {

// Linux's NUD_* states; printed as `ip neigh` prints them.
enum class NudState : uint8_t {
  kNone,        // NUD_NONE: just created, nothing known
  kIncomplete,  // NUD_INCOMPLETE: multicast/broadcast solicitations out, packets queued
  kReachable,   // NUD_REACHABLE: confirmed within reachable_time
  kStale,       // NUD_STALE: usable, unconfirmed; the next use starts DELAY
  kDelay,       // NUD_DELAY: used while STALE; waits delay_first_probe_time for a confirmation
  kProbe,       // NUD_PROBE: unicast solicitations to the cached address
  kFailed,      // NUD_FAILED: resolution failed; the next use starts again
  kPermanent,   // NUD_PERMANENT: static, never changed by the protocol
};
const char* to_string(NudState s);
// NUD_VALID: an address is known and packets go out with it.
bool nud_valid(NudState s);

// net.ipv4.neigh.default.* / net.ipv6.neigh.default.* (Linux defaults;
// RFC 4861 §10 RETRANS_TIMER, REACHABLE_TIME, DELAY_FIRST_PROBE_TIME,
// MAX_MULTICAST_SOLICIT, MAX_UNICAST_SOLICIT have the same values).
struct NeighParams {
  Duration retrans_time = Duration::s(1);
  Duration base_reachable_time = Duration::s(30);
  Duration delay_first_probe_time = Duration::s(5);
  Duration locktime = Duration::s(1);       // ARP only: see arp_process's override
  int mcast_solicit = 3;                     // INCOMPLETE: broadcast/multicast probes
  int ucast_solicit = 3;                     // PROBE: unicast probes
  size_t unres_qlen_bytes = 212992;          // per-entry queue, charged as Linux skb truesize
  size_t gc_thresh3 = 1024;                  // hard bound on entries
  uint64_t seed = 1;                         // reachable_time's generator (deterministic)
};

// Linux charges a queued packet its skb truesize. On x86-64 that is the
// frame plus SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) = 320 and
// SKB_DATA_ALIGN(sizeof(struct sk_buff)) = 256 (slab rounding left out), so
// 101 full-size packets fit in 212992 bytes, Linux's unres_qlen of 101.
inline constexpr size_t kSkbOverhead = 576;
inline size_t queued_truesize(size_t ip_len) { return ip_len + kEtherHeaderLen + kSkbOverhead; }

struct Neighbor {
  IpAddr ip;
  MacAddr mac;                 // neigh->ha: meaningful while nud_valid(state)
  NudState state = NudState::kNone;
  Time updated, confirmed, used;
  Time deadline = Time::never();  // the entry's timer (neigh->timer), never when not armed
  int probes = 0;              // solicitations sent in this INCOMPLETE or PROBE period
  IpAddr solicit_src;          // source of the packet that started resolution (arp_solicit's saddr)
  std::deque<std::vector<uint8_t>> queue;  // arp_queue: IP packets awaiting the address
  size_t queue_bytes = 0;      // arp_queue_len_bytes, in queued_truesize units
};

struct NeighStats {
  uint64_t resolutions_failed = 0;  // res_failed: INCOMPLETE/PROBE ran out of probes
  uint64_t queue_drops = 0;         // unres_discards: queued packets dropped (queue full or failed)
  uint64_t table_full = 0;          // table_fulls: a new entry refused at gc_thresh3
  uint64_t gc_evictions = 0;        // entries neigh_forced_gc-style evicted at gc_thresh3 to make room
};

// What the table asks the link to put on the wire.
class NeighborOutput {
 public:
  virtual ~NeighborOutput() = default;
  // A solicitation for n.ip: broadcast/multicast when `unicast` is null,
  // else unicast to *unicast (PROBE).
  virtual void solicit(const Neighbor& n, const MacAddr* unicast) = 0;
  // A queued IP packet, now that its next hop's address is known.
  virtual void send(const MacAddr& dst, std::span<const uint8_t> ip_packet) = 0;
  // neigh->ops->error_report: a queued packet whose next hop failed to
  // resolve, about to be dropped (Linux arp_error_report and
  // ndisc_error_report answer it with an ICMP unreachable to its sender).
  virtual void unreachable(std::span<const uint8_t> ip_packet) { (void)ip_packet; }
};

// neigh_update's flags (NEIGH_UPDATE_F_*).
inline constexpr unsigned kUpdOverride = 1;      // a different address replaces the cached one
inline constexpr unsigned kUpdWeakOverride = 2;  // ...or, if not allowed, REACHABLE drops to STALE
inline constexpr unsigned kUpdAdmin = 4;         // an administrative change (static entries)

class NeighborTable {
 public:
  explicit NeighborTable(NeighParams p = {});

  enum class Verdict : uint8_t { kSend, kQueued, kDropped };
  struct Resolution {
    Verdict verdict;
    MacAddr mac;  // when kSend
  };
  // neigh_resolve_output/__neigh_event_send: the address to send an IP
  // packet to `next_hop` with, or the packet queued while resolving, or
  // dropped (table full).
  Resolution output(Time now, const IpAddr& next_hop, const IpAddr& src,
                    std::span<const uint8_t> ip_packet, NeighborOutput& out);
  // neigh_update: `mac` null means "no link-layer address in the message".
  void update(Time now, Neighbor& n, const MacAddr* mac, NudState new_state, unsigned flags,
              NeighborOutput& out);
  Neighbor* lookup(const IpAddr& ip);
  const Neighbor* lookup(const IpAddr& ip) const;
  // __neigh_lookup(..., creat=1): the entry, created (kNone) if absent;
  // nullptr when the table is full and nothing can be evicted.
  Neighbor* lookup_or_create(Time now, const IpAddr& ip);
  void add_static(const IpAddr& ip, const MacAddr& mac);
  // neigh_confirm: an upper layer saw `ip` answer (RFC 4861 §7.3.1). Only
  // the entry's `confirmed` time moves; the timer reads it (REACHABLE stays,
  // DELAY returns to REACHABLE). No entry: nothing to confirm.
  void confirm(Time now, const IpAddr& ip);
  // neigh_timer_handler for every entry whose deadline has passed.
  void advance(Time now, NeighborOutput& out);
  Time next_deadline() const { return next_deadline_; }
  size_t size() const { return entries_.size(); }
  const NeighStats& stats() const { return stats_; }
  const NeighParams& params() const { return p_; }
  // The current randomised reachable time (neigh_parms->reachable_time).
  Duration reachable_time() const { return reachable_time_; }

 private:
  void timer(Time now, Neighbor& n, NeighborOutput& out);
  void start_resolution(Time now, Neighbor& n, const IpAddr& src, NeighborOutput& out);
  void enqueue(Neighbor& n, std::span<const uint8_t> ip_packet);
  void fail(Neighbor& n, NeighborOutput& out);
  void flush_queue(Time now, Neighbor& n, NeighborOutput& out);
  void mark_used(Time now, Neighbor& n);
  void arm(Neighbor& n, Time when);
  bool evict_one(Time now);
  void maybe_redraw_reachable(Time now);
  uint64_t next_random();

  NeighParams p_;
  std::map<IpAddr, Neighbor> entries_;  // ordered: deterministic scans and eviction ties
  Time next_deadline_ = Time::never();  // a lower bound on every entry's deadline
  Duration reachable_time_;
  Time reachable_drawn_ = Time::never();
  uint64_t rng_;
  NeighStats stats_;
};

}  // namespace weir::link
