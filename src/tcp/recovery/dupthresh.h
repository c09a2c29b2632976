// Duplicate-threshold loss detection (RFC 6675 §5, Linux's non-RACK path
// tcp_update_scoreboard() / tcp_mark_head_lost(), used when
// net.ipv4.tcp_recovery has no RACK bit) and the learned reordering degree
// (Linux tp->reordering, tcpi_reordering; tp->reord_seen, tcpi_reord_seen).
#pragma once

#include <cstdint>

#include "tcp/scoreboard.h"
#include "weir/counters.h"

namespace weir::tcp::recovery {

// Linux tcp_dupack_heuristics() > tp->reordering: RFC 6675 §5 "DupThresh
// or more SACKed segments" with the learned degree as DupThresh.
inline bool dupthresh_reached(uint32_t sacked_out, uint32_t reordering) {
  return sacked_out + 1 > reordering;
}

// Linux tcp_mark_head_lost(): walking from snd.una, mark lost every unSACKed
// packet below the point where more than `sacked_limit` SACKed packets lie
// beneath (RFC 6675 §4 IsLost() counted in packets); with `mark_head` only
// the first. Returns the number of packets newly marked.
uint32_t mark_head_lost(Scoreboard& sb, uint32_t sacked_limit, bool mark_head);

// Linux tcp_update_scoreboard() for SACK connections: packets with at least
// `reordering` SACKed packets above them are lost; on the fast retransmit
// itself at least the head is.
uint32_t update_scoreboard(Scoreboard& sb, uint32_t reordering, bool fast_rexmit);

// The reordering degree, in packets (Linux tp->reordering starts at
// net.ipv4.tcp_reordering and grows with evidence up to tcp_max_reordering).
class Reordering {
 public:
  explicit Reordering(uint32_t initial = 3, uint32_t max = 300) : degree_(initial), max_(max) {}
  uint32_t degree() const { return degree_; }
  uint32_t seen() const { return seen_; }

  // Linux tcp_check_sack_reordering(): a never-retransmitted packet was
  // delivered `distance_bytes` below the highest SACKed one. `ts` when the
  // evidence came from a timestamp (partial undo): TcpExtTCPTSReorder.
  void on_sack_reordering(uint32_t distance_bytes, uint32_t mss, bool ts, Counters& mib);
  // Linux tcp_check_reno_reordering(): duplicate ACKs exceeded what the
  // flight allows (Scoreboard::reno_add_dupack().limited).
  void on_reno_reordering(uint32_t packets_out, uint32_t addend, Counters& mib);
  // Linux tcp_enter_loss(): an RTO after many SACKs in Open/Disorder means
  // the degree was over-estimated.
  void on_rto(bool open_or_disorder, uint32_t sacked_out, uint32_t sysctl_reordering);

 private:
  uint32_t degree_;
  uint32_t max_;
  uint32_t seen_ = 0;
};

}  // namespace weir::tcp::recovery
