// Opening, user calls, state changes (RFC 9293 §3.10.1-§3.10.6).
#include "tcp/connection.h"

#include <algorithm>
#include <bit>
#include <linux/tcp.h>
#include <sys/socket.h>

#include "weir/stack.h"

namespace weir::tcp {

const char* to_string(State s) {
  switch (s) {
    case State::kClosed: return "CLOSED";
    case State::kListen: return "LISTEN";
    case State::kSynSent: return "SYN-SENT";
    case State::kSynReceived: return "SYN-RECEIVED";
    case State::kEstablished: return "ESTABLISHED";
    case State::kFinWait1: return "FIN-WAIT-1";
    case State::kFinWait2: return "FIN-WAIT-2";
    case State::kCloseWait: return "CLOSE-WAIT";
    case State::kClosing: return "CLOSING";
    case State::kLastAck: return "LAST-ACK";
    case State::kTimeWait: return "TIME-WAIT";
  }
  return "?";
}

uint8_t linux_state(State s) {
  switch (s) {
    case State::kEstablished: return 1;
    case State::kSynSent: return 2;
    case State::kSynReceived: return 3;
    case State::kFinWait1: return 4;
    case State::kFinWait2: return 5;
    case State::kTimeWait: return 6;
    case State::kClosed: return 7;
    case State::kCloseWait: return 8;
    case State::kLastAck: return 9;
    case State::kListen: return 10;
    case State::kClosing: return 11;
  }
  return 7;
}

const char* to_string(DropReason r) {
  switch (r) {
    case DropReason::kNone: return "NONE";
    case DropReason::kPawsOld: return "TCP_RFC7323_PAWS";
    case DropReason::kSeqOutOfWindow: return "TCP_INVALID_SEQUENCE";
    case DropReason::kAckUnsent: return "TCP_ACK_UNSENT_DATA";
    case DropReason::kAckTooOld: return "TCP_TOO_OLD_ACK";
    case DropReason::kRstOutOfWindow: return "TCP_RESET";
    case DropReason::kSynInWindow: return "TCP_INVALID_SYN";
    case DropReason::kNoAckFlag: return "TCP_FLAGS";
    case DropReason::kStateClosed: return "TCP_CLOSE";
    case DropReason::kListenOverflow: return "TCP_LISTEN_OVERFLOW";
    case DropReason::kBadSynAck: return "TCP_INVALID_ACK_SEQUENCE";
    case DropReason::kZeroWindow: return "TCP_ZEROWINDOW";
    case DropReason::kRcvBuf: return "TCP_RCVBUFF";
    case DropReason::kAfterFin: return "TCP_DATA_AFTER_FIN";
  }
  return "?";
}

Connection::Connection(TcpEnv& env, uint32_t id, const SockOpts& opts)
    : env_(env),
      id_(id),
      opts_(opts),
      rcv_(ReceiverConfig::from(env.cfg())),
      sb_(Seq32(0), env.cfg().tcp_sack),
      rtt_(env.cfg().rto_initial, env.cfg().rto_min, env.cfg().rto_max),
      rec_(recovery::RecoveryConfig{env.cfg().tcp_sack, env.cfg().tcp_recovery, env.cfg().tcp_frto,
                                    env.cfg().tcp_reordering, env.cfg().tcp_max_reordering,
                                    env.cfg().tcp_early_retrans, env.cfg().fault_seed003_undo_without_proof}) {
  const StackConfig& cfg = env.cfg();
  cc_ = cc::make_cc(opts_.cc_name.empty() ? cfg.tcp_congestion_control : opts_.cc_name, cc::options_from(cfg));
  if (!cc_) cc_ = cc::make_cc("reno");  // an unknown sysctl value falls back like Linux
  pacer_.enable_for_all(cfg.default_qdisc == "fq");
  ccs_.snd_cwnd = cfg.initial_cwnd;
  rtt_.set_min_rtt_window(Duration::s(cfg.tcp_min_rtt_wlen_s));
  sndbuf_ = opts_.sndbuf ? opts_.sndbuf : cfg.tcp_wmem[1];
  if (opts_.rcvbuf) rcv_.set_rcvbuf(opts_.rcvbuf);
  if (opts_.window_clamp) rcv_.set_window_clamp(opts_.window_clamp);
  if (opts_.rcvlowat > 1) rcv_.set_rcvlowat(opts_.rcvlowat);
  rcv_.set_oob_inline(opts_.oobinline);  // a listener's SO_OOBINLINE carries over (sk_clone_lock)
}

Connection::~Connection() = default;

bool Connection::synchronized() const {
  return state_ != State::kClosed && state_ != State::kListen && state_ != State::kSynSent &&
         state_ != State::kSynReceived;
}

void Connection::record_trace(TraceSink& sink, Time now, TraceEvent ev, uint64_t a, uint64_t b) const {
  TraceSample s{};
  s.now = now;
  s.event = ev;
  s.conn_id = id_;
  s.state = linux_state(state_);
  s.ca_state = ca_state_;
  s.cwnd = ccs_.snd_cwnd;
  s.ssthresh = ccs_.snd_ssthresh;
  s.inflight = sb_.in_flight();
  s.sacked = sb_.sacked_out();
  s.lost = sb_.lost_out();
  s.retrans = sb_.retrans_out();
  s.srtt_us = rtt_.srtt_us();
  s.rwnd = rcv_.rcv_wnd();
  s.snd_wnd = snd_.wnd;
  s.snd_una = snd_.una.raw();
  s.snd_nxt = snd_.nxt.raw();
  s.delivery_rate = ccs_.rate.delivery_rate_bytes_per_sec(mss_cache_);
  if (cc_) cc::fill_trace(*cc_, ccs_, s);
  s.a = a;
  s.b = b;
  sink.record(s);
}

void Connection::set_state(Time now, State s) {
  if (s == state_) return;
  Counters& c = env_.counters();
  const bool was_est = state_ == State::kEstablished || state_ == State::kCloseWait;
  const bool is_est = s == State::kEstablished || s == State::kCloseWait;
  if (was_est && !is_est) c.dec(Counter::TcpCurrEstab);
  if (!was_est && is_est) c.inc(Counter::TcpCurrEstab);
  state_ = s;
  events_ |= conn_event::kReadiness;
  if (s == State::kClosed) {
    timers_.cancel_all();
    events_ |= conn_event::kClosed;
  }
  trace_event(now, TraceEvent::kState, linux_state(s));
}

// The largest packet the IP header can describe: IPv4's total length is 16
// bits (Linux ipv4_mtu caps at IP_MAX_MTU, 65535, and ipv4_default_advmss
// at IPV4_MAX_PMTU - 40); IPv6's payload length is 16 bits after its 40-byte
// header (IP6_MAX_MTU). A device MTU above it (loopback's 65536) must not
// make a segment that overflows the field.
uint32_t Connection::max_packet(bool v4) { return v4 ? 65535u : 65535u + 40u; }

// Linux tcp_mss_to_mtu/tcp_mtu_to_mss + tcp_sync_mss: the MSS for data,
// options excluded, never below tcp_min_snd_mss, and at most half the
// largest window the peer offered (tcp_bound_to_half_wnd).
void Connection::update_mss(uint32_t pmtu) {
  const StackConfig& cfg = env_.cfg();
  pmtu_ = pmtu;
  const uint32_t ip_hdr = tuple_.remote.addr.is_v4() ? 20 : 40;
  const uint32_t path = std::min(pmtu, max_packet(tuple_.remote.addr.is_v4()));
  uint32_t mss = path > ip_hdr + 20 ? path - ip_hdr - 20 : 0;
  mss = std::min<uint32_t>(mss, peer_mss_);
  if (opts_.user_mss) mss = std::min<uint32_t>(mss, opts_.user_mss);
  mss = std::max(mss, cfg.tcp_min_snd_mss);  // Linux tcp_min_snd_mss (CVE-2019-11479)
  const uint32_t hdr = 20 + tcp_options_size();
  if (snd_.max_wnd) {
    const uint32_t cutoff = snd_.max_wnd > 536 ? snd_.max_wnd / 2 : snd_.max_wnd;
    if (mss > cutoff) mss = std::max(cutoff, 68u - hdr);
  }
  const uint32_t opt = tcp_options_size();
  mss_cache_ = mss > opt ? mss - opt : 1;
  mss_opts_ = opt;
  // RFC 4821 §7.3: while searching, the MSS is what search_low proved.
  mss_cache_ = mtup_.sync(pmtu, mss_cache_, mss_math());
  ccs_.mss = mss_cache_;
}

void Connection::init_mss() {
  const bool v4 = tuple_.remote.addr.is_v4();
  const uint32_t path = std::min(env_.path_mtu(tuple_.remote.addr), max_packet(v4));
  const uint32_t ip_hdr = v4 ? 20 : 40;
  // RFC 9293 §3.7.1 / RFC 6691: MSS = MTU - fixed IP and TCP headers. The
  // announced MSS comes from the route's MTU, a cached PMTU exception
  // included (Linux dst_metric_advmss: ipv4_default_advmss over ipv4_mtu's
  // rt_pmtu, ip6_default_advmss over the exception's RTAX_MTU), floored at
  // ip_rt_min_advmss 256 / ip6_rt_min_advmss 1220.
  const uint32_t min_advmss = v4 ? 256 : 1220;
  advmss_ = std::max(path > ip_hdr + 20 ? path - ip_hdr - 20 : 0, min_advmss);
  // Linux dst_metric_advmss: a route's `advmss N` (RTAX_ADVMSS) replaces
  // the MTU-derived value as it is; tcp_init_cwnd: its `initcwnd N`
  // (RTAX_INITCWND) replaces TCP_INIT_CWND.
  const RouteMetrics route = env_.route(tuple_.remote.addr);
  if (route.advmss) advmss_ = route.advmss;
  if (opts_.user_mss) advmss_ = std::min<uint32_t>(advmss_, opts_.user_mss);
  init_cwnd_ = route.initcwnd ? route.initcwnd : env_.cfg().initial_cwnd;
  ccs_.snd_cwnd = init_cwnd_;
  update_mss(path);
}

// Linux tcp_v4_err / tcp_v6_err: between(seq, snd_una, snd_nxt), both ends
// included, whatever the ICMP type. A Fast Open child in SYN-RECEIVED has
// SND.UNA past its SYN-ACK already (fastopen_child_sent_synack); Linux takes
// the request's snt_isn instead, so an error quoting the SYN-ACK counts.
bool Connection::icmp_quote_in_window(Seq32 quoted_seq) const {
  const Seq32 una = fastopen_pending() ? snd_.iss : snd_.una;
  return una <= quoted_seq && quoted_seq <= snd_.nxt;
}

void Connection::sync_pmtu(uint32_t path_mtu) {
  if (state_ == State::kClosed || state_ == State::kListen) return;
  if (path_mtu != pmtu_) update_mss(path_mtu);  // Linux tcp_current_mss -> tcp_sync_mss
}

Errc Connection::open_active(Time now, const FourTuple& t) {
  if (repair_.on) return open_repaired(now, t);  // Linux tcp_connect: tcp_finish_connect, no SYN
  init_active(now, t);
  retrans_stamp_ = now;
  send_syn(now);
  arm_rto(now);
  return Errc::kInProgress;
}

// RFC 9293 §3.10.1 OPEN (active): ISS, SYN-SENT; the SYN is the caller's.
void Connection::init_active(Time now, const FourTuple& t) {
  const StackConfig& cfg = env_.cfg();
  tuple_ = t;
  snd_.iss = initial_sequence(cfg.secret, t, now);  // RFC 6528
  set_txhash();  // Linux tcp_v6_connect / tcp_v4_connect: sk_set_txhash (tcp_txhash.cc)
  if (tw_seed_) {
    // Linux tcp_twsk_unique: write_seq and TS.Recent from the TIME-WAIT
    // connection whose tuple this one takes over.
    snd_.iss = tw_seed_->iss;
    ts_recent_ = tw_seed_->ts_recent;
    ts_recent_stamp_ = tw_seed_->ts_recent_stamp;
    tw_seed_.reset();
  }
  snd_.una = snd_.iss;
  snd_.nxt = snd_.iss;
  snd_max_ = snd_.iss;
  write_seq_ = snd_.iss + 1;
  pushed_seq_ = write_seq_;
  snd_sml_ = snd_.iss;
  ts_offset_ = timestamp_offset(cfg.secret, t);
  peer_mss_ = 536;
  mtup_.init(mtup_config(), mss_math(), now);  // Linux tcp_connect_init: before tcp_sync_mss
  init_mss();
  const InitialWindow iw = rcv_.select_initial_window(advmss_, cfg.tcp_window_scaling);
  rcv_wscale_offer_ = iw.rcv_wscale;
  set_state(now, State::kSynSent);
  env_.counters().inc(Counter::TcpActiveOpens);
}

// Linux tcp_twsk_unique: "seq = tw_snd_nxt + 65535 + 2", never 0 (0 there
// means "no write_seq yet"), so the new connection's sequence space starts
// beyond anything the old one could still have in flight.
Connection::TimeWaitSeed Connection::time_wait_seed() const {
  Seq32 iss = snd_.nxt + 65535 + 2;
  if (iss == Seq32(0)) iss = Seq32(1);
  return TimeWaitSeed{iss, ts_recent_, ts_recent_stamp_};
}

void Connection::open_passive(Time now, const FourTuple& t, const InSegment& syn,
                              uint32_t listener, const PassiveFastOpen& fo) {
  const StackConfig& cfg = env_.cfg();
  tuple_ = t;
  listener_ = listener;
  snd_.iss = initial_sequence(cfg.secret, t, now);
  set_txhash();  // Linux tcp_conn_request: tcp_rsk(req)->txhash = net_tx_rndhash()
  snd_.una = snd_.iss;
  snd_.nxt = snd_.iss;
  snd_max_ = snd_.iss;
  write_seq_ = snd_.iss + 1;
  pushed_seq_ = write_seq_;
  snd_sml_ = snd_.iss;
  ts_offset_ = timestamp_offset(cfg.secret, t);
  parse_syn_options(syn.h.options);
  // Linux tcp_synack_options: with an MD5 signature, TS and SACK blocks
  // cannot both fit, so SACK wins and timestamps are off for the connection
  // (ireq->tstamp_ok &= !ireq->sack_ok).
  if (md5_key() && sack_ok_) ts_ok_ = false;
  ecn_.ok = ecn_syn_acceptable(cfg, syn, cc_needs_ecn());
  init_mss();
  const InitialWindow iw = rcv_.select_initial_window(advmss_, wscale_ok_);
  rcv_wscale_offer_ = iw.rcv_wscale;
  if (ts_ok_) {
    ts_recent_ = syn.h.options.ts->val;
    ts_recent_stamp_ = now;
  }
  // RFC 7323 §2.2: the window in a SYN is never scaled.
  snd_.wnd = syn.h.window;
  snd_.max_wnd = snd_.wnd;
  snd_.wl1 = syn.h.seq;
  snd_.wl2 = snd_.iss;
  finish_syn_negotiation(now, syn.h.seq);
  set_state(now, State::kSynReceived);
  env_.counters().inc(Counter::TcpPassiveOpens);
  retrans_stamp_ = now;
  // RFC 7413 §4.2.2: with a valid cookie the SYN's data is accepted and the
  // SYN-ACK acknowledges it.
  if (fo.child) accept_syn_data(now, syn);
  synack_cookie_ = fo.reply;
  send_synack(now);
  synack_cookie_.reset();  // Linux: retransmitted SYN-ACKs carry no cookie
  if (fo.child) fastopen_child_sent_synack();
  arm_rto(now);
}

void Connection::open_from_cookie(Time now, const FourTuple& t, const InSegment& ack,
                                  const CookieOptions& co, uint32_t listener) {
  const StackConfig& cfg = env_.cfg();
  tuple_ = t;
  listener_ = listener;
  snd_.iss = ack.h.ack - 1;
  set_txhash();  // Linux cookie_v6_check: treq->txhash = net_tx_rndhash(), a fresh request
  snd_.una = ack.h.ack;
  snd_.nxt = ack.h.ack;
  snd_max_ = snd_.nxt;
  write_seq_ = snd_.nxt;
  pushed_seq_ = write_seq_;
  snd_sml_ = snd_.nxt;
  ts_offset_ = timestamp_offset(cfg.secret, t);
  ts_ok_ = co.ts_ok && ack.h.options.ts.has_value();
  sack_ok_ = co.sack_ok && cfg.tcp_sack;
  wscale_ok_ = co.wscale_ok && cfg.tcp_window_scaling;
  snd_.wscale = wscale_ok_ ? co.snd_wscale : 0;
  ecn_.ok = co.ecn_ok && cfg.tcp_ecn != 0;  // Linux cookie_ecn_ok
  peer_mss_ = co.mss;
  init_mss();
  const InitialWindow iw = rcv_.select_initial_window(advmss_, wscale_ok_);
  rcv_wscale_offer_ = iw.rcv_wscale;
  if (ts_ok_) {
    ts_recent_ = ack.h.options.ts->val;
    ts_recent_stamp_ = now;
  }
  finish_syn_negotiation(now, ack.h.seq - 1);
  sb_.reset(snd_.una);
  snd_.wnd = uint32_t{ack.h.window} << snd_.wscale;
  snd_.max_wnd = snd_.wnd;
  snd_.wl1 = ack.h.seq;
  snd_.wl2 = ack.h.ack;
  state_ = State::kSynReceived;
  env_.counters().inc(Counter::TcpPassiveOpens);
  become_established(now);
}

void Connection::become_established(Time now) {
  set_state(now, State::kEstablished);
  was_established_ = true;
  established_at_ = now;
  backoff_ = 0;
  retransmits_ = 0;
  retrans_stamp_ = Time::never();
  timers_.cancel(TimerKind::kRetransmit);
  update_mss(pmtu_);
  // Linux tcp_init_transfer -> tcp_mtup_init, after the MSS was synced: the
  // search starts from the peer's MSS now known (RFC 4821 §7.2).
  mtup_.init(mtup_config(), mss_math(), now);
  // HyStart's first round ends at today's SND.NXT (Linux bictcp_init ->
  // bictcp_hystart_reset reads tp->snd_nxt): the cc view must be current
  // before init, or the round end lies half the sequence space away and no
  // round ever starts (seed 004's detector then never fires).
  ccs_.snd_una = snd_.una;
  ccs_.snd_nxt = snd_.nxt;
  ccs_.lsndtime = now;  // Linux: no cwnd restart on the first data packet
  // Linux tcp_finish_connect / tcp_create_openreq_child: lrcvtime and
  // lsndtime start at establishment (tcpi_last_data_recv/_sent count from it).
  last_rcv_data_ = now;
  last_snd_data_ = now;
  ccs_.ecn_ok = ecn_.ok;  // DCTCP falls back to Reno without ECN (dctcp_init)
  cc_->init(ccs_, now);
  if (!opts_.sndbuf) expand_sndbuf();  // Linux tcp_init_buffer_space, unless SO_SNDBUF locked it
  if (listener_) events_ |= conn_event::kEstablished;
  arm_keepalive(now);
}

// Enters CLOSED with `err` for the application (RFC 9293 §3.10.7: "signal the
// user"). Linux keeps the error in sk_err until it is read.
void Connection::done(Time now, Errc err) {
  if (err != Errc::kOk) error_ = err;
  rd_shut_ = true;
  wr_shut_ = true;
  errq_purge();
  sndq_.clear();
  chunks_.clear();
  skbs_.clear();
  set_state(now, State::kClosed);
}

Errc Connection::take_error() const {
  Errc e = error_ != Errc::kOk ? error_ : soft_error_;
  error_ = Errc::kOk;
  soft_error_ = Errc::kOk;
  return e;
}

Expected<size_t, Errc> Connection::send(Time now, std::span<const uint8_t> data, int flags,
                                        std::span<const uint32_t> iov) {
  // Linux tcp_sendmsg_locked: a MSG_ZEROCOPY send takes its notification
  // (sock_omalloc against optmem_max) before anything else: ENOBUFS.
  if (zc_wanted(flags, data.size()) && !zc_can_merge(data.size()) && !zc_can_alloc())
    return Unexpected(Errc::kNoBufs);
  // Linux tcp_sendmsg_locked/sk_stream_error: a pending error first, then EPIPE.
  auto fail = [this]() -> Expected<size_t, Errc> {
    Errc e = error_;
    error_ = Errc::kOk;
    return Unexpected(e != Errc::kOk ? e : Errc::kPipe);
  };
  if (error_ != Errc::kOk || wr_shut_) return fail();
  // Linux tcp_sendmsg_locked: a passive Fast Open socket may send before
  // the handshake completes (RFC 7413 §4.2.2).
  if ((state_ == State::kSynSent || state_ == State::kSynReceived) && !fastopen_pending())
    return Unexpected(Errc::kAgain);
  if (fastopen_pending()) {
    if (data.empty()) return size_t{0};
    const size_t n = queue_write(now, data, flags, iov);
    if (n == 0) return Unexpected(Errc::kAgain);
    mark_write_end(flags, n < data.size());
    push(now, (flags & MSG_MORE) != 0);
    return n;
  }
  if (state_ != State::kEstablished && state_ != State::kCloseWait) return fail();
  if (repair_.on) return repair_send(now, data, flags, iov);  // tcp_sendmsg_locked's repair branch
  if (data.empty()) return size_t{0};
  const size_t n = queue_write(now, data, flags, iov);
  const bool partial = n < data.size();
  // Linux wait_for_space: SOCK_NOSPACE, so that tcp_check_space wakes the
  // writer (or EPOLLOUT) once a third of the buffer is free again.
  if (partial) nospace_ = true;
  if (n == 0) return Unexpected(Errc::kAgain);
  mark_write_end(flags, partial);
  push(now, (flags & MSG_MORE) != 0 && !partial);
  if (!stream_writeable()) events_ |= conn_event::kReadiness;
  return n;
}

Expected<size_t, Errc> Connection::recv(Time now, std::span<uint8_t> out, int flags) {
  if (flags & MSG_OOB) return recv_urg(out, flags);
  if (state_ == State::kListen) return Unexpected(Errc::kNotConn);
  const bool peek = (flags & MSG_PEEK) != 0;
  // tcp_recvmsg_locked under repair: a peek at the receive queue is the
  // ordinary one; anything else is tcp_repair.cc's.
  if (repair_.on && !(peek && repair_.queue == TCP_RECV_QUEUE)) return repair_recv(out, flags);
  if (rcv_.readable() > 0 && !out.empty()) {
    ReadResult r = rcv_.read(now, out, peek, env_.counters());
    if (r.window_update && synchronized() && state_ != State::kTimeWait) send_ack(now);
    events_ |= conn_event::kReadiness;
    // A read that only stepped over the urgent byte found nothing to return
    // (Linux tcp_recvmsg carries on: EOF, an error or EAGAIN, as below).
    if (r.bytes > 0) return r.bytes;
  }
  if (out.empty()) return size_t{0};
  if (rcv_.fin_received() || rd_shut_) {
    if (error_ != Errc::kOk && !rcv_.fin_received()) {
      Errc e = error_;
      error_ = Errc::kOk;
      return Unexpected(e);
    }
    return size_t{0};  // end of stream
  }
  if (error_ != Errc::kOk) {
    Errc e = error_;
    error_ = Errc::kOk;
    return Unexpected(e);
  }
  if (state_ == State::kClosed) return was_established_ ? Expected<size_t, Errc>(size_t{0})
                                                         : Unexpected(Errc::kNotConn);
  return Unexpected(Errc::kAgain);
}

// Linux tcp_close_state: the state after our FIN is queued.
void Connection::queue_fin(Time now) {
  switch (state_) {
    case State::kEstablished:
    case State::kSynReceived: set_state(now, State::kFinWait1); break;
    case State::kCloseWait: set_state(now, State::kLastAck); break;
    default: return;
  }
  fin_queued_ = true;
  push(now, false);
}

Errc Connection::shutdown(Time now, int how) {
  if (how < SHUT_RD || how > SHUT_RDWR) return Errc::kInval;
  Errc ret = Errc::kOk;
  // Linux inet_shutdown: TCP_CLOSE (which TIME-WAIT is to a holder) -ENOTCONN.
  if (state_ == State::kClosed || state_ == State::kListen || state_ == State::kTimeWait) ret = Errc::kNotConn;
  if (how == SHUT_RD || how == SHUT_RDWR) rd_shut_ = true;
  if (state_ == State::kSynSent) {  // Linux inet_shutdown: disconnect
    abort(now, Errc::kOk);
    return Errc::kOk;
  }
  if ((how == SHUT_WR || how == SHUT_RDWR) && !wr_shut_ && ret == Errc::kOk) {
    wr_shut_ = true;
    queue_fin(now);
  }
  events_ |= conn_event::kReadiness;
  return ret;
}

void Connection::close(Time now) {
  orphan_ = true;
  rd_shut_ = true;
  // Linux __tcp_close on a socket tcp_time_wait already CLOSED: "goto
  // adjudge_to_death", nothing sent, unread data dropped without a reset
  // or TCPAbortOnClose, SO_LINGER not consulted; the timewait sock lives on.
  if (state_ == State::kTimeWait) return;
  Counters& c = env_.counters();
  if (state_ == State::kClosed || state_ == State::kListen) {
    set_state(now, State::kClosed);
    events_ |= conn_event::kClosed;
    return;
  }
  if (state_ == State::kSynSent) {
    set_state(now, State::kClosed);
    return;
  }
  // Linux __tcp_close under repair: tcp_disconnect with sk_err ECONNABORTED
  // and neither FIN nor RST; the queues go with the socket.
  if (repair_.on) {
    done(now, Errc::kConnAborted);
    return;
  }
  if (rcv_.readable() > 0) {
    // RFC 9293 §3.10.4 leaves this open; Linux (tcp_close) resets when
    // unread data would be lost (RFC 2525 §2.17).
    c.inc(Counter::TcpExtTCPAbortOnClose);
    abort(now, Errc::kOk);
    return;
  }
  if (opts_.linger && opts_.linger_s == 0) {  // SO_LINGER zero: abortive close
    c.inc(Counter::TcpExtTCPAbortOnData);
    abort(now, Errc::kOk);
    return;
  }
  if (!wr_shut_) {
    wr_shut_ = true;
    queue_fin(now);
  }
  if (state_ == State::kFinWait2) orphan_fin_wait2(now, nullptr);
}

void Connection::abort(Time now, Errc reason) {
  if (synchronized() || state_ == State::kSynReceived) {
    if (state_ != State::kTimeWait) send_rst(now, snd_.nxt);
  }
  done(now, reason);
}

uint32_t Connection::poll() const {
  uint32_t mask = 0;
  if ((rd_shut_ && wr_shut_) || state_ == State::kClosed) mask |= ev::HUP;
  if (rd_shut_ || rcv_.fin_received()) mask |= ev::IN | ev::RDHUP;
  // Linux tcp_poll: a passive Fast Open socket is usable in SYN-RECEIVED.
  if ((state_ != State::kSynSent && state_ != State::kSynReceived) || fastopen_pending()) {
    // Linux tcp_poll: one byte more is wanted at an urgent byte a read
    // would step over; EPOLLPRI while that byte waits for recv(MSG_OOB).
    if (rcv_.readable() >= rcv_.poll_target(std::max<uint32_t>(opts_.rcvlowat, 1)) ||
        (rcv_.readable() > 0 && rcv_.fin_received()))
      mask |= ev::IN;
    if (rcv_.urg_data() == UrgData::kValid) mask |= ev::PRI;
    if (!wr_shut_) {
      if (stream_writeable() && state_ != State::kListen) mask |= ev::OUT;
    } else {
      mask |= ev::OUT;
    }
  }
  // Linux tcp_poll: a TCP_FASTOPEN_CONNECT socket whose SYN waits for the
  // first write is writable, so that the application writes it.
  if (state_ == State::kSynSent && active_fo_.deferred) mask |= ev::OUT;
  // Linux tcp_poll: sk_err, or anything on the error queue.
  if (error_ != Errc::kOk || !errq_.empty()) mask |= ev::ERR;
  return mask;
}

Errc Connection::ioctl(unsigned long req, int* out) const {
  switch (req) {
    case 0x541B:  // FIONREAD / SIOCINQ
      if (state_ == State::kListen) return Errc::kInval;
      *out = static_cast<int>(std::min<size_t>(rcv_.inq(), 0x7fffffff));  // Linux tcp_inq
      return Errc::kOk;
    case 0x8905:  // SIOCATMARK (Linux tcp_ioctl): the next byte read is the urgent mark
      *out = rcv_.at_mark() ? 1 : 0;
      return Errc::kOk;
    case 0x5411:  // TIOCOUTQ / SIOCOUTQ: bytes not yet acknowledged
      if (state_ == State::kListen) return Errc::kInval;
      *out = (state_ == State::kSynSent || state_ == State::kSynReceived)
                 ? 0
                 : static_cast<int>(seq_len(snd_.una, write_seq_) + (fin_queued_ ? 1 : 0) -
                                    (snd_.una == write_seq_ + 1 ? 1 : 0));
      return Errc::kOk;
    case 0x894B:  // SIOCOUTQNSD: bytes not yet sent
      if (state_ == State::kListen) return Errc::kInval;
      *out = static_cast<int>(seq_len(snd_.nxt, write_seq_));
      return Errc::kOk;
    default: return Errc::kInval;
  }
}

}  // namespace weir::tcp
