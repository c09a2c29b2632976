// A connection's timers as data: one slot per kind, the earliest deadline
// exposed, the driver firing them in deadline order. As in Linux, RTO, TLP,
// RACK reordering and zero-window probes share one transmit slot
// (icsk_retransmit_timer / ICSK_TIME_*), so only one of them is ever armed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "weir/time.h"

namespace weir::tcp {

enum class TimerKind : uint8_t {
  kRetransmit,  // shared transmit slot; what it means is in `retransmit_mode`
  kDelAck,      // delayed ACK (RFC 9293 §3.8.6.3, Linux ato)
  kKeepalive,   // keepalive, and also SYN-ACK / FIN-WAIT-2 timeouts as Linux's sk_timer
  kTimeWait,    // 2MSL / TIME-WAIT (Linux TCP_TIMEWAIT_LEN, 60 s)
  kCount
};

// What the shared transmit slot is armed for (Linux ICSK_TIME_*).
enum class RetransmitMode : uint8_t { kRto, kLossProbe, kReorder, kProbe0 };

// Linux TCP_RESOURCE_PROBE_INTERVAL (HZ/2): how soon a retransmission,
// window probe or keepalive the local device dropped is tried again.
inline constexpr Duration kResourceProbeInterval = Duration::ms(500);
// RFC 9293 §3.10.8 2 MSL as Linux TCP_TIMEWAIT_LEN: TIME-WAIT lasts 60 s,
// whatever tcp_fin_timeout says.
inline constexpr Duration kTimeWaitLen = Duration::s(60);

const char* to_string(TimerKind k);

class TimerSet {
 public:
  void arm(TimerKind k, Time deadline) { at_[idx(k)] = deadline; }
  void cancel(TimerKind k) { at_[idx(k)] = Time::never(); }
  bool armed(TimerKind k) const { return !at_[idx(k)].is_never(); }
  Time deadline(TimerKind k) const { return at_[idx(k)]; }
  void cancel_all() { at_.fill(Time::never()); }

  // The earliest armed deadline; ties go to the lower kind, so expiry
  // order is deterministic.
  Time earliest() const;
  // The first kind due at or before `now`, or kCount.
  TimerKind due(Time now) const;

  RetransmitMode retransmit_mode = RetransmitMode::kRto;

 private:
  static size_t idx(TimerKind k) { return static_cast<size_t>(k); }
  std::array<Time, static_cast<size_t>(TimerKind::kCount)> at_{
      Time::never(), Time::never(), Time::never(), Time::never()};
};

}  // namespace weir::tcp
