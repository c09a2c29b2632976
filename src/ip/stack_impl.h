// The Stack's insides: the socket table, demultiplexing by 4-tuple (RFC 9293
// §3.10.7), listeners, the timer queue across connections, IP output, ICMP.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ip/pmtu_cache.h"
#include "ip/route_table.h"
#include "tcp/connection.h"
#include "tcp/listener.h"
#include "util/siphash.h"
#include "util/timer_queue.h"
#include "weir/stack.h"
#include "wire/packet.h"
#include "wire/tx_template.h"

namespace weir {

// Why the IP layer refused a datagram (Linux drop reasons), for counters.
enum class IpDrop : uint8_t { kMalformed, kBadChecksum, kNotOurs, kNoSocket, kListenOverflow, kOther };

// Linux socket_state as far as TCP uses it (SS_FREE is a freed socket here).
enum class SockState : uint8_t { kUnconnected, kConnecting, kConnected, kDisconnecting };

struct Socket {
  SocketId id = kNoSocket;
  bool v6 = false;
  bool v6only = false;     // IPV6_V6ONLY (net.ipv6.bindv6only = 0: off)
  bool app_open = true;    // the application holds the handle
  bool bound = false;
  bool bind_locked = false;  // bind() took the port: connect() does not share it (Linux tb->fastreuse >= 0)
  bool port_locked = false;  // bind() named the port: kept past CLOSED (Linux SOCK_BINDPORT_LOCK)
  bool in_demux = false;   // reachable by 4-tuple
  uint32_t listener_parent = 0;
  Endpoint local;
  TimerHandle timer;
  std::unique_ptr<tcp::Connection> conn;
  std::unique_ptr<tcp::Listener> listener;
  // The socket's cached route (Linux sk_dst_cache): the route table's
  // generation and MTU when it was looked up. A changed table leaves it in
  // use until the next transmit re-routes (dst_check on ip_queue_xmit).
  uint64_t dst_gen = 0;
  RouteMetrics dst_metrics;
  uint32_t dst_stale_segs = 0;  // segs_out when the route was found stale
  bool dst_stale_seen = false;
  // Linux sock->state (include/uapi/linux/net.h socket_state): SS_CONNECTING
  // from a connect() or MSG_FASTOPEN send that began the connection until a
  // connect() call sees it established (__inet_stream_connect: a blocking
  // connect as it returns, a non-blocking one when called again) or a
  // shutdown() finds it so (inet_shutdown); SS_CONNECTED for what accept()
  // returns (inet_accept). SS_CONNECTED stays when the connection closes
  // (RST, TIME-WAIT: tcp_done leaves sock->state alone), so connect() is
  // EISCONN and listen() EINVAL from then on; a connect() on an
  // SS_CONNECTING socket whose connection has closed reports the error and
  // makes it SS_UNCONNECTED again. SS_DISCONNECTING: shutdown() while the
  // handshake was not done; connect() and listen() are EINVAL.
  SockState ss = SockState::kUnconnected;
  bool tw_counted = false;  // counted in StackImpl::tw_count_ (its connection is a timewait sock)
};

class StackImpl final : public tcp::TcpEnv {
 public:
  StackImpl(const StackConfig& cfg, Netif& netif);

  // ---- TcpEnv (cfg() and counters(): cfg_ and counters_) ----
  XmitResult output(const FourTuple& t, const wire::TcpHeader& h, wire::PayloadView payload,
                    tcp::IpFields ip) override;
  TraceSink* trace() override { return trace_; }
  bool take_global_challenge_ack(Time now) override;
  uint32_t path_mtu(const IpAddr& remote) const override;
  RouteMetrics route(const IpAddr& remote) const override {
    return routes_.empty() ? RouteMetrics{} : routes_.lookup(remote);
  }
  bool can_gso() const override { return netif_.gso(); }
  void fastopen_cache_set(const FourTuple& t, const tcp::fastopen::CacheUpdate& u, Time now) override {
    fo_cache_.set(t.local.addr, t.remote.addr, u, now);
  }
  void fastopen_child_reset(uint32_t id, Time now) override;
  void fastopen_active_disable(Time now) override {
    if (fo_blackhole_.disable(cfg_.tcp_fastopen_blackhole_timeout_sec, now))
      counters_.inc(Counter::TcpExtTCPFastOpenBlackhole);
  }
  void fastopen_active_forget() override { fo_blackhole_.forget(); }
  // Linux inet_twsk_alloc: "refcount_read(&dr->tw_refcount) - 1 >=
  // READ_ONCE(dr->sysctl_max_tw_buckets)" fails the allocation. The
  // compare is unsigned there, so a negative sysctl never does.
  bool timewait_room() const override {
    return tw_count_ < static_cast<uint32_t>(cfg_.tcp_max_tw_buckets);
  }

