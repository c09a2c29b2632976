// Undo of a spurious congestion response, as Linux (net/ipv4/tcp_input.c):
// the evidence is kept here (undo_marker, undo_retrans, retrans_stamp) and
// the decisions are Linux's tcp_may_undo() / tcp_packet_delayed().
//
//  - D-SACK undo (RFC 3708 idea): every retransmission of the episode was
//    reported duplicate (undo_retrans reaches 0).
//  - Timestamp undo (Eifel, RFC 3522): an ACK echoes a TSval older than the
//    first retransmission, so the original was delivered.
//  - F-RTO undo (RFC 5682): decided in frto.h, applied through the same path.
//
// NEVER undo without proof (seed 003): on a non-SACK connection Linux holds
// Recovery/Loss at high_seq and zeroes retrans_stamp there; "retrans_stamp is
// 0" must then not be read as "nothing was retransmitted".
#pragma once

#include <cstdint>
#include <optional>

#include "weir/seq.h"
#include "weir/tcp_info.h"

namespace weir::tcp::recovery {

// RFC 7323 §5.2 timestamp order (TSval values wrap like sequence numbers).
constexpr bool ts_before(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }

// What the current ACK and connection say, for the undo decisions.
struct UndoContext {
  bool sack = true;              // SACK negotiated (Linux tcp_is_sack())
  Seq32 snd_una;                 // after this ACK
  Seq32 high_seq;                // Linux tp->high_seq
  // TSecr of this ACK when it carried timestamps and TSecr != 0 (Linux
  // rx_opt.saw_tstamp && rx_opt.rcv_tsecr).
  std::optional<uint32_t> ts_ecr;
  bool fault_seed003 = false;  // RecoveryConfig::fault_seed003
};

class Undo {
 public:
  // Linux tcp_init_undo(): at the start of a recovery or loss episode.
  // Retransmissions already in flight may still be D-SACKed, so they count.
  void init(Seq32 snd_una, uint32_t retrans_out, bool tlp_retrans_in_flight);
  // Linux tcp_undo_cwnd_reduction(): the episode's evidence is used up.
  void clear_marker() { marker_.reset(); }

  // Linux tcp_retransmit_skb(): every retransmission of `packets` at TSval
  // `tsval`; the first one stamps retrans_stamp.
  void on_retransmit(uint32_t packets, uint32_t tsval);

  // A D-SACK (Linux tcp_sacktag_one(dup_sack) and tcp_check_dsack()):
  // `retrans_packets` ever-retransmitted packets still queued that it covers,
  // or, for a D-SACK at/below snd.una (`below_una`), the range itself.
  void on_dsack(SeqRange range, bool below_una, uint32_t retrans_packets, uint32_t mss);

  // Linux tcp_packet_delayed() with the 2025 fix: the original transmission
  // provably arrived (an echoed TSval before the first retransmission, or no
  // retransmission at all). See the file comment for the non-SACK exception.
  bool packet_delayed(const UndoContext& c) const;
  // Linux tcp_may_undo(): an episode to undo and either every retransmission
  // D-SACKed or the packet merely delayed.
  bool may_undo(const UndoContext& c) const {
    return marker_.has_value() && (undo_retrans_ == 0 || packet_delayed(c));
  }
  // Linux tcp_try_undo_dsack() precondition.
  bool dsack_undo_possible() const { return marker_.has_value() && undo_retrans_ == 0; }

  // Linux tcp_is_non_sack_preventing_reopen(): a non-SACK connection whose
  // snd.una reached exactly high_seq holds its state (RFC 6582 §3.2 step 5
  // "do not leave recovery before something above high_seq is ACKed");
  // Linux zeroes retrans_stamp then if nothing retransmitted is outstanding.
  bool non_sack_preventing_reopen(const UndoContext& c, bool any_retrans_done);
  // Linux tcp_try_to_open() / tcp_try_undo_partial(): no retransmission
  // outstanding any more.
  void clear_retrans_stamp_if(bool no_retrans_done) { if (no_retrans_done) retrans_stamp_.reset(); }
  // Linux: in CA_Open retrans_stamp is always 0 (tcp_fastretrans_alert D).
  void clear_retrans_stamp() { retrans_stamp_.reset(); }

  std::optional<Seq32> marker() const { return marker_; }   // undo_marker
  int32_t undo_retrans() const { return undo_retrans_; }
  std::optional<uint32_t> retrans_stamp() const { return retrans_stamp_; }

 private:
  std::optional<Seq32> marker_;           // Linux undo_marker (0 = none)
  int32_t undo_retrans_ = -1;             // -1: no retransmission counted yet
  std::optional<uint32_t> retrans_stamp_; // Linux retrans_stamp (0 = none)
};

}  // namespace weir::tcp::recovery
