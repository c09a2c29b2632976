// The loss-recovery state machine: Linux's congestion-avoidance states
// (TCP_CA_Open, Disorder, CWR, Recovery, Loss) and tcp_fastretrans_alert(),
// tying RACK-TLP (RFC 8985) or dupthresh (RFC 6675), NewReno (RFC 6582),
// PRR (RFC 6937), F-RTO (RFC 5682) and undo together.
//
// Everything the machine needs arrives as arguments: the ACK as the
// scoreboard digested it, the scoreboard itself, congestion control and its
// state (Linux's ca_ops and tp), the MIB counters. It holds no pointer back
// to the connection and reads no clock. What the engine must do next comes
// back in RecoveryResult (retransmit lost packets or send new data, arm
// RACK's reordering timer or a short RTO).
//
// What is sent during recovery (RFC 6675 §4 NextSeg) follows Linux
// tcp_xmit_retransmit_queue() and tcp_write_xmit(), which differ from the
// RFC on purpose:
//  - rule 1 (a lost, not yet retransmitted hole): the scoreboard's LOST
//    marks (RACK or dupthresh decide loss, not IsLost()), oldest first;
//  - rule 2 (new data within cwnd and rwnd): as the RFC;
//  - rule 3 (an unSACKed, not lost segment below the highest SACK) is NOT
//    done: Linux removed this "forward retransmission" (2017, with RACK):
//    RACK marks such a segment lost once it is overdue by the reordering
//    window, and only then is it retransmitted, by rule 1;
//  - rule 4 (RescueRxt: one retransmission of the highest outstanding
//    segment per recovery when nothing else may be sent) is NOT done:
//    Linux has no rescue retransmission; a lost tail is repaired by the
//    tail loss probe (RFC 8985 §7) or the RTO. Scoreboard::rescue_rxt()
//    is kept at HighACK for the RFC's bookkeeping only.
//
// Engine call order per ACK (Linux tcp_ack()):
//   r = scoreboard.on_ack(...)                       [tcp_sacktag_write_queue + tcp_clean_rtx_queue]
//   out = machine.on_ack({..., r}, sb, cc, tp, mib)  [D-SACK, RACK, TLP, tcp_fastretrans_alert]
//   rate sample; cc::cong_control(..., [&]{ machine.cwnd_reduction(...); })
//   retransmit per out.rexmit (each: machine.on_retransmit()); new data: machine.on_sent()
#pragma once

#include <cstdint>
#include <optional>

#include "tcp/cc/cc.h"
#include "tcp/recovery/dupthresh.h"
#include "tcp/recovery/frto.h"
#include "tcp/recovery/prr.h"
#include "tcp/recovery/rack.h"
#include "tcp/recovery/tlp.h"
#include "tcp/recovery/undo.h"
#include "tcp/scoreboard.h"
#include "weir/counters.h"
#include "weir/tcp_info.h"

namespace weir::tcp::recovery {

struct RecoveryConfig {
  bool sack = true;               // SACK negotiated; false: NewReno
  int tcp_recovery = kRackLossDetection;
  int tcp_frto = 2;
  int tcp_reordering = 3;
  int tcp_max_reordering = 300;
  int tcp_early_retrans = 3;
  // StackConfig::fault_seed003_undo_without_proof: the lab's contrast only.
  bool fault_seed003 = false;
};

// One ACK, after Scoreboard::on_ack(). `sb` refers to the caller's result
// (a copy cost ~40 instructions per ACK); it must outlive the RecoveryAck.
struct RecoveryAck {
  explicit RecoveryAck(const AckResult& r) : sb(r) {}

