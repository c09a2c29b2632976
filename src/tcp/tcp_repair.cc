// TCP_REPAIR (Linux tcp.c, the checkpoint/restore interface CRIU uses):
// while a socket is in repair mode its sequence numbers, queues, options and
// windows are read and written by the application instead of being
// negotiated on the wire, so a connection can be dumped on one stack and
// recreated on another without the peer noticing.
//
// Permission: Linux asks for CAP_NET_ADMIN (tcp_can_repair_sock). weir has
// no users or capabilities; whoever holds the Stack is the host's
// administrator already (it owns the interface and can write any segment),
// so repair is allowed on every non-listening socket, as SO_MARK is.
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "tcp/connection.h"

namespace weir::tcp {
namespace {

constexpr uint32_t kTcpOptMss = 2;        // TCPOPT_MSS
constexpr uint32_t kTcpOptWindow = 3;     // TCPOPT_WINDOW
constexpr uint32_t kTcpOptSackPerm = 4;   // TCPOPT_SACK_PERM
constexpr uint32_t kTcpOptTimestamp = 8;  // TCPOPT_TIMESTAMP
constexpr uint32_t kMaxWscale = 14;       // TCP_MAX_WSCALE (RFC 7323 §2.3)

Errc put_u32(std::span<uint8_t> out, size_t* len, uint32_t v) {
  if (out.size() < sizeof v) return Errc::kInval;
  std::memcpy(out.data(), &v, sizeof v);
  if (len) *len = sizeof v;
  return Errc::kOk;
}

}  // namespace

bool Connection::is_repair_opt(int name) {
  switch (name) {
    case TCP_REPAIR:
    case TCP_REPAIR_QUEUE:
    case TCP_QUEUE_SEQ:
    case TCP_REPAIR_OPTIONS:
    case TCP_REPAIR_WINDOW:
    case TCP_TIMESTAMP: return true;
    default: return false;
  }
}

// Linux do_tcp_setsockopt's repair cases. The struct-valued ones take their
// own lengths; the rest an int (optlen < sizeof(int): EINVAL).
Errc Connection::set_repair_opt(Time now, int name, std::span<const uint8_t> val) {
  if (name == TCP_REPAIR_OPTIONS) {
    // Linux: only in repair (else EINVAL), only on a repaired ESTABLISHED
    // socket that has sent nothing yet (else EPERM).
    if (!repair_.on) return Errc::kInval;
    if (state_ != State::kEstablished || bytes_sent_ != 0) return Errc::kPerm;
    return set_repair_options(now, val);
  }
  if (name == TCP_REPAIR_WINDOW) return set_repair_window(val);
  int v = 0;
  if (val.size() < sizeof v) return Errc::kInval;
  std::memcpy(&v, val.data(), sizeof v);
  switch (name) {
    case TCP_REPAIR: return set_repair(now, v);
    case TCP_REPAIR_QUEUE: return set_repair_queue(v);
    case TCP_QUEUE_SEQ: return set_queue_seq(static_cast<uint32_t>(v));
    default: break;
  }
  // TCP_TIMESTAMP: the TS clock continues from `v` (Linux tsoffset = val -
  // tcp_time_stamp_raw(); weir's TS clock ticks in ms, so the whole value
  // is the clock, as before Linux 6.7 took its low bit for usec TS).
  if (!repair_.on) return Errc::kPerm;
  ts_offset_ = static_cast<uint32_t>(v) - static_cast<uint32_t>(now.ms());
  return Errc::kOk;
}

// TCP_REPAIR: 1 on, 0 off with a window probe, -1 (TCP_REPAIR_OFF_NO_WP) off
// without. Linux tcp_can_repair_sock refuses a listener (EPERM: the stack
// checks it, a listener's state being its own).
Errc Connection::set_repair(Time now, int v) {
  switch (v) {
    case TCP_REPAIR_ON:
      repair_.on = true;
      repair_.queue = TCP_NO_QUEUE;
      return Errc::kOk;
    case TCP_REPAIR_OFF:
      repair_.on = false;
      send_window_probe(now);
      return Errc::kOk;
    case TCP_REPAIR_OFF_NO_WP:
      repair_.on = false;
      return Errc::kOk;
    default: return Errc::kInval;
  }
}

Errc Connection::set_repair_queue(int v) {
  if (!repair_.on) return Errc::kPerm;
  if (static_cast<unsigned>(v) > TCP_SEND_QUEUE) return Errc::kInval;  // >= TCP_QUEUES_NR
  repair_.queue = static_cast<uint8_t>(v);
  return Errc::kOk;
}

// Linux TCP_QUEUE_SEQ: only in CLOSE (EPERM), before anything is queued on
// the chosen side (EPERM); the send queue's is write_seq, the receive
// queue's rcv_nxt (and copied_seq); TCP_NO_QUEUE: EINVAL. Linux does not
// ask for repair mode here, the queue selection only exists in it.
Errc Connection::set_queue_seq(uint32_t v) {
  if (state_ != State::kClosed) return Errc::kPerm;
  if (repair_.queue == TCP_SEND_QUEUE) {
    if (snd_.una != snd_.nxt) return Errc::kPerm;  // !tcp_rtx_queue_empty
    write_seq_ = Seq32(v);
    return Errc::kOk;
  }
  if (repair_.queue == TCP_RECV_QUEUE) {
    if (synchronized_rcv_ && rcv_.rcv_nxt() != rcv_.copied_seq()) return Errc::kPerm;
    repair_.rcv_nxt = Seq32(v);
    return Errc::kOk;
  }
  return Errc::kInval;
}

// Linux tcp_repair_options_est: (code, value) pairs of struct
// tcp_repair_opt, applied in order until one fails; unknown codes are
// skipped, a trailing partial pair ignored.
Errc Connection::set_repair_options(Time now, std::span<const uint8_t> val) {
  struct tcp_repair_opt o{};
  Errc e = Errc::kOk;
  for (size_t off = 0; off + sizeof o <= val.size() && e == Errc::kOk; off += sizeof o) {
    std::memcpy(&o, val.data() + off, sizeof o);
    e = apply_repair_option(o.opt_code, o.opt_val);
  }
  // The receiver learns what was set, and the MSS follows the peer's MSS and
  // the options' length (Linux recomputes it at the next tcp_current_mss).
  rcv_.repair_options(now, wscale_ok_, rcv_wscale_offer_, sack_ok_, ts_ok_);
  sb_.set_sack_enabled(sack_ok_);
  rec_.set_sack(sack_ok_);
  update_mss(pmtu_);
  return e;
}

Errc Connection::apply_repair_option(uint32_t code, uint32_t v) {
  switch (code) {
    case kTcpOptMss:  // rx_opt.mss_clamp (a u16 there)
      peer_mss_ = static_cast<uint16_t>(v);
      if (opts_.user_mss) peer_mss_ = std::min<uint16_t>(peer_mss_, opts_.user_mss);
      return Errc::kOk;
    case kTcpOptWindow: {  // snd_wscale in the low 16 bits, rcv_wscale in the high
      const uint32_t snd = v & 0xffff, rcv = v >> 16;
      if (snd > kMaxWscale || rcv > kMaxWscale) return Errc::kFBig;
      snd_.wscale = static_cast<uint8_t>(snd);
      rcv_wscale_offer_ = static_cast<uint8_t>(rcv);
      wscale_ok_ = true;
      return Errc::kOk;
    }
    case kTcpOptSackPerm:
      if (v != 0) return Errc::kInval;
      sack_ok_ = true;
      return Errc::kOk;
    case kTcpOptTimestamp:
      if (v != 0) return Errc::kInval;
      ts_ok_ = true;
      return Errc::kOk;
    default: return Errc::kOk;
  }
}

// Linux tcp_repair_set_window: repair mode (EPERM), the exact struct
// (EINVAL), and a consistent window: max_window >= snd_wnd, snd_wl1 not
// beyond the receive window's right edge, rcv_wup not beyond rcv_nxt.
Errc Connection::set_repair_window(std::span<const uint8_t> val) {
  if (!repair_.on) return Errc::kPerm;
  struct tcp_repair_window w{};
  if (val.size() != sizeof w) return Errc::kInval;
  std::memcpy(&w, val.data(), sizeof w);
  const Seq32 rcv_nxt = repair_rcv_nxt();
  if (w.max_window < w.snd_wnd) return Errc::kInval;
  if (Seq32(w.snd_wl1) > rcv_nxt + w.rcv_wnd) return Errc::kInval;
  if (Seq32(w.rcv_wup) > rcv_nxt) return Errc::kInval;
  snd_.wl1 = Seq32(w.snd_wl1);
  snd_.wnd = w.snd_wnd;
  snd_.max_wnd = w.max_window;
  rcv_.repair_window(w.rcv_wnd, Seq32(w.rcv_wup));
  if (synchronized()) update_mss(pmtu_);  // tcp_bound_to_half_wnd follows max_window
  return Errc::kOk;
}

// Linux do_tcp_getsockopt(TCP_REPAIR_WINDOW): the length must be the
// struct's (EINVAL), then repair mode (EPERM).
Errc Connection::get_repair_window(std::span<uint8_t> val, size_t* len) const {
  struct tcp_repair_window w{};
  if (val.size() != sizeof w) return Errc::kInval;
  if (!repair_.on) return Errc::kPerm;
  w.snd_wl1 = snd_.wl1.raw();
  w.snd_wnd = snd_.wnd;
  w.max_window = snd_.max_wnd;
  w.rcv_wnd = rcv_.rcv_wnd();
  w.rcv_wup = rcv_.rcv_wup().raw();
  std::memcpy(val.data(), &w, sizeof w);
  if (len) *len = sizeof w;
  return Errc::kOk;
}

// Linux do_tcp_getsockopt's repair cases (TCP_TIMESTAMP is the stack's: it
// needs the time).
Errc Connection::get_repair_opt(int name, std::span<uint8_t> val, size_t* len) const {
  switch (name) {
    case TCP_REPAIR: return put_u32(val, len, repair_.on ? 1 : 0);
    case TCP_REPAIR_QUEUE:
      if (!repair_.on) return Errc::kInval;
      return put_u32(val, len, repair_.queue);
    case TCP_QUEUE_SEQ:
      if (repair_.queue == TCP_SEND_QUEUE) return put_u32(val, len, write_seq_.raw());
      if (repair_.queue == TCP_RECV_QUEUE) return put_u32(val, len, repair_rcv_nxt().raw());
      return Errc::kInval;
    case TCP_REPAIR_WINDOW: return get_repair_window(val, len);
    default: return Errc::kNoProtoOpt;  // TCP_REPAIR_OPTIONS has no getter in Linux
  }
}

// Linux tcp_v4_connect + tcp_connect under repair: write_seq (TCP_QUEUE_SEQ)
// and tsoffset (TCP_TIMESTAMP) are kept, not drawn; tcp_connect_init keeps
// rcv_nxt, empties the write queue and zeroes the send window (tcp_init_wl
// 0); tcp_finish_connect enters ESTABLISHED with no SYN sent. Options are
// off until TCP_REPAIR_OPTIONS; the peer's MSS is TCP_MSS_DEFAULT.
Errc Connection::open_repaired(Time now, const FourTuple& t) {
  const StackConfig& cfg = env_.cfg();
  tuple_ = t;
  set_txhash();  // tcp_v4_connect: sk_set_txhash
  snd_.iss = write_seq_ - 1;  // as if our SYN had taken the number before write_seq
  snd_.una = write_seq_;
  snd_.nxt = write_seq_;
  snd_max_ = write_seq_;
  snd_sml_ = write_seq_;
  snd_up_ = write_seq_;
  pushed_seq_ = write_seq_;
  sb_.reset(snd_.una);
  snd_.wnd = 0;
  snd_.wl1 = Seq32(0);
  snd_.wl2 = snd_.una;
  peer_mss_ = 536;
  wscale_ok_ = sack_ok_ = ts_ok_ = false;
  mtup_.init(mtup_config(), mss_math(), now);
  init_mss();
  rcv_wscale_offer_ = rcv_.select_initial_window(advmss_, cfg.tcp_window_scaling).rcv_wscale;
  finish_syn_negotiation(now, repair_.rcv_nxt - 1);
  become_established(now);
  return Errc::kOk;
}

// Linux tcp_sendmsg_locked under repair: TCP_RECV_QUEUE writes go to the
// receive queue (tcp_send_rcvq), TCP_NO_QUEUE is EINVAL, TCP_SEND_QUEUE
// takes the common path into the write queue (bounded by SO_SNDBUF as any
// write) and tcp_write_xmit's repair branch marks it sent, off the wire.
Expected<size_t, Errc> Connection::repair_send(Time now, std::span<const uint8_t> data, int flags,
                                               std::span<const uint32_t> iov) {
  if (repair_.queue == TCP_RECV_QUEUE) {
    const Errc e = rcv_.repair_queue_data(data);
    if (e != Errc::kOk) return Unexpected(e);
    return data.size();
  }
  if (repair_.queue == TCP_NO_QUEUE) return Unexpected(Errc::kInval);
  if (data.empty()) return size_t{0};
  const size_t n = queue_write(now, data, flags, iov);
  if (n == 0) return Unexpected(Errc::kAgain);
  mark_write_end(flags, n < data.size());
  repair_xmit(now);
  return n;
}

// Linux tcp_write_xmit's `repair:` path: each unsent skb moves to the
// retransmission queue stamped now (the RTO's starting point) and SND.NXT
// passes it (tcp_event_new_data_sent), ignoring cwnd and the peer's window;
// nothing is transmitted. The RTO then resends what the peer lacks.
void Connection::repair_xmit(Time now) {
  const uint32_t mss = std::max<uint32_t>(mss_cache_, 1);
  const Seq32 begin = snd_.nxt;
  while (snd_.nxt != write_seq_) {
    const size_t ci = chunk_index(snd_.nxt);
    const Seq32 chunk_end = ci < chunks_.size() ? chunks_[ci].end : write_seq_;
    const uint32_t len = std::min(seq_len(snd_.nxt, chunk_end), mss);
    if (len == 0) break;
    const cc::TxRateSnapshot snap = ccs_.rate.on_packet_sent(now, sb_.packets_out());
    auto pkts = sb_.on_send(SeqRange{snd_.nxt, snd_.nxt + len}, mss, now, snap);
    if (!pkts) break;
    rec_.on_sent(*pkts);
    snd_.nxt += len;
  }
  if (snd_.nxt == begin) return;
  skbs_.on_sent(snd_.nxt, snd_.una);
  ccs_.snd_nxt = snd_.nxt;
  ccs_.packets_out = sb_.packets_out();
  snd_max_ = seq_max(snd_max_, snd_.nxt);
  if (!timers_.armed(TimerKind::kRetransmit)) arm_rto(now);  // tcp_event_new_data_sent
}

// Linux tcp_recvmsg_locked under repair: only MSG_PEEK (EPERM); the send
// queue is read whole by tcp_peek_sndq (a buffer too short for it fails
// with EFAULT, as skb_copy_datagram_msg does); TCP_NO_QUEUE is EINVAL. The
// receive queue's peek is the ordinary one (the caller's).
Expected<size_t, Errc> Connection::repair_recv(std::span<uint8_t> out, int flags) {
  if (!(flags & MSG_PEEK)) return Unexpected(Errc::kPerm);
  if (repair_.queue == TCP_NO_QUEUE) return Unexpected(Errc::kInval);
  const size_t n = sndq_.size();
  if (out.size() < n) return Unexpected(Errc::kFault);
  sndq_.copy_out(0, out.first(n));
  return n;
}

// Linux tcp_send_window_probe: in ESTABLISHED only, an ACK with SND.UNA - 1
// (tcp_xmit_probe_skb, urgent 0) that draws the peer's ACK and window;
// snd_wl1 = rcv_nxt - 1 lets that reply update the window (RFC 9293
// §3.10.7.4's SND.WL1 test).
void Connection::send_window_probe(Time now) {
  if (state_ != State::kEstablished) return;
  snd_.wl1 = rcv_.rcv_nxt() - 1;
  wire::TcpHeader h = header(wire::tcp_flag::ACK, snd_.una - 1);
  add_ts(h, now);
  emit(now, h, {});
  env_.counters().inc(Counter::TcpExtTCPWinProbe);
}

}  // namespace weir::tcp
