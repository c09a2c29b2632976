#include "sim/link.h"

#include <algorithm>

#include "sim/ecn.h"
#include "wire/checksum.h"

namespace weir::sim {

Link::Link(std::string name, const LinkConfig& cfg, EventLoop& loop, PacketPool& pool, Rng rng)
    : name_(std::move(name)), cfg_(cfg), loop_(loop), pool_(pool), rng_(rng), codel_(cfg.codel) {
  std::sort(cfg_.drop_packets.begin(), cfg_.drop_packets.end());
}

Duration Link::serialisation(size_t bytes, uint64_t bps) {
  if (bps == 0) return Duration::zero();
  const uint64_t bits_ns = static_cast<uint64_t>(bytes) * 8 * 1000000000ull;
  return Duration::ns(static_cast<int64_t>((bits_ns + bps - 1) / bps));
}

bool Link::lose(const Packet& p) {
  (void)p;
  if (cfg_.loss_model == LossModel::kGilbertElliott) {
    // Two-state Markov chain, stepped once per packet, then the state's loss
    // probability applied (netem "loss gemodel p r 1-h 1-k").
    if (ge_bad_) {
      if (rng_.chance(cfg_.ge_r)) ge_bad_ = false;
    } else if (rng_.chance(cfg_.ge_p)) {
      ge_bad_ = true;
    }
    return rng_.chance(ge_bad_ ? cfg_.ge_loss_bad : cfg_.ge_loss_good);
  }
  return rng_.chance(cfg_.loss);
}

void Link::send(Time now, Packet* p) {
  ++st_.packets_in;
  st_.bytes_in += p->bytes.size();
  if (tap_) tap_->tap(now, p->view());
  if (eligible(*p)) {
    ++eligible_index_;
    // Explicit pattern: "drop packets 5, 7, 12" counts eligible packets from 1.
    if (next_pattern_ < cfg_.drop_packets.size() && cfg_.drop_packets[next_pattern_] == eligible_index_) {
      while (next_pattern_ < cfg_.drop_packets.size() && cfg_.drop_packets[next_pattern_] == eligible_index_)
        ++next_pattern_;
      drop(p, st_.drop_pattern);
      return;
    }
    if (lose(*p)) {
      drop(p, st_.drop_loss);
      return;
    }
  }
  if (cfg_.retreat_every) retreat_window(*p);
  if (rng_.chance(cfg_.duplicate)) {
    Packet* dup = pool_.clone(*p);
    dup->meta.duplicate = true;
    ++st_.duplicated;
    impair(now, p);
    impair(now, dup);
    return;
  }
  impair(now, p);
}

// Corruption, then on to the access stage or the queue.
void Link::impair(Time now, Packet* p) {
  if (rng_.chance(cfg_.corrupt) && !p->bytes.empty()) {
    // One flipped bit: the IPv4 header checksum or the TCP checksum (one's
    // complement sums detect every single-bit error, RFC 1071) catches it.
    uint64_t bit = rng_.below(p->bytes.size() * 8);
    p->bytes[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    p->meta.corrupted = true;
    ++st_.corrupted;
  }
  if (cfg_.access_rate_bps) {
    if (access_.size() >= cfg_.access_queue_packets) {
      drop(p, st_.drop_access);
      return;
    }
    access_.push(p);
    if (!in_access_) start_access(now);
    return;
  }
  enqueue(now, p);
}

void Link::retreat_window(Packet& p) {
  auto& b = p.bytes;
  if (b.size() < 20) return;
  size_t off = 0;
  if ((b[0] >> 4) == 4) {
    if (b[9] != 6) return;
    off = static_cast<size_t>(b[0] & 0xf) * 4;
  } else if ((b[0] >> 4) == 6) {
    if (b.size() < 40 || b[6] != 6) return;
    off = 40;
  } else {
    return;
  }
  if (b.size() < off + 20) return;
  size_t data_off = static_cast<size_t>(b[off + 12] >> 4) * 4;
  uint8_t flags = b[off + 13];
  bool pure_ack = (flags & 0x10) && !(flags & 0x07) && b.size() <= off + data_off;
  if (!pure_ack || ++pure_acks_ % cfg_.retreat_every != 0) return;
  uint16_t win = static_cast<uint16_t>(b[off + 14] << 8 | b[off + 15]);
  if (win <= cfg_.retreat_units) return;
  uint16_t nwin = static_cast<uint16_t>(win - cfg_.retreat_units);
  uint16_t csum = static_cast<uint16_t>(b[off + 16] << 8 | b[off + 17]);
  // RFC 1624 incremental update keeps the checksum valid.
  csum = wire::csum_update16(csum, win, nwin);
  b[off + 14] = static_cast<uint8_t>(nwin >> 8);
  b[off + 15] = static_cast<uint8_t>(nwin);
  b[off + 16] = static_cast<uint8_t>(csum >> 8);
  b[off + 17] = static_cast<uint8_t>(csum);
  ++st_.windows_retreated;
}

void Link::start_access(Time now) {
  in_access_ = access_.pop();
  if (in_access_) loop_.at(now + serialisation(in_access_->bytes.size(), cfg_.access_rate_bps), this, kAccessDone);
}

void Link::enqueue(Time now, Packet* p) {
  if (cfg_.rate_bps == 0) {
    propagate(now, p);
    return;
  }
  bool full = (cfg_.queue_packets && queue_.size() >= cfg_.queue_packets) ||
              (cfg_.queue_bytes && queue_.bytes() + p->bytes.size() > cfg_.queue_bytes);
  if (full) {
    drop(p, st_.drop_queue);  // drop-tail
    return;
  }
  // RFC 8257 §3.1: mark on the instantaneous queue at arrival.
  if (cfg_.ecn_threshold && queue_.size() >= cfg_.ecn_threshold && mark_ce(p->bytes)) ++st_.ce_marked;
  p->enqueued = now;
  queue_.push(p);
  st_.max_queue_packets = std::max<uint32_t>(st_.max_queue_packets, static_cast<uint32_t>(queue_.size()));
  st_.max_queue_bytes = std::max(st_.max_queue_bytes, queue_.bytes());
  if (!in_tx_) start_tx(now);
}

void Link::start_tx(Time now) {
  Packet* p;
  if (cfg_.aqm == Aqm::kCoDel) {
    const uint64_t drops = codel_.drops(), marks = codel_.marks();
    p = codel_.dequeue(now, queue_, pool_);
    st_.drop_codel += codel_.drops() - drops;
    st_.ce_marked += codel_.marks() - marks;
  } else {
    p = queue_.pop();
  }
  in_tx_ = p;
  if (!p) return;
  Duration sojourn = now - p->enqueued;
  st_.max_sojourn = std::max(st_.max_sojourn, sojourn);
  st_.sum_sojourn_ns += static_cast<double>(sojourn.ns());
  ++st_.dequeued;
  loop_.at(now + serialisation(p->bytes.size(), cfg_.rate_bps), this, kTxDone);
}

void Link::propagate(Time now, Packet* p) {
  Time t = now + cfg_.delay;
  if (cfg_.jitter > Duration::zero()) {
    double j = rng_.uniform(-1.0, 1.0) * static_cast<double>(cfg_.jitter.ns());
    t = t + Duration::ns(static_cast<int64_t>(j));
    if (t < now) t = now;
    // Without reordering, jitter only stretches gaps: a packet never
    // overtakes the one before it (netem with a rate or a tfifo child).
    if (!cfg_.jitter_reorder) t = std::max(t, last_delivery_);
  }
  if (!cfg_.jitter_reorder) last_delivery_ = std::max(last_delivery_, t);
  if (cfg_.reorder > 0 && eligible(*p)) {
    if (cfg_.reorder_gap) {
      // netem: packets 1..gap-1 take the normal delay; the gap-th, with
      // probability `reorder`, is sent at once, overtaking those before it.
      if (gap_counter_ + 1 >= cfg_.reorder_gap && rng_.chance(cfg_.reorder)) {
        gap_counter_ = 0;
        t = now;
        ++st_.reordered;
      } else {
        ++gap_counter_;
      }
    } else if (rng_.chance(cfg_.reorder)) {
      t = t + cfg_.reorder_hold;  // held back: later packets overtake it
      ++st_.reordered;
    }
  }
  loop_.at(t, this, reinterpret_cast<uintptr_t>(p));
}

void Link::on_event(Time now, uint64_t tag) {
  if (tag == kAccessDone) {
    Packet* p = in_access_;
    in_access_ = nullptr;
    enqueue(now, p);
    start_access(now);
    return;
  }
  if (tag == kTxDone) {
    Packet* p = in_tx_;
    in_tx_ = nullptr;
    propagate(now, p);
    start_tx(now);
    return;
  }
  Packet* p = reinterpret_cast<Packet*>(static_cast<uintptr_t>(tag));
  ++st_.delivered;
  st_.bytes_delivered += p->bytes.size();
  if (dst_) dst_->receive(now, p);
  else pool_.put(p);
}

}  // namespace weir::sim
