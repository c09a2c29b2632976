// A one-way link: ingress impairments (explicit drops, loss, duplication,
// corruption, window retreat), an optional access serialiser (the sender's
// NIC), a bounded bottleneck queue (drop-tail or CoDel) drained at the link
// rate, then propagation with jitter and reordering, as netem models them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/codel.h"
#include "sim/event_loop.h"
#include "sim/packet.h"
#include "sim/rng.h"
#include "weir/time.h"

namespace weir::sim {

enum class Aqm { kDropTail, kCoDel };
enum class LossModel { kBernoulli, kGilbertElliott };

struct LinkConfig {
  uint64_t rate_bps = 0;         // bottleneck rate; 0: no serialisation
  uint64_t access_rate_bps = 0;  // sender NIC ahead of the queue; 0: none
  Duration delay;                // one-way propagation
  Duration jitter;               // uniform in [-jitter, +jitter], as netem without a table
  bool jitter_reorder = true;    // netem reorders when jitter exceeds packet spacing
  double reorder = 0;            // fraction of eligible packets reordered
  Duration reorder_hold;         // hold mode: a reordered packet waits this much longer
  uint32_t reorder_gap = 0;      // gap mode (netem "reorder P gap N"): every Nth packet
                                 // (with probability P) skips the delay
  bool impair_data_only = false; // reorder/loss/pattern only data-carrying packets
  LossModel loss_model = LossModel::kBernoulli;
  double loss = 0;               // Bernoulli loss probability
  double ge_p = 0;               // Gilbert-Elliott: P(good -> bad) per packet
  double ge_r = 1;               //                  P(bad -> good) per packet
  double ge_loss_good = 0;       //                  loss in good state (netem 1-k)
  double ge_loss_bad = 1;        //                  loss in bad state (netem 1-h)
  std::vector<uint64_t> drop_packets;  // 1-based indices of eligible packets to drop
  double duplicate = 0;
  double corrupt = 0;
  uint32_t queue_packets = 1000; // bottleneck queue limit (0: bytes limit only)
  uint64_t queue_bytes = 0;      // 0: packet limit only
  Aqm aqm = Aqm::kDropTail;
  CoDelParams codel;
  // Step marking (DCTCP's K, RFC 8257 §3.1; Linux: RED with min = max = K,
  // or fq_codel's ce_threshold): an ECN-capable packet arriving to K or
  // more queued packets is marked CE. 0: off. Not-ECT packets are not
  // marked (only the queue limit drops them).
  uint32_t ecn_threshold = 0;
  // Window retreat: every Nth pure ACK gets its raw window field lowered by
  // `retreat_units`, so the advertised right edge draws back (seed 000).
  uint32_t retreat_every = 0;
  uint16_t retreat_units = 1;
  uint32_t access_queue_packets = 100000;  // the NIC's queue: large but bounded
};

struct LinkStats {
  uint64_t packets_in = 0;
  uint64_t bytes_in = 0;
  uint64_t delivered = 0;
  uint64_t bytes_delivered = 0;
  uint64_t drop_pattern = 0;
  uint64_t drop_loss = 0;
  uint64_t drop_queue = 0;
  uint64_t drop_codel = 0;
  uint64_t ce_marked = 0;         // CE set by step marking or CoDel
  uint64_t drop_access = 0;
  uint64_t duplicated = 0;
  uint64_t corrupted = 0;
  uint64_t reordered = 0;
  uint64_t windows_retreated = 0;
  uint32_t max_queue_packets = 0;
  uint64_t max_queue_bytes = 0;
  Duration max_sojourn;
  double sum_sojourn_ns = 0;
  uint64_t dequeued = 0;
  uint64_t drops() const { return drop_pattern + drop_loss + drop_queue + drop_codel + drop_access; }
};

// Sees every packet offered to a link (a capture point).
class PacketTap {
 public:
  virtual void tap(Time now, std::span<const uint8_t> bytes) = 0;

 protected:
  ~PacketTap() = default;
};

class Link final : public EventTarget {
 public:
  Link(std::string name, const LinkConfig& cfg, EventLoop& loop, PacketPool& pool, Rng rng);
  void connect(Node* dst) { dst_ = dst; }
  void set_tap(PacketTap* tap) { tap_ = tap; }
  // Offers a packet to the link; the link owns it from here.
  void send(Time now, Packet* p);

  const std::string& name() const { return name_; }
  const LinkConfig& config() const { return cfg_; }
  const LinkStats& stats() const { return st_; }
  size_t queued_packets() const { return queue_.size(); }
  void on_event(Time now, uint64_t tag) override;

  // Serialisation time of `bytes` at `bps` (rounded up to the nanosecond).
  static Duration serialisation(size_t bytes, uint64_t bps);

 private:
  static constexpr uint64_t kAccessDone = 1;
  static constexpr uint64_t kTxDone = 2;

  bool eligible(const Packet& p) const { return !cfg_.impair_data_only || p.meta.len > 0; }
  bool lose(const Packet& p);
  void impair(Time now, Packet* p);
  void retreat_window(Packet& p);
  void enqueue(Time now, Packet* p);
  void start_tx(Time now);
  void start_access(Time now);
  void propagate(Time now, Packet* p);
  void drop(Packet* p, uint64_t& counter) {
    ++counter;
    pool_.put(p);
  }

  std::string name_;
  LinkConfig cfg_;
  EventLoop& loop_;
  PacketPool& pool_;
  Rng rng_;
  Node* dst_ = nullptr;
  PacketTap* tap_ = nullptr;
  LinkStats st_;
  CoDel codel_;
  PacketFifo access_;
  Packet* in_access_ = nullptr;
  PacketFifo queue_;
  Packet* in_tx_ = nullptr;
  uint64_t eligible_index_ = 0;
  size_t next_pattern_ = 0;
  bool ge_bad_ = false;
  uint32_t gap_counter_ = 0;
  uint64_t pure_acks_ = 0;
  Time last_delivery_ = Time::zero();
};

}  // namespace weir::sim
