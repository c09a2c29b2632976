// A receiver under test with a manual clock: handshake done, helpers to
// deliver segments by offset from IRS+1 and to "send" ACKs the way the
// connection does (select_window, sack_blocks, on_ack_sent).
#pragma once

#include <cstdint>
#include <vector>

#include "tcp/receiver.h"
#include "weir/counters.h"
#include "weir/seq.h"
#include "weir/time.h"

namespace weir::tcp::testing {

// Linux's defaults (net.ipv4.tcp_rmem = 4096 131072 6291456).
inline ReceiverConfig linux_defaults() { return ReceiverConfig{}; }

// packetdrill's profile: tcp_rmem = 4096 540000 15728640.
inline ReceiverConfig packetdrill_profile() {
  ReceiverConfig c;
  c.tcp_rmem = {4096, 540000, 15728640};
  return c;
}

struct RigOptions {
  uint32_t advmss = 1460;
  uint32_t peer_mss = 1460;
  bool wscale_ok = true;
  bool sack_ok = true;
  bool timestamps = false;
  Seq32 irs{1000};
  uint32_t rcvbuf = 0;  // SO_RCVBUF before the handshake; 0: none
};

struct Rig {
  Counters c;
  Receiver r;
  ManualClock clock;
  Duration rto = Duration::ms(200);
  Seq32 irs;
  uint64_t acks_sent = 0;

  explicit Rig(const ReceiverConfig& cfg, const RigOptions& o = {}) : r(cfg), irs(o.irs) {
    if (o.rcvbuf) r.set_rcvbuf(o.rcvbuf);
    r.select_initial_window(o.advmss, o.wscale_ok);
    RcvNegotiated n;
    n.irs = o.irs;
    n.wscale_ok = o.wscale_ok;
    n.advmss = o.advmss;
    n.peer_mss = o.peer_mss;
    n.sack_ok = o.sack_ok;
    n.timestamps = o.timestamps;
    r.on_syn(clock.now(), n);
  }

  Time now() const { return clock.now(); }
  void advance(Duration d) { clock.advance(d); }
  Seq32 seq(uint32_t off) const { return irs + 1 + off; }

  // Payload bytes are a function of their sequence offset, so reads can be
  // checked for order and integrity.
  static uint8_t byte_at(uint32_t off) { return static_cast<uint8_t>((off * 7 + 3) & 0xff); }

  DataOutcome data(uint32_t off, uint32_t len, bool fin = false) {
    std::vector<uint8_t> p(len);
    for (uint32_t i = 0; i < len; ++i) p[i] = byte_at(off + i);
    DataSegment s;
    s.seq = seq(off);
    s.payload = p;
    s.fin = fin;
    return r.on_data(clock.now(), s, rto, c);
  }

  // What the connection does for every outgoing ACK; returns the header field.
  uint16_t send_ack() {
    const uint16_t w = r.select_window(c);
    r.on_ack_sent(clock.now());
    ++acks_sent;
    return w;
  }

  // Data arrives; the ACK goes out at once if asked. Returns whether it did.
  bool deliver(uint32_t off, uint32_t len, bool fin = false) {
    const DataOutcome o = data(off, len, fin);
    if (o.ack_now) send_ack();
    return o.ack_now;
  }

  std::vector<SeqRange> sacks(size_t max = 4) const {
    std::vector<SeqRange> v(4);
    v.resize(r.sack_blocks(v, max));
    return v;
  }

  size_t read(size_t n, bool* update = nullptr) {
    std::vector<uint8_t> buf(n);
    const ReadResult rr = r.read(clock.now(), buf, false, c);
    if (update) *update = rr.window_update;
    return rr.bytes;
  }

  SeqRange range(uint32_t from, uint32_t to) const { return {seq(from), seq(to)}; }
};

}  // namespace weir::tcp::testing
