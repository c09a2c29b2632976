// Shared bits of the hostile-peer tests (issue 9): every test asserts a bound
// and records what it measured, so the numbers in docs/reliability.md come
// from a run (`test_adversarial` prints "[measured] name = value").
#pragma once

#include <cstdint>
#include <string>

#include "tcp/harness_helper.h"
#include "weir/stack.h"

namespace weir::test {

// Prints and records (gtest XML property) one measured value.
void measured(const std::string& name, double value);

// The state an invalid segment must not change (the advertised window is
// left out: every ACK sent recomputes it, Linux tcp_select_window).
struct ConnSnapshot {
  uint8_t state = 0;
  uint32_t snd_cwnd = 0, snd_ssthresh = 0, unacked = 0, sacked = 0, lost = 0, retrans = 0, snd_wnd = 0;
  uint64_t bytes_acked = 0, bytes_received = 0;
  uint32_t snd_wscale = 0, options = 0, snd_mss = 0;
  bool operator==(const ConnSnapshot&) const = default;
};
ConnSnapshot snapshot(const Stack& st, SocketId s);
std::string describe(const ConnSnapshot& c);

// Reads everything readable from `s` and appends it to `out`.
void drain(Stack& st, Time now, SocketId s, std::vector<uint8_t>& out);

uint64_t counter(const Stack& st, Counter c);

}  // namespace weir::test
