// CoDel (RFC 8289): controls a FIFO's standing queue by dropping at dequeue
// when every packet in the last `interval` waited longer than `target`.
#pragma once

#include <cstdint>

#include "sim/packet.h"
#include "weir/time.h"

namespace weir::sim {

struct CoDelParams {
  Duration target = Duration::ms(5);      // RFC 8289 §4.4 TARGET
  Duration interval = Duration::ms(100);  // RFC 8289 §4.3 INTERVAL
  uint32_t mtu = 1500;                    // MAXPACKET: never drop below one MTU queued
  bool ecn = false;                       // mark ECT packets CE instead of dropping them
};

class CoDel {
 public:
  explicit CoDel(CoDelParams p = {}) : p_(p) {}
  // Dequeues the next packet to send, dropping (returning to `pool`) those
  // the control law selects. Returns nullptr when the queue empties.
  Packet* dequeue(Time now, PacketFifo& q, PacketPool& pool);
  uint64_t drops() const { return drops_; }
  uint64_t marks() const { return marks_; }
  bool dropping() const { return dropping_; }

 private:
  struct Result {
    Packet* p;
    bool ok_to_drop;
  };
  Result do_dequeue(Time now, PacketFifo& q);
  // RFC 8289 §5.5: the next drop time, interval / sqrt(count) after t.
  Time control_law(Time t, uint32_t count) const;
  void drop(Packet* p, PacketPool& pool) {
    pool.put(p);
    ++drops_;
  }
  // RFC 8289 §5 (Linux codel_dequeue): with ECN on, an ECT packet the
  // control law selects is marked CE and sent instead of dropped.
  bool mark(Packet* p);

  CoDelParams p_;
  Time first_above_time_ = Time::zero();  // 0: sojourn below target
  Time drop_next_ = Time::zero();
  uint32_t count_ = 0;
  uint32_t lastcount_ = 0;
  bool dropping_ = false;
  uint64_t drops_ = 0;
  uint64_t marks_ = 0;
};

}  // namespace weir::sim
