// Explicit Congestion Notification (RFC 3168) as Linux does it (tcp_ecn = 1
// asks on active opens, 2 only accepts): negotiation on SYN / SYN-ACK, ECT(0)
// on new data, ECE echoed from a CE mark until the peer's CWR, and CWR sent
// once after each window reduction. The reduction itself (tcp_enter_cwr with
// PRR) is the RecoveryMachine's, driven by the FLAG_ECE this file reports.
#include "tcp/connection.h"

namespace weir::tcp {

using namespace wire::tcp_flag;

namespace {
constexpr uint8_t kEcnMask = 0x3;   // RFC 3168 §5: the low two bits of TOS / traffic class
constexpr uint8_t kNotEct = 0x0;
constexpr uint8_t kEct0 = 0x2;
constexpr uint8_t kCe = 0x3;
}  // namespace

bool ecn_syn_acceptable(const StackConfig& cfg, const InSegment& syn, bool cc_needs_ecn) {
  if (!syn.h.has(ECE) || !syn.h.has(CWR)) return false;
  // Linux tcp_ecn_create_request: a DCTCP listener takes ECN whatever the
  // sysctl and the SYN's own codepoint (its peer marks SYNs ECT too).
  if (cc_needs_ecn) return true;
  // RFC 3168 §6.1.1: "A host MUST NOT set ECT on SYN or SYN-ACK packets";
  // Linux declines ECN for a SYN that arrives ECN-capable.
  if ((syn.tos & kEcnMask) != kNotEct) return false;
  return cfg.tcp_ecn != 0;
}

// Linux tcp_ecn_send_syn: only tcp_ecn = 1 asks (RFC 3168 §6.1.1: ECE and CWR
// on the SYN). A retransmitted SYN goes without them (tcp_ecn_clear_syn,
// tcp_ecn_fallback = 1) in case a middlebox drops ECN-setup SYNs; the
// connection then runs without ECN unless the SYN-ACK still agrees.
// Linux asks also when the congestion control needs ECN (DCTCP).
void Connection::ecn_send_syn(wire::TcpHeader& h) {
  if (retransmits_ == 0) ecn_ = EcnFlags{.ok = env_.cfg().tcp_ecn == 1 || cc_needs_ecn()};
  if (ecn_.ok && retransmits_ == 0) h.flags |= ECE | CWR;
}

// Linux tcp_ecn_rcv_synack: RFC 3168 §6.1.1: an ECN-setup SYN-ACK has ECE and
// not CWR; anything else means the peer does not do ECN.
void Connection::ecn_rcv_synack(const wire::TcpHeader& h) {
  if (ecn_.ok && (!h.has(ECE) || h.has(CWR))) ecn_.ok = false;
}

// Linux tcp_ecn_rcv_syn (simultaneous open): the peer's SYN must ask too.
void Connection::ecn_rcv_syn(const wire::TcpHeader& h) {
  if (ecn_.ok && (!h.has(ECE) || !h.has(CWR))) ecn_.ok = false;
}

// Linux tcp_ecn_send for every segment but SYNs. New data is ECT(0)
// (RFC 3168 §6.1.2 lets TCP choose; Linux never uses ECT(1)) and carries a
// queued CWR; pure ACKs, window probes and retransmissions are not-ECT
// (§6.1.5: "MUST NOT set ECT on retransmitted data packets", §6.1.4 for
// pure ACKs). ECE repeats on every segment while a CE mark is unanswered.
// ecn_send (connection.h) answers not-ECT itself when ECN is off. DCTCP
// keeps ECT(0) on every segment (tcp_ecn_send leaves inet->tos alone when
// tcp_ca_needs_ecn; RFC 8257 §3.1 lets a DCTCP sender mark control packets).
uint8_t Connection::ecn_send_ok(wire::TcpHeader& h, size_t payload_len) {
  uint8_t ecn = cc_needs_ecn() ? kEct0 : kNotEct;
  if (payload_len > 0 && h.seq >= snd_.nxt) {
    ecn = kEct0;
    if (ecn_.queue_cwr) {
      ecn_.queue_cwr = false;
      h.flags |= CWR;
    }
  }
  if (ecn_.demand_cwr) h.flags |= ECE;
  return ecn;
}

// A segment with text arrived in a synchronized state. Linux
// tcp_ecn_accept_cwr: the peer's CWR ends our ECE echo and, on data, is
// ACKed at once (its cwnd may be tiny). Linux tcp_ecn_check_ce, for data
// that is new to us: CE starts the echo (RFC 3168 §6.1.3) and quick ACKs;
// a not-ECT data segment after ECT ones is probably a retransmission, which
// is ACKed quickly too. Returns true to enter quick-ACK mode for 2 ACKs.
bool Connection::ecn_rcv_data(Time now, const InSegment& seg, bool* ack_now) {
  if (!ecn_.ok) return false;
  if (seg.h.has(CWR)) {
    ecn_.demand_cwr = false;
    if (!seg.payload.empty()) *ack_now = true;
  }
  const auto len = static_cast<uint32_t>(seg.payload.size());
  const Seq32 rcv_nxt = rcv_.rcv_nxt();
  const bool new_data = len > 0 && seg.h.seq + len > rcv_nxt &&
                        (seg.h.seq <= rcv_nxt || seq_len(rcv_nxt, seg.h.seq) < rcv_.receive_window());
  if (!new_data) return false;
  const uint8_t cp = seg.tos & kEcnMask;
  if (cp != kNotEct && cc_needs_ecn()) {
    // Linux __tcp_ecn_check_ce: CA_EVENT_ECN_IS_CE / _NO_CE go to DCTCP,
    // which sets DEMAND_CWR itself, so the RFC 3168 branch below adds no
    // quick-ACK mode.
    dctcp_ce_echo(now, cp == kCe ? 1 : 0, ack_now);
    ecn_.seen = true;
    return false;
  }
  switch (cp) {
    case kNotEct: return ecn_.seen;
    case kCe: {
      ecn_.seen = true;
      if (ecn_.demand_cwr) return false;
      ecn_.demand_cwr = true;
      return true;
    }
    default: ecn_.seen = true; return false;
  }
}

// RFC 8257 §3.2 (Linux dctcp_ece_ack_update): the receiver sets ECE on
// exactly the ACKs of CE-marked packets. When the CE state flips, a delayed
// ACK still owed for earlier packets goes out first with the old state (it
// covers only what arrived before this packet: rcv_nxt has not moved yet),
// and this packet is ACKed at once with the new one.
void Connection::dctcp_ce_echo(Time now, uint8_t ce, bool* ack_now) {
  if (ccs_.ce_state != ce) {
    if (rcv_.ack_pending()) {  // ICSK_ACK_TIMER: an ACK is owed
      ecn_.demand_cwr = ccs_.ce_state != 0;
      send_ack(now);
    }
    *ack_now = true;  // ICSK_ACK_NOW
  }
  ccs_.ce_state = ce;
  ecn_.demand_cwr = ce != 0;
}

// Linux tcp_ecn_rcv_ecn_echo: ECE counts only on a non-SYN segment of an
// ECN connection (on a SYN-ACK it is negotiation, not congestion).
bool Connection::ecn_echo(const wire::TcpHeader& h) const {
  return ecn_.ok && h.has(ECE) && !h.has(SYN);
}

// After the RecoveryMachine ran: a window reduction that began (ECE, loss,
// RTO, a TLP-repaired loss) queues CWR for the next new data segment (Linux
// tcp_ecn_queue_cwr, RFC 3168 §6.1.2 "the sender ... sets the CWR bit");
// an undo that restored ssthresh withdraws it (tcp_ecn_withdraw_cwr).
void Connection::ecn_after_recovery(uint32_t prior_reductions, bool withdraw) {
  if (!ecn_.ok) return;
  if (rec_.reductions() != prior_reductions) ecn_.queue_cwr = true;
  if (withdraw) ecn_.queue_cwr = false;
}

}  // namespace weir::tcp
