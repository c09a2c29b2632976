#include "link/mld_host.h"

#include <algorithm>

#include "util/splitmix.h"

namespace weir::link {
namespace {

// RFC 3810 §6 / RFC 4291 §2.7: ff02::1 is never reported, nor any group
// of interface-local (or reserved 0) scope.
bool reportable(const IpAddr& g) {
  const auto& b = g.bytes();
  if (g.is_v4() || b[0] != 0xff || (b[1] & 0x0f) < 2) return false;
  return g != *IpAddr::parse("ff02::1");
}

}  // namespace

MldHost::MldHost(MldParams p) : p_(p), rng_(p.seed) {}

Duration MldHost::random_below(Duration d) {
  // Linux get_random_u32_below: uniform in [0, d); a zero bound is "now".
  if (d.ns() <= 0) return Duration::zero();
  return Duration::ns(static_cast<int64_t>(splitmix64(rng_) % static_cast<uint64_t>(d.ns())));
}

MldHost::Group* MldHost::find(const IpAddr& group) {
  auto it = std::find_if(groups_.begin(), groups_.end(), [&](const Group& g) { return g.addr == group; });
  return it == groups_.end() ? nullptr : &*it;
}

void MldHost::join(Time now, const IpAddr& group) {
  if (!reportable(group) || find(group)) return;
  groups_.push_back({group});
  // Linux mld_ifc_event: Robustness Variable reports, the first at once
  // (mld_ifc_start_work(idev, 1)), RFC 3810 §6.1.
  change_left_ = p_.robustness;
  change_due_ = now;
}

void MldHost::announce(Time now) {
  if (groups_.empty()) return;
  change_left_ = p_.robustness;
  change_due_ = now;
}

void MldHost::query(Time now, const MldMessage& q) {
  const Time at = now + random_below(q.max_delay);
  if (q.group.is_unspecified()) {
    // §6.2 rule 1 (and 2): a pending General Query answer sooner than the
    // selected delay stands; otherwise the answer is at the new time.
    general_due_ = std::min(general_due_, at);
    return;
  }
  Group* g = find(q.group);
  if (!g) return;  // §6.2: not a group we listen to
  // §6.2 rule 1: an earlier General Query answer covers this group.
  if (general_due_ <= at) return;
  // Rules 3/4: a Multicast Address (and Source) Specific Query is answered
  // at the earlier of the pending answer and the new delay. With no
  // sources of our own (EXCLUDE {}), a source-specific query gets the
  // group's whole state, as Linux mld_send_report does for such groups.
  g->query_due = std::min(g->query_due, at);
}

std::vector<MldRecord> MldHost::take_due(Time now) {
  std::vector<MldRecord> out;
  if (change_due_ <= now) {
    // Linux mld_ifc_work: send, then the next within the interval.
    for (const Group& g : groups_) out.push_back({kMld2ChangeToExclude, g.addr});
    change_due_ = --change_left_ > 0 ? now + random_below(p_.unsolicited_interval) : Time::never();
  }
  const bool general = general_due_ <= now;
  if (general) general_due_ = Time::never();
  for (Group& g : groups_) {
    if (!general && g.query_due > now) continue;
    g.query_due = Time::never();
    out.push_back({kMld2ModeIsExclude, g.addr});
  }
  return out;
}

Time MldHost::next_deadline() const {
  Time t = std::min(change_due_, general_due_);
  for (const Group& g : groups_) t = std::min(t, g.query_due);
  return t;
}

}  // namespace weir::link
