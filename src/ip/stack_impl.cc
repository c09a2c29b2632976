// The socket table, timers across connections, and the socket calls.
#include "ip/stack_impl.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "tcp/isn.h"

namespace weir {

// The base keeps pointers to cfg_ and counters_; neither is read before
// it is constructed.
StackImpl::StackImpl(const StackConfig& cfg, Netif& netif)
    : TcpEnv(&cfg_, &counters_), cfg_(cfg), netif_(netif) {}

// Linux dst_mtu: the route's `mtu N` (RTAX_MTU; weir never sends above its
// device's MTU, so it caps the value) or the device's, lowered by a learnt
// PMTU exception unless the route locks its MTU (`mtu lock N`: Linux
// __ip_rt_update_pmtu and rt6_update_exception leave a locked MTU alone).
uint32_t StackImpl::route_mtu(const RouteMetrics& m, const IpAddr& remote) const {
  const uint32_t dev = netif_.mtu();
  const uint32_t mtu = m.mtu ? std::min(m.mtu, dev) : dev;
  if (m.mtu_locked) return mtu;
  // The engine's own clock (the latest `now` seen) ages the exceptions.
  const auto learnt = pmtu_cache_.lookup(remote, last_now_);
  return learnt ? std::min(*learnt, mtu) : mtu;
}

uint32_t StackImpl::path_mtu(const IpAddr& remote) const { return route_mtu(route(remote), remote); }

// Linux tcp_current_mss checks the route's MTU on every send; weir checks
// before each call into a connection that may send. Cheap when nothing was
// learnt, no route is set and the connection runs at the link MTU. After
// `ip route change` the socket's cached route is obsolete but still read
// (tcp_current_mss uses __sk_dst_get, unchecked) until a transmit re-routes
// (refresh_dst).
void StackImpl::sync_path_mtu(Socket& s) {
  if (!s.conn) return;
  const bool stale = s.dst_gen != routes_.generation();
  if (stale && !s.dst_stale_seen) {
    s.dst_stale_seen = true;
    s.dst_stale_segs = s.conn->segs_out();
  }
  if (pmtu_cache_.empty() && routes_.empty() && s.conn->pmtu() == netif_.mtu()) return;
  const IpAddr& remote = s.conn->tuple().remote.addr;
  s.conn->sync_pmtu(route_mtu(stale ? s.dst_metrics : route(remote), remote));
}

// Linux ip_queue_xmit / inet6_csk_xmit: __sk_dst_check on transmit finds an
// obsolete route and looks it up again. A socket that sent since its route
// went stale takes the new one; otherwise it keeps a copy of its route's
// metrics for when it does go stale.
void StackImpl::refresh_dst(Socket& s) {
  if (!s.conn || routes_.empty()) return;
  if (s.dst_gen != routes_.generation()) {
    if (!s.dst_stale_seen) {
      s.dst_stale_seen = true;
      s.dst_stale_segs = s.conn->segs_out();
    }
    if (s.conn->segs_out() == s.dst_stale_segs) return;
    s.dst_gen = routes_.generation();
    s.dst_stale_seen = false;
  }
  s.dst_metrics = route(s.conn->tuple().remote.addr);
}

bool StackImpl::take_global_challenge_ack(Time now) {
  // Linux tcp_challenge_ack_limit (1000/s by default), counted per second.
  const int64_t sec = now.ns() / Duration::s(1).ns();
  if (sec != challenge_second_) {
    challenge_second_ = sec;
    challenge_left_ = cfg_.tcp_challenge_ack_limit;
  }
  if (challenge_left_ <= 0) return false;
  --challenge_left_;
  return true;
}

XmitResult StackImpl::output(const FourTuple& t, const wire::TcpHeader& h, wire::PayloadView payload,
                             tcp::IpFields f) {
  // Without an RFC 2385 signature: the prebuilt header for the pair (and,
  // for IPv4, the TTL; wire/tx_template.h), the same bytes as the general
  // path below. A pair that is not IPv4 on both sides goes out as IPv6
  // (build_tcp_packet_pieces).
  const IpAddr& src = t.local.addr;
  const IpAddr& dst = t.remote.addr;
  // Linux ip_finish_output2 / ip6_finish_output2: sock_confirm_neigh before
  // the packet goes to its neighbour.
  if (f.confirm_neighbor) netif_.confirm_neighbor(dst);
  if (h.md5_key.empty() && (tx_tmpl_.is_for(src, dst, f.ttl) || v4_template(src, dst, f.ttl))) {
    const size_t n = wire::kIpv4HeaderMin + wire::kTcpHeaderMin + wire::kTcpOptionsMax + payload.size();
    if (out_buf_.size() < n) out_buf_.resize(n);
    const size_t w = tx_tmpl_.tmpl.build(h, f.tos, ip_id_++, payload, std::span(out_buf_.data(), n));
    return transmit_built(w);
  }
  // Room for the largest headers, so that the TCP header and its options are
  // written in one pass (build_tcp_packet_pieces) rather than measured first.
  const size_t n = wire::kIpv6Header + wire::kTcpHeaderMin + wire::kTcpOptionsMax + payload.size();
  if (out_buf_.size() < n) out_buf_.resize(n);
  if (h.md5_key.empty()) {
    if (!tx_tmpl6_.is_for(src, dst)) v6_template(src, dst);
    ++ip_id_;  // as the general path: every datagram takes an id
    const uint32_t flowinfo = uint32_t{f.tos} << 20 | f.flow_label;  // RFC 8200 §3: Traffic Class, Flow Label
    return transmit_built(tx_tmpl6_.tmpl.build(h, flowinfo, f.ttl, payload, std::span(out_buf_.data(), n)));
  }
  wire::IpInfo ip;
  ip.src = t.local.addr;
  ip.dst = t.remote.addr;
  ip.version = (ip.src.is_v4() && ip.dst.is_v4()) ? 4 : 6;
  ip.proto = wire::kProtoTcp;
  ip.ttl = f.ttl;  // RFC 791 Time to Live / RFC 8200 Hop Limit
  ip.tos = f.tos;  // RFC 2474 DS field with RFC 3168's ECN field
  ip.flow_label = f.flow_label;  // RFC 6437, IPv6 only (tcp/flow_label.h)
  ip.id = ip_id_++;
  ip.df = true;  // RFC 1191: path MTU discovery
  const size_t w = wire::build_tcp_packet_pieces(ip, h, payload, std::span(out_buf_.data(), n));
  return transmit_built(w);
}

// Makes the template for src -> dst with `ttl` when the pair or TTL
// changed; false when either address is not IPv4 (DF as output() sets it).
bool StackImpl::v4_template(const IpAddr& src, const IpAddr& dst, uint8_t ttl) {
  if (!src.is_v4() || !dst.is_v4()) return false;
  tx_tmpl_.src = src;
  tx_tmpl_.dst = dst;
  tx_tmpl_.ttl = ttl;
  tx_tmpl_.tmpl = wire::TxTemplateV4(src.v4_host_order(), dst.v4_host_order(), ttl, true);
  tx_tmpl_.valid = true;
  return true;
}

// The IPv6 template for src -> dst (the flow label is each segment's).
void StackImpl::v6_template(const IpAddr& src, const IpAddr& dst) {
  tx_tmpl6_.src = src;
  tx_tmpl6_.dst = dst;
  tx_tmpl6_.tmpl = wire::TxTemplateV6(src, dst);
  tx_tmpl6_.valid = true;
}

// The `w` bytes built in out_buf_ to the device.
XmitResult StackImpl::transmit_built(size_t w) {
  counters_.inc(Counter::IpOutRequests);
  // Linux ip_queue_xmit hands the packet to the qdisc and passes its verdict
  // up (NET_XMIT_DROP > 0); the caller decides what a local drop means.
  const XmitResult r = netif_.try_transmit(std::span<const uint8_t>(out_buf_.data(), w));
  if (r == XmitResult::kDropped) counters_.inc(Counter::WeirOutDeviceDrops);
  return r;
}

Socket* StackImpl::find(SocketId s) {
  auto it = sockets_.find(s);
  return it == sockets_.end() ? nullptr : it->second.get();
}
const Socket* StackImpl::find(SocketId s) const {
  auto it = sockets_.find(s);
  return it == sockets_.end() ? nullptr : it->second.get();
}
Socket* StackImpl::app_socket(SocketId s) {
  Socket* p = find(s);
  return (p && p->app_open) ? p : nullptr;
}
const Socket* StackImpl::app_socket(SocketId s) const {
  const Socket* p = find(s);
  return (p && p->app_open) ? p : nullptr;
}

SocketId StackImpl::demux_find(const FourTuple& t) {
  if (demux_last_.id != kNoSocket && demux_last_.t == t) return demux_last_.id;
  const auto it = demux_.find(t);
  if (it == demux_.end()) return kNoSocket;
  demux_last_ = {t, it->second};
  return it->second;
}

Socket& StackImpl::new_socket(bool v6) {
  auto s = std::make_unique<Socket>();
  s->id = next_id_++;
  s->v6 = v6;
  s->dst_gen = routes_.generation();  // routes set before the socket are current for it
  Socket& ref = *s;
  sockets_.emplace(ref.id, std::move(s));
  return ref;
}

void StackImpl::reschedule(Socket& s) {
  const Time d = s.conn ? s.conn->next_deadline() : Time::never();
  timers_.set(s.timer, d, s.id);
}

void StackImpl::notify(SocketId id) {
  if (!ready_fn_) return;
  const Socket* s = find(id);
  if (!s || !s->app_open) return;
  ready_fn_(ready_ctx_, id, poll(id));
}

void StackImpl::reap(SocketId id) {
  Socket* s = find(id);
  if (!s) return;
  // Linux tcp_v4_destroy_sock -> tcp_fastopen_active_disable_ofo_check.
  if (s->conn) {
    using Check = tcp::Connection::FastOpenCloseCheck;
    const Check k = s->conn->fastopen_close_check();
    if (k == Check::kDisable) fastopen_active_disable(last_now_);
    if (k == Check::kForget) fastopen_active_forget();
  }
  if (s->in_demux && s->conn) demux_erase(s->conn->tuple());
  if (s->tw_counted) --tw_count_;
  release_port(*s);
  timers_.cancel(s->timer);
  sockets_.erase(id);
}

// After any call into a connection: hand completed passive opens to their
// listener, keep the timer queue current, report readiness, and free what
// reached CLOSED with nobody holding it.
void StackImpl::after_call(Socket& s) {
  const SocketId id = s.id;
  sync_tw_count(s);
  refresh_dst(s);
  const uint8_t ev = s.conn ? s.conn->take_events() : 0;
  if (ev & tcp::conn_event::kEstablished) {
    Socket* ls = find(s.listener_parent);
    if (ls && ls->listener) {
      ls->listener->on_established(id);
      notify(ls->id);
    }
  }
  if (ev & tcp::conn_event::kClosed) {
    if (s.in_demux && s.conn) {
      demux_erase(s.conn->tuple());
      s.in_demux = false;
    }
    put_port_on_close(s);
    Socket* ls = find(s.listener_parent);
    // Linux: a child that completed its handshake stays in the accept queue
    // when it is reset or closed; accept() returns it and its calls report
    // what happened (inet_csk_accept takes it regardless of state).
    if (ls && ls->listener && !s.app_open && !ls->listener->in_accept_queue(id)) {
      ls->listener->forget(id);
      s.listener_parent = 0;
    }
    if (!s.app_open && s.listener_parent == 0) {
      reap(id);
      return;
    }
  }
  reschedule(s);
  if (ev & (tcp::conn_event::kReadiness | tcp::conn_event::kClosed)) notify(id);
}

// __inet_stream_connect on an SS_CONNECTING socket (the call's "err =
// -EALREADY" branch, then its common tail): a TCP_FASTOPEN_CONNECT socket
// whose SYN waits for data is EISCONN (defer_connect, not a sendmsg); in
// SYN-SENT/SYN-RECEIVED, EALREADY (a blocking caller waits and calls again);
// CLOSE, the connection failed or was reset meanwhile: "sock_error(sk) ? :
// -ECONNABORTED", SS_UNCONNECTED and tcp_disconnect, so the next connect()
// starts afresh; any other state, SS_CONNECTED and 0.
Errc StackImpl::connect_again(Socket& s) {
  if (s.conn->fastopen_deferred()) return Errc::kIsConn;
  switch (s.conn->state()) {
    case tcp::State::kSynSent:
    case tcp::State::kSynReceived: return Errc::kAlready;
    case tcp::State::kClosed:
    case tcp::State::kTimeWait: {  // a holder's TIME-WAIT is CLOSE to it
      const Errc e = s.conn->take_error();
      s.ss = SockState::kUnconnected;
      return e == Errc::kOk ? Errc::kConnAborted : e;
    }
    default: s.ss = SockState::kConnected; return Errc::kOk;
  }
}

// The count tcp_max_tw_buckets bounds (Linux tw_refcount, taken in
// inet_twsk_alloc, given back in inet_twsk_free): every connection that
// became or stopped being a timewait sock did so within a call, so it is
// settled after each one (and in reap, for one that goes with its tuple).
void StackImpl::sync_tw_count(Socket& s) {
  const bool tw = s.conn && s.conn->timewait_sock();
  if (tw == s.tw_counted) return;
  s.tw_counted = tw;
  if (tw) ++tw_count_;
  else --tw_count_;
}

void StackImpl::advance(Time now) {
  pmtu_cache_.expire(now);  // O(1) unless something expired: lets sync_path_mtu skip lookups
  while (auto e = timers_.pop_expired(now)) {
    Socket* s = find(static_cast<SocketId>(e->tag));
    if (!s || !s->conn) continue;
    s->timer = TimerHandle{};
    sync_path_mtu(*s);
    s->conn->on_timers(now);
    after_call(*s);
  }
}

// ---- socket calls ----

Expected<SocketId, Errc> StackImpl::socket(bool v6) {
  Socket& s = new_socket(v6);
  // Linux inet_create / inet6_create: "sk->sk_txrehash =
  // READ_ONCE(net->core.sysctl_txrehash)", the socket's from then on.
  tcp::SockOpts o;
  o.txrehash = static_cast<uint8_t>(cfg_.txrehash);
  s.conn = std::make_unique<tcp::Connection>(*this, s.id, o);
  return s.id;
}

bool StackImpl::owns(const IpAddr& a) const {
  if (addrs_.empty()) return true;  // no addresses configured: accept any (tests, tools)
  return std::find(addrs_.begin(), addrs_.end(), a) != addrs_.end();
}

std::optional<IpAddr> StackImpl::source_for(const IpAddr& remote) const {
  for (const IpAddr& a : addrs_)
    if (a.is_v4() == remote.is_v4()) return a;
  return std::nullopt;
}

bool StackImpl::self_v6only(SocketId self) const {
  const Socket* s = app_socket(self);
  return s && s->v6only;
}

Errc StackImpl::bind(SocketId id, const Endpoint& local) {
  Socket* s = app_socket(id);
  if (!s) return Errc::kBadf;
  if (s->bound) return Errc::kInval;
  if (!s->v6 && !local.addr.is_v4()) return Errc::kAfNoSupport;
  // Linux __inet6_bind: "Binding to v4-mapped address on a v6-only socket
  // makes no sense".
  if (s->v6only && local.addr.is_v4()) return Errc::kInval;
  // Linux __inet_bind / __inet6_bind: an address not ours is EADDRNOTAVAIL
  // unless IP_FREEBIND (inet_can_nonlocal_bind) allows it.
  if (!local.addr.is_unspecified() && !owns(local.addr) && !s->conn->opts().freebind)
    return Errc::kAddrNotAvail;
  Endpoint ep = local;
  if (ep.port == 0) {
    auto p = ephemeral_port(ep.addr, s->conn->opts().reuseaddr);
    if (!p) return p.error();
    ep.port = *p;
  } else if (port_in_use(ep, s->conn->opts().reuseaddr, id)) {
    return Errc::kAddrInUse;
  }
  take_port(*s, ep);
  s->bind_locked = true;
  s->port_locked = local.port != 0;  // __inet_bind: "if (snum) sk->sk_userlocks |= SOCK_BINDPORT_LOCK"

  return Errc::kOk;
}

Errc StackImpl::listen(Time now, SocketId id, int backlog) {
  (void)now;
  Socket* s = app_socket(id);
  if (!s) return Errc::kBadf;
  const tcp::State st = s->conn->state();
  if (s->listener) {
    s->listener->set_backlog(std::min(backlog, cfg_.somaxconn));
    return Errc::kOk;
  }
  // inet_listen: "if (sock->state != SS_UNCONNECTED ...) goto out" (EINVAL),
  // also once the connection has closed.
  if (st != tcp::State::kClosed || s->ss != SockState::kUnconnected) return Errc::kInval;
  if (!s->bound) {
    Errc e = bind(id, Endpoint{s->v6 ? IpAddr::v6({}) : IpAddr::v4(0), 0});
    if (e != Errc::kOk) return e;
  }
  if (listeners_.count(s->local)) return Errc::kAddrInUse;
  s->listener = std::make_unique<tcp::Listener>(s->local, std::min(backlog, cfg_.somaxconn));
  listeners_[s->local] = id;
  fastopen_listen(*s, backlog);
  return Errc::kOk;
}

Expected<SocketId, Errc> StackImpl::accept(Time now, SocketId id, Endpoint* peer) {
  (void)now;
  Socket* s = app_socket(id);
  if (!s) return Unexpected(Errc::kBadf);
  if (!s->listener) return Unexpected(Errc::kInval);
  uint32_t child = 0;
  while (s->listener->pop_accept(child)) {
    Socket* c = find(child);
    if (!c) continue;
    c->app_open = true;
    c->ss = SockState::kConnected;  // inet_accept: "newsock->state = SS_CONNECTED"
    c->listener_parent = 0;
    c->conn->detach_listener();
    if (peer) *peer = c->conn->tuple().remote;
    notify(id);
    return c->id;
  }
  return Unexpected(Errc::kAgain);
}

Errc StackImpl::connect(Time now, SocketId id, const Endpoint& remote) {
  Socket* s = app_socket(id);
  if (!s) return Errc::kBadf;
  if (s->listener) return Errc::kIsConn;
  // __inet_stream_connect's switch on sock->state. SS_CONNECTED: EISCONN,
  // whatever became of the connection (a held socket CLOSED by TIME-WAIT or
  // a reset); SS_DISCONNECTING: EINVAL.
  switch (s->ss) {
    case SockState::kConnected: return Errc::kIsConn;
    case SockState::kDisconnecting: return Errc::kInval;
    case SockState::kConnecting: return connect_again(*s);
    case SockState::kUnconnected: break;
  }
  // SS_UNCONNECTED: "err = -EISCONN; if (sk->sk_state != TCP_CLOSE) goto out".
  if (s->conn->state() != tcp::State::kClosed) return Errc::kIsConn;
  if (s->conn->next_deadline() != Time::never() || s->in_demux) return Errc::kIsConn;
  auto t = connect_tuple(now, *s, remote);
  if (!t) return t.error();
  if (s->conn->opts().fastopen_connect) {
    // Linux tcp_fastopen_defer_connect: with a cookie to use (or no cookie
    // needed) connect() returns 0 and the SYN waits for the first write;
    // otherwise the SYN goes now, asking for a cookie.
    const tcp::ActiveFastOpen fo = fastopen_client(now, *s, *t);
    s->ss = SockState::kConnecting;  // "sock->state = SS_CONNECTING", defer_connect or not
    if (fo.send_data) {
      s->conn->defer_active_open(now, *t);
      after_call(*s);
      return Errc::kOk;
    }
    s->conn->open_active_fastopen(now, *t, fo, {});
    after_call(*s);
    return Errc::kInProgress;
  }
  Errc e = s->conn->open_active(now, *t);
  after_call(*s);
  if (e != Errc::kOk && e != Errc::kInProgress) return e;
  s->ss = SockState::kConnecting;
  // A repaired socket is ESTABLISHED at once (tcp_connect: tcp_finish_connect):
  // the common tail makes it SS_CONNECTED and returns 0.
  return e == Errc::kOk ? connect_again(*s) : e;
}

// The checks and the local endpoint of an active open (Linux
// tcp_v4_connect / tcp_v6_connect before tcp_connect); enters the tuple in
// the demultiplexer.
Expected<FourTuple, Errc> StackImpl::connect_tuple(Time now, Socket& sock, const Endpoint& remote) {
  Socket* s = &sock;
  if (!s->v6 && !remote.addr.is_v4()) return Unexpected(Errc::kAfNoSupport);
  // Linux tcp_v6_connect: an IPV6_V6ONLY socket cannot reach an IPv4-mapped peer.
  if (s->v6only && remote.addr.is_v4()) return Unexpected(Errc::kNetUnreach);
  if (remote.port == 0 || remote.addr.is_unspecified()) return Unexpected(Errc::kConnRefused);
  IpAddr src;
  // A bound address, or the one an earlier connect() chose (kept when the
  // port went back at CLOSED, as Linux keeps inet_saddr).
  if (!s->local.addr.is_unspecified()) {
    src = s->local.addr;
  } else {
    auto a = source_for(remote.addr);
    if (!a) return Unexpected(Errc::kNetUnreach);
    src = *a;
  }
  uint16_t port = s->bound ? s->local.port : 0;
  SocketId tw = kNoSocket;
  if (port == 0) {
    auto p = connect_port(now, src, remote);
    if (!p) return Unexpected(p.error());
    std::tie(port, tw) = *p;
  }
  FourTuple t{Endpoint{src, port}, remote};
  if (auto it = demux_.find(t); it != demux_.end() && tw == kNoSocket) {
    // Linux __inet_check_established with twp == NULL: a port the socket
    // already had may take over a TIME-WAIT tuple whenever it is safe.
    const Socket* o = find(it->second);
    if (!o || !tw_recyclable(*o, true, now)) return Unexpected(Errc::kAddrNotAvail);
    tw = it->second;
  }
  if (!s->bound) take_port(*s, t.local);
  s->local = t.local;
  // A socket that failed before starts over with a fresh connection and its options.
  if (s->conn->state() == tcp::State::kClosed && s->conn->snd_nxt() != Seq32(0)) {
    tcp::SockOpts o = s->conn->opts();
    s->conn = std::make_unique<tcp::Connection>(*this, s->id, o);
  }
  if (tw != kNoSocket) recycle_time_wait(now, tw, *s);
  demux_set(t, s->id);
  s->in_demux = true;
  return t;
}

Expected<size_t, Errc> StackImpl::send(Time now, SocketId id, std::span<const uint8_t> d, int flags,
                                       std::span<const uint32_t> iov) {
  Socket* s = app_socket(id);
  if (!s) return Unexpected(Errc::kBadf);
  if (s->listener) return Unexpected(Errc::kPipe);
  sync_path_mtu(*s);
  auto r = s->conn->send(now, d, flags, iov);
  after_call(*s);
  return r;
}

// inet_recv_error: a listener's queue is its own socket's (always empty).
Expected<ErrQueueEntry, Errc> StackImpl::recv_error(Time now, SocketId id) {
  (void)now;
  Socket* s = app_socket(id);
  if (!s) return Unexpected(Errc::kBadf);
  auto r = s->conn->recv_error();
  after_call(*s);
  return r;
}

uint64_t StackImpl::error_reports(SocketId id) const {
  const Socket* s = app_socket(id);
  return s ? s->conn->error_reports() : 0;
}

Expected<size_t, Errc> StackImpl::recv(Time now, SocketId id, std::span<uint8_t> out, int flags) {
  Socket* s = app_socket(id);
  if (!s) return Unexpected(Errc::kBadf);
  if (s->listener) return Unexpected(Errc::kNotConn);
  auto r = s->conn->recv(now, out, flags);
  after_call(*s);
  return r;
}

Expected<size_t, Errc> StackImpl::splice_read(Time now, SocketId id, std::span<uint8_t> out, bool nonblock) {
  Socket* s = app_socket(id);
  if (!s) return Unexpected(Errc::kBadf);
  if (s->listener) return Unexpected(Errc::kNotConn);  // tcp_read_sock on TCP_LISTEN
  auto r = s->conn->splice_read(now, out, nonblock);
  after_call(*s);
  return r;
}

Errc StackImpl::shutdown(Time now, SocketId id, int how) {
  Socket* s = app_socket(id);
  if (!s) return Errc::kBadf;
  if (how < SHUT_RD || how > SHUT_RDWR) return Errc::kInval;  // inet_shutdown, before any change
  if (s->listener) {
    if (how != SHUT_WR) close_listener(now, *s);  // Linux inet_shutdown on LISTEN: disconnect
    return Errc::kOk;
  }
  sync_path_mtu(*s);
  // inet_shutdown: an SS_CONNECTING socket is SS_DISCONNECTING if its
  // handshake is not done (or it has closed), else SS_CONNECTED; in
  // SYN-SENT the connection is disconnected and the socket SS_UNCONNECTED.
  const tcp::State st = s->conn->state();
  const bool unfinished = st == tcp::State::kSynSent || st == tcp::State::kSynReceived || st == tcp::State::kClosed ||
                          st == tcp::State::kTimeWait;
  if (s->ss == SockState::kConnecting) s->ss = unfinished ? SockState::kDisconnecting : SockState::kConnected;
  Errc e = s->conn->shutdown(now, how);
  if (st == tcp::State::kSynSent) s->ss = SockState::kUnconnected;
  after_call(*s);
  return e;
}

void StackImpl::close_listener(Time now, Socket& s) {
  listeners_.erase(s.local);
  tcp::Listener& l = *s.listener;
  // Linux inet_csk_listen_stop: embryonic children vanish, accepted-but-
  // not-yet-accepted ones are reset.
  std::vector<uint32_t> kids(l.syn_queue().begin(), l.syn_queue().end());
  kids.insert(kids.end(), l.accept_queue().begin(), l.accept_queue().end());
  for (uint32_t k : kids) {
    Socket* c = find(k);
    if (!c) continue;
    c->listener_parent = 0;
    c->app_open = false;
    if (c->conn->state() == tcp::State::kSynReceived) c->conn->close(now);
    c->conn->abort(now, Errc::kOk);
    after_call(*c);
    // A child that had already closed in the accept queue has no event left
    // to reap it by.
    if (Socket* again = find(k); again && !again->in_demux && again->conn->state() == tcp::State::kClosed)
      reap(k);
  }
  s.listener.reset();
}

Errc StackImpl::close(Time now, SocketId id) {
  Socket* s = app_socket(id);
  if (!s) return Errc::kBadf;
  if (s->listener) close_listener(now, *s);
  s->app_open = false;
  s->bound = s->in_demux;  // the port stays in use while the connection lives
  sync_path_mtu(*s);
  s->conn->close(now);
  after_call(*s);
  Socket* again = find(id);
  if (again && !again->in_demux && again->conn->state() == tcp::State::kClosed) reap(id);
  return Errc::kOk;
}

Errc StackImpl::setsockopt(Time now, SocketId id, int level, int name, std::span<const uint8_t> v) {
  Socket* s = app_socket(id);
  if (!s) return Errc::kBadf;
  // RFC 2385 keys: the address family is the socket's (tcp_v4/v6_parse_md5_keys).
  if (level == IPPROTO_TCP && (name == TCP_MD5SIG || name == TCP_MD5SIG_EXT))
    return tcp::md5::apply_sockopt(s->conn->md5_keys(), name, s->v6, v);
  if (level == IPPROTO_IPV6 && name == IPV6_V6ONLY) return v6only_sockopt(*s, v);
  // Linux tcp_can_repair_sock: never a listener (weir keeps its state in
  // the socket's Listener, not in the connection).
  if (level == IPPROTO_TCP && name == TCP_REPAIR && s->listener) return Errc::kPerm;
  // IP_TOS, IP_TTL, IPV6_TCLASS, IPV6_UNICAST_HOPS: the socket's family
  // decides what reaches the IPv6 level (tcp/ip_fields.h). They apply from
  // the next segment on (Linux resets the cached route: sk_dst_reset).
  if (auto e = tcp::set_ip_field(s->conn->opts(), s->v6, level, name, v)) return *e;
  Errc e = s->conn->setsockopt(now, level, name, v);
  after_call(*s);
  return e;
}

// Linux do_ipv6_setsockopt(IPV6_V6ONLY): AF_INET6 only (an AF_INET socket
// never reaches the IPv6 level: ENOPROTOOPT), and only before bind (EINVAL
// once the socket has a port).
Errc StackImpl::v6only_sockopt(Socket& s, std::span<const uint8_t> v) {
  if (!s.v6) return Errc::kNoProtoOpt;
  if (v.size() < sizeof(int)) return Errc::kInval;
  if (s.bound) return Errc::kInval;
  int on = 0;
  std::memcpy(&on, v.data(), sizeof on);
  s.v6only = on != 0;
  return Errc::kOk;
}

Errc StackImpl::getsockopt(SocketId id, int level, int name, std::span<uint8_t> v, size_t* len) const {
  const Socket* s = app_socket(id);
  if (!s) return Errc::kBadf;
  if (level == IPPROTO_IPV6 && name == IPV6_V6ONLY) {
    if (!s->v6) return Errc::kNoProtoOpt;
    int on = s->v6only;
    if (v.size() < sizeof on) return Errc::kInval;
    std::memcpy(v.data(), &on, sizeof on);
    if (len) *len = sizeof on;
    return Errc::kOk;
  }
  if (level == SOL_SOCKET && name == SO_ACCEPTCONN) {
    int on = s->listener != nullptr;
    if (v.size() < sizeof on) return Errc::kInval;
    std::memcpy(v.data(), &on, sizeof on);
    if (len) *len = sizeof on;
    return Errc::kOk;
  }
  if (auto e = tcp::get_ip_field(s->conn->opts(), s->v6, s->conn->tx_ecn(), cfg_, level, name, v, len)) return *e;
  if (level == IPPROTO_TCP && name == TCP_TIMESTAMP) return tcp_timestamp_opt(*s, v, len);
  return s->conn->getsockopt(level, name, v, len);
}

// Linux do_tcp_getsockopt(TCP_TIMESTAMP): the connection's TS clock now
// (tcp_time_stamp_raw() + tsoffset), at the latest time the stack has seen.
Errc StackImpl::tcp_timestamp_opt(const Socket& s, std::span<uint8_t> v, size_t* len) const {
  const uint32_t ts = s.conn->tcp_clock_ts(last_now_);
  if (v.size() < sizeof ts) return Errc::kInval;
  std::memcpy(v.data(), &ts, sizeof ts);
  if (len) *len = sizeof ts;
  return Errc::kOk;
}

Errc StackImpl::ioctl(SocketId id, unsigned long req, int* out) const {
  const Socket* s = app_socket(id);
  if (!s) return Errc::kBadf;
  if (s->listener) return Errc::kInval;
  return s->conn->ioctl(req, out);
}

uint32_t StackImpl::poll(SocketId id) const {
  const Socket* s = app_socket(id);
  if (!s) return ev::ERR | ev::HUP;
  if (s->listener) return s->listener->accept_queue_len() ? ev::IN : 0;  // Linux inet_csk_listen_poll
  return s->conn->poll();
}

Duration StackImpl::sock_timeout(SocketId id, bool send) const {
  const Socket* s = app_socket(id);
  if (!s) return Duration::infinite();  // the call itself reports EBADF
  return tcp::sock_timeout_duration(send ? s->conn->opts().sndtimeo : s->conn->opts().rcvtimeo);
}

Expected<Endpoint, Errc> StackImpl::local_endpoint(SocketId id) const {
  const Socket* s = app_socket(id);
  if (!s) return Unexpected(Errc::kBadf);
  if (s->conn && s->in_demux) return s->conn->tuple().local;
  return s->local;
}

Expected<Endpoint, Errc> StackImpl::remote_endpoint(SocketId id) const {
  const Socket* s = app_socket(id);
  if (!s) return Unexpected(Errc::kBadf);
  // Linux inet_getname(peer): TCP_CLOSE or TCP_SYN_SENT -ENOTCONN; a socket
  // whose connection is in TIME-WAIT is CLOSED (tcp_time_wait -> tcp_done).
  const tcp::State st = s->conn ? s->conn->state() : tcp::State::kClosed;
  if (s->listener || !s->in_demux || st == tcp::State::kSynSent || st == tcp::State::kTimeWait)
    return Unexpected(Errc::kNotConn);
  return s->conn->tuple().remote;
}

Expected<TcpInfo, Errc> StackImpl::tcp_info(SocketId id, Time now) const {
  const Socket* s = app_socket(id);
  if (!s) return Unexpected(Errc::kBadf);
  TcpInfo i = s->conn->info(now);
  if (s->listener) {
    i.tcpi_state = 10;
    i.tcpi_unacked = static_cast<uint32_t>(s->listener->accept_queue_len());  // Linux: accept queue length
    i.tcpi_sacked = s->listener->backlog();
  }
  return i;
}

}  // namespace weir
