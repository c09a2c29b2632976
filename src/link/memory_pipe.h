// MemoryPipe: two Netif endpoints joined in one process, so two weir::Stacks
// can talk without a simulator. Each direction is a bounded FIFO with an
// optional fixed one-way delay; packets wait in the pipe until the driver
// delivers them, so nothing happens behind the driver's back (no threads, no
// clock, no reentrancy into a Stack from inside another Stack's transmit).
//
// Steady state allocates nothing: a delivered packet's buffer goes back to a
// pool the next transmit reuses, and each direction's FIFO is a ring that
// only grows (to at most queue_limit entries).
//
// Driver loop (see pump_until below):
//   pipe.set_now(t); stack_a.advance(t); ...       // transmits are stamped t
//   pipe.deliver_due(t, fn)                         // fn(side, bytes) -> Stack::input
//   t = min(pipe.next_delivery(), a.next_deadline(), b.next_deadline())
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "weir/netif.h"
#include "weir/time.h"

namespace weir::link {

enum class Side : uint8_t { A = 0, B = 1 };
inline constexpr Side peer(Side s) { return s == Side::A ? Side::B : Side::A; }

struct PipeStats {
  uint64_t sent = 0;            // accepted into the pipe
  uint64_t delivered = 0;
  uint64_t dropped_full = 0;    // tail drop: direction queue at its limit
  uint64_t dropped_refused = 0; // the device refuses everything (set_refuse; reported as a local drop)
  uint64_t dropped_oversize = 0;// larger than the MTU
  uint64_t dropped_filter = 0;  // refused by the test filter
};

class MemoryPipe {
 public:
  struct Config {
    Duration delay = Duration::zero();  // one-way, both directions
    uint32_t mtu = 1500;
    size_t queue_limit = 1024;          // packets waiting per direction
  };

  // Returns false to drop a packet leaving `from` (loss injection in tests).
  using Filter = std::function<bool(Side from, std::span<const uint8_t> packet)>;

  MemoryPipe() : MemoryPipe(Config{}) {}
  explicit MemoryPipe(Config cfg);
  MemoryPipe(const MemoryPipe&) = delete;
  MemoryPipe& operator=(const MemoryPipe&) = delete;

  // The Netif a Stack on side `s` transmits through.
  Netif& end(Side s) { return s == Side::A ? end_a_ : end_b_; }
  Netif& a() { return end_a_; }
  Netif& b() { return end_b_; }

  // The time stamped on packets transmitted from now on. Never goes back.
  void set_now(Time now);
  Time now() const { return now_; }
  void set_filter(Filter f) { filter_ = std::move(f); }
  // While on, side `s`'s device drops every packet it is handed and says so
  // to the stack (XmitResult::kDropped), like a `pfifo limit 0` qdisc.
  void set_refuse(Side s, bool on) { refuse_[idx(s)] = on; }

  // When the next packet becomes deliverable; Time::never() if none waits.
  Time next_delivery() const;
  // Delivers, in due order (ties: transmit order), every packet due at or
  // before `now`; fn(Side to, std::span<const uint8_t> bytes). Packets sent
  // from inside fn with zero delay are delivered in the same call. Returns
  // how many were delivered.
  template <typename Fn>
  size_t deliver_due(Time now, Fn&& fn);

  size_t queued(Side from) const { return q_[idx(from)].size(); }
  // Packet buffers waiting for reuse (bounded by the most ever queued at once).
  size_t pooled() const { return pool_.size(); }
  const PipeStats& stats(Side from) const { return stats_[idx(from)]; }

 private:
  struct Packet {
    Time due;
    uint64_t order = 0;
    std::vector<uint8_t> bytes;
  };
  // One direction's FIFO: a ring of packets, doubling when full.
  class Fifo {
   public:
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    const Packet& front() const { return slots_[head_]; }
    Packet& front() { return slots_[head_]; }
    void push_back(Packet&& p);
    void pop_front() {
      head_ = (head_ + 1) & (slots_.size() - 1);
      --n_;
    }

   private:
    std::vector<Packet> slots_;  // zero or a power of two
    size_t head_ = 0;
    size_t n_ = 0;
  };
  class End : public Netif {
   public:
    End(MemoryPipe& pipe, Side side) : pipe_(pipe), side_(side) {}
    void transmit(std::span<const uint8_t> ip_packet) override { pipe_.enqueue(side_, ip_packet); }
    XmitResult try_transmit(std::span<const uint8_t> ip_packet) override {
      return pipe_.enqueue(side_, ip_packet);
    }
    uint32_t mtu() const override { return pipe_.cfg_.mtu; }

   private:
    MemoryPipe& pipe_;
    Side side_;
  };

  static size_t idx(Side s) { return static_cast<size_t>(s); }
  // kDropped only while refusing (set_refuse); oversize, filtered and
  // tail-dropped packets are lost on the path, which the sender cannot see.
  XmitResult enqueue(Side from, std::span<const uint8_t> packet);
  // The direction whose head is due first, if any is due by `now`.
  std::optional<Side> due_side(Time now) const;

  Config cfg_;
  Time now_;
  uint64_t next_order_ = 0;
  Filter filter_;
  bool refuse_[2] = {false, false};
  End end_a_{*this, Side::A};
  End end_b_{*this, Side::B};
  Fifo q_[2];  // indexed by the sending side
  std::vector<std::vector<uint8_t>> pool_;  // delivered packets' buffers, for reuse
  PipeStats stats_[2];
};

template <typename Fn>
size_t MemoryPipe::deliver_due(Time now, Fn&& fn) {
  set_now(now);
  size_t n = 0;
  while (auto from = due_side(now)) {
    std::vector<uint8_t> bytes = std::move(q_[idx(*from)].front().bytes);
    q_[idx(*from)].pop_front();
    ++stats_[idx(*from)].delivered;
    ++n;
    fn(peer(*from), std::span<const uint8_t>(bytes));
    pool_.push_back(std::move(bytes));
  }
  return n;
}

// Runs two Stack-like engines (anything with input(Time, span),
// advance(Time) and next_deadline()) joined by `pipe` until `until` or until
// nothing is left to do, whichever is first. Returns the time reached.
// Deterministic: at each instant, timers of A then B run before packets due.
template <typename StackT>
Time pump_until(MemoryPipe& pipe, StackT& a, StackT& b, Time now, Time until) {
  for (;;) {
    pipe.set_now(now);
    if (a.next_deadline() <= now) a.advance(now);
    if (b.next_deadline() <= now) b.advance(now);
    pipe.deliver_due(now, [&](Side to, std::span<const uint8_t> bytes) {
      (to == Side::A ? a : b).input(now, bytes);
    });
    Time next = min(pipe.next_delivery(), min(a.next_deadline(), b.next_deadline()));
    if (next.is_never() || next > until) return next.is_never() ? now : until;
    now = max(next, now);
  }
}

}  // namespace weir::link
