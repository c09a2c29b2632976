// RFC 2385 on the receive path (Linux tcp_v4_rcv / tcp_v6_rcv ->
// tcp_inbound_hash, and tcp_v4_send_reset's key search). A segment that
// fails is dropped before it touches any state, and answered with nothing:
// tcp_v4_rcv goes to discard_and_relse (no RST, no challenge ACK), for SYNs
// at a listener and for RSTs alike.
#include "ip/stack_impl.h"

namespace weir {

// The keys a segment for `s` is checked against. A child still in
// SYN-RECEIVED stands for Linux's request sock, which is checked against its
// listener's keys (tcp_v4_rcv, TCP_NEW_SYN_RECV: tcp_inbound_hash(sk, req)).
// A timewait sock is not checked (tcp_v4_rcv's do_time_wait skips the hash).
bool StackImpl::md5_drop(const Socket& s, const wire::TcpPacket& p) {
  const tcp::md5::KeyList* keys = &s.conn->md5_keys();
  if (s.conn->timewait_sock()) return false;
  if (s.listener_parent && s.conn->state() == tcp::State::kSynReceived && !s.conn->fastopen_pending()) {
    if (const Socket* ls = find(s.listener_parent); ls && ls->conn) keys = &ls->conn->md5_keys();
  }
  // No key and no option, as on nearly every segment: md5::check's kOk
  // without its calls (tcp_inbound_md5_hash: "we've parsed the options - do
  // we have a hash?" and no key expected).
  if (keys->empty() && !p.tcp.options.md5) return false;
  switch (tcp::md5::check(keys, p)) {
    case tcp::md5::Verdict::kOk: return false;
    case tcp::md5::Verdict::kNotFound: counters_.inc(Counter::TcpExtTCPMD5NotFound); break;
    case tcp::md5::Verdict::kUnexpected: counters_.inc(Counter::TcpExtTCPMD5Unexpected); break;
    case tcp::md5::Verdict::kFailure: counters_.inc(Counter::TcpExtTCPMD5Failure); break;
  }
  return true;
}

std::span<const uint8_t> StackImpl::md5_listener_key(const Socket& ls, const IpAddr& peer) const {
  const tcp::md5::Key* k = ls.conn ? ls.conn->md5_keys().lookup(peer) : nullptr;
  return k ? k->bytes() : std::span<const uint8_t>{};
}

// No socket. Linux tcp_v4_send_reset: an unsigned segment draws a plain RST;
// a signed one draws an RST only when a listener on the segment's *source*
// port ("active side is lost. Try to find listening socket through source
// port") has a key for the peer that verifies the segment; otherwise
// nothing ("don't send rst if it can't find key").
void StackImpl::md5_reset_no_socket(const FourTuple& t, const wire::TcpPacket& p, const tcp::InSegment& seg) {
  if (!p.tcp.options.md5) {
    reset_no_socket(t, seg);
    return;
  }
  const Socket* ls = find_listener(Endpoint{t.local.addr, p.tcp.src_port});
  const tcp::md5::Key* k = ls ? ls->conn->md5_keys().lookup(t.remote.addr) : nullptr;
  if (!k || !tcp::md5::digest_matches(*k, p)) return;
  reset_no_socket(t, seg, k->bytes());
}

}  // namespace weir
