// What a connection needs from the stack around it, as a narrow interface:
// configuration, counters, a way to put a segment on the wire, the trace
// hook and the stack-wide challenge-ACK budget. The connection never sees
// the stack's tables; the stack never sees the connection's variables.
#pragma once

#include <cstdint>
#include <span>

#include "tcp/fastopen_client.h"
#include "tcp/flow_label.h"
#include "tcp/ip_fields.h"
#include "weir/addr.h"
#include "weir/config.h"
#include "weir/counters.h"
#include "weir/netif.h"
#include "weir/route.h"
#include "weir/time.h"
#include "weir/trace.h"
#include "wire/packet.h"
#include "wire/tcp_header.h"

namespace weir::tcp {

class TcpEnv {
 public:
  virtual ~TcpEnv() = default;
  // The stack's configuration and counters are each one object for the
  // stack's lifetime: reached through the pointers it gives at construction,
  // not by virtual calls (a connection asks ~16 times per ACK).
  const StackConfig& cfg() const { return *cfg_; }
  Counters& counters() { return *counters_; }
  // Sends one segment from `t.local` to `t.remote`; checksums are filled in.
  // kDropped: the local device refused it (Linux __tcp_transmit_skb sees
  // queue_xmit return NET_XMIT_DROP); nothing left the host.
  // The payload may come in two pieces (the send ring wraps); the stack
  // copies them into the packet while it checksums them. `ip` is the
  // TOS / traffic class byte (DSCP and ECN) and TTL / hop limit.
  virtual XmitResult output(const FourTuple& t, const wire::TcpHeader& h,
                            wire::PayloadView payload, IpFields ip) = 0;
  virtual TraceSink* trace() = 0;
  // RFC 5961 §7 / Linux tcp_challenge_ack_limit: a stack-wide budget of
  // challenge ACKs per second. Returns true if one may be sent now.
  virtual bool take_global_challenge_ack(Time now) = 0;
  // The path MTU toward a destination: the link's, or a lower one learnt
  // from ICMP and not yet expired (Linux dst_mtu with route exceptions).
  virtual uint32_t path_mtu(const IpAddr& remote) const = 0;
  // The route's metrics toward a destination (advmss, initcwnd; Linux
  // dst_metric). All zero: no route sets them.
  virtual RouteMetrics route(const IpAddr& remote) const {
    (void)remote;
    return {};
  }
  // Whether the device the segments leave by takes GSO super-packets
  // (Netif::gso): the gate of TSO deferral (tso_defer.h).
  virtual bool can_gso() const { return false; }
  // RFC 7413 §4.1.3: what a SYN-ACK taught about the peer's Fast Open
  // cookie and MSS, for the stack's per-destination cache (Linux
  // tcp_fastopen_cache_set).
  virtual void fastopen_cache_set(const FourTuple& t, const fastopen::CacheUpdate& u, Time now) {
    (void)t, (void)u, (void)now;
  }
  // A Fast Open child `id` still in SYN-RECEIVED was reset by a valid RST:
  // its listener keeps the slot counted for a while (Linux
  // reqsk_fastopen_remove with reset = true).
  virtual void fastopen_child_reset(uint32_t id, Time now) { (void)id, (void)now; }
  // A Fast Open connection looks black-holed: pause active Fast Open on the
  // stack (Linux tcp_fastopen_active_disable), or it received data after a
  // pause ran out: forget the pauses.
  virtual void fastopen_active_disable(Time now) { (void)now; }
  virtual void fastopen_active_forget() {}
  // Linux inet_twsk_alloc: a timewait sock may be made while fewer than
  // tcp_max_tw_buckets exist; otherwise tcp_time_wait closes the
  // connection without TIME-WAIT (TCPTimeWaitOverflow).
  virtual bool timewait_room() const { return true; }
  // Linux net_tx_rndhash: a random non-zero transmit hash (tcp/flow_label.h)
  // from a generator of the stack's own, seeded on first use from the
  // driver's secret (StackConfig::secret) so runs repeat.
  uint32_t tx_rndhash() {
    if (!txhash_seeded_) {
      txhash_rng_ = txhash_seed(cfg_->secret);
      txhash_seeded_ = true;
    }
    return next_txhash(txhash_rng_);
  }

 protected:
  // The objects cfg() and counters() return; they must outlive the
  // environment (a stack passes its own members).
  TcpEnv(const StackConfig* cfg, Counters* counters) : cfg_(cfg), counters_(counters) {}

 private:
  const StackConfig* cfg_;
  Counters* counters_;
  uint64_t txhash_rng_ = 0;
  bool txhash_seeded_ = false;
};

// An arriving segment after IP and TCP parsing.
struct InSegment {
  const wire::TcpHeader& h;
  std::span<const uint8_t> payload;
  uint8_t tos = 0;
  // A GRO/LRO aggregate (several segments of gso_size bytes delivered as
  // one, Linux skb_shinfo(skb)->gso_size); 0: one segment as sent.
  uint16_t gso_size = 0;
  // The network and TCP headers as received (wire::TcpPacket::headers);
  // a listener with TCP_SAVE_SYN keeps a SYN's.
  std::span<const uint8_t> headers = {};
  uint32_t flow_label = 0;  // the IPv6 header's (RFC 6437); 0 for IPv4
  uint8_t ttl = 0;          // the IPv4 TTL or IPv6 hop limit (OPT_STATS' TCP_NLA_TTL)
  uint32_t len() const {  // SEG.LEN counts SYN and FIN (RFC 9293 §3.4)
    return static_cast<uint32_t>(payload.size()) + (h.has(wire::tcp_flag::SYN) ? 1 : 0) +
           (h.has(wire::tcp_flag::FIN) ? 1 : 0);
  }
};

// RFC 9293 §3.10.7.1: the reset answering `seg` where no synchronized state
// accepts it: <SEQ=SEG.ACK><CTL=RST> if ACK was set, else
// <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>. Ports are `t`'s. The caller must
// not answer an RST with one.
inline wire::TcpHeader reset_reply(const FourTuple& t, const InSegment& seg) {
  wire::TcpHeader h;
  h.src_port = t.local.port;
  h.dst_port = t.remote.port;
  if (seg.h.has(wire::tcp_flag::ACK)) {
    h.seq = seg.h.ack;
    h.flags = wire::tcp_flag::RST;
  } else {
    h.seq = Seq32(0);
    h.ack = seg.h.seq + seg.len();
    h.flags = wire::tcp_flag::RST | wire::tcp_flag::ACK;
  }
  return h;
}

}  // namespace weir::tcp
