// Linux's TSO deferral (net/ipv4/tcp_output.c tcp_tso_should_defer, in the
// form of "tcp: fix tcp_tso_should_defer() vs large RTT", 2025): inside one
// tcp_write_xmit pass, a multi-segment skb that only partly fits the
// windows waits for the ACK due within min(srtt/2, 1 ms) instead of leaving
// as a small burst. Besides the burst sizes it keeps in flight below cwnd
// at an ACK, so tcp_new_space may grow the send buffer
// (tcp_should_expand_sndbuf; gtests notsent-lowat-default.pkt: POLLOUT at
// the ACK of 17001).
//
// Where it applies. tcp_write_xmit asks only for an skb of several
// segments (tcp_init_tso_segs > 1), never for tcp_push_one, and only after
// tcp_cwnd_test and tcp_snd_wnd_test passed. weir gates it, in addition, on
// a device that says it takes GSO super-packets (Netif::gso: the
// packetdrill runner's tun0 unless `ethtool -K tun0 tso off gso off`); the
// simulator's links and the memory pipe have none, and the TUN driver does
// not advertise its vnet super-packets yet (link/tun.h).
// That gate is weir's, not Linux's: since 4.17 ("tcp: switch to GSO being
// always on", 0a6b2a1dc2a2) sk_setup_caps gives every TCP socket
// NETIF_F_GSO and tcp_xmit_size_goal no longer asks sk_can_gso, so Linux
// builds multi-segment skbs, and defers, on any device (only sk_gso_disabled,
// MD5/AO or an xfrm route with header_len, turns it off). The gate keeps the
// lab and simulator as they were validated (see docs/conformance.md,
// notsent_lowat).
#pragma once

#include <cstdint>

#include "weir/time.h"

namespace weir::tcp {

// What tcp_tso_should_defer reads, for the skb at the send head.
struct TsoDeferInput {
  bool in_recovery = false;  // icsk_ca_state >= TCP_CA_Recovery (Recovery or Loss)
  // tcp_clock_cache - tcp_wstamp_ns: time since the last departure stamp;
  // negative while paced packets wait for their EDT slot.
  Duration since_last_send;
  uint32_t cwnd = 0;          // packets; > in_flight (tcp_cwnd_test passed)
  uint32_t in_flight = 0;     // tcp_packets_in_flight
  uint32_t mss = 0;           // mss_cache
  uint32_t snd_wnd = 0;       // the peer's window
  uint64_t send_win = 0;      // tcp_wnd_end - the skb's seq
  uint32_t skb_len = 0;       // more than one mss (tcp_skb_pcount > 1)
  bool skb_is_tail = true;    // the write queue's last skb (more data may join it)
  bool skb_closed = false;    // MSG_EOR, or the FIN rides on it: it gets no more data
  uint32_t max_segs = 0;      // tcp_tso_segs: a full-sized TSO burst
  int win_divisor = 3;        // sysctl tcp_tso_win_divisor
  bool have_head = false;     // the retransmit queue is not empty
  Duration head_age;          // now - its head's transmit stamp (head->tstamp)
  Duration srtt;
};

// The answer, with why a deferral waits (tcp_write_xmit's is_cwnd_limited
// and is_rwnd_limited; the third kind is application-limited).
enum class TsoDefer : uint8_t { kSendNow, kCwndLimited, kRwndLimited, kAppLimited };

// Linux tcp_tso_should_defer.
TsoDefer tso_should_defer(const TsoDeferInput& in);

}  // namespace weir::tcp
