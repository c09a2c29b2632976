// Keyed hashes for values an off-path attacker must not predict:
// initial sequence numbers (RFC 6528), timestamp offsets, ephemeral port
// offsets (RFC 6056 §3.3.4, algorithm 4 as Linux) and SYN cookies (RFC 4987).
// All keyed by StackConfig::secret, which the driver supplies, so runs replay.
#pragma once

#include <cstdint>
#include <optional>

#include "weir/addr.h"
#include "weir/seq.h"
#include "weir/time.h"

namespace weir::tcp {

// SipHash-2-4 over a 4-tuple (and an extra word), keyed by `secret`.
uint64_t tuple_hash(uint64_t secret, const FourTuple& t, uint64_t extra = 0);

// RFC 6528 §3: ISN = M + F(localip, localport, remoteip, remoteport, secretkey),
// M a clock term. Linux's clock ticks every 64 ns (ktime_get_real_ns() >> 6).
Seq32 initial_sequence(uint64_t secret, const FourTuple& t, Time now);

// Linux (secure_tcp_ts_off): a per-connection TSval offset, so TSvals do not
// reveal uptime and differ between connections.
uint32_t timestamp_offset(uint64_t secret, const FourTuple& t);

// RFC 6056 §3.3.4: the starting offset into the ephemeral range for a
// (local address, remote endpoint) pair.
uint32_t port_offset(uint64_t secret, const IpAddr& local, const Endpoint& remote);

// What a SYN cookie carries (Linux's syncookie encoding).
struct CookieOptions {
  uint16_t mss = 536;
  bool ts_ok = false;
  bool sack_ok = false;
  bool wscale_ok = false;
  uint8_t snd_wscale = 0;  // the peer's shift
  bool ecn_ok = false;
};

// Linux (net/ipv4/syncookies.c): the MSS is one of four table values, its
// index in the two low bits of the cookie's count field; the cookie is
// hash + (count << 24) + index, with a one-minute counter.
Seq32 make_cookie_isn(uint64_t secret, const FourTuple& t, Seq32 peer_isn, Time now,
                      uint16_t mss);
// Checks `cookie` (our ISN, ack - 1); returns the MSS encoded or nothing.
std::optional<uint16_t> check_cookie(uint64_t secret, const FourTuple& t, Seq32 peer_isn,
                                     Seq32 cookie, Time now);
// Linux (cookie_init_timestamp): the options that do not fit in the ISN go
// in the low 6 bits of the SYN-ACK's TSval (wscale 4 bits, sack 1, ecn 1).
uint32_t cookie_tsval(uint32_t tsval, const CookieOptions& o);
CookieOptions cookie_decode_tsecr(uint32_t tsecr, uint16_t mss);

}  // namespace weir::tcp
