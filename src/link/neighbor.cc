#include "link/neighbor.h"

#include "util/splitmix.h"

namespace weir::link {
namespace {

// Linux neigh_periodic_work redraws reachable_time every 300 s.
constexpr Duration kRedrawInterval = Duration::s(300);
// Linux neigh_forced_gc: an entry updated within the last 5 s is kept.
constexpr Duration kGcMinAge = Duration::s(5);

// NUD_CONNECTED: confirmed, no timer-driven probing needed.
bool nud_connected(NudState s) { return s == NudState::kReachable || s == NudState::kPermanent; }

}  // namespace

const char* to_string(NudState s) {
  switch (s) {
    case NudState::kNone: return "NONE";
    case NudState::kIncomplete: return "INCOMPLETE";
    case NudState::kReachable: return "REACHABLE";
    case NudState::kStale: return "STALE";
    case NudState::kDelay: return "DELAY";
    case NudState::kProbe: return "PROBE";
    case NudState::kFailed: return "FAILED";
    case NudState::kPermanent: return "PERMANENT";
  }
  return "?";
}

bool nud_valid(NudState s) {
  return s == NudState::kReachable || s == NudState::kStale || s == NudState::kDelay ||
         s == NudState::kProbe || s == NudState::kPermanent;
}

NeighborTable::NeighborTable(NeighParams p) : p_(p), rng_(p.seed) {
  maybe_redraw_reachable(Time::zero());
}

uint64_t NeighborTable::next_random() {
  return splitmix64(rng_);  // a seeded, reproducible stream (tests pin the draws)
}

void NeighborTable::maybe_redraw_reachable(Time now) {
  if (!reachable_drawn_.is_never() && now - reachable_drawn_ < kRedrawInterval) return;
  // Linux neigh_rand_reach_time, RFC 4861 §6.3.2: uniform in
  // [base/2, 3*base/2), redrawn every 300 s rather than per entry.
  const int64_t base = p_.base_reachable_time.ns();
  const int64_t r = base > 0 ? static_cast<int64_t>(next_random() % static_cast<uint64_t>(base)) : 0;
  reachable_time_ = Duration::ns(base / 2 + r);
  reachable_drawn_ = now;
}

Neighbor* NeighborTable::lookup(const IpAddr& ip) {
  auto it = entries_.find(ip);
  return it == entries_.end() ? nullptr : &it->second;
}

const Neighbor* NeighborTable::lookup(const IpAddr& ip) const {
  auto it = entries_.find(ip);
  return it == entries_.end() ? nullptr : &it->second;
}

void NeighborTable::confirm(Time now, const IpAddr& ip) {
  if (Neighbor* n = lookup(ip)) n->confirmed = max(n->confirmed, now);
}

Neighbor* NeighborTable::lookup_or_create(Time now, const IpAddr& ip) {
  if (Neighbor* n = lookup(ip)) return n;
  // Linux neigh_alloc: at gc_thresh3 run neigh_forced_gc, and refuse the
  // new entry ("neighbor table overflow") when it frees nothing.
  if (entries_.size() >= p_.gc_thresh3 && !evict_one(now)) {
    ++stats_.table_full;
    return nullptr;
  }
  Neighbor& n = entries_[ip];
  n.ip = ip;
  n.updated = n.used = now;
  n.confirmed = now - p_.base_reachable_time * 2;  // Linux neigh_alloc: not recently confirmed
  return &n;
}

// Linux neigh_forced_gc frees only entries nobody holds: a pending timer
// holds a reference, so INCOMPLETE (with its queue), REACHABLE, DELAY and
// PROBE entries are never taken, nor static ones; FAILED/NONE entries go
// at once, STALE ones once not updated for 5 s. Of those, the least
// recently updated goes (Linux walks its gc_list oldest first). When none
// qualifies the new entry is refused: evicting a resolving neighbour would
// let a flood of requests starve the hosts we are talking to.
bool NeighborTable::evict_one(Time now) {
  auto victim = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    const Neighbor& n = it->second;
    const bool idle = n.state == NudState::kFailed || n.state == NudState::kNone;
    const bool old_stale = n.state == NudState::kStale && now - n.updated >= kGcMinAge;
    if (!idle && !old_stale) continue;
    if (victim == entries_.end() || n.updated < victim->second.updated) victim = it;
  }
  if (victim == entries_.end()) return false;
  stats_.queue_drops += victim->second.queue.size();
  entries_.erase(victim);
  ++stats_.gc_evictions;
  return true;
}

