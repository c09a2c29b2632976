// A client's side of TCP Fast Open (RFC 7413 §4.1, Linux
// tcp_sendmsg_fastopen): sendto(MSG_FASTOPEN) opens the connection with
// data on the SYN, and the first write on a TCP_FASTOPEN_CONNECT socket
// sends the SYN connect() held back. What the SYN carries comes from the
// per-destination cookie cache (tcp/fastopen_client.h).
#include <sys/socket.h>

#include "ip/stack_impl.h"
#include "tcp/fastopen_client.h"

namespace weir {

namespace fo = tcp::fastopen;

// Linux tcp_fastopen_cookie_check with tcp_fastopen_cache_get. During a
// black-hole pause (tcp_fastopen_active_should_disable) the cookie is set
// to -1: a plain SYN, no option and no data.
tcp::ActiveFastOpen StackImpl::fastopen_client(Time now, const Socket& s, const FourTuple& t) const {
  const fo::Blackhole::Verdict v = fo_blackhole_.check(cfg_.tcp_fastopen_blackhole_timeout_sec, now);
  if (v == fo::Blackhole::Verdict::kPause) return tcp::ActiveFastOpen{};
  const fo::ClientEntry* cached = fo_cache_.get(t.local.addr, t.remote.addr);
  // tcp_fastopen_no_cookie: the socket option or the route's metric.
  const bool no_cookie = s.conn->opts().fastopen_no_cookie || route(t.remote.addr).fastopen_no_cookie;
  const fo::ClientDecision d = fo::client_decide(cfg_.tcp_fastopen, no_cookie, cached);
  tcp::ActiveFastOpen out;
  out.option = d.option;
  out.send_data = d.send_data;
  out.mss_clamp = d.mss_clamp;
  out.blackhole_probe = v == fo::Blackhole::Verdict::kProbe;
  return out;
}

bool StackImpl::fastopen_deferred(SocketId id) const {
  const Socket* s = app_socket(id);
  return s && s->conn && s->conn->fastopen_deferred();
}

FastOpenSend StackImpl::sendto_fastopen(Time now, SocketId id, std::span<const uint8_t> d, const Endpoint* to,
                                        Duration wait, int flags) {
  FastOpenSend out;
  Socket* s = app_socket(id);
  if (!s) return FastOpenSend{Errc::kBadf};
  if (s->listener) return FastOpenSend{Errc::kPipe};
  // tcp_sendmsg_fastopen: the client bit of net.ipv4.tcp_fastopen.
  if (!(cfg_.tcp_fastopen & fo::kClientEnable)) return FastOpenSend{Errc::kOpNotSupp};
  sync_path_mtu(*s);
  if (s->conn->fastopen_deferred()) {
    tcp::ActiveFastOpen fo = fastopen_client(now, *s, s->conn->tuple());
    fo.writer_until = now + wait;
    out.queued = s->conn->send_deferred_syn(now, fo, d);
    if (flags & MSG_ZEROCOPY) s->conn->zerocopy_syn_data(d.size(), out.queued);
    out.connecting = true;
    after_call(*s);
    return out;
  }
  switch (s->conn->state()) {
    case tcp::State::kClosed: break;
    // __inet_stream_connect on SS_CONNECTING: "already in progress".
    case tcp::State::kSynSent:
    case tcp::State::kSynReceived: return FastOpenSend{Errc::kAlready};
    default: {
      // A connected socket: MSG_FASTOPEN changes nothing, the data is sent.
      auto r = send(now, id, d, flags & MSG_ZEROCOPY);
      return r ? FastOpenSend{Errc::kOk, *r} : FastOpenSend{r.error()};
    }
  }
  if (!to) return FastOpenSend{Errc::kInval};  // __inet_stream_connect without an address
  // __inet_stream_connect on a closed connection: SS_CONNECTED stays after it
  // closed (EISCONN), SS_DISCONNECTING is EINVAL, SS_CONNECTING reports the
  // failure and starts over (StackImpl::connect_again).
  if (s->ss == SockState::kConnected || s->in_demux) return FastOpenSend{Errc::kIsConn};
  if (s->ss == SockState::kDisconnecting) return FastOpenSend{Errc::kInval};
  if (s->ss == SockState::kConnecting) return FastOpenSend{connect_again(*s)};
  auto t = connect_tuple(now, *s, *to);
  if (!t) return FastOpenSend{t.error()};
  tcp::ActiveFastOpen fo = fastopen_client(now, *s, *t);
  fo.writer_until = now + wait;
  s->ss = SockState::kConnecting;  // __inet_stream_connect, is_sendmsg
  out.queued = s->conn->open_active_fastopen(now, *t, fo, d);
  if (flags & MSG_ZEROCOPY) s->conn->zerocopy_syn_data(d.size(), out.queued);
  out.connecting = true;
  after_call(*s);
  return out;
}

}  // namespace weir