  // ---- driver ----
  void input(Time now, std::span<const uint8_t> datagram, uint16_t gso_size = 0, bool tcp_checksum_valid = false);
  void advance(Time now);
  Time next_deadline() const { return timers_.next_deadline(); }
  void add_address(const IpAddr& a) { addrs_.push_back(a); }
  StackConfig& mutable_cfg() { return cfg_; }
  const Counters& counters_view() const { return counters_; }
  void set_trace(TraceSink* s) { trace_ = s; }
  void set_ready(Stack::ReadyFn fn, void* ctx) { ready_fn_ = fn; ready_ctx_ = ctx; }

  // ---- sockets ----
  Expected<SocketId, Errc> socket(bool v6);
  Errc bind(SocketId s, const Endpoint& local);
  Errc listen(Time now, SocketId s, int backlog);
  Expected<SocketId, Errc> accept(Time now, SocketId s, Endpoint* peer);
  Errc connect(Time now, SocketId s, const Endpoint& remote);
  Expected<size_t, Errc> send(Time now, SocketId s, std::span<const uint8_t> d, int flags,
                              std::span<const uint32_t> iov = {});
  Expected<ErrQueueEntry, Errc> recv_error(Time now, SocketId s);
  uint64_t error_reports(SocketId s) const;
  // RFC 7413 client (fastopen_connect.cc).
  FastOpenSend sendto_fastopen(Time now, SocketId s, std::span<const uint8_t> d, const Endpoint* to,
                               Duration wait, int flags);
  bool fastopen_deferred(SocketId s) const;
  void flush_tcp_metrics() { fo_cache_.flush(); }
  Errc set_route(const Route& r) { return routes_.set(r); }
  const tcp::fastopen::ClientCache& fastopen_cache() const { return fo_cache_; }
  Expected<size_t, Errc> recv(Time now, SocketId s, std::span<uint8_t> out, int flags);
  Expected<size_t, Errc> splice_read(Time now, SocketId s, std::span<uint8_t> out, bool nonblock);
  Errc shutdown(Time now, SocketId s, int how);
  Errc close(Time now, SocketId s);
  Errc setsockopt(Time now, SocketId s, int level, int name, std::span<const uint8_t> v);
  Errc getsockopt(SocketId s, int level, int name, std::span<uint8_t> v, size_t* len) const;
  Errc ioctl(SocketId s, unsigned long req, int* out) const;
  uint32_t poll(SocketId s) const;
  Duration sock_timeout(SocketId s, bool send) const;  // SO_SNDTIMEO / SO_RCVTIMEO
  Expected<Endpoint, Errc> local_endpoint(SocketId s) const;
  Expected<Endpoint, Errc> remote_endpoint(SocketId s) const;
  Expected<TcpInfo, Errc> tcp_info(SocketId s, Time now) const;
  size_t connection_count() const { return demux_.size(); }
  std::string proc_net_tcp(bool v6) const;  // proc_net.cc
  std::vector<TimewaitSock> timewait_socks() const;  // proc_net.cc
  Time last_now() const { return last_now_; }
  void note_now(Time now) { if (now > last_now_) last_now_ = now; }
  // The engine's clock is monotonic: a `now` earlier than one already seen
  // is taken as the latest seen (a driver's clock stepping back must not
  // make deadlines or RTT samples go negative).
  Time mono(Time now) {
    note_now(now);
    return last_now_;
  }

