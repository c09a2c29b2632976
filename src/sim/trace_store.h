// A TraceSink that keeps each connection's samples for the reports, within a
// bound: when a connection's sample list fills, every other ACK sample is
// dropped and only every 2nd (4th, ...) is kept from then on. Events other
// than ACK samples are always kept (up to the same bound). Aggregates (max
// cwnd, undo times, HyStart exit) are taken over every sample.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "weir/trace.h"

namespace weir::sim {

struct ConnTrace {
  std::vector<TraceSample> samples;
  uint32_t ack_stride = 1;
  uint64_t acks_seen = 0;
  uint64_t total = 0;
  uint32_t max_cwnd = 0;
  uint32_t max_rwnd = 0;
  uint32_t max_inflight = 0;
  uint32_t last_snd_una = 0;
  uint32_t last_snd_nxt = 0;
  uint64_t rto_events = 0;
  uint64_t retransmit_events = 0;
  std::vector<Time> undo_times;
  bool hystart_exited = false;
  uint32_t hystart_cwnd = 0;
  uint64_t hystart_reason = 0;
  Time hystart_time;
};

class TraceStore final : public TraceSink {
 public:
  explicit TraceStore(size_t max_samples_per_conn = 200000, bool keep_samples = true)
      : cap_(max_samples_per_conn), keep_(keep_samples) {}
  void record(const TraceSample& s) override;
  const std::map<uint32_t, ConnTrace>& conns() const { return conns_; }

 private:
  void thin(ConnTrace& c);
  size_t cap_;
  bool keep_;
  std::map<uint32_t, ConnTrace> conns_;
};

}  // namespace weir::sim
