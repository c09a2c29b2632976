#include "tcp/recovery/frto.h"

namespace weir::tcp::recovery {

FrtoAction Frto::on_ack(const FrtoAck& a, Seq32& high_seq) {
  if (!active_) return FrtoAction::kNone;
  // Step 3.b: never-retransmitted data was (S)ACKed: not all was lost.
  if (a.orig_data_delivered) return FrtoAction::kSpuriousUndo;
  if (a.snd_nxt > a.high_seq) {
    // Step 3.a: new data was sent; a SACK or duplicate ACK now shows a hole.
    if (a.data_sacked || a.num_dupack) active_ = false;
  } else if (a.snd_una_advanced && !a.recovered) {
    // Step 2.b: the first ACK after the RTO advanced snd.una: try new data.
    high_seq = a.snd_nxt;
    if (a.can_send_new_data) return FrtoAction::kSendNewData;
    active_ = false;  // nothing new to send: conventional recovery
  }
  return FrtoAction::kNone;
}

}  // namespace weir::tcp::recovery