 private:
  bool v4_template(const IpAddr& src, const IpAddr& dst, uint8_t ttl);  // output()'s fast path applies
  void v6_template(const IpAddr& src, const IpAddr& dst);
  XmitResult transmit_built(size_t w);                      // out_buf_[0, w) to the device
  Socket* find(SocketId s);
  const Socket* find(SocketId s) const;
  // demux_.find(t)'s socket or kNoSocket, remembering the last answer: a
  // flow's segments usually arrive back to back (as output() keeps the last
  // address pair's header). Every change to demux_ goes through demux_set or
  // demux_erase, which forget it.
  SocketId demux_find(const FourTuple& t);
  void demux_set(const FourTuple& t, SocketId id) {
    demux_[t] = id;
    demux_last_ = {};
  }
  void demux_erase(const FourTuple& t) {
    demux_.erase(t);
    demux_last_ = {};
  }
  Socket* app_socket(SocketId s);  // app-visible only
  const Socket* app_socket(SocketId s) const;
  Socket& new_socket(bool v6);
  Socket& new_child(Socket& ls, const FourTuple& t, uint8_t syn_tos);
  void after_call(Socket& s);       // events, timers, readiness, reaping
  void reschedule(Socket& s);
  void notify(SocketId id);
  void reap(SocketId id);
  void sync_tw_count(Socket& s);
  Errc connect_again(Socket& s);
  void sync_path_mtu(Socket& s);    // before a call that may send
  uint32_t route_mtu(const RouteMetrics& m, const IpAddr& remote) const;
  void refresh_dst(Socket& s);      // after a call: a stale route is re-looked up once sent on

  void input_tcp(Time now, const wire::TcpPacket& p, uint16_t gso_size);
  void input_icmp(Time now, std::span<const uint8_t> datagram);
  void input_pmtu(Time now, Socket& s, uint32_t mtu, Seq32 quoted_seq);
  bool input_listener(Time now, Socket& ls, const FourTuple& t, const tcp::InSegment& seg);
  void listener_syn(Time now, Socket& ls, const FourTuple& t, const tcp::InSegment& seg);
  bool syn_backlog_reserved(const tcp::Listener& l) const;
  bool listener_cookie_ack(Time now, Socket& ls, const FourTuple& t, const tcp::InSegment& seg);
  // RFC 7413 (fastopen_listen.cc): the listener's Fast Open answer to a SYN.
  tcp::PassiveFastOpen fastopen_syn(Time now, Socket& ls, const FourTuple& t, const tcp::InSegment& syn);
  void fastopen_listen(Socket& s, int backlog);
  tcp::ActiveFastOpen fastopen_client(Time now, const Socket& s, const FourTuple& t) const;
  Expected<FourTuple, Errc> connect_tuple(Time now, Socket& s, const Endpoint& remote);
  // TIME-WAIT reuse by connect() (tw_reuse.cc, Linux tcp_twsk_unique).
  bool tw_recyclable(const Socket& tw, bool port_was_bound, Time now) const;
  void recycle_time_wait(Time now, SocketId tw, Socket& s);
  void kill_time_wait(Time now, Socket& tw);  // Linux inet_twsk_deschedule_put
  bool port_bind_locked(const Endpoint& ep) const;
  bool fastopen_queue_ok(Time now, Socket& ls);
  void send_cookie_synack(Time now, Socket& ls, const FourTuple& t, const tcp::InSegment& syn);
  void reset_no_socket(const FourTuple& t, const tcp::InSegment& seg, std::span<const uint8_t> md5_key = {});
  tcp::IpFields listener_synack_ip(const Socket& ls, const FourTuple& t, uint8_t syn_tos) const;
  // RFC 2385 (md5_input.cc): Linux tcp_inbound_hash before any state change.
  bool md5_drop(const Socket& s, const wire::TcpPacket& p);
  void md5_reset_no_socket(const FourTuple& t, const wire::TcpPacket& p, const tcp::InSegment& seg);
  std::span<const uint8_t> md5_listener_key(const Socket& ls, const IpAddr& peer) const;
  Socket* find_listener(const Endpoint& local);
  bool self_v6only(SocketId self) const;
  Errc v6only_sockopt(Socket& s, std::span<const uint8_t> v);
  Errc tcp_timestamp_opt(const Socket& s, std::span<uint8_t> v, size_t* len) const;
  bool owns(const IpAddr& a) const;
  // bind() to port 0 (Linux inet_csk_find_open_port); `reuse`: the socket
  // has SO_REUSEADDR, which keeps it to the lower half of the range first.
  Expected<uint16_t, Errc> ephemeral_port(const IpAddr& local, bool reuse);
  // The bind table (Linux's bind buckets): which sockets hold a port.
  void take_port(Socket& s, const Endpoint& ep);
  void release_port(const Socket& s);
  void put_port_on_close(Socket& s);
  const std::vector<SocketId>* port_owners(uint16_t port) const;
  // Linux __inet_hash_connect: a local port for connect(), and the
  // TIME-WAIT socket to recycle for it, if any (kNoSocket).
  Expected<std::pair<uint16_t, SocketId>, Errc> connect_port(Time now, const IpAddr& local, const Endpoint& remote);
  bool port_in_use(const Endpoint& local, bool reuse, SocketId self) const;
  std::optional<IpAddr> source_for(const IpAddr& remote) const;
  void close_listener(Time now, Socket& s);
  std::string proc_row(const Socket& s, int sl, bool v6) const;

