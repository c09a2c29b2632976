// The sender's scoreboard (RFC 6675 §2-§4): what has been sent, SACKed,
// marked lost and retransmitted, kept per transmitted packet, with the counts
// Linux keeps (tcp_sock packets_out, sacked_out, lost_out, retrans_out) and
// RFC 6675's `pipe` maintained incrementally, never rebuilt by a walk.
//
// The sender keeps the bytes; the scoreboard keeps metadata. One entry is one
// packet on the wire (Linux: one skb with tcp_skb_pcount() == 1). Entries are
// contiguous in sequence space and cover [HighACK, HighData). An entry is
// split only when it is retransmitted with a smaller MSS (path MTU fell), and
// two merge only when a small retransmission absorbs the next (merge_next);
// a partial cumulative ACK trims its front. A packet is credited as SACKed only
// when one SACK block covers all its remaining bytes (Linux
// tcp_match_skb_to_sack(): SACKs only count whole MSS-sized packets), so the
// counts are exact whatever the MSS does later (seed 002). Parts of packets
// a block covers are not remembered: SACK state is packet-granular.
//
// Costs: cumulative ACK O(1) amortised per packet freed; a SACK block
// O(log n) to locate plus O(k) for the k packets it newly covers: ranges
// already known to be SACKed are skipped without touching their packets, so
// a repeated (duplicate) block costs O(log n). No allocation in steady state:
// entries live in a slab with a free list, the sequence order in a ring of
// slab indices, both grown by doubling and never shrunk.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "weir/seq.h"
#include "weir/time.h"

#include "tcp/cc/delivery_rate.h"
#include "weir/expected.h"

namespace weir::tcp {

// The per-packet delivery-rate snapshot taken at transmission (Linux
// tcp_skb_cb.tx), owned by cc's delivery-rate sampler. The scoreboard stores
// it opaquely and hands back the one of the most recently sent packet an ACK
// delivers (Linux tcp_rate_skb_delivered() picks the same packet).
using PacketRateSnapshot = cc::TxRateSnapshot;

// Per-packet state bits, named after Linux's TCPCB_* sacked flags.
namespace sb_flag {
inline constexpr uint8_t kSacked = 0x01;       // TCPCB_SACKED_ACKED
inline constexpr uint8_t kRetrans = 0x02;      // TCPCB_SACKED_RETRANS: a retransmission in flight
inline constexpr uint8_t kLost = 0x04;         // TCPCB_LOST
inline constexpr uint8_t kEverRetrans = 0x08;  // TCPCB_EVER_RETRANS
}  // namespace sb_flag

struct ScoreboardEntry {
  SeqRange seq;          // the bytes still unacknowledged (front trimmed by partial ACKs)
  Seq32 sent_begin;      // where the packet began when sent (seq.begin before trims)
  Time xmit_time{};      // latest (re)transmission
  Time first_xmit_time{};
  uint32_t mss = 0;      // the MSS it was sent with
  uint16_t retrans_count = 0;
  uint8_t flags = 0;
  // The last packet of the skb it was transmitted in (Linux: a burst of new
  // data is one skb; a retransmission of part of one, or a SACK inside one,
  // fragments it). A retransmission never spans two skbs.
  bool skb_end = true;
  PacketRateSnapshot rate{};

  bool sacked() const { return flags & sb_flag::kSacked; }
  bool lost() const { return flags & sb_flag::kLost; }
  bool retrans() const { return flags & sb_flag::kRetrans; }
  bool ever_retrans() const { return flags & sb_flag::kEverRetrans; }
};

// Linux's packet counts (struct tcp_sock), in packets.
struct ScoreboardCounts {
  uint32_t packets_out = 0;
  uint32_t sacked_out = 0;
  uint32_t lost_out = 0;
  uint32_t retrans_out = 0;
  // The same in bytes, for RFC 6675's byte-based pipe.
  uint64_t bytes_out = 0;
  uint64_t sacked_bytes = 0;
  uint64_t lost_bytes = 0;
  uint64_t retrans_bytes = 0;

