// Protective Load Balancing (Linux net/ipv4/tcp_plb.c; Qureshi et al.,
// "PLB: Congestion Signals are Simple and Effective for Network Load
// Balancing", SIGCOMM 2022). A connection that sees congestion (the share
// of CE-marked deliveries) in `rehash_rounds` consecutive rounds moves to
// another ECMP path by drawing a new transmit hash, which changes its IPv6
// flow label (RFC 6438 §3, tcp_txhash.cc); one that goes idle after
// `idle_rehash_rounds` such rounds moves then, when no reordering can
// follow. After an RTO, whose own rehash may have just left a black-holed
// path, PLB holds off for suspend_rto_sec (up to twice that, randomised).
// Pure: the algorithm (DCTCP) feeds it rounds, and the engine does the
// rehash it asks for (CcState::plb_rehash).
#pragma once

#include <cstdint>

#include "weir/time.h"

namespace weir::cc {

// The net.ipv4.tcp_plb_* sysctls (defaults of Linux tcp_sk_init).
struct PlbParams {
  bool enabled = false;               // tcp_plb_enabled
  uint32_t idle_rehash_rounds = 3;    // tcp_plb_idle_rehash_rounds (0: never on idle)
  uint32_t rehash_rounds = 12;        // tcp_plb_rehash_rounds
  uint32_t suspend_rto_sec = 60;      // tcp_plb_suspend_rto_sec
  uint32_t cong_thresh = 128;         // tcp_plb_cong_thresh, in 1/256
};

// Linux TCP_PLB_SCALE: congestion ratios are fractions of 256.
constexpr uint32_t kPlbScaleShift = 8;

struct PlbState {
  uint32_t consec_cong_rounds = 0;
  Time pause_until = Time::zero();  // zero: no RTO constrains rehashing
};

// tcp_plb_update_state, once a round: `cong_ratio` (of 256) at or above the
// threshold extends the run of congested rounds (up to rehash_rounds), below
// it ends the run; a negative ratio (no measure this round) changes nothing.
void plb_update_state(const PlbParams& p, PlbState& s, int cong_ratio);

// tcp_plb_check_rehash: true when the connection should move now (the run
// is long enough, or long enough for an idle move with nothing in flight,
// and no RTO pause holds). The run restarts; the caller rehashes and counts.
bool plb_check_rehash(const PlbParams& p, PlbState& s, uint32_t packets_out, Time now);

// tcp_plb_update_state_upon_rto: pause rehashing for suspend_rto_sec plus a
// random part of it (`random` uniform in [0, 2^32)), and restart the run.
void plb_update_state_upon_rto(const PlbParams& p, PlbState& s, Time now, uint32_t random);

}  // namespace weir::cc
