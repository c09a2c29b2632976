// Congestion control: the interface every algorithm implements, the state the
// connection owns and passes in, and the registry by name.
//
// The shape is Linux's struct tcp_congestion_ops (include/net/tcp.h). An
// algorithm is one file; it never holds a pointer back to the connection: each
// call receives the connection's congestion state (`CcState`, Linux's "tp") and
// `now`. Windows are counted in packets (Linux snd_cwnd), not bytes.
//
// ---------------------------------------------------------------------------
// When the engine calls what (Linux call sites in brackets):
//
//  * Connection established (or TCP_CONGESTION changed on an open socket):
//      cc.init(tp, now)                                 [tcp_init_congestion_control]
//
//  * Every ACK that is not old (advances snd.una, SACKs, or is a dupack), in
//    this order [tcp_ack]:
//      rs.prior_in_flight = in-flight before the ACK;
//      per packet newly ACKed/SACKed: tp.rate.count_delivered(),
//                                     tp.rate.on_packet_delivered(snapshot, ...)
//      rs.rtt = RTT of the most recently sent (s)acked packet, if not a
//               retransmission (Karn), else negative   [tcp_clean_rtx_queue: ca_rtt_us]
//      cc.pkts_acked(tp, {pkts_acked, rs.rtt, in_flight}, now, mib)
//                                                       [tcp_clean_rtx_queue]
//      tp.rate.count_delivered(cum+SACK delivered, ECE); cc.in_ack_event(tp, now)
//                                                       [tcp_in_ack_event]
//      ... loss recovery (may call the state/ssthresh hooks below) ...
//      tp.rate.generate(rs, newly_delivered, newly_lost, reneg, min_rtt, now)
//      cc::cong_control(cc, tp, ack, rs, now, mib, prr_step)  [tcp_cong_control]
//        which runs, as Linux:
//          if cc.has_cong_control()         cc.cong_control(tp, rs, now, mib)   (BBR)
//          else if in CWR/Recovery          prr_step()  (recovery's tcp_cwnd_reduction)
//          else if ack.may_raise_cwnd       cc.cong_avoid(tp, ack.ack, rs.acked_sacked, now, mib)
//          then, unless has_cong_control(): update_pacing_rate(tp, ...)
//
//  * Entering CWR or fast recovery [tcp_init_cwnd_reduction]:
//      tp.prior_cwnd = tp.snd_cwnd; tp.snd_ssthresh = cc.ssthresh(tp, now);
//  * RTO [tcp_enter_loss]:
//      tp.prior_ssthresh = current_ssthresh(tp) (when undo is possible);
//      tp.prior_cwnd = tp.snd_cwnd; tp.snd_ssthresh = cc.ssthresh(tp, now);
//      cc.cwnd_event(tp, CaEvent::Loss, now); then set_state(Loss) as below.
//  * Every change of tp.ca_state [tcp_set_ca_state]: call cc.set_state(tp, new,
//    now) BEFORE storing the new state in tp.ca_state.
//  * Leaving CWR/Recovery with cwnd set to ssthresh [tcp_end_cwnd_reduction]:
//      only when !cc.has_cong_control(); then cc.cwnd_event(tp, CompleteCwr, now).
//  * Undo of a spurious reduction [tcp_undo_cwnd_reduction]:
//      if (tp.prior_ssthresh) { tp.snd_cwnd = cc.undo_cwnd(tp);
//                               tp.snd_ssthresh = max(ssthresh, prior_ssthresh); }
//  * Every data packet sent, new or retransmitted [tcp_rate_skb_sent]:
//      snapshot = tp.rate.on_packet_sent(now, packets_out before it), kept with
//      the packet in the scoreboard. When the sender runs out of data
//      [tcp_rate_check_app_limited]: tp.rate.check_app_limited(...).
//  * Always kept current in tp by the engine: mss, snd_una/snd_nxt, srtt,
//    min_rtt, packets_out, packets_in_flight, max_packets_out,
//    is_cwnd_limited, lost (total marked lost), lsndtime, wstamp, ca_state.
//  * Sending a data packet when nothing was in flight [tcp_event_data_sent]:
//      cc.cwnd_event(tp, CaEvent::TxStart, now) -- before updating tp.lsndtime.
//  * Sending after idle [tcp_slow_start_after_idle_check]:
//      cc::slow_start_after_idle_check(cc, tp, rto, init_cwnd, enabled, now)
//      (runs tcp_cwnd_restart(), which raises CaEvent::CwndRestart).
//  * tcp_info: cc.get_info(info); tp.rate.fill_info(info, tp.mss);
//      info.tcpi_pacing_rate = tp.pacing_rate.
//  * Every trace sample: cc::fill_trace(cc, tp, sample). After each ACK, if
//    tp.slow_start_exit_reason != 0: emit TraceEvent::kHystartExit
//    (a = tp.snd_cwnd, b = the reason) and reset it to 0.
// ---------------------------------------------------------------------------
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>

