// Building and sending segments (Linux tcp_output.c): SYN, SYN-ACK, ACK, RST,
// and data under the send window, the congestion window and Nagle.
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include <sys/socket.h>

#include "tcp/connection.h"
#include "tcp/flow_label.h"

namespace weir::tcp {
using namespace wire::tcp_flag;

// Linux tcp_current_mss: mss_cache_ was sized for the options every segment
// carried at the last sync (timestamps, an MD5 signature); the data of the
// next segment is cut by whatever its own options add or take: SACK blocks
// while the receive side holds data out of order or owes a D-SACK (as many
// as emit() will write), an MD5 key set or deleted since. RFC 9293 §3.7.1:
// a segment's data is the effective send MSS less its TCP header and
// options (RFC 6691 §2), so a segment with SACK blocks never outgrows the
// MTU or the peer's MSS.
uint32_t Connection::current_mss_slow() const {
  uint32_t opt = tcp_options_size();
  if (sack_ok_ && rcv_.has_sack_blocks()) {
    const uint32_t room = wire::kTcpOptionsMax - opt;
    const size_t fit = room >= 12 ? std::min<size_t>((room - 4) / 8, wire::kMaxSackBlocks) : 0;
    const size_t n = std::min(fit, rcv_.sack_block_count());
    if (n > 0) opt += 4 + 8 * static_cast<uint32_t>(n);  // NOP NOP kind len, 8 per block
  }
  const int64_t mss = int64_t{mss_cache_} + mss_opts_ - opt;
  return mss > 0 ? static_cast<uint32_t>(mss) : 1;
}

// RFC 2385 §2.0 "every segment sent on a TCP connection to be protected"
// carries the option; the packet builder fills the digest (wire/tcp_md5.h).
// Linux looks the key up per segment (tcp_md5_do_lookup in
// __tcp_transmit_skb), so a key set or deleted later applies at once.
void Connection::sign_md5(wire::TcpHeader& h) const {
  const md5::Key* k = md5_key();
  if (!k) {
    h.options.md5.reset();
    h.md5_key = {};
    return;
  }
  h.options.md5 = wire::Md5Digest{};
  h.md5_key = k->bytes();
}

wire::TcpHeader Connection::header(uint8_t flags, Seq32 seq) const {
  wire::TcpHeader h;
  h.src_port = tuple_.local.port;
  h.dst_port = tuple_.remote.port;
  h.seq = seq;
  h.flags = flags;
  if (flags & ACK) h.ack = rcv_.rcv_nxt();
  return h;
}

// header(flags, seq) written into tx_hdr_, for segments that are not SYNs.
// Only the fields a non-SYN segment sets are written (ports, sequence
// numbers, flags, window by emit, timestamps, SACK blocks): no other option
// is ever set on it, so the rest of the template stays as constructed.
wire::TcpHeader& Connection::tx_header(uint8_t flags, Seq32 seq) {
  wire::TcpHeader& h = tx_hdr_;
  h.src_port = tuple_.local.port;
  h.dst_port = tuple_.remote.port;
  h.seq = seq;
  h.ack = (flags & ACK) ? rcv_.rcv_nxt() : Seq32();
  h.flags = flags;
  h.window = 0;
  h.options.ts.reset();
  h.options.sack_count = 0;
  return h;
}

void Connection::add_ts(wire::TcpHeader& h, Time now) const {
  // RFC 7323 §5.4: a 1 ms clock; Linux adds a per-connection offset.
  if (ts_ok_) h.options.ts = wire::TcpTimestamps{static_cast<uint32_t>(now.ms()) + ts_offset_, ts_recent_};
}

XmitResult Connection::emit(Time now, wire::TcpHeader& h, wire::PayloadView payload) {
  // Looked up once per segment: the stack's counters are one object for
  // its lifetime (TcpEnv::counters), also across output().
  Counters& counters = env_.counters();
  sign_md5(h);
  if (!h.has(SYN)) {
    urg_header(h);  // tcp_urgent.cc: URG while SND.UP is ahead
    // A timewait sock does not select a window (Linux tcp_v4_timewait_ack
    // sends the one tcp_time_wait froze), so reading the holder's data
    // after TIME-WAIT began never opens it.
    h.window = timewait_sock() ? tw_window_field() : rcv_.select_window(counters);
    if (sack_ok_ && !h.has(RST) && !timewait_sock() && rcv_.has_sack_blocks()) {
      // Written straight into the header (no non-SYN segment has others).
      // Linux tcp_established_options: the blocks that fit in the 40 bytes
      // the other options leave, after 4 for NOP NOP kind len (RFC 2018 §3):
      // 4 alone, 3 with TS, 2 with MD5, none with TS and MD5. A timewait
      // sock's ACK carries none, not even a D-SACK (tcp_v4_timewait_ack and
      // tcp_v6_timewait_ack add timestamps and signatures only).
      const uint32_t room = wire::kTcpOptionsMax - tcp_options_size();
      const size_t max = room >= 12 ? std::min<size_t>((room - 4) / 8, wire::kMaxSackBlocks) : 0;
      const size_t n = max ? rcv_.sack_blocks(std::span(h.options.sack.data(), max), max) : 0;
      h.options.sack_count = static_cast<uint8_t>(n);
    }
  }
  // RFC 3168 §6.1.1: SYNs are not-ECT, but DCTCP's are ECT(0) (INET_ECN_xmit).
  const uint8_t ecn = h.has(SYN) ? syn_ecn() : ecn_send(h, payload.size());
  if (!h.has(SYN)) tx_ecn_ = ecn;  // Linux tcp_ecn_send: INET_ECN_xmit / INET_ECN_dontxmit
  // Read before the output: a device that delivers synchronously back into
  // the stack may send again from this connection, reusing tx_hdr_.
  const bool has_ack = h.has(ACK);
  IpFields ip = ip_fields(ecn);
  // Linux __tcp_transmit_skb: skb_set_dst_pending_confirm; the neighbour
  // is confirmed as the packet goes out (sock_confirm_neigh clears it).
  ip.confirm_neighbor = std::exchange(dst_pending_confirm_, false);
  const XmitResult r = env_.output(tuple_, h, payload, ip);
  // Linux __tcp_transmit_skb counts TCP_MIB_OUTSEGS and segs_out and runs
  // tcp_event_ack_sent before queue_xmit: a segment the device drops still
  // counts, and a dropped ACK is not sent again (__tcp_send_ack ignores the
  // error; the next segment carries the acknowledgment).
  counters.inc(Counter::TcpOutSegs);
  ++segs_out_;
  if (has_ack && synchronized_rcv_) {
    rcv_.on_ack_sent(now);
    timers_.cancel(TimerKind::kDelAck);
  }
  if (r == XmitResult::kDropped) on_local_drop(now);
  return r;
}

// The IP header of this connection's segments: the socket's DSCP (IP_TOS,
// or IPV6_TCLASS for native IPv6; RFC 2474) with the segment's ECN field
// (RFC 3168 §5, chosen by §6.1.1's rules in ecn_send), and the socket's
// TTL / hop limit (Linux __ip_queue_xmit: iph->tos = inet->tos,
// ip_select_ttl; ip6_xmit: tclass, np->hop_limit). TIME-WAIT answers as
// Linux's timewait socket does, through the control socket
// (tcp_v4_timewait_ack -> ip_send_unicast_reply): tw_tos without the ECN
// field, and the default TTL. So does a request's out-of-window ACK
// (tcp_v4_reqsk_send_ack), with the arriving segment's DSCP.
//
// An IPv6 segment's flow label is made per packet from the transmit hash,
// as ip6_xmit calls ip6_make_flowlabel (tcp/flow_label.h), so the sysctl
// and IPV6_AUTOFLOWLABEL apply from the next segment on.
IpFields Connection::ip_fields(uint8_t ecn) const {
  if (timewait_sock() || reply_tos_ >= 0 || synack_of_request_) [[unlikely]] return control_ip_fields();
  const StackConfig& cfg = env_.cfg();
  const bool v4 = tuple_.remote.addr.is_v4();
  IpFields f = socket_ip_fields(opts_, cfg, v4);
  if (!v4) f.flow_label = socket_flow_label(cfg);
  f.tos |= ecn;
  return f;
}

// The two answers that go through Linux's control socket: TIME-WAIT's
// (the socket's DSCP, the default TTL) and a request's out-of-window ACK
// (the arriving segment's DSCP, the default TTL); both with the flow label
// of the socket's (or request's) transmit hash. Out of line: the common
// path above stays small enough to inline into emit.
//
// Out of line too: a Fast Open child's SYN-ACK, which is its request's
// (tcp_rtx_synack -> tcp_make_synack sets the skb's hash from
// tcp_rsk(req)->txhash), so it carries the request's label, redrawn by each
// retransmission (synack_rehash), while the child's own hash labels its
// data. The mark is taken here, before the segment leaves, so nothing the
// output sets off in turn is mistaken for the SYN-ACK.
IpFields Connection::control_ip_fields() const {
  const StackConfig& cfg = env_.cfg();
  const bool v4 = tuple_.remote.addr.is_v4();
  if (synack_of_request_) {
    synack_of_request_ = false;
    IpFields f = socket_ip_fields(opts_, cfg, v4);  // a SYN-ACK is not-ECT (RFC 3168 §6.1.1)
    f.tos |= syn_ecn();                              // ... but DCTCP's listener tos has ECT(0)
    if (!v4) f.flow_label = make_flow_label(cfg, req_txhash_, sock_autolabel(cfg, opts_.ipv6_autoflowlabel));
    return f;
  }
  const uint32_t label = v4 ? 0 : flow_label();
  if (timewait_sock()) {
    return {socket_ip_fields(opts_, cfg, v4).tos, reply_ip_fields(cfg, v4, 0).ttl, label};
  }
  IpFields r = reply_ip_fields(cfg, v4, static_cast<uint8_t>(reply_tos_));
  r.flow_label = label;
  return r;
}

// flow_label() for the socket's own segments, remade only when the hash,
// a sysctl or IPV6_AUTOFLOWLABEL changed since: the per-segment cost is
// three compares (Linux makes it in ip6_xmit for every packet).
uint32_t Connection::socket_flow_label(const StackConfig& cfg) const {
  if (cfg.auto_flowlabels != label_mode_ || cfg.flowlabel_state_ranges != label_ranges_ ||
      opts_.ipv6_autoflowlabel != label_opt_) {
    label_ = flow_label();
    label_mode_ = static_cast<int8_t>(cfg.auto_flowlabels);
    label_ranges_ = static_cast<int8_t>(cfg.flowlabel_state_ranges);
    label_opt_ = opts_.ipv6_autoflowlabel;
  }
  return label_;
}

// The label of this connection's IPv6 segments. A connection that never
// drew a hash (a listener) has none on its segments, so Linux's
// skb_get_hash_flowi6 hashes the flow. TIME-WAIT answers through the
// control socket (tcp_v6_timewait_ack -> tcp_v6_send_response ->
// ip6_xmit(ctl_sk)) with tw_txhash, the socket's hash, and the control
// socket's auto-label choice: the sysctl's default, not IPV6_AUTOFLOWLABEL.
// So does a request's out-of-window ACK (tcp_v6_reqsk_send_ack: label 0,
// tcp_rsk(req)->txhash).
uint32_t Connection::flow_label() const {
  const StackConfig& cfg = env_.cfg();
  const uint32_t hash = txhash_ ? txhash_ : flow_hash(cfg.secret, tuple_);
  const bool ctl_sk = timewait_sock() || reply_tos_ >= 0;
  const bool autolabel = ctl_sk ? default_autolabel(cfg) : sock_autolabel(cfg, opts_.ipv6_autoflowlabel);
  return make_flow_label(cfg, hash, autolabel);
}

// Linux __tcp_transmit_skb: queue_xmit returned NET_XMIT_DROP (err > 0), so
// tcp_enter_cwr() before net_xmit_eval() passes the error up: local
// congestion is congestion (prior_ssthresh = 0 even when already reducing,
// so the reduction cannot be undone). Not before the handshake completes:
// the congestion state is set up at ESTABLISHED (tcp_init_transfer).
void Connection::on_local_drop(Time now) {
  if (!synchronized() || state_ == State::kSynReceived) return;
  const uint32_t prior_reductions = rec_.reductions();
  rec_.enter_cwr(now, snd_.nxt, *cc_, ccs_);
  ecn_after_recovery(prior_reductions, false);  // tcp_init_cwnd_reduction -> tcp_ecn_queue_cwr
  if (ca_state_ != rec_.ca_state()) {
    ca_state_ = rec_.ca_state();
    trace_event(now, TraceEvent::kCaState, static_cast<uint64_t>(ca_state_));
  }
}

// A segment of [seq, end) the device dropped (Linux __tcp_transmit_skb
// returned > 0). New data stays unsent: tcp_write_xmit breaks before
// tcp_event_new_data_sent, so SND.NXT, packets_out and the timers are left
// alone. A retransmission was counted before queue_xmit (TCP_MIB_RETRANSSEGS,
// total_retrans, bytes_retrans in __tcp_retransmit_skb), is marked
// EVER_RETRANS (no RTT sample from a transmission that never happened) and
// counts TcpExtTCPRetransFail, but never TCPCB_RETRANS / retrans_out
// (tcp_retransmit_skb does that only on success); the undo stamp and
// undo_retrans still see the attempt ("first (attempted) retransmit").
void Connection::on_segment_dropped(Time now, SeqRange r, bool retransmit, bool tlp) {
  if (!r.empty()) {  // __tcp_transmit_skb: data_segs_out and bytes_sent before queue_xmit
    bytes_sent_ += r.len();
    ++data_segs_out_;
  }
  if (!retransmit) return;
  Counters& c = env_.counters();
  c.inc(Counter::TcpRetransSegs);
  c.inc(Counter::TcpExtTCPRetransFail);
  ++total_retrans_;
  bytes_retrans_ += r.len();
  if (r.empty()) return;
  auto pkts = sb_.on_retransmit(r, mss_cache_, now, {}, RetransmitKind::kFailed);
  if (pkts && !tlp) rec_.on_retransmit_failed(*pkts, tsval(now));
}

XmitResult Connection::send_syn(Time now) {
  const StackConfig& cfg = env_.cfg();
  wire::TcpHeader h = header(SYN, snd_.iss);
  h.options.mss = static_cast<uint16_t>(advmss_);
  if (cfg.tcp_window_scaling) h.options.wscale = rcv_wscale_offer_;
  h.options.sack_permitted = cfg.tcp_sack;
  // Linux tcp_syn_options: a SYN with an MD5 signature offers no timestamps
  // (the 20 bytes of signature leave no room for TS next to SACK-permitted
  // and window scale in the 40).
  // The echo is TS.Recent (Linux tcp_syn_options: tsecr = ts_recent): 0 on
  // a fresh socket, the old peer's value on one that took over TIME-WAIT.
  if (cfg.tcp_timestamps && !md5_key())
    h.options.ts = wire::TcpTimestamps{static_cast<uint32_t>(now.ms()) + ts_offset_, ts_recent_};
  h.window = rcv_.syn_window();  // RFC 7323 §2.2: never scaled
  ecn_send_syn(h);
  // RFC 7413 §4.1.2 (Linux tcp_send_syn_data): the first SYN carries the
  // Fast Open option and the queued data; a retransmitted SYN carries
  // neither ("cookie.len = -1: exclude Fast Open option for SYN retries").
  const bool first = active_fo_.first_syn;
  active_fo_.first_syn = false;
  if (first && active_fo_.option) {
    h.options.fastopen = active_fo_.option;
    active_fo_.syn_fastopen = true;  // tcp_syn_options: tp->syn_fastopen
    active_fo_.exp = active_fo_.option->exp;
  }
  active_fo_.option.reset();
  const uint32_t data = first ? active_fo_.syn_data : 0;
  const auto pieces = sndq_.view(0, data);
  const XmitResult r = emit(now, h, wire::PayloadView(pieces[0], pieces[1]));
  if (first) active_fo_.syn_time = now;
  if (data > 0) {
    bytes_sent_ += data;  // __tcp_transmit_skb: SYN data counts as data sent
    ++data_segs_out_;
    env_.counters().inc(Counter::TcpExtTCPOrigDataSent);
    last_snd_data_ = now;
  }
  snd_.nxt = seq_max(snd_.nxt, snd_.iss + 1 + data);
  snd_max_ = seq_max(snd_max_, snd_.nxt);
  return r;
}

XmitResult Connection::send_synack(Time now) {
  wire::TcpHeader h = header(SYN | ACK, snd_.iss);
  h.options.mss = static_cast<uint16_t>(advmss_);
  if (wscale_ok_) h.options.wscale = rcv_wscale_offer_;
  h.options.sack_permitted = sack_ok_;
  add_ts(h, now);
  h.window = rcv_.syn_window();
  h.options.fastopen = synack_cookie_;  // RFC 7413 §4.2.2 (tcp/fastopen.h)
  if (ecn_.ok) h.flags |= ECE;  // RFC 3168 §6.1.1: an ECN-setup SYN-ACK (ECE, not CWR)
  synack_of_request_ = fastopen_child_ && req_txhash_ != 0;  // control_ip_fields
  const XmitResult r = emit(now, h, {});
  // A Fast Open child may have sent data since its first SYN-ACK.
  snd_.nxt = seq_max(snd_.nxt, snd_.iss + 1);
  snd_max_ = seq_max(snd_max_, snd_.nxt);
  return r;
}

void Connection::send_ack(Time now) {
  wire::TcpHeader& h = tx_header(ACK, snd_.nxt);
  add_ts(h, now);
  emit(now, h, {});
}

void Connection::send_rst(Time now, Seq32 seq) {
  // Linux tcp_send_active_reset: RST|ACK at SND.NXT.
  wire::TcpHeader h = header(RST | ACK, seq);
  add_ts(h, now);
  emit(now, h, {});
  env_.counters().inc(Counter::TcpOutRsts);
}

// Room left in the peer's window: snd.una + snd.wnd - snd.nxt, zero when the
// right edge has retreated behind snd.nxt. seq_len cannot wrap (seed 000).
uint32_t Connection::usable_window() const {
  const Seq32 wnd_end = snd_.una + snd_.wnd;
  // Seed 000's bug, for the lab's contrast only: Inferno's tcpoutput took
  // the unsigned difference, which wraps to ~4 GB past a retreated edge.
  if (env_.cfg().fault_seed000_usable_wraps) return wnd_end.raw() - snd_.nxt.raw();
  return seq_len(snd_.nxt, wnd_end);
}

// Linux tcp_nagle_test/tcp_nagle_check with Minshall's variant: a partial
// segment waits while a previous small segment is unacknowledged (RFC 896,
// draft-minshall-nagle), or while corked.
bool Connection::nagle_allows(uint32_t len, uint32_t mss, bool more) const {
  // Linux tcp_nagle_test: "Don't use the nagle rule for urgent data".
  if (len >= mss || push_once_ || urg_mode_) return true;
  const bool cork = opts_.cork || more;
  if (cork) return false;
  if (opts_.nodelay) return true;
  const bool small_outstanding = snd_sml_ > snd_.una && snd_sml_ <= snd_.nxt;
  return !(sb_.packets_out() > 0 && small_outstanding);
}

// Sends [seq, seq+len) (and the FIN if `fin`). Returns false if nothing was sent.
// PSH: the caller's choice for a burst of new data; otherwise a segment
// carries it where a PSH-marked chunk ends (Linux tcp_fragment/tso_fragment
// leave PSH on the tail piece only).
bool Connection::send_one(Time now, Seq32 seq, uint32_t len, bool fin, bool retransmit, bool tlp,
                          std::optional<bool> psh) {
  const uint32_t offset = seq_len(snd_.una, seq);
  if (offset + len > sndq_.size()) len = sndq_.size() > offset ? static_cast<uint32_t>(sndq_.size() - offset) : 0;
  // The payload stays in the send ring: the stack copies it into the packet
  // while checksumming it (Linux sends the skb's pages; no scratch copy).
  const auto pieces = sndq_.view(offset, len);
  const Seq32 end = seq + len;
  uint8_t flags = ACK;
  if (fin) flags |= FIN;
  if (len > 0) {
    // A lone segment carries PSH only where a marked chunk ends: Linux's
    // tso_fragment/tcp_fragment clear it on the head piece (a TLP's new
    // segment cut from a marked skb goes out without it).
    if (!psh) psh = psh_end(end);
    if (*psh) flags |= PSH;
  }
  wire::TcpHeader& h = tx_header(flags, seq);
  add_ts(h, now);
  // Linux tcp_event_data_sent, in __tcp_transmit_skb before the IP layer
  // builds the packet: CA_EVENT_TX_START when nothing is in flight (CUBIC's
  // idle epoch shift; DCTCP's PLB may move this very packet to a new label).
  if (len > 0 && !retransmit && sb_.packets_out() == 0) {
    cc_->cwnd_event(ccs_, cc::CaEvent::TxStart, now);
    take_plb_rehash();
  }
  const XmitResult xr = emit(now, h, wire::PayloadView(pieces[0], pieces[1]));
  if (!tx_stamps_.empty() && len > 0) tstamp_on_xmit(now, seq, end, xr == XmitResult::kSent);
  if (xr == XmitResult::kDropped) {
    on_segment_dropped(now, SeqRange{seq, end}, retransmit, tlp);
    return false;
  }
  Counters& c = env_.counters();
  if (len > 0) {
    // Linux tcp_rate_skb_sent(): every transmission snapshots the delivery
    // state; packets_out is counted before this packet.
    const cc::TxRateSnapshot snap = ccs_.rate.on_packet_sent(now, sb_.packets_out());
    if (retransmit) {
      // A TLP probe is not a retransmission in flight (RFC 8985 §7.3, Linux
      // tcp_send_loss_probe): it only marks the packet as ever retransmitted.
      auto pkts = sb_.on_retransmit(SeqRange{seq, end}, mss_cache_, now, snap,
                                    tlp ? RetransmitKind::kProbe : RetransmitKind::kNormal);
      if (pkts && !tlp) rec_.on_retransmit(*pkts, tsval(now));
      c.inc(Counter::TcpRetransSegs);
      ++total_retrans_;
      bytes_retrans_ += len;
      trace_event(now, TraceEvent::kRetransmit, seq.raw(), end.raw());
    } else {
      // An MTU probe is one packet however long (Linux tcp_mtu_probe: one
      // skb), and so is a segment longer than mss_cache_ because its options
      // shrank since the last sync (current_mss).
      auto pkts = sb_.on_send(SeqRange{seq, end}, std::max(len, mss_cache_), now, snap);
      if (!pkts) return false;
      rec_.on_sent(*pkts);
      c.inc(Counter::TcpExtTCPOrigDataSent);
      trace_event(now, TraceEvent::kSend, seq.raw(), end.raw());
    }
    bytes_sent_ += len;
    ++data_segs_out_;
    ccs_.packets_out = sb_.packets_out();
    pacer_.on_sent(ccs_, len, data_segs_out_, now);  // EDT: the next packet's departure
    last_snd_data_ = now;
    ccs_.lsndtime = now;
    rcv_.on_data_sent(now);
    // Linux tcp_minshall_update runs in tcp_write_xmit only: a retransmitted
    // small segment (e.g. SYN data resent by tcp_rcv_fastopen_synack) does
    // not make Nagle hold the next partial segment. "Small" is against
    // mss_now (tcp_current_mss), which exceeds mss_cache_ only when options
    // shrank since the sync: tested first, a full segment being the rule.
    if (!retransmit && (len < mss_cache_ || mss_opts_ > tcp_options_size()) && len < current_mss()) snd_sml_ = end;
  } else if (retransmit) {
    c.inc(Counter::TcpRetransSegs);
    ++total_retrans_;
  }
  if (fin && !retransmit) fin_alone_ = len == 0;  // Linux tcp_send_fin: tail skb or a new one
  const Seq32 after = end + (fin ? 1 : 0);
  if (after > snd_.nxt) snd_.nxt = after;
  ccs_.snd_nxt = snd_.nxt;  // HyStart's rounds end at SND.NXT (Linux reads tp->snd_nxt)
  snd_max_ = seq_max(snd_max_, snd_.nxt);
  if (!timers_.armed(TimerKind::kRetransmit) || timers_.retransmit_mode == RetransmitMode::kProbe0)
    arm_rto(now);  // RFC 6298 (5.1)
  return true;
}

// Linux tcp_tso_autosize: a burst is about 1 ms of the pacing rate
// (sk_pacing_shift 10), plus gso_max_size >> (min_rtt >> tcp_tso_rtt_log) on
// short paths, and at least tcp_min_tso_segs (2) segments.
uint32_t Connection::tso_segs() const {
  const StackConfig& cfg = env_.cfg();
  const uint32_t mss = std::max<uint32_t>(current_mss(), 1);  // tcp_tso_segs(sk, mss_now)
  uint64_t rate = ccs_.pacing_rate;
  if (rate == 0) {
    // tcp_update_pacing_rate before the cc has run: cwnd * mss / srtt at the
    // slow-start ratio; no RTT yet means no limit (sk_pacing_rate = ~0).
    if (!rtt_.has_sample() || rtt_.srtt_us() == 0) return 0xffff;
    rate = uint64_t{mss} * ccs_.snd_cwnd * 1000000u * static_cast<uint64_t>(cfg.tcp_pacing_ss_ratio) / 100 /
           rtt_.srtt_us();
  }
  uint64_t bytes = rate >> ccs_.pacing_shift;
  const Duration min_rtt = rtt_.min_rtt();
  if (min_rtt != Duration::infinite()) {
    const uint64_t r = static_cast<uint64_t>(std::max<int64_t>(min_rtt.us(), 0)) >> 9;  // tcp_tso_rtt_log
    if (r < 32) bytes += uint64_t{65536} >> r;
  }
  const uint64_t segs = std::max<uint64_t>(bytes / mss, cfg.tcp_min_tso_segs);
  return static_cast<uint32_t>(std::min<uint64_t>(segs, 0xffff));
}

// min(segs, tso_segs()). tso_segs() is never below tcp_min_tso_segs (nor
// above 0xffff), so a count within both is the answer without computing it
// (a 64-bit division per burst; near a full congestion window, as when
// ACK-clocked, the count is one or two segments).
uint32_t Connection::tso_cap(uint32_t segs) const {
  const uint32_t floor = std::min<uint32_t>(env_.cfg().tcp_min_tso_segs, 0xffff);
  return segs <= floor ? segs : std::min(segs, tso_segs());
}

// One Linux tcp_write_xmit iteration: a burst of new segments from one chunk,
// at most tcp_tso_autosize segments and (tcp_cwnd_test) half the congestion
// window, each allowed by the peer's window and Nagle. The burst is one Linux
// skb as transmitted; its last segment carries PSH (tcp_gso_segment leaves it
// on the last segment only) when the skb has it: __tcp_transmit_skb forces it
// on every multi-segment (GSO) skb, and a single segment has it only where
// its chunk ends marked (tcp_mark_push; tso_fragment keeps PSH on the tail).
bool Connection::send_burst(Time now, uint32_t mss, bool more) {
  const uint32_t unsent = seq_len(snd_.nxt, write_seq_);
  const bool fin_pending = fin_queued_ && snd_max_ != write_seq_ + 1 && snd_.nxt == write_seq_;
  if (unsent == 0 && !fin_pending) return false;
  // RFC 5681 §3.1: at most cwnd packets in flight. Linux tcp_cwnd_test is
  // not strict for the final FIN: a last segment carrying it (one MSS of data
  // at most) goes out even with the window full.
  const uint32_t in_flight = sb_.in_flight();
  const bool final_fin = fin_queued_ && unsent <= mss;
  if (in_flight >= ccs_.snd_cwnd && !final_fin) return false;
  if (pacer_.hold(ccs_, now)) return false;  // Linux tcp_pacing_check
  uint32_t quota = 1;
  if (in_flight < ccs_.snd_cwnd) {
    quota = tso_cap(std::min(std::max<uint32_t>(ccs_.snd_cwnd >> 1, 1), ccs_.snd_cwnd - in_flight));
  }
  const size_t ci = chunk_index(snd_.nxt);
  const Seq32 chunk_end = ci < chunks_.size() ? chunks_[ci].end : write_seq_;
  const bool chunk_psh = ci < chunks_.size() && chunks_[ci].psh;
  // Dry run: how many segments go out, so the last one can carry PSH.
  // Only the first n entries are written and read: not zeroed, as that
  // cost more than the dry run itself on every burst.
  struct Piece { uint32_t len; bool fin; };
  std::array<Piece, 64> pieces;
  size_t n = 0;
  Seq32 pos = snd_.nxt;
  uint32_t room = usable_window();
  const bool seed000 = env_.cfg().fault_seed000_usable_wraps;
  while (n < quota && n < pieces.size()) {
    uint32_t len = std::min(seq_len(pos, chunk_end), mss);
    // Seed 000's fault (lab contrast): Inferno's tcpoutput cut a segment to
    // the usable window, with no Nagle test, so it filled the window to
    // its last byte.
    const bool cut = seed000 && len > room && room > 0;
    if (cut) len = room;
    const bool fin = fin_queued_ && pos + len == write_seq_;
    if (len == 0 && !fin) break;
    // RFC 9293 §3.8.6.2.1: never beyond snd.una + snd.wnd; a retreated edge
    // leaves zero room and the sender waits (seed 000).
    if (len + (fin ? 1 : 0) > room) break;
    // Linux tcp_write_xmit applies Nagle to the queue's last skb only; a
    // chunk closed before the tail goes out whole (TCP_NAGLE_PUSH).
    if (!fin && !cut && chunk_end == write_seq_ && !nagle_allows(len, mss, more)) break;
    pieces[n++] = Piece{len, fin};
    room -= len;
    pos += len;
    if (fin || len < mss) break;
  }
  if (n == 0) return false;
  const Seq32 burst_begin = snd_.nxt;
  size_t sent = 0;
  for (size_t i = 0; i < n; ++i) {
    const bool psh = i + 1 == n && (n >= 2 || (chunk_psh && pos == chunk_end));
    if (!send_one(now, snd_.nxt, pieces[i].len, pieces[i].fin, false, false, psh)) break;
    ++sent;
  }
  if (sent == 0) return false;
  skbs_.on_sent(snd_.nxt, snd_.una);  // the burst is one skb (tso_fragment split it off)
  // Retransmissions stay within it. One segment of data and no FIN (at
  // most one MSS: one scoreboard packet, which on_send marks as ending its
  // skb, ending at HighData) is one skb already: join_skb would find nothing
  // to join, so the walk is skipped (most bursts at a paced rate are one
  // segment). A FIN puts the burst's end one past HighData; that case, like
  // every longer burst, still goes through join_skb.
  if (sent > 1 || snd_.nxt != sb_.high_data()) sb_.join_skb(SeqRange{burst_begin, snd_.nxt});
  return true;
}

// Linux tcp_write_xmit's is_rwnd_limited: data waits, the congestion window
// has room, but the next segment does not fit the peer's window
// (tcp_snd_wnd_test).
bool Connection::rwnd_limited() const {
  const uint32_t unsent = seq_len(snd_.nxt, write_seq_);
  if (unsent == 0 || sb_.in_flight() >= ccs_.snd_cwnd) return false;
  return std::min(unsent, current_mss()) > usable_window();
}

// Linux tcp_push_pending_frames: retransmissions of marked losses first,
// then new data; with nothing in flight and data blocked by the peer's
// window, the persist timer probes it (RFC 9293 §3.8.6.1).
void Connection::push(Time now, bool more, bool one) {
  // A passive Fast Open socket sends before its handshake completes (RFC 7413 §4.2.2).
  if ((!synchronized() && !fastopen_pending()) || state_ == State::kTimeWait) return;
  prune_chunks();
  if (!one && sb_.lost_out() > sb_.retrans_out()) retransmit_lost(now);
  const uint32_t mss = current_mss();  // tcp_push_pending_frames -> tcp_write_xmit(sk, tcp_current_mss(sk))
  const bool had_unsent = snd_.nxt != write_seq_;
  bool sent_new = false;
  defer_cwnd_limited_ = defer_rwnd_limited_ = false;
  // Linux tcp_write_xmit: an MTU probe goes first, or holds new data back.
  const MtuProbe::Verdict probe = one ? MtuProbe::Verdict::kNo : mtu_probe(now);
  sent_new = probe == MtuProbe::Verdict::kProbe;
  while (probe != MtuProbe::Verdict::kWait && !tso_defer(now, mss, one) && send_burst(now, mss, more)) {
    sent_new = true;
    if (one) break;
  }
  push_once_ = false;
  if (had_unsent)  // tcp_push_pending_frames -> tcp_write_xmit
    chrono_after_xmit(now, rwnd_limited() || defer_rwnd_limited_);
  if (sent_new) set_xmit_timer(now, true);
  validate_cwnd(now, sent_new);
  const bool unsent = seq_len(snd_.nxt, write_seq_) > 0 ||
                      (fin_queued_ && seq_len(snd_.nxt, write_seq_ + 1) > 0);
  if (unsent && sb_.packets_out() == 0 && snd_.nxt == snd_.una &&
      !timers_.armed(TimerKind::kRetransmit) && pacer_.deadline().is_never())
    arm_persist(now);
}

// Linux tcp_write_xmit's tail: tcp_cwnd_validate after a pass that sent or
// found the congestion window full (RFC 7661; cc::cwnd_validate).
void Connection::validate_cwnd(Time now, bool sent) {
  const bool cwnd_limited = sb_.in_flight() >= ccs_.snd_cwnd || defer_cwnd_limited_;
  if (!sent && !cwnd_limited) return;
  const StackConfig& cfg = env_.cfg();
  ccs_.packets_out = sb_.packets_out();
  cc::cwnd_validate(*cc_, ccs_,
                    {cwnd_limited, rtt_.rto(), init_cwnd_, cfg.tcp_slow_start_after_idle != 0, nospace_},
                    now);
  chrono_sndbuf_check(now);
}

// RFC 6298 (5.4) / RFC 5681 §3.2: retransmit the earliest unacknowledged
// segment. kDropped: the local device refused it (Linux tcp_retransmit_skb
// returned > 0); nothing to resend also reports kSent, as before.
XmitResult Connection::retransmit_head(Time now) {
  if (state_ == State::kSynSent || state_ == State::kSynReceived) {
    // __tcp_retransmit_skb counts TCP_MIB_RETRANSSEGS before the transmit.
    env_.counters().inc(Counter::TcpRetransSegs);
    const XmitResult r = state_ == State::kSynSent ? send_syn(now) : send_synack(now);
    if (r == XmitResult::kDropped) env_.counters().inc(Counter::TcpExtTCPRetransFail);
    return r;
  }
  uint32_t len = 0;
  std::optional<bool> psh;
  if (!sb_.empty()) {
    const uint32_t cur_mss = current_mss();  // __tcp_retransmit_skb
    psh = retrans_collapse(0, snd_.una + snd_.wnd, cur_mss);  // tcp_retrans_collapse.cc
    len = std::min(sb_.at(0).seq.len(), cur_mss);
  }
  const bool fin = fin_queued_ && snd_max_ == write_seq_ + 1 && snd_.una + len == write_seq_;
  if (len == 0 && !fin) return XmitResult::kSent;
  return send_one(now, snd_.una, len, fin, true, false, psh) ? XmitResult::kSent : XmitResult::kDropped;
}

// RFC 6675 §5 (NextSeg rule 1) / Linux tcp_xmit_retransmit_queue: resend
// the packets marked lost while the pipe is below cwnd.
void Connection::retransmit_lost(Time now) {
  Seq32 from = snd_.una;
  while (sb_.in_flight() < ccs_.snd_cwnd) {
    if (pacer_.hold(ccs_, now)) break;  // Linux tcp_xmit_retransmit_queue: tcp_pacing_check
    auto idx = sb_.next_lost(from);
    if (!idx) break;
    const ScoreboardEntry& e = sb_.at(*idx);
    const Seq32 wnd_end = snd_.una + snd_.wnd;
    if (e.seq.begin >= wnd_end && e.seq.begin != snd_.una) break;  // Linux tcp_retransmit_skb
    // Linux tcp_xmit_retransmit_queue: one skb per step, of at most
    // min(cwnd - in_flight, tcp_tso_segs) segments and never beyond the skb
    // the lost packet was sent in; __tcp_transmit_skb forces PSH on one of
    // several segments, a single one keeps its skb's PSH (psh_end).
    const size_t segs = tso_cap(ccs_.snd_cwnd - sb_.in_flight());
    const uint32_t cur_mss = current_mss();  // __tcp_retransmit_skb
    size_t run = e.seq.len() > cur_mss ? 1 : std::max<size_t>(sb_.lost_run(*idx, segs), 1);
    // A lone small packet may first absorb the ones after it
    // (tcp_retrans_collapse.cc); a run of several is a multi-packet skb,
    // which Linux does not collapse.
    const std::optional<bool> merged_psh = run == 1 ? retrans_collapse(*idx, wnd_end, cur_mss) : std::nullopt;
    bool ok = true;
    for (size_t k = 0; k < run && ok; ++k) {
      const ScoreboardEntry& p = sb_.at(*idx + k);
      if (k > 0 && p.seq.end > wnd_end) {  // __tcp_retransmit_skb: within the window
        run = k;
        break;
      }
      const uint32_t len = std::min(p.seq.len(), cur_mss);
      const bool fin = fin_queued_ && snd_max_ == write_seq_ + 1 && p.seq.begin + len == write_seq_;
      const Seq32 begin = p.seq.begin;
      const std::optional<bool> psh = k + 1 < run ? std::optional<bool>(false)
                                      : run > 1   ? std::optional<bool>(true)
                                                  : merged_psh;
      from = begin + len;
      ok = send_one(now, begin, len, fin, true, false, psh);
    }
    if (!ok) break;
    sb_.set_skb_end(*idx + run - 1);  // tcp_fragment: the retransmitted piece is its own skb
  }
}


// ---- the write queue's chunks (Linux skbs, as far as PSH needs them) ----

// Linux tcp_xmit_size_goal: an skb holds up to a GSO frame (64 KB less
// headers) in whole segments, bounded by half the largest window the peer
// offered (tcp_bound_to_half_wnd), and at least one segment.
uint32_t Connection::size_goal() const {
  const uint32_t mss = std::max<uint32_t>(current_mss(), 1);  // tcp_send_mss: mss_now
  uint32_t goal = 65536 - 1 - 320;  // sk_gso_max_size - 1 - MAX_TCP_HEADER
  if (snd_.max_wnd) {
    const uint32_t cutoff = snd_.max_wnd > 536 ? snd_.max_wnd / 2 : snd_.max_wnd;
    if (goal > cutoff) goal = std::max<uint32_t>(cutoff, 68 - 20 - tcp_options_size());
  }
  return std::max(mss, goal / mss * mss);
}

// Linux forced_push(): more than half the peer's largest window was written
// since the last PSH.
bool Connection::forced_push(Seq32 seq) const { return seq > pushed_seq_ + (snd_.max_wnd >> 1); }

void Connection::prune_chunks() {
  while (!chunks_.empty() && chunks_.front().end <= snd_.una) chunks_.pop_front();
  while (chunks_.size() > kMaxChunks) {  // bounded: the two oldest become one
    const Chunk first = chunks_.front();
    chunks_.pop_front();
    chunks_.front().psh = chunks_.front().psh || first.psh;
  }
}

size_t Connection::chunk_index(Seq32 seq) const {
  // Chunks are contiguous, so their ends ascend: the answer is the one index
  // whose chunk ends after `seq` while the one before it does not. The last
  // answer, or the next one as SND.NXT moves on, usually still is; else a
  // binary search (a scan cost O(unsent chunks) on every ACK).
  const size_t n = chunks_.size();
  auto is_answer = [&](size_t i) {
    return i <= n && (i == n || seq < chunks_[i].end) && (i == 0 || !(seq < chunks_[i - 1].end));
  };
  if (is_answer(chunk_hint_)) return chunk_hint_;
  if (is_answer(chunk_hint_ + 1)) return ++chunk_hint_;
  size_t lo = 0, hi = n;  // upper_bound: the first chunk ending after `seq`
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (seq < chunks_[mid].end) hi = mid;
    else lo = mid + 1;
  }
  chunk_hint_ = lo;
  return chunk_hint_;
}

bool Connection::psh_end(Seq32 end) const {
  const size_t i = chunk_index(end - 1);
  return i < chunks_.size() && chunks_[i].end == end && chunks_[i].psh;
}

}  // namespace weir::tcp
