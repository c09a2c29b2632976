#include "sim/trace_store.h"

#include <algorithm>

namespace weir::sim {

void TraceStore::record(const TraceSample& s) {
  ConnTrace& c = conns_[s.conn_id];
  ++c.total;
  c.max_cwnd = std::max(c.max_cwnd, s.cwnd);
  c.max_rwnd = std::max(c.max_rwnd, s.rwnd);
  c.max_inflight = std::max(c.max_inflight, s.inflight);
  c.last_snd_una = s.snd_una;
  c.last_snd_nxt = s.snd_nxt;
  switch (s.event) {
    case TraceEvent::kRto: ++c.rto_events; break;
    case TraceEvent::kRetransmit: ++c.retransmit_events; break;
    case TraceEvent::kUndo: c.undo_times.push_back(s.now); break;
    case TraceEvent::kHystartExit:
      if (!c.hystart_exited) {
        c.hystart_exited = true;
        c.hystart_cwnd = static_cast<uint32_t>(s.a);
        c.hystart_reason = s.b;
        c.hystart_time = s.now;
      }
      break;
    default: break;
  }
  if (!keep_) return;
  // Data segments sent are what the time-sequence graph takes from the
  // monitor, not from here: skip them to save room.
  if (s.event == TraceEvent::kSend) return;
  if (s.event == TraceEvent::kAck && (c.acks_seen++ % c.ack_stride) != 0) return;
  if (c.samples.size() >= cap_) thin(c);
  if (c.samples.size() < cap_) c.samples.push_back(s);
}

void TraceStore::thin(ConnTrace& c) {
  // Drop every other ACK sample; keep all other events if they fit.
  std::vector<TraceSample> kept;
  kept.reserve(c.samples.size());
  uint64_t i = 0;
  for (const auto& s : c.samples)
    if (s.event != TraceEvent::kAck || (i++ % 2) == 0) kept.push_back(s);
  c.samples.swap(kept);
  c.ack_stride *= 2;
}

}  // namespace weir::sim