#include "tcp/cc/delivery_rate.h"
#include "tcp/cc/plb.h"
#include "weir/config.h"
#include "weir/counters.h"
#include "weir/seq.h"
#include "weir/tcp_info.h"
#include "weir/time.h"
#include "weir/trace.h"

namespace weir::cc {

// Linux TCP_INFINITE_SSTHRESH.
inline constexpr uint32_t kInfiniteSsthresh = 0x7fffffff;

// Linux sk->sk_pacing_status: whether the algorithm needs the stack to pace
// (BBR asks for it; CUBIC and Reno leave pacing to a qdisc, i.e. none).
enum class PacingStatus : uint8_t { None, Needed };

// The connection's congestion state, owned by the connection and passed to
// every call (Linux: the fields of struct tcp_sock the algorithms read/write).
struct CcState {
  // Written by congestion control (and by recovery's PRR / undo).
  uint32_t snd_cwnd = 10;                       // packets (RFC 6928 initial window)
  uint32_t snd_ssthresh = kInfiniteSsthresh;    // packets
  uint32_t snd_cwnd_cnt = 0;                    // ACKed packets toward the next +1 (AI)
  uint32_t snd_cwnd_clamp = std::numeric_limits<uint32_t>::max();
  uint32_t prior_cwnd = 0;                      // cwnd before the last reduction (undo)
  uint32_t prior_ssthresh = 0;                  // ssthresh before the last reduction (undo)
  uint64_t pacing_rate = 0;                     // bytes/s, sk_pacing_rate
  uint64_t max_pacing_rate = std::numeric_limits<uint64_t>::max();  // SO_MAX_PACING_RATE
  PacingStatus pacing_status = PacingStatus::None;
  uint32_t pacing_shift = 10;                   // sk_pacing_shift (TSO autosizing: ~1 ms)

  // Kept current by the engine; read by congestion control.
  uint32_t mss = 1460;                          // tp->mss_cache, bytes
  uint32_t gso_max_size = 65536;                // sk_gso_max_size (BBR TSO goal, HyStart ack delay)
  CaState ca_state = CaState::Open;             // icsk_ca_state
  Seq32 snd_una;                                // RFC 9293 SND.UNA
  Seq32 snd_nxt;                                // RFC 9293 SND.NXT
  Duration srtt;                                // RFC 6298 SRTT; zero: no sample yet
  Duration min_rtt;                             // windowed min RTT (tcp_min_rtt); zero: none
  uint32_t packets_out = 0;                     // packets sent and not cumulatively ACKed
  uint32_t packets_in_flight = 0;               // tcp_packets_in_flight(): "pipe" in packets
  uint32_t max_packets_out = 0;                 // max packets_out in the last window
  bool is_cwnd_limited = false;                 // tp->is_cwnd_limited (tcp_cwnd_validate)
  Seq32 cwnd_usage_seq;                         // end of the window max_packets_out describes
  uint32_t snd_cwnd_used = 0;                   // largest packets_out while not cwnd-limited
  Time snd_cwnd_stamp;                          // last time cwnd was fully used or changed
  uint64_t lost = 0;                            // tp->lost: total packets ever marked lost
  Time lsndtime;                                // when data was last sent
  Time wstamp;                                  // tcp_wstamp_ns: earliest departure of the next packet (pacing)
  DeliveryRate rate;                            // delivered, app_limited, rate samples

