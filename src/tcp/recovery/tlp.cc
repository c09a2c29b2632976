#include "tcp/recovery/tlp.h"

#include "tcp/recovery/rack.h"

namespace weir::tcp::recovery {

std::optional<Duration> loss_probe_timeout(const PtoInput& in) {
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

TlpAckOutcome Tlp::on_ack(Seq32 ack, bool una_advanced, bool not_dup, bool data_sacked,
                          bool dsack_for_probe) {
  if (!outstanding_ || ack < high_seq_) return TlpAckOutcome::kNone;
  if (!retrans_ || dsack_for_probe) {
    // New data as the probe was acknowledged, or the D-SACK shows both the
    // original and the probe arrived: no loss.
    outstanding_ = false;
    return TlpAckOutcome::kProbeDone;
  }
  if (ack > high_seq_) {
    // The ACK moves beyond the probe: it repaired a real loss.
    outstanding_ = false;
    return TlpAckOutcome::kLossRepaired;
  }
  if (!una_advanced && !not_dup && !data_sacked) {
    // A pure duplicate ACK: original and probe both arrived.
    outstanding_ = false;
    return TlpAckOutcome::kProbeDone;
  }
  return TlpAckOutcome::kNone;
}

}  // namespace weir::tcp::recovery