  Time now;
  Seq32 prior_snd_una;
  Seq32 snd_una;                  // after the ACK
  Seq32 snd_nxt;
  const AckResult& sb;            // what the scoreboard did
  bool data = false;              // the segment carried data (FLAG_DATA)
  bool win_update = false;        // it updated the send window (FLAG_WIN_UPDATE)
  bool ece = false;               // ECN-Echo (FLAG_ECE)
  std::optional<uint32_t> ts_ecr; // TSecr, when present and non-zero
  uint32_t mss = 1460;
  Duration min_rtt = Duration::infinite();
  Duration srtt = Duration::zero();
  Duration rto = Duration::s(1);
  uint64_t delivered = 0;         // tp->delivered after this ACK (RACK window steps)
  bool can_send_new_data = false; // unsent data within the peer's window (F-RTO step 2.b)
  uint32_t dupack_segs = 1;       // pure ACKs aggregated into this one (GRO)
  uint32_t max_window = UINT32_MAX; // largest window the peer offered (tp->max_window)
  bool mtu_probe_at_una = false;  // an MTU probe is out and SND.UNA is its start (icsk_mtup)
};

enum class Rexmit : uint8_t {
  kNone,
  kLost,  // retransmit the packets marked lost (Linux REXMIT_LOST)
  kNew,   // F-RTO: send new data instead (REXMIT_NEW)
};

struct RecoveryResult {
  Rexmit rexmit = Rexmit::kNone;
  uint32_t newly_lost = 0;        // packets marked lost (rate sample "losses")
  // Non-SACK: packets the duplicate ACKs stand for (Linux tcp_add_reno_sack()
  // counts them delivered); add to the ACK's delivered count.
  uint32_t reno_delivered = 0;
  // RACK's reordering timer; when set the engine arms it in place of the
  // RTO/TLP timer (Linux clears FLAG_SET_XMIT_TIMER).
  Time reo_timeout = Time::never();
  // SACK reneging suspected: re-arm the RTO to fire at this time.
  Time reneging_rto = Time::never();
  bool undone = false;            // a cwnd reduction was undone
  bool reset_retransmits = false; // Linux icsk_retransmits = 0 (loss undo)
  bool lost_retrans = false;      // a retransmission was declared lost
  bool mtu_probe_lost = false;    // the loss is the MTU probe's: no recovery (RFC 4821 §7.6.3)
  // A plausible D-SACK: the duplicate segments count as delivered (Linux
  // tcp_dsack_seen -> sack_delivered); add to the ACK's delivered count.
  uint32_t dsack_delivered = 0;
  // Segments this D-SACK adds to tcpi_dsack_dups (Linux tp->dsack_dups).
  uint32_t dsack_dups = 0;
  // An undo raised ssthresh back: a CWR not yet sent is withdrawn (Linux
  // tcp_undo_cwnd_reduction -> tcp_ecn_withdraw_cwr).
  bool withdraw_cwr = false;
};

// What the RTO handler passes in (Linux tcp_enter_loss()).
struct RtoInput {
  Time now;
  Seq32 snd_una;
  Seq32 snd_nxt;
  uint32_t retransmits = 0;       // icsk_retransmits before this timeout
  bool mtu_probing = false;
};

class RecoveryMachine {
 public:
  explicit RecoveryMachine(const RecoveryConfig& cfg = {});
  void set_sack(bool on) { cfg_.sack = on; }

  RecoveryResult on_ack(const RecoveryAck& in, Scoreboard& sb, cc::CongestionControl& cc,
                        cc::CcState& tp, Counters& mib);
  // Linux tcp_cwnd_reduction(): the PRR step cc::cong_control() calls in
  // CWR and Recovery.
  void cwnd_reduction(cc::CcState& tp, uint32_t newly_acked_sacked, uint32_t newly_lost,
                      bool snd_una_advanced, uint32_t in_flight);
  // Linux tcp_enter_loss(): the RTO fired.
  void on_rto(const RtoInput& in, Scoreboard& sb, cc::CongestionControl& cc, cc::CcState& tp,
              Counters& mib);
  // Linux tcp_simple_retransmit(): the path MTU fell and segments were
  // marked lost; Loss begins with no cut to cwnd.
  void enter_simple_loss(Time now, Seq32 snd_nxt, cc::CongestionControl& cc, cc::CcState& tp);
  // Linux tcp_rack_reo_timeout(): RACK's reordering timer fired.
  RecoveryResult on_reo_timeout(Time now, Seq32 snd_una, Seq32 snd_nxt, Duration rto,
                                Duration min_rtt, Duration srtt, Scoreboard& sb,
                                cc::CongestionControl& cc, cc::CcState& tp, Counters& mib);
  // Linux tcp_enter_cwr(): ECN or local congestion.
  void enter_cwr(Time now, Seq32 snd_nxt, cc::CongestionControl& cc, cc::CcState& tp);

  // Each retransmission the engine sends (not TLP probes): undo evidence
  // (retrans_stamp at `tsval`) and PRR's prr_out.
  void on_retransmit(uint32_t packets, uint32_t tsval);
  // A retransmission the local device dropped (Linux tcp_retransmit_skb
  // failing): total_retrans and the undo stamp count the attempt; PRR's
  // prr_out does not (tcp_xmit_retransmit_queue stops before it).
  void on_retransmit_failed(uint32_t packets, uint32_t tsval) {
    total_retrans_ += packets;
    undo_.on_retransmit(packets, tsval);
  }
  // New data sent: PRR's prr_out while reducing.
  void on_sent(uint32_t packets) { if (in_cwnd_reduction()) prr_.on_sent(packets); }
  // A TLP probe went out (RFC 8985 §7.3).
  void on_probe_sent(Seq32 snd_nxt, bool retransmission) {
    if (retransmission) ++total_retrans_;  // Linux __tcp_retransmit_skb() counts probes too
    tlp_.on_probe_sent(snd_nxt, retransmission);
  }
  // Linux tcp_schedule_loss_probe() facts from the machine's side.
  std::optional<Duration> loss_probe_timeout(uint32_t packets_out, std::optional<Duration> srtt,
                                             Duration rto_min, Duration rto_remaining) const;

