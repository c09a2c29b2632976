// A listener's side of TCP Fast Open (RFC 7413 §4.2.2, Linux
// tcp_try_fastopen and inet_listen): the queue limit, the key, and the
// answer tcp/fastopen.h decides from them.
#include <algorithm>

#include "ip/stack_impl.h"
#include "tcp/fastopen.h"

namespace weir {

namespace fo = tcp::fastopen;

// Linux inet_listen: with TFO_SERVER_WO_SOCKOPT1 every listener gets a Fast
// Open queue as long as its backlog unless TCP_FASTOPEN already set one.
void StackImpl::fastopen_listen(Socket& s, int backlog) {
  tcp::SockOpts& o = s.conn->opts();
  const int bits = fo::kServerEnable | fo::kServerWoSockopt;
  if ((cfg_.tcp_fastopen & bits) == bits && o.fastopen_qlen == 0)
    o.fastopen_qlen = std::min(backlog, cfg_.somaxconn);
}

// Linux tcp_fastopen_queue_check: children still in SYN-RECEIVED count
// against max_qlen (RFC 7413 §5.1: bounds what unverified SYN data may
// hold), in the accept queue or already accepted; reqsk_fastopen_remove
// frees the slot when the handshake completes or the child dies, except
// that a child reset in SYN-RECEIVED stays counted for 60 s (a defence
// against spoofed Fast Open SYNs). At a full queue the oldest such hold,
// once expired, gives its slot to this SYN; only then, lazily, as Linux.
bool StackImpl::fastopen_queue_ok(Time now, Socket& ls) {
  const int max_qlen = ls.conn->opts().fastopen_qlen;
  if (max_qlen <= 0) return false;
  const size_t qlen = ls.listener->fastopen_qlen([this](uint32_t id) {
    const Socket* c = find(id);
    return c && c->conn && c->conn->fastopen_pending();
  });
  if (qlen < static_cast<size_t>(max_qlen)) return true;
  if (ls.listener->reclaim_fastopen_reset(now)) return true;
  counters_.inc(Counter::TcpExtTCPFastOpenListenOverflow);
  return false;
}

// Linux reqsk_fastopen_remove(reset = true): only while the parent still
// listens; the child's slot moves to the 60 s hold list.
void StackImpl::fastopen_child_reset(uint32_t id, Time now) {
  const Socket* c = find(id);
  Socket* ls = c ? find(c->listener_parent) : nullptr;
  if (!ls || !ls->listener) return;
  ls->listener->hold_fastopen_reset(id, now + tcp::Listener::kFastOpenResetHold,
                                    static_cast<size_t>(std::max(ls->conn->opts().fastopen_qlen, 1)));
}

tcp::PassiveFastOpen StackImpl::fastopen_syn(Time now, Socket& ls, const FourTuple& t, const tcp::InSegment& syn) {
  const tcp::SockOpts& o = ls.conn->opts();
  fo::ServerSyn in;
  in.sysctl = cfg_.tcp_fastopen;
  in.no_cookie = o.fastopen_no_cookie || route(t.remote.addr).fastopen_no_cookie;  // tcp_fastopen_no_cookie
  in.syn_data = !syn.payload.empty();
  in.option = syn.h.options.fastopen;
  in.src = t.remote.addr;
  in.dst = t.local.addr;
  // Only check the queue when the SYN asks for Fast Open at all (Linux
  // evaluates the queue last in tcp_try_fastopen's condition).
  const bool wants = (in.sysctl & fo::kServerEnable) && (in.syn_data || (in.option && in.option->len >= 0));
  in.queue_ok = wants && fastopen_queue_ok(now, ls);
  fo::Keys keys;
  if (o.fastopen_key.size() >= 16) {
    const auto* b = reinterpret_cast<const uint8_t*>(o.fastopen_key.data());
    keys.primary = fo::key_from_bytes(b);
    if (o.fastopen_key.size() == 32) keys.backup = fo::key_from_bytes(b + 16);
  } else if (auto k = fo::parse_keys(cfg_.tcp_fastopen_key)) {
    keys = *k;
  } else {
    // No key configured: Linux tcp_fastopen_init_key_once draws a random
    // one on first use and keeps it; here from the driver's seed.
    if (!fastopen_random_key_) fastopen_random_key_ = fo::random_key(cfg_.secret);
    keys.primary = *fastopen_random_key_;
  }
  const fo::ServerDecision d = fo::server_decide(in, keys, counters_);
  return tcp::PassiveFastOpen{d.child, d.reply};
}

}  // namespace weir
