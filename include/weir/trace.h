// The engine's trace hook: per-connection events with the virtual time.
// The lab turns these into CSV and plots; library users can install their own.
#pragma once

#include <cstdint>

#include "weir/addr.h"
#include "weir/tcp_info.h"
#include "weir/time.h"

namespace weir {

enum class TraceEvent : uint8_t {
  kState,        // state changed
  kAck,          // an ACK was processed (sample of the congestion state)
  kSend,         // a data segment was sent (seq range in a/b)
  kRetransmit,   // a data segment was retransmitted (seq range in a/b)
  kRto,          // the retransmission timer fired
  kCaState,      // ca_state changed
  kUndo,         // a cwnd reduction was undone
  kHystartExit,  // slow start ended by HyStart (a = cwnd, b = reason)
  kRecvSack,     // a SACK block arrived (a/b)
};

// A snapshot of what an engineer looks at, taken at the event.
struct TraceSample {
  Time now;
  TraceEvent event;
  uint32_t conn_id;
  uint8_t state;  // Linux TCP_* numbering
  CaState ca_state;
  uint32_t cwnd;      // segments
  uint32_t ssthresh;  // segments
  uint32_t inflight;  // segments (Linux tcp_packets_in_flight)
  uint32_t sacked;
  uint32_t lost;
  uint32_t retrans;
  uint32_t srtt_us;
  uint32_t rwnd;     // bytes we advertise
  uint32_t snd_wnd;  // bytes the peer advertises
  uint32_t snd_una;  // raw sequence numbers, for time-sequence graphs
  uint32_t snd_nxt;
  uint64_t delivery_rate;  // bytes/s
  uint64_t a;
  uint64_t b;
  // Congestion-control state (filled by cc::fill_trace).
  uint64_t pacing_rate;      // bytes/s (tcpi_pacing_rate)
  uint32_t cubic_wmax;       // segments
  uint32_t cubic_k_ms;
  uint64_t cubic_epoch_start_ms;
  uint8_t bbr_mode;          // 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT
  uint64_t bbr_bw;           // bytes/s
  uint32_t bbr_min_rtt_us;
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void record(const TraceSample& s) = 0;
};

}  // namespace weir
