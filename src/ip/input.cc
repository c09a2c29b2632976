// Datagram input: parse once (wire), count and drop what is malformed, then
// demultiplex by 4-tuple to a connection, else to a listener, else answer
// with a reset (RFC 9293 §3.10.7.1). ICMP errors go to the connection they quote.
#include <algorithm>

#include "ip/stack_impl.h"
#include "tcp/flow_label.h"
#include "tcp/isn.h"
#include "tcp/receiver.h"

namespace weir {

using namespace wire::tcp_flag;

namespace {

void count_parse_error(Counters& c, wire::PacketError e) {
  switch (e) {
    case wire::PacketError::kIpTruncated:
    case wire::PacketError::kIpBadVersion:
    case wire::PacketError::kIpBadHeaderLength:
    case wire::PacketError::kIpBadChecksum: c.inc(Counter::IpInHdrErrors); break;
    case wire::PacketError::kIpFragment: c.inc(Counter::IpInDiscards); break;
    case wire::PacketError::kNotTcp: c.inc(Counter::IpInUnknownProtos); break;
    case wire::PacketError::kTcpBadChecksum:
      c.inc(Counter::TcpInCsumErrors);
      c.inc(Counter::TcpInErrs);
      break;
    case wire::PacketError::kTcpTruncated:
    case wire::PacketError::kTcpBadDataOffset:
    case wire::PacketError::kTcpBadOption: c.inc(Counter::TcpInErrs); break;
  }
}

// Linux ip_rcv_core / ip6_rcv_core: every accepted datagram by its ECN field
// (RFC 3168 §5: 00 not-ECT, 01 ECT(1), 10 ECT(0), 11 CE), in the MIB's order.
void count_ecn(Counters& c, const wire::IpInfo& ip) {
  static constexpr Counter kV4[] = {Counter::IpExtInNoECTPkts, Counter::IpExtInECT1Pkts,
                                    Counter::IpExtInECT0Pkts, Counter::IpExtInCEPkts};
  static constexpr Counter kV6[] = {Counter::Ip6InNoECTPkts, Counter::Ip6InECT1Pkts,
                                    Counter::Ip6InECT0Pkts, Counter::Ip6InCEPkts};
  c.inc((ip.version == 4 ? kV4 : kV6)[ip.tos & 3]);
}

}  // namespace

void StackImpl::input(Time now, std::span<const uint8_t> datagram, uint16_t gso_size, bool tcp_checksum_valid) {
  counters_.inc(Counter::IpInReceives);
  auto p = wire::parse_tcp_packet(datagram, true, tcp_checksum_valid);
  if (!p) {
    if (p.error() == wire::PacketError::kNotTcp) {
      input_icmp(now, datagram);
      return;
    }
    count_parse_error(counters_, p.error());
    return;
  }
  if (!owns(p->ip.dst)) {
    counters_.inc(Counter::IpInAddrErrors);
    return;
  }
  counters_.inc(Counter::IpInDelivers);
  count_ecn(counters_, p->ip);
  counters_.inc(Counter::TcpInSegs);
  input_tcp(now, *p, gso_size);
}

void StackImpl::input_tcp(Time now, const wire::TcpPacket& p, uint16_t gso_size) {
  const FourTuple t{Endpoint{p.ip.dst, p.tcp.dst_port}, Endpoint{p.ip.src, p.tcp.src_port}};
  // A gso_size not below the payload is no aggregate (Linux GRO sets it
  // only on merged packets).
  const uint16_t gso = gso_size < p.payload.size() ? gso_size : 0;
  const tcp::InSegment seg{p.tcp, p.payload, p.ip.tos, gso, p.headers, p.ip.flow_label, p.ip.ttl};
  if (const SocketId id = demux_find(t); id != kNoSocket) {
    Socket* s = find(id);
    if (s && s->conn) {
      if (md5_drop(*s, p)) return;
      tcp::Connection& c = *s->conn;
      // Linux tcp_timewait_state_process (TCP_TW_SYN): a newer SYN replaces
      // the TIME-WAIT connection and goes to the listener.
      if (c.state() == tcp::State::kTimeWait && c.timewait_accepts_syn(seg)) {
        if (Socket* ls = find_listener(t.local)) {
          if (md5_drop(*ls, p)) return;
          counters_.inc(Counter::TcpExtTWRecycled);
          kill_time_wait(now, *s);
          input_listener(now, *ls, t, seg);
          return;
        }
      }
      // A Fast Open child is already a full socket in the accept queue
      // (Linux finds it, not a request sock, and skips tcp_check_req).
      if (c.state() == tcp::State::kSynReceived && s->listener_parent && seg.h.has(ACK) &&
          !seg.h.has(RST) && !seg.h.has(SYN) && !c.fastopen_pending()) {
        Socket* ls = find(s->listener_parent);
        if (ls && ls->listener && ls->listener->accept_queue_full()) {
          // Linux tcp_check_req: no room to accept; drop the ACK, the
          // SYN-ACK timer will try again (tcp_abort_on_overflow = 0).
          counters_.inc(Counter::TcpExtListenOverflows);
          counters_.inc(Counter::TcpExtListenDrops);
          return;
        }
      }
      sync_path_mtu(*s);  // the ACK may clock out data (Linux tcp_current_mss)
      c.input(now, seg);
      after_call(*s);
      return;
    }
  }
  if (Socket* ls = find_listener(t.local)) {
    if (md5_drop(*ls, p)) return;
    if (input_listener(now, *ls, t, seg)) return;
    // Linux tcp_v4_send_reset with the listener as sk: its key signs the RST.
    reset_no_socket(t, seg, md5_listener_key(*ls, t.remote.addr));
    return;
  }
  md5_reset_no_socket(t, p, seg);
}

Socket* StackImpl::find_listener(const Endpoint& local) {
  auto it = listeners_.find(local);
  if (it == listeners_.end()) {
    const IpAddr any = local.addr.is_v4() ? IpAddr::v4(0) : IpAddr::v6({});
    it = listeners_.find(Endpoint{any, local.port});
    // An AF_INET6 socket bound to :: also hears IPv4 (IPv4-mapped) peers,
    // unless IPV6_V6ONLY (Linux inet6_lookup_listener: compute_score).
    if (it == listeners_.end() && local.addr.is_v4()) {
      it = listeners_.find(Endpoint{IpAddr::v6({}), local.port});
      if (it != listeners_.end()) {
        const Socket* l = find(it->second);
        if (l && l->v6only) it = listeners_.end();
      }
    }
  }
  if (it == listeners_.end()) return nullptr;
  Socket* s = find(it->second);
  return (s && s->listener) ? s : nullptr;
}

// RFC 9293 §3.10.7.1: CLOSED (no socket). An RST is dropped; otherwise
// <SEQ=SEG.ACK><CTL=RST> if ACK was set, else <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>.
void StackImpl::reset_no_socket(const FourTuple& t, const tcp::InSegment& seg, std::span<const uint8_t> md5_key) {
  if (seg.h.has(RST)) return;
  wire::TcpHeader h = tcp::reset_reply(t, seg);
  if (!md5_key.empty()) {
    h.options.md5 = wire::Md5Digest{};
    h.md5_key = md5_key;
  }
  // tcp_v4_send_reset / tcp_v6_send_reset with no socket: the control
  // socket's fields, and a label from the flow's own hash (no txhash).
  tcp::IpFields f = tcp::reply_ip_fields(cfg_, t.remote.addr.is_v4(), seg.tos);
  f.flow_label = tcp::make_flow_label(cfg_, tcp::flow_hash(cfg_.secret, t), tcp::default_autolabel(cfg_));
  output(t, h, {}, f);
  counters_.inc(Counter::TcpOutSegs);
  counters_.inc(Counter::TcpOutRsts);
}

// RFC 9293 §3.10.7.2 (LISTEN). Returns false when the segment should draw
// the CLOSED-state reset instead.
bool StackImpl::input_listener(Time now, Socket& ls, const FourTuple& t, const tcp::InSegment& seg) {
  if (seg.h.has(RST)) return true;  // "An incoming RST should be ignored."
  if (seg.h.has(ACK)) {
    if (!seg.h.has(SYN) && listener_cookie_ack(now, ls, t, seg)) return true;
    return false;  // "Any acknowledgment is bad": <SEQ=SEG.ACK><CTL=RST>
  }
  if (!seg.h.has(SYN)) return true;  // "drop the segment and return"
  // Linux tcp_rcv_state_process (LISTEN): SYN+FIN is never a real open
  // (a scan or a crafted packet): dropped, no SYN-ACK (TCP_FLAGS).
  if (seg.h.has(FIN)) return true;
  listener_syn(now, ls, t, seg);
  return true;
}

// A connection born of listener `ls` for tuple `t`: not yet visible to the
// application, demuxed, and counted against the SYN queue until accepted.
// It inherits the listener's options, IP_TOS and IP_TTL among them (Linux
// inet_csk_clone_lock copies inet->tos and uc_ttl); `syn_tos` is the TOS
// of the segment that opened it (the SYN, or a cookie's ACK: Linux
// cookie_tcp_reqsk_init sets syn_tos from the ACK).
Socket& StackImpl::new_child(Socket& ls, const FourTuple& t, uint8_t syn_tos) {
  Socket& c = new_socket(ls.v6);
  c.app_open = false;
  c.listener_parent = ls.id;
  c.local = t.local;
  c.conn = std::make_unique<tcp::Connection>(*this, c.id, ls.conn->opts());
  if (cfg_.tcp_reflect_tos) tcp::reflect_syn_tos(c.conn->opts(), t.remote.addr.is_v4(), syn_tos);
  // Linux tcp_v4_syn_recv_sock copies the listener's key for this peer (as a
  // full-length prefix); the SYN-ACK is signed with it.
  if (const tcp::md5::Key* k = ls.conn->md5_keys().lookup(t.remote.addr)) {
    const uint8_t full = t.remote.addr.is_v4() ? 32 : 128;
    c.conn->md5_keys().add(t.remote.addr, full, k->bytes());
  }
  demux_set(t, c.id);
  c.in_demux = true;
  ls.listener->add_embryonic(c.id);
  return c;
}

// Linux tcp_conn_request: without SYN cookies the last quarter of
// tcp_max_syn_backlog is kept for peers proven alive ("we continue to
// communicate to destinations, already remembered to the moment of
// synflood"; tcp_peer_is_proven: an RTT in tcp_metrics). weir keeps no
// per-peer RTT metrics, so no peer is proven and that quarter stays free.
bool StackImpl::syn_backlog_reserved(const tcp::Listener& l) const {
  if (cfg_.tcp_syncookies) return false;
  const int64_t max = cfg_.tcp_max_syn_backlog;
  return max - static_cast<int64_t>(l.syn_queue_len()) < (max >> 2);
}

void StackImpl::listener_syn(Time now, Socket& ls, const FourTuple& t, const tcp::InSegment& seg) {
  tcp::Listener& l = *ls.listener;
  if (l.accept_queue_full()) {
    // Linux tcp_conn_request: no room to accept even if it completes.
    counters_.inc(Counter::TcpExtListenOverflows);
    counters_.inc(Counter::TcpExtListenDrops);
    return;
  }
  if (cfg_.tcp_syncookies == 2 || (l.syn_queue_full() && cfg_.tcp_syncookies == 1)) {
    counters_.inc(Counter::TcpExtTCPReqQFullDoCookies);
    send_cookie_synack(now, ls, t, seg);
    return;
  }
  if (l.syn_queue_full()) {
    counters_.inc(Counter::TcpExtTCPReqQFullDrop);
    counters_.inc(Counter::TcpExtListenDrops);
    return;
  }
  if (syn_backlog_reserved(l)) {
    counters_.inc(Counter::TcpExtListenDrops);  // tcp_listendrop at drop_and_release
    return;
  }
  const tcp::PassiveFastOpen fo = fastopen_syn(now, ls, t, seg);
  Socket& c = new_child(ls, t, seg.tos);
  // Linux tcp_conn_request -> tcp_reqsk_record_syn (not for a SYN answered
  // with a cookie: that request is gone, and its child has no saved SYN).
  if (ls.conn->opts().save_syn) c.conn->set_saved_syn(seg.headers);
  c.conn->open_passive(now, t, seg, ls.id, fo);
  if (fo.child) {
    // Linux tcp_conn_request: a Fast Open child goes straight to the accept
    // queue (inet_csk_reqsk_queue_add) and wakes the listener.
    l.on_established(c.id);
    l.add_fastopen(c.id);  // fastopenq.qlen++ (tcp_try_fastopen)
    notify(ls.id);
  }
  after_call(c);
}

// RFC 4987 §3.6 with Linux's encoding: everything the connection needs is
// in the ISN and (with timestamps) the TSval; no state is kept.
void StackImpl::send_cookie_synack(Time now, Socket& ls, const FourTuple& t, const tcp::InSegment& syn) {
  const wire::TcpOptions& o = syn.h.options;
  const uint32_t ip_hdr = t.remote.addr.is_v4() ? 20 : 40;
  uint32_t advmss = netif_.mtu() - ip_hdr - 20;
  if (ls.conn->opts().user_mss) advmss = std::min<uint32_t>(advmss, ls.conn->opts().user_mss);
  const uint16_t peer_mss = (o.mss && *o.mss) ? *o.mss : 536;
  tcp::CookieOptions co;
  co.ts_ok = cfg_.tcp_timestamps && o.ts.has_value();
  co.sack_ok = cfg_.tcp_sack && o.sack_permitted;
  co.wscale_ok = cfg_.tcp_window_scaling && o.wscale.has_value();
  co.snd_wscale = co.wscale_ok ? std::min<uint8_t>(*o.wscale, 14) : 0;
  if (!co.ts_ok) co.sack_ok = co.wscale_ok = false;  // Linux: no TS, no room for them
  co.ecn_ok = tcp::ecn_syn_acceptable(cfg_, syn, ls.conn->cc_needs_ecn());
  const Seq32 isn = tcp::make_cookie_isn(cfg_.secret, t, syn.h.seq, now, peer_mss);
  tcp::Receiver r(tcp::ReceiverConfig::from(cfg_));
  const tcp::InitialWindow iw = r.select_initial_window(advmss, co.wscale_ok);
  wire::TcpHeader h;
  h.src_port = t.local.port;
  h.dst_port = t.remote.port;
  h.seq = isn;
  h.ack = syn.h.seq + 1;
  h.flags = SYN | ACK;
  if (co.ecn_ok) h.flags |= ECE;  // RFC 3168 §6.1.1 (Linux tcp_ecn_make_synack)
  h.window = r.syn_window();
  h.options.mss = static_cast<uint16_t>(advmss);
  if (co.wscale_ok) h.options.wscale = iw.rcv_wscale;
  h.options.sack_permitted = co.sack_ok;
  if (co.ts_ok) {
    const uint32_t tsval = static_cast<uint32_t>(now.ms()) + tcp::timestamp_offset(cfg_.secret, t);
    h.options.ts = wire::TcpTimestamps{tcp::cookie_tsval(tsval, co), o.ts->val};
  }
  if (auto key = md5_listener_key(ls, t.remote.addr); !key.empty()) {  // tcp_v4_send_synack signs
    h.options.md5 = wire::Md5Digest{};
    h.md5_key = key;
  }
  // Linux tcp_conn_request draws the request a transmit hash before it
  // chooses a cookie; the SYN-ACK carries its label (tcp_make_synack:
  // skb_set_hash(req->txhash)) and the request then goes.
  tcp::IpFields f = listener_synack_ip(ls, t, syn.tos);
  const bool autolabel = tcp::sock_autolabel(cfg_, ls.conn->opts().ipv6_autoflowlabel);
  f.flow_label = tcp::make_flow_label(cfg_, tx_rndhash(), autolabel);
  output(t, h, {}, f);
  counters_.inc(Counter::TcpOutSegs);
  counters_.inc(Counter::TcpExtSyncookiesSent);
  ls.listener->note_cookie_sent(now);
}

// Linux tcp_v4_send_synack / tcp_v6_send_synack for a request without a
// child (a SYN cookie): the listener's TOS and TTL, or under
// tcp_reflect_tos the SYN's DSCP ("(syn_tos & ~INET_ECN_MASK) | (tos &
// INET_ECN_MASK)"; a listener has sent nothing, so its ECN field is 0 and
// RFC 3168 §6.1.1 keeps a SYN-ACK not-ECT).
tcp::IpFields StackImpl::listener_synack_ip(const Socket& ls, const FourTuple& t, uint8_t syn_tos) const {
  tcp::IpFields f = tcp::socket_ip_fields(ls.conn->opts(), cfg_, t.remote.addr.is_v4());
  if (cfg_.tcp_reflect_tos) f.tos = syn_tos & ~tcp::kIpEcnMask;
  f.tos |= ls.conn->syn_ecn();  // DCTCP's listener: INET_ECN_xmit put ECT(0) in its tos
  return f;
}

bool StackImpl::listener_cookie_ack(Time now, Socket& ls, const FourTuple& t, const tcp::InSegment& seg) {
  tcp::Listener& l = *ls.listener;
  if (!cfg_.tcp_syncookies || !l.cookies_recent(now)) return false;
  auto mss = tcp::check_cookie(cfg_.secret, t, seg.h.seq - 1, seg.h.ack - 1, now);
  if (!mss) {
    counters_.inc(Counter::TcpExtSyncookiesFailed);
    return false;
  }
  if (l.accept_queue_full()) {
    counters_.inc(Counter::TcpExtListenOverflows);
    counters_.inc(Counter::TcpExtListenDrops);
    return true;
  }
  counters_.inc(Counter::TcpExtSyncookiesRecv);
  tcp::CookieOptions co;
  co.mss = *mss;
  if (seg.h.options.ts) co = tcp::cookie_decode_tsecr(seg.h.options.ts->ecr, *mss);
  Socket& c = new_child(ls, t, seg.tos);
  c.conn->open_from_cookie(now, t, seg, co, ls.id);
  // The ACK may carry data: process it as an established connection would.
  if (!seg.payload.empty() || seg.h.has(FIN)) c.conn->input(now, seg);
  after_call(c);
  return true;
}

}  // namespace weir