  // Linux tcp_packets_in_flight(): packets_out - left_out + retrans_out.
  uint32_t in_flight() const { return packets_out - (sacked_out + lost_out) + retrans_out; }
  // RFC 6675 §4 "pipe" in bytes, counted the same way.
  uint64_t pipe_bytes() const { return bytes_out - (sacked_bytes + lost_bytes) + retrans_bytes; }
  bool operator==(const ScoreboardCounts&) const = default;
};

// One delivered packet, as RACK and the rate sampler want it.
struct DeliveredPacket {
  Time xmit_time{};
  Seq32 end_seq;
  bool retransmitted = false;  // ever retransmitted (RFC 8985 §6.2 step 2 filter)
  PacketRateSnapshot rate{};
};

// What one ACK did to the scoreboard.
struct AckResult {
  // RFC 6675 HighACK advanced (Linux FLAG_SND_UNA_ADVANCED).
  bool una_advanced = false;
  uint32_t acked_bytes = 0;      // newly cumulatively acknowledged bytes
  uint32_t acked_packets = 0;    // packets freed by the cumulative ACK
  uint32_t sacked_bytes = 0;     // bytes of packets newly SACKed
  uint32_t sacked_packets = 0;   // packets newly SACKed
  // Packets newly delivered: freed-and-not-previously-SACKed plus newly SACKed
  // (Linux tcp_count_delivered()).
  uint32_t delivered_packets = 0;
  bool retrans_data_acked = false;  // FLAG_RETRANS_DATA_ACKED
  bool orig_data_delivered = false; // a never-retransmitted packet delivered
  // The lowest end sequence of those (Linux FLAG_ORIG_SACK_ACKED compares it
  // with high_seq).
  std::optional<Seq32> orig_delivered_low_end;
  // RTT samples from never-retransmitted packets only (Karn, RFC 6298 §3):
  // `rtt_oldest` from the earliest sent (Linux seq_rtt / sack_rtt, fed to
  // the RTO estimator), `rtt_newest` from the latest sent (Linux ca_rtt).
  std::optional<Duration> rtt_oldest;
  std::optional<Duration> rtt_newest;
  // The most recently transmitted packet delivered by this ACK (by xmit
  // time, ties by end sequence): RACK.xmit_ts / RACK.end_seq input
  // (RFC 8985 §6.2 step 2) and the rate sample's packet.
  std::optional<DeliveredPacket> latest_delivered;
  // What Linux's tcp_rack_advance() makes of this ACK (RFC 8985 §6.2 step
  // 2): it is called per delivered packet, newly SACKed ones in sequence
  // order (tcp_sacktag_write_queue sorts the blocks) and then the
  // cumulatively ACKed ones (tcp_clean_rtx_queue), skipping a
  // retransmission whose RTT is below min_rtt (set_rack_min_rtt()).
  // `rack_latest` is the latest sent of those (RACK.xmit_ts, RACK.end_seq);
  // `rack_rtt` the RTT of the last one processed (RACK.rtt: Linux
  // overwrites it on every call, not only when RACK.xmit_ts moves).
  std::optional<DeliveredPacket> rack_latest;
  std::optional<Duration> rack_rtt;
  // Highest SACKed sequence after this ACK (Linux tcp_highest_sack_seq()).
  std::optional<Seq32> highest_sacked_end;
  // Reordering evidence (Linux tcp_check_sack_reordering()): how far below
  // the previously highest SACKed byte a never-retransmitted packet was
  // delivered, in bytes; 0 if none was.
  uint32_t reordering_bytes = 0;
  // Packets freed by the cumulative ACK that had been SACKed before it.
  uint32_t acked_sacked_packets = 0;
  // RFC 2883 D-SACK (Linux tcp_check_dsack()).
  bool dsack = false;
  SeqRange dsack_range{};
  uint32_t dsack_retrans_packets = 0;  // ever-retransmitted packets the D-SACK covers
  bool dsack_below_una = false;        // D-SACK entirely at/below the new HighACK
  uint32_t discarded_blocks = 0;       // invalid SACK blocks (TcpExtTCPSACKDiscard)
};

enum class ScoreboardError : uint8_t {
  kNotAtHighData,   // on_send range does not start at HighData
  kOutsideWindow,   // range outside [HighACK, HighData)
  kNotEntryStart,   // retransmission does not start on a packet boundary
  kZeroMss,
};
const char* to_string(ScoreboardError e);

enum class RetransmitKind : uint8_t {
  kNormal,  // counted in retrans_out (Linux tcp_retransmit_skb())
  kProbe,   // TLP probe: EVER_RETRANS only (Linux tcp_send_loss_probe())
  kFailed,  // dropped by the local device: EVER_RETRANS only, nothing else
            // changes (Linux __tcp_retransmit_skb when tcp_transmit_skb fails)
};

class Scoreboard {
 public:
  explicit Scoreboard(Seq32 snd_una = Seq32(0), bool sack_enabled = true);

