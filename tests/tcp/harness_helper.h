// A per-state connection harness: one Stack on a capturing Netif, a scripted
// peer. inject() builds the peer's segment; expect_tx() takes the next one
// the stack sent. Sequence numbers are relative to each side's ISN, as in
// packetdrill; every step runs at an explicit virtual time.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "weir/stack.h"
#include "wire/packet.h"

namespace weir::test {

class CaptureNetif : public Netif {
 public:
  void transmit(std::span<const uint8_t> p) override { out.emplace_back(p.begin(), p.end()); }
  // While `drop_all`, the device refuses every packet (a `pfifo limit 0`
  // qdisc): nothing is captured and the stack is told.
  XmitResult try_transmit(std::span<const uint8_t> p) override {
    if (drop_all) {
      ++dropped;
      return XmitResult::kDropped;
    }
    transmit(p);
    return XmitResult::kSent;
  }
  uint32_t mtu() const override { return mtu_; }
  // Each confirmation, with the number of packets captured before it: the
  // packet it rides on is the next one.
  void confirm_neighbor(const IpAddr& dst) override { confirms.emplace_back(dst, out.size()); }
  std::vector<std::pair<IpAddr, size_t>> confirms;
  std::deque<std::vector<uint8_t>> out;
  uint32_t mtu_ = 1500;
  bool drop_all = false;
  uint64_t dropped = 0;
};

struct Tx {
  wire::IpInfo ip;
  wire::TcpHeader h;
  std::vector<uint8_t> payload;
  bool has(uint8_t f) const { return h.has(f); }
};

struct PeerOpts {
  std::optional<uint16_t> mss = 1460;
  std::optional<uint8_t> wscale = 7;
  bool sack = true;
  bool ts = true;
};

class Harness {
 public:
  explicit Harness(StackConfig cfg = {}, uint32_t mtu = 1500);

  Stack& stack() { return *stack_; }
  Time now() const { return now_; }
  // Moves time forward to `t`, firing every timer due on the way at its deadline.
  void advance_to(Time t);
  void advance(Duration d) { advance_to(now_ + d); }
  // Fires only the next timer; returns its deadline.
  Time run_next_timer();

  // ---- the scripted peer ----
  // A segment from the peer. `seq`/`ack` are relative (to the peer's ISN and
  // to ours); `win` is the raw header field.
  void inject(uint8_t flags, uint32_t seq, uint32_t ack, uint32_t payload_len = 0, uint16_t win = 65535);
  void inject_payload(uint8_t flags, uint32_t seq, uint32_t ack, std::span<const uint8_t> payload,
                      uint16_t win = 65535);
  // Raw: absolute numbers and explicit options.
  void inject_raw(const wire::TcpHeader& h, std::span<const uint8_t> payload = {});
  void inject_bytes(std::span<const uint8_t> datagram) { stack_->input(now_, datagram); }

  // ---- what the stack sent ----
  size_t pending() const { return nif_.out.size(); }
  // Next segment (fails the test if none).
  Tx expect_tx();
  void clear_tx() { nif_.out.clear(); }
  uint32_t rel_seq(const Tx& t) const { return t.h.seq - iss_; }
  uint32_t rel_ack(const Tx& t) const { return t.h.ack - peer_isn_; }

  // ---- set-up shortcuts ----
  // listen() on port 8080, the peer's SYN, our SYN-ACK, the peer's ACK, accept().
  SocketId passive_open(const PeerOpts& o = {}, uint16_t syn_win = 65535);
  // connect() to the peer, SYN, the peer's SYN-ACK, our ACK.
  SocketId active_open(const PeerOpts& o = {}, uint16_t synack_win = 65535);
  // The peer's SYN-ACK to our `syn` (whose ISN and port it learns first),
  // with window `win` and `o`'s options. Our answer is left to the caller.
  void answer_syn(const Tx& syn, const PeerOpts& o = {}, uint16_t win = 65535);
  void build_syn_options(wire::TcpOptions& opts, const PeerOpts& o);
  // A peer's SYN from `port` to the listener's port 8080, ISN `isn`,
  // window 65535 and `o`'s options, ready for inject_raw().
  wire::TcpHeader peer_syn(uint16_t port, Seq32 isn, const PeerOpts& o = {});

