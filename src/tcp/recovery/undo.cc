#include "tcp/recovery/undo.h"

#include <algorithm>

namespace weir::tcp::recovery {

void Undo::init(Seq32 snd_una, uint32_t retrans_out, bool tlp_retrans_in_flight) {
  marker_ = snd_una;
  undo_retrans_ = static_cast<int32_t>(retrans_out);
  if (tlp_retrans_in_flight) ++undo_retrans_;
  if (undo_retrans_ == 0) undo_retrans_ = -1;  // Linux: "no retransmission yet"
}

void Undo::on_retransmit(uint32_t packets, uint32_t tsval) {
  if (!retrans_stamp_) retrans_stamp_ = tsval;  // the first (attempted) retransmission
  if (undo_retrans_ < 0) undo_retrans_ = 0;
  undo_retrans_ += static_cast<int32_t>(packets);
}

void Undo::on_dsack(SeqRange range, bool below_una, uint32_t retrans_packets, uint32_t mss) {
  if (!marker_ || undo_retrans_ <= 0) return;
  // Only duplicates of this episode's retransmissions count.
  if (!(range.end > *marker_)) return;
  uint32_t dup = retrans_packets;
  if (below_una) {
    // Linux tcp_dsack_seen(): the D-SACKed range in segments.
    dup = (mss && range.len() > mss) ? (range.len() + mss - 1) / mss : 1;
  }
  undo_retrans_ = std::max<int32_t>(0, undo_retrans_ - static_cast<int32_t>(dup));
}

bool Undo::packet_delayed(const UndoContext& c) const {
  // RFC 3522 (Eifel): an ACK echoing a TSval from before the first
  // retransmission was triggered by the original.
  if (retrans_stamp_) return c.ts_ecr.has_value() && ts_before(*c.ts_ecr, *retrans_stamp_);
  // retrans_stamp unset normally means no retransmission happened yet, so
  // snd.una advanced by a merely delayed packet. But a non-SACK connection
  // held at high_seq had retrans_stamp zeroed after retransmitting
  // (non_sack_preventing_reopen): that is no proof (seed 003, Linux commit
  // "tcp: fix tcp_packet_delayed() for tcp_is_non_sack_preventing_reopen()").
  // The seed's bug (the lab's contrast only) skipped this test.
  if (!c.sack && !(c.snd_una < c.high_seq) && !c.fault_seed003) return false;
  return true;
}

bool Undo::non_sack_preventing_reopen(const UndoContext& c, bool any_retrans_done) {
  if (c.sack || !(c.snd_una == c.high_seq)) return false;
  if (!any_retrans_done) retrans_stamp_.reset();
  return true;
}

}  // namespace weir::tcp::recovery
