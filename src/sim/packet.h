// Packets in flight between simulated hosts: whole IP datagrams plus a little
// metadata the monitors fill in when the packet leaves its host (so that the
// far end need not parse it again). Buffers are pooled: a run allocates
// packet storage only while the number of packets in flight grows.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "weir/time.h"

namespace weir::sim {

struct PacketMeta {
  int32_t flow = -1;        // index of the flow it belongs to, -1 if none
  bool data_to_receiver = false;  // carries payload in the flow's data direction
  bool retransmission = false;    // sequence range sent before (sender's view)
  bool corrupted = false;         // a link flipped a bit in it
  bool duplicate = false;         // a link duplicated it
  uint32_t seq = 0;         // raw sequence number of the first payload byte
  uint32_t len = 0;         // payload bytes
  Time sent;                // when it left its host
};

struct Packet {
  std::vector<uint8_t> bytes;
  PacketMeta meta;
  uint64_t uid = 0;   // unique per run, in creation order
  Time enqueued;      // when it entered the current queue (CoDel sojourn)
  Packet* next = nullptr;  // intrusive link for FIFO queues
  std::span<const uint8_t> view() const { return bytes; }
};

class PacketPool {
 public:
  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  Packet* get() {
    Packet* p;
    if (free_.empty()) {
      all_.push_back(std::make_unique<Packet>());
      p = all_.back().get();
    } else {
      p = free_.back();
      free_.pop_back();
    }
    p->meta = PacketMeta{};
    p->uid = next_uid_++;
    p->next = nullptr;
    return p;
  }
  Packet* make(std::span<const uint8_t> bytes) {
    Packet* p = get();
    p->bytes.assign(bytes.begin(), bytes.end());
    return p;
  }
  Packet* clone(const Packet& src) {
    Packet* p = make(src.bytes);
    p->meta = src.meta;
    return p;
  }
  void put(Packet* p) { free_.push_back(p); }
  size_t allocated() const { return all_.size(); }
  size_t in_use() const { return all_.size() - free_.size(); }

 private:
  std::vector<std::unique_ptr<Packet>> all_;
  std::vector<Packet*> free_;
  uint64_t next_uid_ = 1;
};

// Where a link delivers: a host or a router.
class Node {
 public:
  // Takes ownership of `p` (return it to the pool when done).
  virtual void receive(Time now, Packet* p) = 0;

 protected:
  ~Node() = default;
};

// A FIFO of packets threaded through Packet::next (no allocation).
class PacketFifo {
 public:
  bool empty() const { return head_ == nullptr; }
  size_t size() const { return n_; }
  uint64_t bytes() const { return bytes_; }
  Packet* front() const { return head_; }
  void push(Packet* p) {
    p->next = nullptr;
    if (tail_) tail_->next = p; else head_ = p;
    tail_ = p;
    ++n_;
    bytes_ += p->bytes.size();
  }
  Packet* pop() {
    Packet* p = head_;
    if (!p) return nullptr;
    head_ = p->next;
    if (!head_) tail_ = nullptr;
    p->next = nullptr;
    --n_;
    bytes_ -= p->bytes.size();
    return p;
  }

 private:
  Packet* head_ = nullptr;
  Packet* tail_ = nullptr;
  size_t n_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace weir::sim