  // Set by congestion control when slow start ends by HyStart (or HyStart++,
  // or a loss in the initial slow start): the tcp_info hystart_exit_reason
  // value (1 ACK train, 2 delay, 3 loss, 4 CSS end). The engine emits
  // TraceEvent::kHystartExit (a = cwnd, b = reason) and clears it to 0.
  uint8_t slow_start_exit_reason = 0;

  // ECN, kept by the engine for the algorithms that need it (DCTCP).
  bool ecn_ok = false;   // tp->ecn_flags & TCP_ECN_OK: the peer agreed to ECN
  uint8_t ce_state = 0;  // DCTCP receiver echo: 1 if the last data packet was CE (ca->ce_state)

  // Set by congestion control when Protective Load Balancing decides to
  // move the connection (tcp_plb_check_rehash); the engine draws the new
  // transmit hash (sk_rethink_txhash), counts TCPPLBRehash and tcpi_rehash,
  // and clears it.
  bool plb_rehash = false;
};

// Linux tcp_in_initial_slowstart(): ssthresh never set since the start.
inline bool in_initial_slow_start(const CcState& tp) { return tp.snd_ssthresh >= kInfiniteSsthresh; }

// Linux enum tcp_ca_event.
enum class CaEvent : uint8_t {
  TxStart,       // first transmit when nothing was in flight
  CwndRestart,   // congestion window restart after idle
  CompleteCwr,   // end of congestion window reduction
  Loss,          // retransmission timeout (tcp_enter_loss)
  EcnNoCe,       // ECT set, but not CE marked
  EcnIsCe,       // received a CE-marked IP packet
};

// Linux struct ack_sample: what one ACK acknowledged, for pkts_acked().
struct AckSample {
  uint32_t pkts_acked = 0;           // packets newly cumulatively ACKed
  Duration rtt = Duration::ns(-1);   // negative: no valid (Karn-safe) sample
  uint32_t in_flight = 0;            // bytes delivered since the sampled packet was sent
};

// Per-ACK facts the engine passes to cong_control() (Linux tcp_cong_control's
// arguments `ack` and `flag`).
struct AckEvent {
  Seq32 ack;                  // the ACK's acknowledgement number
  bool may_raise_cwnd = true; // tcp_may_raise_cwnd(): see may_raise_cwnd() below
};

// Tunables of the algorithms (Linux module parameters), settable per stack.
struct CcOptions {
  // CUBIC (net/ipv4/tcp_cubic.c module parameters).
  bool fast_convergence = true;
  uint32_t beta = 717;            // / 1024
  uint32_t bic_scale = 41;        // C = bic_scale * 10 / 1024 ~= 0.4
  bool tcp_friendliness = true;
  uint32_t initial_ssthresh = 0;  // only used when HyStart is off
  // 0: no HyStart; 1: HyStart as Linux (ACK train + delay); 2: HyStart++ (RFC 9406).
  int hystart = 1;
  int hystart_detect = 3;         // bit 0: ACK train, bit 1: delay
  uint32_t hystart_low_window = 16;
  Duration hystart_ack_delta = Duration::ms(2);
  // Reproduce seed 004's bug (HyStart rounds not restarted below
  // hystart_low_window), for the lab's before/after experiment only.
  bool hystart_seed004_bug = false;
  // BBR: seed of the generator that picks the first PROBE_BW gain phase
  // (Linux uses get_random_u32_below(); weir runs are reproducible).
  uint64_t rng_seed = 1;
  // Protective Load Balancing (DCTCP), from net.ipv4.tcp_plb_* when the
  // algorithm is made (Linux reads the sysctls at each use).
  PlbParams plb;
};

// The stack's CUBIC module parameters (StackConfig::tcp_cubic_*). Values
// CUBIC's arithmetic cannot use (beta >= 1024, bic_scale 0) keep Linux's
// defaults.
CcOptions options_from(const StackConfig& cfg);

// The algorithm interface (Linux struct tcp_congestion_ops). Methods whose
// Linux counterpart is optional have an empty default here: an algorithm that
// does not override them has no behaviour for that event, as in Linux.
class CongestionControl {
 public:
  virtual ~CongestionControl() = default;

