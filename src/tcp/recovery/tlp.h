// Tail Loss Probe (RFC 8985 §7) with Linux's timer (tcp_schedule_loss_probe())
// and probe bookkeeping (tcp_send_loss_probe(), tcp_process_tlp_ack()).
// Pure decisions: the engine arms its one transmit-timer slot with the
// returned timeout and sends the probe itself.
#pragma once

#include <cstdint>
#include <optional>

#include "tcp/recovery/rack.h"
#include "weir/seq.h"
#include "weir/tcp_info.h"
#include "weir/time.h"

namespace weir::tcp::recovery {

struct PtoInput {
  int tcp_early_retrans = 3;          // net.ipv4.tcp_early_retrans: TLP on at 3 and 4
  bool sack = true;                   // TLP needs SACK (Linux tcp_is_sack())
  uint32_t packets_out = 0;
  CaState ca_state = CaState::Open;   // only in Open and CWR
  std::optional<Duration> srtt;       // none before the first RTT sample
  Duration rto_min = Duration::ms(200);  // TCP_RTO_MIN
  // Time until the RTO would fire for the head packet (Linux
  // tcp_rto_delta_us()), or the whole RTO when the RTO is being re-armed.
  Duration rto_remaining = Duration::s(1);
};

// Linux tcp_schedule_loss_probe(): PTO = 2·SRTT, plus TCP_RTO_MIN when one
// packet is out (room for a delayed ACK: RFC 8985 §7.2 adds WCDelAckT there)
// or TCP_TIMEOUT_MIN otherwise; 1 s before any RTT sample; never later than
// the RTO. nullopt: no probe may be scheduled.
// Inline: the engine asks on every ACK that advances snd_una and after every
// burst of new data (twice per ACK in steady state), and a call into
// another translation unit with the struct passed through memory cost
// about as much as the arithmetic.
inline std::optional<Duration> loss_probe_timeout(const PtoInput& in) {
  // Linux: early_retrans other than 3/4, no data out, no SACK, or a state
  // other than Open/CWR: no probe. (A Fast Open child's SYN-ACK in flight
  // keeps its own timer; the connection never asks for a PTO then.)
  if (in.tcp_early_retrans != 3 && in.tcp_early_retrans != 4) return std::nullopt;
  if (in.packets_out == 0 || !in.sack) return std::nullopt;
  if (in.ca_state != CaState::Open && in.ca_state != CaState::CWR) return std::nullopt;
  Duration timeout;
  if (in.srtt) {
    // RFC 8985 §7.2: PTO = 2·SRTT (+ the delayed-ACK allowance for a lone packet).
    timeout = *in.srtt * 2 + (in.packets_out == 1 ? in.rto_min : kTimeoutMin);
  } else {
    timeout = Duration::s(1);  // TCP_TIMEOUT_INIT
  }
  if (in.rto_remaining > Duration::zero()) timeout = min(timeout, in.rto_remaining);
  return timeout;
}

enum class TlpAckOutcome : uint8_t {
  kNone,             // nothing decided yet (or no probe outstanding)
  kProbeDone,        // the probe was new data, or the ACK shows no loss
  kLossRepaired,     // the probe repaired a loss: enter CWR (TcpExtTCPLossProbeRecovery)
};

class Tlp {
 public:
  // RFC 8985 §7.3 / Linux tcp_send_loss_probe(): one probe at a time;
  // `snd_nxt` after sending it (Linux tlp_high_seq).
  void on_probe_sent(Seq32 snd_nxt, bool retransmission) {
    high_seq_ = snd_nxt;
    outstanding_ = true;
    retrans_ = retransmission;
  }
  bool outstanding() const { return outstanding_; }
  Seq32 high_seq() const { return high_seq_; }
  bool retransmitted() const { return retrans_; }
  // Linux tcp_enter_loss() / tcp_init_cwnd_reduction(): forget the probe.
  void reset() { outstanding_ = false; }

  // Linux tcp_dsack_seen(): a one-packet D-SACK ending at tlp_high_seq is
  // the probe's duplicate.
  bool dsack_is_for_probe(SeqRange dsack, uint32_t mss) const {
    return outstanding_ && dsack.len() <= mss && dsack.end == high_seq_;
  }

  // RFC 8985 §7.4 / Linux tcp_process_tlp_ack().
  TlpAckOutcome on_ack(Seq32 ack, bool una_advanced, bool not_dup, bool data_sacked,
                       bool dsack_for_probe);

 private:
  Seq32 high_seq_;
  bool outstanding_ = false;
  bool retrans_ = false;
};

}  // namespace weir::tcp::recovery