  StackConfig cfg_;
  Netif& netif_;
  Counters counters_;
  uint32_t tw_count_ = 0;  // timewait socks (Linux tcp_death_row.tw_refcount - 1)
  TraceSink* trace_ = nullptr;
  Stack::ReadyFn ready_fn_ = nullptr;
  void* ready_ctx_ = nullptr;
  std::vector<IpAddr> addrs_;
  std::unordered_map<SocketId, std::unique_ptr<Socket>> sockets_;
  std::unordered_map<FourTuple, SocketId, FourTupleHash> demux_;
  struct DemuxEntry {
    FourTuple t;
    SocketId id = kNoSocket;
  } demux_last_;  // demux_find's last answer (kNoSocket: none)
  std::map<Endpoint, SocketId> listeners_;
  // Bound sockets by local port, so bind() and connect() look at the
  // port's holders only, not at every socket (Linux's bhash).
  std::unordered_map<uint16_t, std::vector<SocketId>> port_owners_;
  TimerQueue timers_;
  PmtuCache pmtu_cache_;  // route exceptions: learnt PMTU per destination
  RouteTable routes_;     // `ip route ... advmss/mtu/initcwnd`: per-destination metrics
  tcp::fastopen::ClientCache fo_cache_;  // RFC 7413 §4.1.3: cookies and MSS per destination
  tcp::fastopen::Blackhole fo_blackhole_;  // the stack-wide active Fast Open pause
  // RFC 7413: the Fast Open key drawn on first use when none is configured
  // (Linux tcp_fastopen_init_key_once).
  std::optional<SipKey> fastopen_random_key_;
  SocketId next_id_ = 1;
  uint16_t ip_id_ = 0;
  uint32_t port_hint_ = 0;
  // RFC 5961 §7 / Linux tcp_challenge_ack_limit: a per-second budget.
  int64_t challenge_second_ = -1;
  int challenge_left_ = 0;
  std::vector<uint8_t> out_buf_;
  // output()'s IP header for the last address pair it sent between, one
  // per family (one entry: a flow's segments usually go out back to back).
  // The IPv4 one holds the TTL (the socket's IP_TTL), so the TTL is part of
  // its key; the IPv6 one writes the hop limit per segment (key ttl 0).
  template <typename Tmpl>
  struct TxTemplateEntry {
    bool is_for(const IpAddr& s, const IpAddr& d, uint8_t t = 0) const {
      return valid && ttl == t && src == s && dst == d;
    }
    IpAddr src, dst;
    uint8_t ttl = 0;
    Tmpl tmpl;
    bool valid = false;
  };
  TxTemplateEntry<wire::TxTemplateV4> tx_tmpl_;
  TxTemplateEntry<wire::TxTemplateV6> tx_tmpl6_;
  Time last_now_;
};

}  // namespace weir