  // Forget everything; HighACK = HighData = snd_una.
  void reset(Seq32 snd_una);
  // Peer negotiated SACK (RFC 2018). Without it, sacked_out counts
  // duplicate ACKs as Linux's tcp_add_reno_sack() does.
  void set_sack_enabled(bool on) { sack_enabled_ = on; }
  bool sack_enabled() const { return sack_enabled_; }
  // The connection's min_rtt before the next ACK: RACK leaves out a
  // delivered retransmission faster than this (AckResult::rack_latest).
  // Zero (the default) leaves nothing out.
  void set_rack_min_rtt(Duration d) { rack_min_rtt_ = d; }

  // --- transmission -------------------------------------------------------
  // New data [HighData, HighData + len) sent now, cut into packets of `mss`.
  // Returns the number of packets added; an error (and no change) if
  // `range.begin != HighData` or `mss == 0`.
  Expected<uint32_t, ScoreboardError> on_send(SeqRange range, uint32_t mss, Time now,
                                              const PacketRateSnapshot& rate = {});
  // A retransmission of `range`, which must begin at a packet's first
  // unacknowledged byte. A range ending inside a packet splits it (smaller
  // MSS after a PMTU drop); every unSACKed packet in the range is marked
  // retransmitted (Linux tcp_fragment() + tcp_retransmit_skb()). Returns the
  // number of packets marked.
  Expected<uint32_t, ScoreboardError> on_retransmit(SeqRange range, uint32_t mss, Time now,
                                                    const PacketRateSnapshot& rate = {},
                                                    RetransmitKind kind = RetransmitKind::kNormal);

  // The packets in `burst` were sent as one skb (Linux tcp_write_xmit: one
  // GSO skb per burst): only the last ends it.
  void join_skb(SeqRange burst);
  // The packet at `index` now ends an skb: a retransmission of the skb's
  // first packets fragmented it there (Linux __tcp_retransmit_skb ->
  // tcp_fragment).
  void set_skb_end(size_t index);
  // How many packets from `index` (at most `max`) Linux would retransmit as
  // one skb: consecutive packets marked lost, not retransmitted nor SACKed,
  // up to the end of the skb the first one belongs to.
  size_t lost_run(size_t index, size_t max) const;
  // The packet at `index` is a whole skb by itself (Linux tcp_skb_pcount()
  // == 1): the packet before it ends an skb, and so does it.
  bool alone_in_skb(size_t index) const {
    return at(index).skb_end && (index == 0 || at(index - 1).skb_end);
  }
  // Linux tcp_collapse_retrans(): the packet after `index` becomes part of
  // it (one packet, its sequence range extended), keeping the first one's
  // marks and times and gaining the second's EVER_RETRANS; the second's
  // counts leave with it (tcp_adjust_pcount), a non-SACK peer's duplicate-ACK
  // count included. The caller decides that they may merge.
  void merge_next(size_t index);

  // --- acknowledgement ----------------------------------------------------
  // One ACK: SACK blocks first (Linux tcp_sacktag_write_queue()), then the
  // cumulative ACK (tcp_clean_rtx_queue()). `ack` not after HighData.
  AckResult on_ack(Seq32 ack, std::span<const SeqRange> sack_blocks, Time now);

  // Non-SACK peers (Linux tcp_add_reno_sack / tcp_remove_reno_sacks /
  // tcp_reset_reno_sack): a duplicate ACK counts one packet as SACKed; a
  // cumulative ACK (through on_ack) removes all but one of the packets it
  // frees from that count.
  struct RenoDupack {
    uint32_t delivered = 0;  // 1 if the dupack was counted
    bool limited = false;    // count exceeded packets_out - holes: reordering (Linux tcp_limit_reno_sacked)
  };
  RenoDupack reno_add_dupack();
  void reno_reset();

  // --- loss marking -------------------------------------------------------
  // Linux tcp_mark_skb_lost(): marks the packet at `index` lost; a
  // retransmission of an already-lost packet is thereby declared lost too
  // (counted in `lost_retransmits`). No effect on a SACKed packet.
  void mark_lost(size_t index);
  // RTO (Linux tcp_timeout_mark_lost()): if `reneged` forget every SACK
  // first; then mark every unSACKed packet lost, except packets sent after
  // `keep_if_sent_after` (RACK: not yet timed out), the head excepted.
  void on_rto(bool reneged, Time keep_if_sent_after = Time::never());
  // Undo of a loss episode (Linux tcp_undo_cwnd_reduction(unmark_loss)):
  // clear every LOST mark.
  void clear_lost();
  // Linux tcp_clear_retrans(): forget every mark, keep the packets.
  void clear_marks();

