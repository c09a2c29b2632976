// Local ports: the bind table, bind()'s conflict rule, and the ephemeral
// port choices of bind(0) and connect() (Linux inet_csk_get_port,
// inet_csk_find_open_port, __inet_hash_connect; RFC 6056).
#include <algorithm>

#include "ip/port_scan.h"
#include "ip/stack_impl.h"
#include "tcp/isn.h"

namespace weir {
namespace {

// Linux inet_is_local_reserved_port: both walks pass over these; only an
// explicit bind() takes them.
bool reserved(const StackConfig& c, uint16_t port) {
  for (const auto& [lo, hi] : c.ip_local_reserved_ports)
    if (port >= lo && port <= hi) return true;
  return false;
}

}  // namespace

void StackImpl::take_port(Socket& s, const Endpoint& ep) {
  s.local = ep;
  s.bound = true;
  port_owners_[ep.port].push_back(s.id);
}

void StackImpl::release_port(const Socket& s) {
  if (!s.bound) return;
  auto it = port_owners_.find(s.local.port);
  if (it == port_owners_.end()) return;
  std::erase(it->second, s.id);
  if (it->second.empty()) port_owners_.erase(it);
}

// Linux tcp_set_state(TCP_CLOSE): "if (icsk_bind_hash && !(sk_userlocks &
// SOCK_BINDPORT_LOCK)) inet_put_port(sk)". A port that connect() or
// bind(0) chose goes back when the connection ends, even while the
// application still holds the socket; a port bind() named stays. A later
// connect() on the socket chooses afresh.
//
// Only the binding goes (__inet_put_port: "inet_sk(sk)->inet_num = 0"):
// inet_sport, which getsockname reports (inet_getname), keeps the port, so
// s.local does too; `bound` says whether the socket holds it.
void StackImpl::put_port_on_close(Socket& s) {
  if (!s.bound || s.port_locked || s.listener) return;
  release_port(s);
  s.bound = false;
  s.bind_locked = false;
}

const std::vector<SocketId>* StackImpl::port_owners(uint16_t port) const {
  auto it = port_owners_.find(port);
  return it == port_owners_.end() ? nullptr : &it->second;
}

bool StackImpl::port_in_use(const Endpoint& local, bool reuse, SocketId self) const {
  const std::vector<SocketId>* owners = port_owners(local.port);
  if (!owners) return false;
  for (SocketId id : *owners) {
    const Socket* o = find(id);
    if (id == self || !o) continue;
    const bool overlap = o->local.addr == local.addr || o->local.addr.is_unspecified() ||
                         local.addr.is_unspecified();
    if (!overlap) continue;
    // Linux inet_bind_conflict (ipv6_rcv_saddr_equal): an IPV6_V6ONLY
    // socket's :: leaves IPv4 addresses to others, and is left by them.
    if ((o->v6only && local.addr.is_v4()) || (self_v6only(self) && o->local.addr.is_v4())) continue;
    // Linux inet_csk_bind_conflict: SO_REUSEADDR on both, and the other not
    // listening, lets the port be shared (e.g. with TIME-WAIT leftovers).
    const bool other_listening = o->listener != nullptr;
    const bool other_reuse = o->conn && o->conn->opts().reuseaddr;
    if (reuse && other_reuse && !other_listening) continue;
    if (!o->app_open && reuse) continue;  // orphans (TIME-WAIT) do not block SO_REUSEADDR
    return true;
  }
  return false;
}

// Linux inet_csk_find_open_port: the other parity than connect()'s first,
// from an unpredictable start (Linux draws it at random; weir keys a hash
// with the stack's secret, so runs repeat). With SO_REUSEADDR the lower
// half of the range first, then the upper half (attempt_half). The
// conflict test is the non-reusing one (inet_csk_bind_conflict with
// relax = false), so a reusing socket is not handed a shared port.
Expected<uint16_t, Errc> StackImpl::ephemeral_port(const IpAddr& local, bool reuse) {
  const uint32_t low = cfg_.ip_local_port_range[0];
  const uint32_t high = cfg_.ip_local_port_range[1];
  const uint32_t start = tcp::port_offset(cfg_.secret, local, Endpoint{}) + port_hint_;
  auto free = [&](uint16_t port) {
    return !reserved(cfg_, port) && !port_in_use(Endpoint{local, port}, false, kNoSocket);
  };
  std::optional<PortPick> pick;
  const auto halves = reuse ? split_port_range(low, high) : std::nullopt;
  if (halves) {
    pick = scan_ports(low, halves->lower_high, start, ParityFirst::kOther, free);
    if (!pick) pick = scan_ports(halves->upper_low, high, start, ParityFirst::kOther, free);
  } else {
    pick = scan_ports(low, high, start, ParityFirst::kOther, free);
  }
  if (!pick) return Unexpected(Errc::kAddrNotAvail);
  port_hint_ += pick->index + 2;
  return pick->port;
}

// A port that bind() chose, or a listener's (Linux: a bind bucket with
// fastreuse >= 0, which __inet_hash_connect skips). Ports that only
// connect() took are shared by connections to different peers.
bool StackImpl::port_bind_locked(const Endpoint& ep) const {
  const std::vector<SocketId>* owners = port_owners(ep.port);
  if (!owners) return false;
  for (SocketId id : *owners) {
    const Socket* o = find(id);
    if (!o) continue;
    const bool overlap = o->local.addr == ep.addr || o->local.addr.is_unspecified();
    if (overlap && (o->bind_locked || o->listener)) return true;
  }
  return false;
}

// RFC 6056 §3.3.4 (algorithm 4, as Linux's __inet_hash_connect): start at a
// keyed hash of the destination plus a moving hint, and walk
// net.ipv4.ip_local_port_range, the low end's parity first. A port is taken
// if its tuple is free, or held by a TIME-WAIT connection tcp_twsk_unique
// lets go. Linux moves its hint by "i + 2", at least a random 0..14 more
// under low contention; weir keeps the deterministic part.
Expected<std::pair<uint16_t, SocketId>, Errc> StackImpl::connect_port(Time now, const IpAddr& local,
                                                                      const Endpoint& remote) {
  const uint32_t start = tcp::port_offset(cfg_.secret, local, remote) + port_hint_;
  SocketId tw = kNoSocket;
  auto usable = [&](uint16_t port) {
    const Endpoint ep{local, port};
    if (reserved(cfg_, port) || port_bind_locked(ep)) return false;
    tw = kNoSocket;
    auto it = demux_.find(FourTuple{ep, remote});
    if (it == demux_.end()) return true;
    const Socket* o = find(it->second);
    if (!o || !tw_recyclable(*o, false, now)) return false;
    tw = it->second;
    return true;
  };
  const auto pick =
      scan_ports(cfg_.ip_local_port_range[0], cfg_.ip_local_port_range[1], start, ParityFirst::kLow, usable);
  if (!pick) return Unexpected(Errc::kAddrNotAvail);
  port_hint_ += pick->index + 2;
  return std::pair{pick->port, tw};
}

}  // namespace weir