  CaState ca_state() const { return ca_state_; }
  Seq32 high_seq() const { return high_seq_; }
  bool in_cwnd_reduction() const {
    return ca_state_ == CaState::CWR || ca_state_ == CaState::Recovery;
  }
  uint32_t reordering() const { return reord_.degree(); }  // tcpi_reordering
  uint32_t reord_seen() const { return reord_.seen(); }    // tcpi_reord_seen
  // Window reductions begun so far (Linux calls tcp_ecn_queue_cwr in
  // tcp_init_cwnd_reduction and tcp_enter_loss): when this grows, an ECN
  // sender sets CWR on its next new data segment (RFC 3168 §6.1.2).
  uint32_t reductions() const { return reductions_; }
  const Rack& rack() const { return rack_; }
  const Tlp& tlp() const { return tlp_; }
  const Undo& undo() const { return undo_; }
  const Prr& prr() const { return prr_; }
  const Frto& frto() const { return frto_; }
  bool is_sack_reneg() const { return is_sack_reneg_; }
  // Linux: which counter a retransmission in the current state bumps.
  Counter retransmit_counter() const {
    return ca_state_ == CaState::Loss ? Counter::TcpExtTCPSlowStartRetrans
                                      : Counter::TcpExtTCPFastRetrans;
  }

 private:
  // Per-ACK context shared by the helpers.
  struct Ctx {
    const RecoveryAck& in;
    Scoreboard& sb;
    cc::CongestionControl& cc;
    cc::CcState& tp;
    Counters& mib;
    RecoveryResult& out;
    bool una_advanced;
    bool not_dup;
    bool data_sacked;
    uint32_t num_dupack;
  };

  void bookkeeping(Ctx& c);
  bool dsack_seen(Ctx& c, bool& for_probe);
  void dsack_validity(Ctx& c);
  void fastretrans_alert(Ctx& c);
  bool alert_exit_checks(Ctx& c);
  bool alert_recovery(Ctx& c, bool& do_lost);
  bool alert_loss(Ctx& c);
  bool alert_default(Ctx& c, bool& fast_rexmit);
  void process_loss(Ctx& c);
  void identify_packet_loss(Ctx& c);
  bool time_to_recover(const Scoreboard& sb) const;
  void add_reno_sack(Ctx& c);

  void set_state(CaState s, cc::CongestionControl& cc, cc::CcState& tp, Time now);
  void enter_recovery(Ctx& c);
  void init_cwnd_reduction(Seq32 snd_nxt, cc::CongestionControl& cc, cc::CcState& tp, Time now);
  void end_cwnd_reduction(cc::CongestionControl& cc, cc::CcState& tp, Time now);
  void try_keep_open(const Scoreboard& sb, Seq32 snd_nxt, cc::CongestionControl& cc,
                     cc::CcState& tp, Time now);
  void try_to_open(Ctx& c);
  bool try_undo_recovery(Ctx& c);
  bool try_undo_dsack(Ctx& c);
  bool try_undo_partial(Ctx& c);
  bool try_undo_loss(Ctx& c, bool frto_undo);
  void undo_cwnd_reduction(Ctx& c, bool unmark_loss);
  UndoContext undo_ctx(const RecoveryAck& in) const;
  static bool any_retrans_done(const Scoreboard& sb);
  bool rack_enabled() const { return (cfg_.tcp_recovery & kRackLossDetection) != 0; }
  Duration current_reo_wnd(const Scoreboard& sb, Duration min_rtt, Duration srtt) const;

  RecoveryConfig cfg_;
  CaState ca_state_ = CaState::Open;
  // Linux tp->total_retrans and tp->dsack_dups, for tcp_dsack_seen()'s
  // plausibility check.
  uint64_t total_retrans_ = 0;
  uint64_t dsack_dups_ = 0;
  Seq32 high_seq_;
  bool is_sack_reneg_ = false;
  uint32_t reductions_ = 0;
  Reordering reord_;
  Rack rack_;
  Tlp tlp_;
  Undo undo_;
  Prr prr_;
  Frto frto_;
};

// Inline (with recovery::loss_probe_timeout) for the same reason: called
// twice per ACK from Connection::set_xmit_timer.
inline std::optional<Duration> RecoveryMachine::loss_probe_timeout(uint32_t packets_out,
                                                                   std::optional<Duration> srtt,
                                                                   Duration rto_min,
                                                                   Duration rto_remaining) const {
  PtoInput p;
  p.tcp_early_retrans = cfg_.tcp_early_retrans;
  p.sack = cfg_.sack;
  p.packets_out = packets_out;
  p.ca_state = ca_state_;
  p.srtt = srtt;
  p.rto_min = rto_min;
  p.rto_remaining = rto_remaining;
  return recovery::loss_probe_timeout(p);
}

}  // namespace weir::tcp::recovery