  // --- queries ------------------------------------------------------------
  const ScoreboardCounts& counts() const { return counts_; }
  uint32_t packets_out() const { return counts_.packets_out; }
  uint32_t sacked_out() const { return counts_.sacked_out; }
  uint32_t lost_out() const { return counts_.lost_out; }
  uint32_t retrans_out() const { return counts_.retrans_out; }
  uint32_t in_flight() const { return counts_.in_flight() + phantoms_; }
  // Seed 002's bug, for the lab's contrast only (StackConfig::
  // fault_seed002_sacked_acked_leak): gVisor's Outstanding kept packets
  // that were SACKed outside recovery and then cumulatively ACKed, until
  // recovery, an RTO or an empty queue recounted it. The counts stay exact;
  // only in_flight() carries the phantoms.
  void leak_phantoms(uint32_t packets) { phantoms_ += packets; }
  void clear_phantoms() { phantoms_ = 0; }
  uint32_t phantoms() const { return phantoms_; }
  uint64_t pipe_bytes() const { return counts_.pipe_bytes(); }
  uint64_t lost_retransmits() const { return lost_retransmits_; }

  // RFC 6675 §2 variables.
  Seq32 high_ack() const { return high_ack_; }     // HighACK (= SND.UNA)
  Seq32 high_data() const { return high_data_; }   // HighData (= SND.NXT of new data)
  Seq32 high_rxt() const { return high_rxt_; }     // HighRxt
  Seq32 rescue_rxt() const { return rescue_rxt_; } // RescueRxt
  void set_rescue_rxt(Seq32 s) { rescue_rxt_ = s; }
  std::optional<Seq32> highest_sacked_end() const;
  // Linux tcp_highest_sack_seq(): the end of the highest SACKed packet, or
  // HighACK when nothing is SACKed.
  Seq32 fack() const { return highest_sacked_end().value_or(high_ack_); }

  size_t size() const { return ring_count_; }
  // Ranges of SACKed packets kept (one per run of SACKed packets).
  size_t sack_ranges() const { return known_.size(); }
  bool empty() const { return ring_count_ == 0; }
  const ScoreboardEntry& at(size_t index) const { return slab_[ring_at(index)].e; }
  // Index of the packet containing `s`, if any.
  std::optional<size_t> find(Seq32 s) const;
  // First packet marked lost and not retransmitted at or after `from`
  // (RFC 6675 §4 NextSeg rule 1 with Linux's LOST marks; Linux
  // tcp_xmit_retransmit_queue()).
  std::optional<size_t> next_lost(Seq32 from) const;

  // Packets by transmission time, oldest first, excluding SACKed packets and
  // lost-not-retransmitted ones (Linux tsorted_sent_queue). For RACK:
  // `f(index, entry)` returns false to stop the walk. The callback may call
  // mark_lost(index) on the packet it is given. Each step is O(1): a node
  // knows its place in sequence order (Node::pos), so the walk does not
  // search for it (a binary search per packet was most of RACK's cost at
  // large flights: Linux walks tsorted skbs that are their own position).
  template <typename F>
  void walk_by_xmit_time(F&& f);

  // Recomputes every count by a walk and compares; empty string when all
  // agree, otherwise a description. Cheap enough for tests after every op.
  // Builds without NDEBUG (or with WEIR_SCOREBOARD_CHECKS) run it after
  // every on_ack() and abort on a mismatch.
  std::string check_invariants() const;

 private:
  static constexpr uint32_t kNil = 0xffffffffu;
  struct Node {
    ScoreboardEntry e;
    uint32_t ts_prev = kNil;  // tsorted list links (slab indices)
    uint32_t ts_next = kNil;
    // Position number in sequence order: the node is at index
    // pos - head_pos_ (modulo 2^32). Numbers are given out in order by
    // ring_push_back and survive ring_pop_front / ring_grow unchanged; only
    // ring_insert (a split) and ring_erase (a merge) renumber the nodes they
    // shift.
    uint32_t pos = 0;
    bool in_ts = false;
  };