void NeighborTable::add_static(const IpAddr& ip, const MacAddr& mac) {
  // `ip neigh replace ... nud permanent`: an administrative update; takes
  // any existing entry over, and bypasses gc_thresh3 as Linux's
  // NTF_EXT/permanent entries sit outside the gc list.
  Neighbor& n = entries_[ip];
  n.ip = ip;
  n.mac = mac;
  n.state = NudState::kPermanent;
  n.deadline = Time::never();
  n.probes = 0;
}

void NeighborTable::arm(Neighbor& n, Time when) {
  n.deadline = when;
  next_deadline_ = min(next_deadline_, when);
}

void NeighborTable::mark_used(Time now, Neighbor& n) {
  n.used = now;
  // __neigh_event_send: the first use of a STALE entry starts DELAY.
  if (n.state == NudState::kStale) {
    n.state = NudState::kDelay;
    arm(n, now + p_.delay_first_probe_time);
  }
}

NeighborTable::Resolution NeighborTable::output(Time now, const IpAddr& next_hop, const IpAddr& src,
                                                std::span<const uint8_t> ip_packet,
                                                NeighborOutput& out) {
  Neighbor* n = lookup_or_create(now, next_hop);
  if (!n) return {Verdict::kDropped, {}};
  mark_used(now, *n);
  if (nud_valid(n->state)) return {Verdict::kSend, n->mac};
  enqueue(*n, ip_packet);
  // __neigh_event_send: NONE or FAILED starts a resolution; INCOMPLETE
  // only queues behind the one in progress.
  if (n->state != NudState::kIncomplete) start_resolution(now, *n, src, out);
  return {Verdict::kQueued, {}};
}

void NeighborTable::start_resolution(Time now, Neighbor& n, const IpAddr& src, NeighborOutput& out) {
  // Linux counts INCOMPLETE's probes from ucast_probes up to
  // ucast_probes + mcast_probes; counting from 0 to mcast_solicit is the same.
  n.state = NudState::kIncomplete;
  n.updated = now;
  n.probes = 0;
  n.solicit_src = src;
  arm(n, now + p_.retrans_time);
  // immediate_probe: the first solicitation goes now.
  ++n.probes;
  out.solicit(n, nullptr);
}

void NeighborTable::enqueue(Neighbor& n, std::span<const uint8_t> ip_packet) {
  const size_t charge = queued_truesize(ip_packet.size());
  // __neigh_event_send: drop the oldest until the new one fits.
  while (!n.queue.empty() && n.queue_bytes + charge > p_.unres_qlen_bytes) {
    n.queue_bytes -= queued_truesize(n.queue.front().size());
    n.queue.pop_front();
    ++stats_.queue_drops;
  }
  n.queue.emplace_back(ip_packet.begin(), ip_packet.end());
  n.queue_bytes += charge;
}

void NeighborTable::fail(Neighbor& n, NeighborOutput& out) {
  // neigh_invalidate: the entry is FAILED, and each queued packet is
  // reported (error_report), oldest first, then dropped.
  n.state = NudState::kFailed;
  n.deadline = Time::never();
  for (const auto& p : n.queue) out.unreachable(p);
  stats_.queue_drops += n.queue.size();
  n.queue.clear();
  n.queue_bytes = 0;
  ++stats_.resolutions_failed;
}

void NeighborTable::flush_queue(Time now, Neighbor& n, NeighborOutput& out) {
  // neigh_update: the queued packets leave in order through n->output,
  // which counts as a use of the entry.
  std::deque<std::vector<uint8_t>> q;
  q.swap(n.queue);
  n.queue_bytes = 0;
  if (!q.empty()) mark_used(now, n);
  for (const auto& pkt : q) out.send(n.mac, pkt);
}

