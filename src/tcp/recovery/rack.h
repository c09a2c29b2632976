// RACK: time-based loss detection (RFC 8985 §6), with Linux's choices
// (net/ipv4/tcp_recovery.c). RACK never arms a timer: detect_loss() marks
// packets lost in the scoreboard and returns when to look again; the engine
// puts that deadline in its single transmit-timer slot (Linux
// ICSK_TIME_REO_TIMEOUT).
#pragma once

#include <cstdint>
#include <optional>

#include "tcp/scoreboard.h"
#include "weir/seq.h"
#include "weir/time.h"
#include "weir/tcp_info.h"

namespace weir::tcp::recovery {

// net.ipv4.tcp_recovery bits (Linux TCP_RACK_*).
inline constexpr int kRackLossDetection = 0x1;
inline constexpr int kRackStaticReoWnd = 0x2;
inline constexpr int kRackNoDupthresh = 0x4;

// Linux TCP_RACK_RECOVERY_THRESH: recoveries a widened window persists for.
inline constexpr uint8_t kRackRecoveryThresh = 16;
// Linux TCP_TIMEOUT_MIN (2 jiffies at HZ=1000): slack added to every RACK
// and TLP timer.
inline constexpr Duration kTimeoutMin = Duration::ms(2);

// What the reordering window depends on (Linux tcp_rack_reo_wnd()).
struct ReoWndInput {
  uint32_t reord_seen = 0;     // tp->reord_seen (tcpi_reord_seen)
  CaState ca_state = CaState::Open;
  uint32_t sacked_out = 0;
  uint32_t reordering = 3;     // tp->reordering (tcpi_reordering)
  int tcp_recovery = kRackLossDetection;
  Duration min_rtt = Duration::infinite();
  Duration srtt = Duration::zero();
};

struct RackDetectResult {
  uint32_t newly_lost = 0;     // packets marked lost by this call
  // When RACK must look again (now + remaining + TCP_TIMEOUT_MIN, capped by
  // the RTO); Time::never() if no packet is waiting out the window.
  Time reo_timeout = Time::never();
};

class Rack {
 public:
  // RFC 8985 §6.2 step 2 (Linux tcp_rack_advance()): for each packet an ACK
  // delivers. A retransmitted packet whose RTT is below min_rtt is ambiguous
  // (the original may have been delivered) and is ignored.
  void advance(const DeliveredPacket& p, Time now, Duration min_rtt);
  // The same for a whole ACK, as the scoreboard summarised it
  // (AckResult::rack_latest / rack_rtt, already filtered by min_rtt):
  // RACK.rtt is the RTT of the last packet Linux processed, which need not
  // be the latest sent.
  void advance(const AckResult& r);

  // RFC 8985 §6.2 step 4: the reordering window. Zero (detect at once) when
  // no reordering was ever seen and either recovery is under way or
  // dupthresh SACKs have arrived; otherwise min_rtt/4 times the D-SACK steps,
  // capped by SRTT.
  Duration reo_wnd(const ReoWndInput& in) const;

  // RFC 8985 §6.2 step 5 (Linux tcp_rack_detect_loss()): marks lost every
  // packet sent before RACK.xmit_ts that has waited RACK.rtt + reo_wnd.
  RackDetectResult detect_loss(Scoreboard& sb, Time now, Duration reo_wnd, Duration rto);
  // Linux tcp_rack_mark_lost(): detect_loss() only if an ACK advanced RACK
  // since the last look.
  RackDetectResult mark_lost(Scoreboard& sb, Time now, Duration reo_wnd, Duration rto);

  // RFC 8985 §6.2 step 3 / Linux tcp_dsack_seen(): a D-SACK counts towards
  // widening the window only once reordering has been seen and when it is
  // not for a TLP probe.
  void on_dsack(uint32_t reord_seen, bool for_tlp_probe);
  // Linux tcp_rack_update_reo_wnd(), once per ACK with the rate sample's
  // prior_delivered (the delivered count when the acked packet was sent) and
  // the connection's delivered count now. At most one step per round trip.
  void update_reo_wnd(int tcp_recovery, std::optional<uint64_t> prior_delivered,
                      uint64_t delivered);
  // A recovery ended without undo (Linux tcp_try_undo_recovery()).
  void on_recovery_without_undo() { if (reo_wnd_persist_) --reo_wnd_persist_; }
  // A D-SACK undo (Linux tcp_try_undo_dsack()).
  void on_dsack_undo() {
    reo_wnd_persist_ = std::min<uint8_t>(kRackRecoveryThresh, reo_wnd_persist_ + 1);
  }
  // Linux tcp_undo_cwnd_reduction(): force a fresh look at losses.
  void force_advanced() { advanced_ = true; }

  Time xmit_ts() const { return xmit_ts_; }       // RACK.xmit_ts
  Seq32 end_seq() const { return end_seq_; }      // RACK.end_seq
  Duration rtt() const { return rtt_; }           // RACK.rtt
  uint8_t reo_wnd_steps() const { return reo_wnd_steps_; }
  bool advanced() const { return advanced_; }

 private:
  Time xmit_ts_ = Time::from_ns(INT64_MIN);
  Seq32 end_seq_;
  Duration rtt_ = Duration::zero();
  bool advanced_ = false;
  bool dsack_seen_ = false;
  uint8_t reo_wnd_steps_ = 1;
  uint8_t reo_wnd_persist_ = 0;
  uint64_t last_delivered_ = 0;  // tp->rack.last_delivered
};

}  // namespace weir::tcp::recovery