  // Ring of slab indices in sequence order.
  uint32_t ring_at(size_t i) const { return ring_[(ring_head_ + i) & ring_mask_]; }
  // Index of a node in the ring (the inverse of ring_at), O(1).
  size_t index_of(uint32_t node) const { return uint32_t(slab_[node].pos - head_pos_); }
  void ring_push_back(uint32_t node);
  void ring_pop_front();
  void ring_insert(size_t pos, uint32_t node);
  void ring_erase(size_t pos);
  void ring_grow();
  uint32_t alloc_node();
  void free_node(uint32_t n);
  void ts_unlink(uint32_t n);
  void ts_push_back(uint32_t n);
  void ts_update(uint32_t n);
  void ts_insert_after(uint32_t at, uint32_t n);
  bool reno_limit();

  size_t lower_bound_end(Seq32 s) const;  // first index whose seq.end > s
  void add_flags(ScoreboardEntry& e, uint8_t f);
  void remove_flags(ScoreboardEntry& e, uint8_t f);
  void account(const ScoreboardEntry& e, int sign);
  uint32_t split(size_t index, Seq32 at);

  void sack_block(SeqRange block, AckResult& r, Time now, Seq32 prior_fack);
  void sack_walk(SeqRange part, SeqRange merged, AckResult& r, Time now, Seq32 prior_fack);
  SeqRange known_insert(SeqRange block, std::vector<SeqRange>& fresh);
  void known_trim(Seq32 una);
  void check_dsack(Seq32 ack, std::span<const SeqRange> blocks, AckResult& r) const;
  void cum_ack(Seq32 ack, AckResult& r, Time now);
  void note_delivered(const ScoreboardEntry& e, AckResult& r, bool by_sack);
  void mark_sacked(uint32_t node, AckResult& r, Seq32 prior_fack);
  void dsack_block(SeqRange block, AckResult& r);
  void note_lost_candidate(const ScoreboardEntry& e) {
    if (e.lost() && !e.retrans() && !e.sacked() && e.seq.begin < lost_hint_) lost_hint_ = e.seq.begin;
  }
  void finish_rtt(AckResult& r, Time now) const;
  void advance_lost_hint(Seq32 from) const;

  // Per-ACK scratch (reset by on_ack).
  struct AckScratch {
    bool have_reord = false;
    Seq32 reord_low;
    bool have_cum_rtt = false, have_sack_rtt = false;
    Time cum_first{}, cum_last{}, sack_first{}, sack_last{};
    Time now{};
    bool rack_by_cum = false;  // rack_rtt came from a cumulatively ACKed packet
    Seq32 rack_rtt_end;        // end of the packet rack_rtt came from
  } scratch_;
  Duration rack_min_rtt_ = Duration::zero();
  void note_rack(const ScoreboardEntry& e, AckResult& r, Time now, bool by_sack);

  std::vector<Node> slab_;
  std::vector<uint32_t> free_;
  std::vector<uint32_t> ring_;  // power-of-two capacity
  size_t ring_mask_ = 0;        // ring_.size() - 1, kept (ring_at runs ~100 times per ACK)
  size_t ring_head_ = 0;
  size_t ring_count_ = 0;
  uint32_t head_pos_ = 0;  // Node::pos of index 0
  uint32_t ts_head_ = kNil;
  uint32_t ts_tail_ = kNil;

  // Union of the SACKed packets above HighACK as sorted, disjoint ranges
  // that begin and end on packet boundaries (at most one per run of SACKed
  // packets): lets a repeated block be recognised without touching its
  // packets.
  std::vector<SeqRange> known_;
  std::vector<SeqRange> fresh_;  // scratch, reused

  ScoreboardCounts counts_;
  uint32_t reno_sacked_ = 0;
  uint32_t phantoms_ = 0;
  uint64_t lost_retransmits_ = 0;
  bool sack_enabled_ = true;
  Seq32 high_ack_;
  Seq32 high_data_;
  Seq32 high_rxt_;
  Seq32 rescue_rxt_;
  // Every lost-not-retransmitted packet starts at or after this (Linux
  // retransmit_skb_hint): next_lost() does not rescan repaired holes.
  mutable Seq32 lost_hint_;
  Seq32 highest_sack_;       // start of the highest SACKed packet (Linux tp->highest_sack)
  Seq32 highest_sack_end_;   // its end
  bool have_highest_sack_ = false;
};

template <typename F>
void Scoreboard::walk_by_xmit_time(F&& f) {
  uint32_t n = ts_head_;
  while (n != kNil) {
    const uint32_t next = slab_[n].ts_next;
    if (!f(index_of(n), static_cast<const ScoreboardEntry&>(slab_[n].e))) return;
    n = next;
  }
}

}  // namespace weir::tcp