void NeighborTable::advance(Time now, NeighborOutput& out) {
  if (now < next_deadline_) return;
  next_deadline_ = Time::never();
  for (auto& [ip, n] : entries_) {
    if (n.deadline <= now) timer(now, n, out);
    next_deadline_ = min(next_deadline_, n.deadline);
  }
}

// neigh_timer_handler. Linux keeps REACHABLE while now <= confirmed +
// reachable_time and re-arms 10 ms later; the timer here fires at the
// deadline itself and treats it as expired (strict <).
void NeighborTable::timer(Time now, Neighbor& n, NeighborOutput& out) {
  n.deadline = Time::never();
  switch (n.state) {
    case NudState::kReachable:
      if (now < n.confirmed + reachable_time_) {
        n.deadline = n.confirmed + reachable_time_;
      } else if (now < n.used + p_.delay_first_probe_time) {
        // Used recently: go straight to DELAY (RFC 4861 §7.3.3 allows the shortcut).
        n.state = NudState::kDelay;
        n.updated = now;
        n.deadline = now + p_.delay_first_probe_time;
      } else {
        n.state = NudState::kStale;  // RFC 4861 §7.3.3: ReachableTime passed
        n.updated = now;
      }
      return;
    case NudState::kDelay:
      if (now < n.confirmed + p_.delay_first_probe_time) {
        n.state = NudState::kReachable;  // confirmed by an upper layer meanwhile
        n.updated = now;
        n.deadline = n.confirmed + reachable_time_;
        return;
      }
      // RFC 4861 §7.3.3: DELAY_FIRST_PROBE_TIME passed, start unicast probes.
      n.state = NudState::kProbe;
      n.updated = now;
      n.probes = 0;
      break;
    case NudState::kIncomplete:
    case NudState::kProbe:
      break;
    default:
      return;
  }
  // RFC 4861 §7.3.3 / Linux neigh_max_probes: out of probes, the entry fails.
  const int max_probes = n.state == NudState::kIncomplete ? p_.mcast_solicit : p_.ucast_solicit;
  if (n.probes >= max_probes) {
    fail(n, out);
    return;
  }
  n.deadline = now + p_.retrans_time;
  ++n.probes;
  // arp_solicit/ndisc_solicit: PROBE unicasts to the cached address.
  out.solicit(n, n.state == NudState::kProbe ? &n.mac : nullptr);
}

void NeighborTable::update(Time now, Neighbor& n, const MacAddr* mac, NudState new_state,
                           unsigned flags, NeighborOutput& out) {
  const NudState old = n.state;
  // neigh_update: only an administrative change touches a static entry.
  if (old == NudState::kPermanent && !(flags & kUpdAdmin)) return;
  const bool old_valid = nud_valid(old);
  MacAddr lladdr;
  if (mac) {
    lladdr = *mac;
  } else {
    if (!old_valid) return;  // no address given and none known: nothing to do
    lladdr = n.mac;
  }
  if (nud_connected(new_state)) n.confirmed = now;
  if (old_valid) {
    if (lladdr != n.mac && !(flags & kUpdOverride)) {
      // RFC 4861 §7.2.5: a different address without Override only
      // demotes a REACHABLE entry to STALE; otherwise it is ignored.
      if (!((flags & kUpdWeakOverride) && nud_connected(old))) return;
      lladdr = n.mac;
      new_state = NudState::kStale;
    } else if (lladdr == n.mac && new_state == NudState::kStale && !(flags & kUpdAdmin)) {
      new_state = old;  // same address, STALE adds nothing: keep the state
    }
  }
  if (new_state != old || lladdr != n.mac) n.updated = now;
  if (new_state != old) {
    n.state = new_state;
    n.deadline = Time::never();
    n.probes = 0;
    if (new_state == NudState::kReachable) {
      maybe_redraw_reachable(now);
      arm(n, now + reachable_time_);
    }
  }
  if (lladdr != n.mac || !old_valid) {
    n.mac = lladdr;
    // Linux: a new address not confirmed must not look recently confirmed.
    if (!nud_connected(new_state)) n.confirmed = now - p_.base_reachable_time * 2;
  }
  if (!old_valid && nud_valid(n.state)) flush_queue(now, n, out);
}

}  // namespace weir::link