  // The peer's settings while scripting.
  bool peer_ts = true;
  uint32_t peer_tsval = 5000;  // advanced with now by inject()
  uint32_t last_tsval = 0;     // the stack's latest TSval, echoed by inject()
  Seq32 iss_;                  // the stack's ISN (learned from SYN / SYN-ACK)
  Seq32 peer_isn_{1000000};
  IpAddr local = IpAddr::v4(192, 168, 0, 1);
  IpAddr remote = IpAddr::v4(192, 0, 2, 1);
  uint16_t local_port = 8080;
  uint16_t remote_port = 50000;
  SocketId listener = kNoSocket;
  // The IPv6 flow label of the peer's segments (RFC 6437).
  uint32_t peer_flow_label = 0;
  uint8_t peer_ttl = 64;  // the IPv4 TTL or IPv6 hop limit of the peer's segments
  // RFC 2385: when set, inject_raw signs the peer's segments with it.
  std::vector<uint8_t> peer_md5_key;
  CaptureNetif& nif() { return nif_; }

 private:
  CaptureNetif nif_;
  std::unique_ptr<Stack> stack_;
  Time now_ = Time::zero() + Duration::s(100);
};

// A readable dump of a segment for failure messages.
std::string describe(const Tx& t);

// An int socket option value as the bytes setsockopt takes.
// The next entry of `s`'s error queue (fails the test if there is none).
inline ErrQueueEntry next_error(Harness& t, SocketId s) {
  auto e = t.stack().recv_error(t.now(), s);
  EXPECT_TRUE(e.has_value());
  return e ? *e : ErrQueueEntry{};
}

inline std::span<const uint8_t> int_opt(const int& v) {
  return std::span(reinterpret_cast<const uint8_t*>(&v), sizeof v);
}

// setsockopt / getsockopt of an int option through the stack.
inline Errc set_int(Harness& t, SocketId s, int level, int name, int v) {
  return t.stack().setsockopt(t.now(), s, level, name, int_opt(v));
}
inline int get_int(Harness& t, SocketId s, int level, int name) {
  int v = -12345;
  size_t len = sizeof v;
  EXPECT_EQ(t.stack().getsockopt(s, level, name, std::span(reinterpret_cast<uint8_t*>(&v), sizeof v), &len),
            Errc::kOk);
  return v;
}

// The application writes `n` bytes and the stack takes them all.
inline void write(Harness& t, SocketId s, size_t n) {
  std::vector<uint8_t> d(n, 1);
  ASSERT_EQ(*t.stack().send(t.now(), s, d), n);
}

// Whether /proc/net/tcp lists a TIME-WAIT entry (Linux get_timewait4_sock:
// state 06, timer 3): the tuple is still held.
inline bool time_wait_row(Harness& t) {
  return t.stack().proc_net_tcp(false).find(" 06 00000000:00000000 03:") != std::string::npos;
}

// The TIME-WAIT takeover tests' stack: connect() has one port, 40000, and
// may take a timewait tuple over (tcp_tw_reuse 1).
inline StackConfig single_port_tw_reuse() {
  StackConfig cfg;
  cfg.tcp_tw_reuse = 1;
  cfg.ip_local_port_range = {40000, 40000};
  return cfg;
}

// connect() to the harness's peer once tcp_tw_reuse_delay (1 s) has
// passed: the SYN comes from port 40000 and the takeover counts one
// TcpExtTWRecycled (tcp_twsk_unique). Returns the SYN; `s` the socket.
inline Tx connect_over_time_wait(Harness& t, SocketId* s) {
  t.advance(Duration::ms(1001));
  *s = *t.stack().socket();
  EXPECT_EQ(t.stack().connect(t.now(), *s, Endpoint{t.remote, t.remote_port}), Errc::kInProgress);
  Tx syn = t.expect_tx();
  EXPECT_TRUE(syn.has(wire::tcp_flag::SYN));
  EXPECT_EQ(syn.h.src_port, 40000);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTWRecycled), 1u);
  return syn;
}

}  // namespace weir::test
