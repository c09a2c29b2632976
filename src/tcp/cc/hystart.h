// Slow-start exit detectors used by CUBIC:
//  * Hystart: HyStart as Linux tcp_cubic.c (Ha & Rhee, "Taming the Elephants"):
//    ACK-train and delay-increase detection, rounds delimited by snd.nxt.
//  * HystartPlusPlus: RFC 9406 (delay increase, then Conservative Slow Start).
// Both are pure units fed by (CcState, RTT sample, now); neither holds a
// pointer to the connection.
#pragma once

#include <cstdint>

#include "tcp/cc/cc.h"
#include "weir/counters.h"

namespace weir::cc {

// tcp_info hystart_exit_reason values (include/weir/tcp_info.h).
enum class HystartExit : uint8_t { None = 0, AckTrain = 1, Delay = 2, Loss = 3, CssEnd = 4 };

// Linux HyStart (tcp_cubic.c: bictcp_hystart_reset, hystart_update).
class Hystart {
 public:
  struct Params {
    int detect = 3;                         // bit 0 ACK train, bit 1 delay
    uint32_t low_window = 16;               // hystart_low_window
    Duration ack_delta = Duration::ms(2);   // hystart_ack_delta_us
    // Reproduces the shape fixed by seed 004 (Linux 5.8 .. 6.13: the low-window
    // test placed before the round reset). For the lab's before/after
    // experiment only; never the default.
    bool seed004_bug = false;
  };
  static constexpr uint32_t kMinSamples = 8;                  // HYSTART_MIN_SAMPLES
  static constexpr Duration kDelayMin = Duration::ms(4);      // HYSTART_DELAY_MIN
  static constexpr Duration kDelayMax = Duration::ms(16);     // HYSTART_DELAY_MAX

  Hystart() = default;
  explicit Hystart(const Params& p) : p_(p) {}

  // bictcp_hystart_reset(): a new round starts now and ends when snd.una
  // passes today's snd.nxt.
  void reset_round(const CcState& tp, Time now);

  // hystart_update(): one RTT sample `delay` while in slow start and not yet
  // found. May set tp.snd_ssthresh = cwnd (exit slow start) and count
  // TcpExtTCPHystart*. Returns the detector that fired, or None.
  HystartExit update(CcState& tp, Duration delay, Duration delay_min, Time now, Counters& mib);

  bool found() const { return found_; }
  void set_found() { found_ = true; }
  void clear_found() { found_ = false; }
  Time round_start() const { return round_start_; }
  Seq32 end_seq() const { return end_seq_; }
  uint32_t sample_cnt() const { return sample_cnt_; }
  uint32_t rounds() const { return rounds_; }  // rounds started (for tests/lab)

 private:
  HystartExit ack_train(CcState& tp, Duration delay_min, Time now, Counters& mib);
  HystartExit delay_increase(CcState& tp, Duration delay, Duration delay_min, Counters& mib);

  Params p_;
  bool found_ = false;
  Time round_start_;   // ca->round_start
  Time last_ack_;      // ca->last_ack: last ACK of the current close-spaced train
  Seq32 end_seq_;      // ca->end_seq: snd.nxt when the round began
  Duration curr_rtt_ = Duration::infinite();  // min RTT of the round's first samples
  uint32_t sample_cnt_ = 0;
  uint32_t rounds_ = 0;
};

// RFC 9406 HyStart++.
class HystartPlusPlus {
 public:
  // RFC 9406 §4.3 constants.
  static constexpr Duration kMinRttThresh = Duration::ms(4);
  static constexpr Duration kMaxRttThresh = Duration::ms(16);
  static constexpr int64_t kMinRttDivisor = 8;
  static constexpr uint32_t kNRttSample = 8;
  static constexpr uint32_t kCssGrowthDivisor = 4;
  static constexpr uint32_t kCssRounds = 5;
  static constexpr uint32_t kUnpacedL = 8;  // L when not paced (infinite when paced)

  enum class Phase : uint8_t { SlowStart, Css, Done };

  // Starts the first round (RFC 9406 §4.2: windowEnd = SND.NXT).
  void init(const CcState& tp);

  // Per-ACK RTT sample while in slow start or CSS: round bookkeeping and the
  // delay-increase / CSS-exit checks. Returns Delay when a delay increase
  // ends slow start (entry to CSS; ssthresh unchanged), CssEnd after
  // CSS_ROUNDS rounds of CSS (tp.snd_ssthresh = cwnd then). A return to slow
  // start (spurious increase) is seen as phase() going back to SlowStart.
  HystartExit on_rtt_sample(CcState& tp, Duration rtt);

  // Slow-start growth for `acked` packets (RFC 9406 §4.2: cwnd += min(N, L*SMSS),
  // divided by CSS_GROWTH_DIVISOR in CSS). Returns packets left for
  // congestion avoidance (as slow_start()).
  uint32_t grow(CcState& tp, uint32_t acked);

  // RFC 9406 §4.2: loss or ECN during slow start or CSS ends HyStart++.
  void on_congestion() { phase_ = Phase::Done; }

  Phase phase() const { return phase_; }
  uint32_t css_rounds() const { return css_rounds_; }
  Duration css_baseline_min_rtt() const { return css_baseline_; }

 private:
  void start_round(const CcState& tp);

  Phase phase_ = Phase::SlowStart;
  Seq32 window_end_;
  Duration last_round_min_rtt_ = Duration::infinite();
  Duration current_round_min_rtt_ = Duration::infinite();
  Duration css_baseline_ = Duration::infinite();
  uint32_t rtt_sample_count_ = 0;
  uint32_t css_rounds_ = 0;
  uint32_t css_acked_ = 0;  // ACKed packets not yet turned into CSS growth
};

}  // namespace weir::cc
