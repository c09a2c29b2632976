#include "tcp/recovery/tlp.h"

namespace weir::tcp::recovery {

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
