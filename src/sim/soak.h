// The randomized integrity soak (issue 9): one seed picks a hostile but
// legal path (loss 0-20 % Bernoulli or in bursts, reordering, duplication,
// corruption, jitter, rate changes), a set of negotiated options (SACK,
// timestamps, window scaling each on or off) and application behaviour
// (random read/write sizes and pauses); two weir hosts then move >= 1 MB each
// way over it. A run passes when both streams arrive byte-exact and end with
// a FIN, no socket errors, and the transfer finishes within the time bound
// derived from the link (soak_bound(), documented in docs/reliability.md).
// The scoreboard invariant checker runs after every ACK in builds without
// NDEBUG or with WEIR_SCOREBOARD_CHECKS (it aborts on a broken invariant).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/link.h"
#include "weir/time.h"
#include "weir/trace.h"

namespace weir::sim {

struct SoakCase {
  uint64_t seed = 1;
  uint64_t bytes_ab = 0;  // client -> server
  uint64_t bytes_ba = 0;  // server -> client
  LinkConfig fwd;         // client -> server (rate_bps: the high rate)
  LinkConfig rev;
  uint64_t rate_lo_bps = 0;     // each direction alternates between rate_lo and fwd/rev.rate_bps
  Duration rate_period;         // mean time between rate changes
  bool sack = true;
  bool timestamps = true;
  bool wscale = true;
  uint32_t write_max = 65536;   // app write sizes: uniform in [1, write_max]
  uint32_t read_max = 65536;    // app read sizes: uniform in [1, read_max]
  double pause_chance = 0;      // per app wake-up
  Duration pause_max;           // a pause lasts uniform [0, pause_max]
  uint32_t max_pauses = 0;      // per app
  Duration bound;               // soak_bound(*this)
  // Test-only (never drawn by make_soak_case): from this time on, both
  // directions drop every packet, a connection that stalls for good. The
  // soak must report it as "not finished" once the bound runs out.
  std::optional<Duration> blackhole_after;
  // One line: what the seed chose.
  std::string describe() const;
};

// Everything a seed decides. Pure function of the seed.
SoakCase make_soak_case(uint64_t seed);

// The time a run may take, from its link:
//   bound = 10 s + P + 4 * (S + T)
// S: serialisation of both streams at the low rate with 10 % header overhead;
// T: PFTK time for the N data segments of the larger stream (MSS 1448) with
//    RTT = 2 * (delay + jitter): a fast-retransmit term at the rate of loss
//    indications (loss + corruption, and without SACK also reordering by
//    hold or jitter), and N p min(1, 3 sqrt(3p/8)) timeout episodes from
//    RTO 1 s, doubling to 120 s while the repeat-loss chance q strikes,
//    chained as Linux keeps an inflated RTO from one episode to the next
//    (soak.cc rto_carry; docs/reliability.md);
// P: the longest total application pause.
Duration soak_bound(const SoakCase& c);

struct SoakResult {
  uint64_t seed = 0;
  bool ok = false;
  std::string error;        // empty when ok
  Duration elapsed;         // virtual time from connect to both FINs read
  Duration bound;
  uint64_t packets = 0;     // packets offered to links
  uint64_t events = 0;
  uint64_t retrans = 0;     // both senders' tcpi_total_retrans
};

// Diagnostics: when set, each host's trace samples (every ACK, send,
// retransmission, RTO, ...) go to its sink; a replayed seed can be followed
// ACK by ACK (srtt, cwnd, snd.una) without touching the engine.
struct SoakTrace {
  TraceSink* client = nullptr;
  TraceSink* server = nullptr;
};

SoakResult run_soak(const SoakCase& c, const SoakTrace& trace = {});

}  // namespace weir::sim
