// Two weir stacks joined by the MemoryPipe, with a deterministic driver and
// byte-stream checksums, for end-to-end tests.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <span>
#include <vector>

#include "link/memory_pipe.h"
#include "weir/stack.h"

namespace weir::test {

struct PairOptions {
  StackConfig a_cfg;
  StackConfig b_cfg;
  Duration delay = Duration::ms(5);
  uint32_t mtu = 1500;
  size_t queue_limit = 4096;
  double loss = 0.0;       // per packet, either direction
  double duplicate = 0.0;  // per packet
  double reorder = 0.0;    // per packet: held back and sent after the next one
  uint64_t seed = 1;
  // A bottleneck toward B (bits/s of IP bytes; 0: none): packets reaching B
  // are serialized at this rate after the pipe's delay (FIFO, no drops).
  uint64_t rate_bps_to_b = 0;
};

class Pair {
 public:
  explicit Pair(const PairOptions& o);
  Stack& a() { return *a_; }
  Stack& b() { return *b_; }
  Time now() const { return now_; }
  // Runs until `until` or idle.
  void run_until(Time until);
  // Runs until pred() is true or `limit` passes; returns pred().
  bool run_while(const std::function<bool()>& busy, Time limit);
  // Opens a connection a -> b; returns {client on a, server on b}.
  std::pair<SocketId, SocketId> connect(uint16_t port = 80);
  link::MemoryPipe& pipe() { return pipe_; }
  uint64_t dropped = 0;
  uint64_t duplicated = 0;
  uint64_t reordered = 0;

 private:
  void deliver(link::Side to, std::span<const uint8_t> bytes);
  PairOptions o_;
  link::MemoryPipe pipe_;
  std::unique_ptr<Stack> a_;
  std::unique_ptr<Stack> b_;
  Time now_;
  std::mt19937_64 rng_;
  std::vector<uint8_t> held_[2];
  bool holding_[2] = {false, false};
  std::deque<std::pair<Time, std::vector<uint8_t>>> shaped_;  // waiting at the A->B bottleneck
  Time link_free_;
  void release_shaped();
};

// FNV-1a over a byte stream, fed in pieces.
struct StreamSum {
  uint64_t h = 1469598103934665603ull;
  uint64_t bytes = 0;
  void add(std::span<const uint8_t> d) {
    for (uint8_t x : d) h = (h ^ x) * 1099511628211ull;
    bytes += d.size();
  }
};

// Deterministic pseudo-random payload byte at stream offset `i`.
inline uint8_t pattern_byte(uint64_t i) { return static_cast<uint8_t>((i * 2654435761u) >> 13); }

}  // namespace weir::test