  // The name TCP_CONGESTION uses ("reno", "cubic", "bbr", "dctcp" or, fallen
  // back without ECN, "dctcp-reno").
  virtual std::string_view name() const = 0;

  // Linux ops->cong_control != NULL: the algorithm sets cwnd and pacing itself
  // on every ACK (BBR); PRR, tcp_end_cwnd_reduction() and restart after idle
  // are then skipped, as in Linux.
  virtual bool has_cong_control() const { return false; }

  // TCP_CONG_NEEDS_ECN (DCTCP): the engine negotiates ECN whatever tcp_ecn
  // says, marks every packet ECT(0) (INET_ECN_xmit) and echoes CE per packet
  // (RFC 8257 §3.2) instead of RFC 3168's latched ECE.
  virtual bool needs_ecn() const { return false; }

  // ops->init: at connection establishment. May set tp.snd_ssthresh etc.
  virtual void init(CcState& tp, Time now) = 0;

  // ops->ssthresh: the slow-start threshold after a congestion event.
  virtual uint32_t ssthresh(CcState& tp, Time now) = 0;

  // ops->cong_avoid: grow cwnd on an ACK outside recovery. `acked` is the
  // number of packets newly ACKed or SACKed. Not called if has_cong_control().
  virtual void cong_avoid(CcState& tp, Seq32 ack, uint32_t acked, Time now, Counters& mib) {
    (void)tp, (void)ack, (void)acked, (void)now, (void)mib;
  }

  // ops->cong_control: the whole per-ACK step, only if has_cong_control().
  virtual void cong_control(CcState& tp, const RateSample& rs, Time now, Counters& mib) {
    (void)tp, (void)rs, (void)now, (void)mib;
  }

  // ops->in_ack_event: every acceptable ACK, after the scoreboard counted
  // what it delivered (tp.rate.delivered()/delivered_ce()) and before loss
  // recovery reacts to it (Linux 6.15+ order, so DCTCP's alpha is current
  // when an ECE makes recovery ask for ssthresh).
  virtual void in_ack_event(CcState& tp, Time now) { (void)tp, (void)now; }

  // ops->pkts_acked: per-ACK RTT sample (CUBIC's HyStart and delay_min).
  virtual void pkts_acked(CcState& tp, const AckSample& s, Time now, Counters& mib) {
    (void)tp, (void)s, (void)now, (void)mib;
  }

  // ops->set_state: called before tp.ca_state changes to `new_state`.
  virtual void set_state(CcState& tp, CaState new_state, Time now) {
    (void)tp, (void)new_state, (void)now;
  }

  // ops->cwnd_event.
  virtual void cwnd_event(CcState& tp, CaEvent ev, Time now) { (void)tp, (void)ev, (void)now; }

  // ops->undo_cwnd: the cwnd to restore when a reduction proves spurious.
  virtual uint32_t undo_cwnd(CcState& tp) = 0;

