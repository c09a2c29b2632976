// A connection's transmit hash (Linux sk_txhash) and the rehashes that
// move it, and with it the IPv6 flow label (tcp/flow_label.h), to another
// ECMP path (RFC 6438 §3) when the current one looks broken. Drawn at
// connect() (tcp_v6_connect: sk_set_txhash) and for a passive open
// (tcp_conn_request: tcp_rsk(req)->txhash, which the child takes in
// tcp_create_openreq_child; weir's child is the request).
#include "tcp/connection.h"
#include "tcp/flow_label.h"

namespace weir::tcp {

// Linux sk_rethink_txhash: "if (sk->sk_txhash && sk->sk_txrehash ==
// SOCK_TXREHASH_ENABLED)" a new random hash. SO_TXREHASH or
// net.core.txrehash (at socket creation) 0 keeps the path.
bool Connection::rethink_txhash() {
  if (txhash_ == 0 || opts_.txrehash != 1) return false;
  set_txhash();
  return true;
}

// Linux tcp_write_timeout, once it has decided not to give up (both the
// SYN-SENT retries and data RTOs; before the retransmission, so that goes
// out on the new path): "if (sk_rethink_txhash(sk)) { tp->timeout_rehash++;
// __NET_INC_STATS(..., LINUX_MIB_TCPTIMEOUTREHASH); }".
void Connection::timeout_rehash() {
  if (!rethink_txhash()) return;
  ++timeout_rehash_;
  env_.counters().inc(Counter::TcpExtTCPTimeoutRehash);
}

// Linux tcp_plb_check_rehash, once congestion control (DCTCP's PLB) has
// decided to move: "sk_rethink_txhash(sk); ... tp->plb_rehash++;
// NET_INC_STATS(..., LINUX_MIB_TCPPLBREHASH)", counted whether or not
// SO_TXREHASH let the hash change.
void Connection::take_plb_rehash() {
  if (!ccs_.plb_rehash) return;
  ccs_.plb_rehash = false;
  rethink_txhash();
  ++plb_rehash_;
  env_.counters().inc(Counter::TcpExtTCPPLBRehash);
}

// Linux tcp_rtx_synack: every SYN-ACK retransmission draws the request a
// new hash under the listener's sk_txrehash (which the child copied), with
// no counter and no tcpi_rehash: a request is not a socket yet. (Linux
// gates it on the setting alone; the request always has a hash.) weir's
// request is the child, so the new hash is the child's; a Fast Open child
// is a full socket beside its request, and keeps its own (ip_fields).
void Connection::synack_rehash() {
  if (opts_.txrehash != 1) return;
  if (fastopen_child_) req_txhash_ = env_.tx_rndhash();
  else set_txhash();
}

// Linux tcp_rcv_spurious_retrans (>= 6.7, "tcp: change data receiver
// flowlabel after one dup"): data we already have, arriving over IPv6 under
// a label other than the last data's, suggests the peer timed out and
// repathed because our ACKs do not reach it, so we repath our ACKs too;
// not while in Loss, where our own RTOs already do. The label is
// remembered either way (tcp_save_lrcv_flowlabel).
void Connection::duplicate_data_rehash(const InSegment& seg) {
  if (tuple_.remote.addr.is_v4()) return;  // "skb->protocol == htons(ETH_P_IPV6)"
  if (ca_state_ != CaState::Loss && lrcv_flowlabel_ != seg.flow_label && rethink_txhash())
    env_.counters().inc(Counter::TcpExtTCPDuplicateDataRehash);
  lrcv_flowlabel_ = seg.flow_label;
}

// Linux tcp_send_dupack (an unacceptable or PAWS-rejected segment): "if
// (end_seq != seq && before(seq, rcv_nxt))" and SACK with tcp_dsack on,
// tcp_rcv_spurious_retrans before the duplicate ACK goes out.
void Connection::dupack_rehash(const InSegment& seg) {
  if (seg.len() == 0 || !(seg.h.seq < rcv_.rcv_nxt()) || !sack_ok_ || !env_.cfg().tcp_dsack) return;
  duplicate_data_rehash(seg);
}

// Linux tcp_v6_send_reset from a socket, sent by the control socket (its
// auto-label choice, the sysctl's default): a full socket's sk_txhash, a
// request's none (weir's SYN-RECEIVED child but a Fast Open one, which
// Linux makes a full socket), so the flow's own hash.
uint32_t Connection::reset_flow_label() const {
  const StackConfig& cfg = env_.cfg();
  const bool full = state_ != State::kSynReceived || fastopen_child_;
  const uint32_t hash = full && txhash_ ? txhash_ : flow_hash(cfg.secret, tuple_);
  return make_flow_label(cfg, hash, default_autolabel(cfg));
}


}  // namespace weir::tcp
