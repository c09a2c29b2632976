// The host side of MLDv2 (RFC 3810 §6) for one link: which groups weir
// listens to and when a report about them is due. Timers only; the link
// builds and sends the reports (link/mld.h). Shaped after Linux
// net/ipv6/mcast.c: a join sends its state-change report at once and
// [Robustness Variable] - 1 more at random times within the Unsolicited
// Report Interval (mld_ifc_event, mld_ifc_work); a query schedules a
// Current State report after a random delay up to its Maximum Response
// Delay (mld_gq_start_work, igmp6_group_queried). No MLDv1 compatibility
// mode (§8): MLDv1 queries are answered with MLDv2 reports.
#pragma once

#include <cstdint>
#include <vector>

#include "link/mld.h"
#include "weir/addr.h"
#include "weir/time.h"

namespace weir::link {

struct MldParams {
  int robustness = 2;                                  // RFC 3810 §9.1, Linux mc_qrv
  Duration unsolicited_interval = Duration::s(1);      // §9.11, Linux mldv2_unsolicited_report_interval
  uint64_t seed = 1;                                   // the delays' generator (deterministic)
};

class MldHost {
 public:
  explicit MldHost(MldParams p);
  // Starts listening to `group` at `now` (RFC 3810 §6.1). All-nodes and
  // groups of smaller than link-local scope are never reported (§6, Linux
  // MAF_NOREPORT). Bounded: the link joins one group per IPv6 address.
  void join(Time now, const IpAddr& group);
  // Announces every group again as if just joined (Linux
  // ipv6_mc_dad_complete: the reports sent from :: during DAD may have
  // been ignored).
  void announce(Time now);
  // A validated query (parse_mld) at `now`: §6.2's scheduling rules.
  void query(Time now, const MldMessage& q);
  // The records due at `now` (empty when none), in one report's worth of
  // order: the state-change records, then current-state ones.
  std::vector<MldRecord> take_due(Time now);
  Time next_deadline() const;
  size_t groups() const { return groups_.size(); }

 private:
  struct Group {
    IpAddr addr;
    Time query_due = Time::never();  // a pending answer to a query for this group
  };
  Duration random_below(Duration d);
  Group* find(const IpAddr& group);

  MldParams p_;
  uint64_t rng_;
  std::vector<Group> groups_;
  int change_left_ = 0;                // state-change reports still to send (Linux mc_ifc_count)
  Time change_due_ = Time::never();
  Time general_due_ = Time::never();   // a pending answer to a General Query
};

}  // namespace weir::link