  // ops->get_info: fills ca_name and the algorithm's own tcp_info fields.
  virtual void get_info(TcpInfo& info) const = 0;
};

// The registry: "reno", "cubic", "bbr", "dctcp". Unknown names give nullptr, so that
// setsockopt(TCP_CONGESTION) can fail with ENOENT as Linux does.
std::unique_ptr<CongestionControl> make_cc(std::string_view name, const CcOptions& opts = {});
// True if make_cc() knows `name`.
bool cc_available(std::string_view name);

// Copies the pacing rate and the algorithm's state (CUBIC W_max, K, epoch;
// BBR mode, bw, min RTT) into a trace sample, for the lab's time series.
void fill_trace(const CongestionControl& cc, const CcState& tp, TraceSample& s);

// ---- helpers shared by the algorithms and the engine (Linux tcp_cong.c) ----

// tcp_in_slow_start(): RFC 5681 §3.1, cwnd < ssthresh.
inline bool in_slow_start(const CcState& tp) { return tp.snd_cwnd < tp.snd_ssthresh; }

// tcp_in_cwnd_reduction(): CWR or Recovery.
inline bool in_cwnd_reduction(const CcState& tp) {
  return tp.ca_state == CaState::CWR || tp.ca_state == CaState::Recovery;
}

// tcp_is_cwnd_limited(): RFC 7661 spirit; in slow start Linux lets cwnd grow
// to twice the largest flight actually sent.
bool is_cwnd_limited(const CcState& tp);

// tcp_slow_start(): RFC 5681 §3.1 with RFC 3465 byte counting in packets:
// cwnd grows by the packets ACKed, capped at ssthresh; returns the leftover
// ACKed packets that congestion avoidance should use.
uint32_t slow_start(CcState& tp, uint32_t acked);

// tcp_cong_avoid_ai(): +1 packet per `w` packets ACKed.
void cong_avoid_ai(CcState& tp, uint32_t w, uint32_t acked);

// tcp_current_ssthresh(): ssthresh, or 3/4 cwnd if larger and not reducing.
uint32_t current_ssthresh(const CcState& tp);

// tcp_may_raise_cwnd(): with high reordering grow on any forward progress,
// otherwise only when new data was cumulatively ACKed (RFC 5681).
bool may_raise_cwnd(uint32_t reordering, uint32_t sysctl_reordering, bool data_acked,
                    bool forward_progress);

// tcp_update_pacing_rate(): cwnd * mss / srtt, times tcp_pacing_ss_ratio (200 %)
// while cwnd < ssthresh / 2, else tcp_pacing_ca_ratio (120 %).
void update_pacing_rate(CcState& tp, uint32_t ss_ratio = 200, uint32_t ca_ratio = 120);

// tcp_cong_control(): the per-ACK dispatch described at the top of this file.
// `prr_step` is recovery's cwnd reduction (tcp_cwnd_reduction).
template <typename PrrStep>
void cong_control(CongestionControl& cc, CcState& tp, const AckEvent& ack, const RateSample& rs,
                  Time now, Counters& mib, PrrStep&& prr_step, uint32_t ss_ratio = 200,
                  uint32_t ca_ratio = 120) {
  if (cc.has_cong_control()) {
    cc.cong_control(tp, rs, now, mib);
    return;
  }
  if (in_cwnd_reduction(tp)) {
    prr_step();
  } else if (ack.may_raise_cwnd) {
    cc.cong_avoid(tp, ack.ack, rs.acked_sacked, now, mib);
    tp.snd_cwnd_stamp = now;  // tcp_cong_avoid
  }
  update_pacing_rate(tp, ss_ratio, ca_ratio);
}

// tcp_cwnd_validate() (RFC 7661 in Linux's form), after each transmit pass
// that sent something or found the window full (`cwnd_limited`): tracks
// whether this window is cwnd-limited and the largest flight, and after an
// RTO of not using the window (with tcp_slow_start_after_idle, for algorithms
// without cong_control) shrinks cwnd halfway to what was used
// (tcp_cwnd_application_limited). Reads tp.packets_out and tp.snd_una/snd_nxt.
struct CwndValidateArgs {
  bool cwnd_limited = false;   // the pass stopped because in-flight >= cwnd
  Duration rto;                // icsk_rto
  uint32_t init_cwnd = 10;     // tcp_init_cwnd()
  bool slow_start_after_idle = true;
  bool sndbuf_limited = false; // SOCK_NOSPACE: the application hit its buffer
};
void cwnd_validate(const CongestionControl& cc, CcState& tp, const CwndValidateArgs& a, Time now);

// tcp_cwnd_restart(): RFC 5681 §4.1 / RFC 7661 restart after idle: halve cwnd
// per RTO idle, not below the initial window. Raises CaEvent::CwndRestart.
void cwnd_restart(CongestionControl& cc, CcState& tp, Duration idle, Duration rto,
                  uint32_t init_cwnd, Time now);

// tcp_slow_start_after_idle_check(): call before sending new data. Restarts
// the window when net.ipv4.tcp_slow_start_after_idle is set, nothing is
// outstanding, the algorithm does not own cwnd and the idle time exceeds RTO.
void slow_start_after_idle_check(CongestionControl& cc, CcState& tp, Duration rto,
                                 uint32_t init_cwnd, bool enabled, Time now);

}  // namespace weir::cc
