// Socket options (Linux do_tcp_setsockopt / sk_setsockopt and their getters).
// Unknown options fail with ENOPROTOOPT; they never silently succeed.
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "tcp/cc/cc_info.h"
#include "tcp/connection.h"

namespace weir::tcp {
namespace {

constexpr uint32_t kWmemMax = 212992;     // net.core.wmem_max
constexpr uint32_t kSockMinSndbuf = 4608;  // Linux SOCK_MIN_SNDBUF (2 * skb overhead)
constexpr int kMaxKeepIdle = 32767;        // Linux MAX_TCP_KEEPIDLE
constexpr int kMaxKeepIntvl = 32767;
constexpr int kMaxKeepCnt = 127;
constexpr int kFinTimeoutMaxS = 120;     // Linux TCP_FIN_TIMEOUT_MAX
constexpr int kTimeoutInitS = 1;         // Linux TCP_TIMEOUT_INIT
constexpr int kRtoMaxS = 120;            // Linux TCP_RTO_MAX

// Linux secs_to_retrans(): TCP_DEFER_ACCEPT's seconds as the number of
// SYN-ACK timeouts (1 s, doubling, capped at TCP_RTO_MAX) that cover them.
uint8_t secs_to_retrans(int seconds) {
  if (seconds <= 0) return 0;
  int timeout = kTimeoutInitS;
  int period = timeout;
  uint8_t res = 1;
  while (seconds > period && res < 255) {
    ++res;
    timeout = std::min(timeout * 2, kRtoMaxS);
    period += timeout;
  }
  return res;
}

// Linux retrans_to_secs(): what getsockopt(TCP_DEFER_ACCEPT) reads back.
int retrans_to_secs(uint8_t retrans) {
  if (retrans == 0) return 0;
  int timeout = kTimeoutInitS;
  int period = timeout;
  while (--retrans) {
    timeout = std::min(timeout * 2, kRtoMaxS);
    period += timeout;
  }
  return period;
}
// Linux values (asm-generic/socket.h): SO_TIMESTAMPING is SO_TIMESTAMPING_OLD
// on 64-bit, whatever the libc headers map the name to.
constexpr int kSoTimestamping = 37;
constexpr int kSoZerocopy = 60;
constexpr int kSoTxRehash = 74;  // SO_TXREHASH (asm-generic/socket.h)

bool get_int(std::span<const uint8_t> v, int& out) {
  if (v.size() < sizeof(int)) return false;
  std::memcpy(&out, v.data(), sizeof(int));
  return true;
}

Errc put(std::span<uint8_t> out, size_t* len, const void* p, size_t n) {
  n = std::min(n, out.size());
  std::memcpy(out.data(), p, n);
  if (len) *len = n;
  return Errc::kOk;
}

// IP_FREEBIND at SOL_IP (also on IPv6 sockets: ipv6_setsockopt hands SOL_IP
// to ip_setsockopt) and IPV6_FREEBIND at SOL_IPV6 set the same flag.
bool is_freebind(int level, int name) {
  return (level == IPPROTO_IP && name == IP_FREEBIND) || (level == IPPROTO_IPV6 && name == IPV6_FREEBIND);
}

Errc put_int(std::span<uint8_t> out, size_t* len, int v) {
  if (out.size() < sizeof(int)) return Errc::kInval;
  return put(out, len, &v, sizeof v);
}

}  // namespace

// Linux tcp_enable_tx_delay: changing the delay on an ESTABLISHED flow
// moves SRTT by the change at once (the emulated RTT is known), resets the
// RTO and min_rtt from it and recomputes the pacing rate; in other states
// only the value is kept (the handshake's sample will include it).
void Connection::set_tx_delay(uint32_t us) {
  const int64_t delta = int64_t{us} - int64_t{opts_.tx_delay_us};
  opts_.tx_delay_us = us;
  if (delta == 0 || state_ != State::kEstablished) return;
  rtt_.shift_srtt(Duration::us(delta));
  ccs_.srtt = rtt_.srtt();
  ccs_.min_rtt = rtt_.min_rtt();
  cc::update_pacing_rate(ccs_, env_.cfg().tcp_pacing_ss_ratio, env_.cfg().tcp_pacing_ca_ratio);
}

Errc Connection::setsockopt(Time now, int level, int name, std::span<const uint8_t> val) {
  if (level == IPPROTO_TCP && is_repair_opt(name)) return set_repair_opt(now, name, val);  // tcp_repair.cc
  if (level == IPPROTO_TCP && name == TCP_CONGESTION) {
    std::string n(reinterpret_cast<const char*>(val.data()), val.size());
    n = n.substr(0, n.find('\0'));
    auto next = cc::make_cc(n, cc::options_from(env_.cfg()));
    if (!next) return Errc::kNoEnt;
    cc_ = std::move(next);
    opts_.cc_name = n;
    ccs_.ecn_ok = ecn_.ok;
    if (synchronized()) cc_->init(ccs_, now);
    return Errc::kOk;
  }
  if (level == IPPROTO_TCP && name == TCP_FASTOPEN_KEY) {
    // Linux: the primary key, optionally followed by a backup (16 or 32 bytes).
    if (val.size() != 16 && val.size() != 32) return Errc::kInval;
    opts_.fastopen_key.assign(val.begin(), val.end());
    return Errc::kOk;
  }
  // Linux sk_setsockopt: SO_{RCV,SND}TIMEO_{OLD,NEW} (sock_set_timeout).
  if (level == SOL_SOCKET && (is_rcvtimeo(name) || is_sndtimeo(name)))
    return set_sock_timeout(val, is_rcvtimeo(name) ? &opts_.rcvtimeo : &opts_.sndtimeo);
  int v = 0;
  if (level == SOL_SOCKET && name == SO_LINGER) {
    if (val.size() < sizeof(struct linger)) return Errc::kInval;
    struct linger l{};
    std::memcpy(&l, val.data(), sizeof l);
    opts_.linger = l.l_onoff != 0;
    opts_.linger_s = std::max(l.l_linger, 0);
    return Errc::kOk;
  }
  if (!get_int(val, v)) return Errc::kInval;
  if (level == SOL_SOCKET) {
    switch (name) {
      case SO_RCVBUF:
        opts_.rcvbuf = static_cast<uint32_t>(std::max(v, 0));
        return rcv_.set_rcvbuf(opts_.rcvbuf);
      case SO_SNDBUF:
        // Linux sk_setsockopt: doubled (room for overhead), capped by wmem_max.
        opts_.sndbuf = std::max(std::min(static_cast<uint32_t>(std::max(v, 0)), kWmemMax) * 2, kSockMinSndbuf);
        sndbuf_ = opts_.sndbuf;
        write_space();  // sk_setsockopt: sk->sk_write_space(sk)
        return Errc::kOk;
      case SO_RCVLOWAT:
        if (v < 0) return Errc::kInval;
        opts_.rcvlowat = std::max(v, 1);
        return rcv_.set_rcvlowat(opts_.rcvlowat);
      case SO_KEEPALIVE:
        opts_.keepalive = v != 0;
        if (opts_.keepalive) arm_keepalive(now);
        else if (!(state_ == State::kFinWait2 && orphan_)) timers_.cancel(TimerKind::kKeepalive);
        return Errc::kOk;
      case SO_REUSEADDR: opts_.reuseaddr = v != 0; return Errc::kOk;
      case SO_OOBINLINE:  // Linux sock_valbool_flag(SOCK_URGINLINE)
        opts_.oobinline = v != 0;
        rcv_.set_oob_inline(opts_.oobinline);
        return Errc::kOk;
      case kSoZerocopy:
        // Linux sk_setsockopt: a boolean for TCP sockets, in any state.
        if (v < 0 || v > 1) return Errc::kInval;
        opts_.zerocopy = v == 1;
        return Errc::kOk;
      case kSoTimestamping: return set_timestamping(static_cast<uint32_t>(v));
      case SO_MARK:  // Linux checks CAP_NET_ADMIN; the driver embedding weir is trusted
        opts_.mark = static_cast<uint32_t>(v);
        return Errc::kOk;
      case SO_MAX_PACING_RATE:  // bytes/s; ~0U: unlimited (tcp/pacing.h)
        set_max_pacing_rate(ccs_, static_cast<uint32_t>(v) == ~0u ? ~uint64_t{0} : static_cast<uint32_t>(v));
        return Errc::kOk;
      case kSoTxRehash:
        // Linux sk_setsockopt: -1..1, -1 (SOCK_TXREHASH_DEFAULT) takes
        // net.core.txrehash now (tcp_txhash.cc).
        if (v < -1 || v > 1) return Errc::kInval;
        opts_.txrehash = static_cast<uint8_t>(v == -1 ? env_.cfg().txrehash : v);
        return Errc::kOk;
      default: return Errc::kNoProtoOpt;
    }
  }
  // Linux do_ip_setsockopt(IP_FREEBIND) / do_ipv6_setsockopt(IPV6_FREEBIND):
  // one flag (INET_FLAGS_FREEBIND) that lets bind() take a non-local
  // address (inet_addr_valid_or_nonlocal, ipv6_can_nonlocal_bind).
  if (is_freebind(level, name)) {
    opts_.freebind = v != 0;
    return Errc::kOk;
  }
  if (level != IPPROTO_TCP) return Errc::kNoProtoOpt;
  switch (name) {
    case TCP_NODELAY:
      opts_.nodelay = v != 0;
      if (opts_.nodelay) {
        push_once_ = true;  // Linux __tcp_sock_set_nodelay pushes what is pending
        push(now, false);
      }
      return Errc::kOk;
    case TCP_CORK:
      opts_.cork = v != 0;
      if (!opts_.cork) {
        push_once_ = true;  // Linux __tcp_sock_set_cork(false): TCP_NAGLE_PUSH
        push(now, false);
      }
      return Errc::kOk;
    case TCP_MAXSEG:
      // Linux: 88 (TCP_MIN_MSS) .. 65535 (MAX_TCP_WINDOW), 0 resets.
      if (v != 0 && (v < 88 || v > 65535)) return Errc::kInval;
      opts_.user_mss = static_cast<uint16_t>(v);
      return Errc::kOk;
    case TCP_WINDOW_CLAMP:
      if (v < 0) return Errc::kInval;
      opts_.window_clamp = static_cast<uint32_t>(v);
      return rcv_.set_window_clamp(opts_.window_clamp);
    case TCP_QUICKACK:
      rcv_.set_quickack(v != 0);
      if (v != 0 && synchronized_rcv_ && rcv_.ack_pending()) send_ack(now);
      return Errc::kOk;
    case TCP_KEEPIDLE:
      if (v < 1 || v > kMaxKeepIdle) return Errc::kInval;
      opts_.keepidle_s = v;
      if (opts_.keepalive) arm_keepalive(now);
      return Errc::kOk;
    case TCP_KEEPINTVL:
      if (v < 1 || v > kMaxKeepIntvl) return Errc::kInval;
      opts_.keepintvl_s = v;
      return Errc::kOk;
    case TCP_KEEPCNT:
      if (v < 1 || v > kMaxKeepCnt) return Errc::kInval;
      opts_.keepcnt = v;
      return Errc::kOk;
    case TCP_THIN_LINEAR_TIMEOUTS:
      if (v < 0 || v > 1) return Errc::kInval;
      opts_.thin_lto = v == 1;
      return Errc::kOk;
    case TCP_DEFER_ACCEPT:
      opts_.defer_accept = secs_to_retrans(v);
      return Errc::kOk;
    case TCP_LINGER2:
      // Linux do_tcp_setsockopt: negative means no FIN-WAIT-2 wait at all;
      // longer than TCP_FIN_TIMEOUT_MAX (120 s) is cut to it.
      opts_.linger2_s = v < 0 ? -1 : std::min(v, kFinTimeoutMaxS);
      return Errc::kOk;
    case TCP_USER_TIMEOUT:
      if (v < 0) return Errc::kInval;
      opts_.user_timeout_ms = static_cast<uint32_t>(v);
      return Errc::kOk;
    case TCP_NOTSENT_LOWAT:
      opts_.notsent_lowat = static_cast<uint32_t>(v);
      write_space();  // do_tcp_setsockopt: sk->sk_write_space(sk)
      return Errc::kOk;
    case TCP_SYNCNT:
      if (v < 1 || v > 127) return Errc::kInval;
      opts_.syncnt = v;
      return Errc::kOk;
    case TCP_FASTOPEN:
      // Linux fastopen_queue_tune: only before or while listening.
      if (state_ != State::kClosed && state_ != State::kListen) return Errc::kInval;
      opts_.fastopen_qlen = std::max(v, 0);
      return Errc::kOk;
    case TCP_FASTOPEN_NO_COOKIE:
      if (v < 0 || v > 1 || (state_ != State::kClosed && state_ != State::kListen)) return Errc::kInval;
      opts_.fastopen_no_cookie = v != 0;
      return Errc::kOk;
    case TCP_SAVE_SYN:
      // Linux do_tcp_setsockopt: 0 off, 1 the network and TCP headers, 2
      // from the MAC header on. weir's netifs carry IP datagrams, so 2
      // keeps what 1 keeps, as Linux does on an L3 device such as tun
      // (skb_mac_header_len is 0 there).
      if (v < 0 || v > 2) return Errc::kInval;
      opts_.save_syn = static_cast<uint8_t>(v);
      return Errc::kOk;
    case TCP_TX_DELAY:
      // Linux do_tcp_setsockopt: "tp->srtt_us is u32, and is shifted by 3".
      if (v < 0 || v >= (1 << (31 - 3))) return Errc::kInval;
      set_tx_delay(static_cast<uint32_t>(v));
      return Errc::kOk;
    case TCP_FASTOPEN_CONNECT:
      // Linux: only on a socket not yet connecting, and with client Fast Open on.
      if (v < 0 || v > 1) return Errc::kInval;
      if (!(env_.cfg().tcp_fastopen & 1)) return Errc::kOpNotSupp;
      if (state_ != State::kClosed) return Errc::kInval;
      opts_.fastopen_connect = v != 0;
      return Errc::kOk;
    default: return Errc::kNoProtoOpt;
  }
}

// Linux do_tcp_getsockopt(TCP_SAVED_SYN): the saved SYN's headers once
// (then freed: the next call reads 0 bytes); a buffer too short for them
// is EINVAL with the length they need written back. No SYN saved: 0 bytes.
Errc Connection::get_saved_syn(std::span<uint8_t> val, size_t* len) const {
  const size_t n = saved_syn_.size();
  if (n != 0 && val.size() < n) {
    if (len) *len = n;
    return Errc::kInval;
  }
  if (n != 0) std::memcpy(val.data(), saved_syn_.data(), n);
  if (len) *len = n;
  saved_syn_.clear();
  saved_syn_.shrink_to_fit();  // tcp_saved_syn_free
  return Errc::kOk;
}

Errc Connection::getsockopt(int level, int name, std::span<uint8_t> val, size_t* len) const {
  if (level == SOL_SOCKET && (is_rcvtimeo(name) || is_sndtimeo(name))) {
    const size_t n = get_sock_timeout(is_rcvtimeo(name) ? opts_.rcvtimeo : opts_.sndtimeo, val);
    if (len) *len = n;
    return Errc::kOk;
  }
  if (level == IPPROTO_TCP && name == TCP_SAVED_SYN) return get_saved_syn(val, len);
  if (level == IPPROTO_TCP && is_repair_opt(name)) return get_repair_opt(name, val, len);  // tcp_repair.cc
  if (level == SOL_SOCKET) {
    switch (name) {
      case SO_RCVBUF: return put_int(val, len, static_cast<int>(rcv_.rcvbuf()));
      case SO_SNDBUF: return put_int(val, len, static_cast<int>(sndbuf_));
      case SO_RCVLOWAT: return put_int(val, len, static_cast<int>(opts_.rcvlowat));
      case SO_KEEPALIVE: return put_int(val, len, opts_.keepalive);
      case SO_REUSEADDR: return put_int(val, len, opts_.reuseaddr);
      case SO_OOBINLINE: return put_int(val, len, opts_.oobinline);
      case kSoZerocopy: return put_int(val, len, opts_.zerocopy);
      case SO_MARK: return put_int(val, len, static_cast<int>(opts_.mark));
      case kSoTxRehash: return put_int(val, len, opts_.txrehash);  // sk_getsockopt: sk_txrehash
      case kSoTimestamping: return put_int(val, len, static_cast<int>(opts_.tsflags));
      case SO_MAX_PACING_RATE:
        return put_int(val, len, static_cast<int>(std::min<uint64_t>(ccs_.max_pacing_rate, ~0u)));
      case SO_ERROR: return put_int(val, len, static_cast<int>(take_error()));
      case SO_TYPE: return put_int(val, len, SOCK_STREAM);
      case SO_ACCEPTCONN: return put_int(val, len, state_ == State::kListen);
      case SO_LINGER: {
        struct linger l{opts_.linger ? 1 : 0, opts_.linger_s};
        return put(val, len, &l, sizeof l);
      }
      default: return Errc::kNoProtoOpt;
    }
  }
  if (is_freebind(level, name)) return put_int(val, len, opts_.freebind);
  if (level != IPPROTO_TCP) return Errc::kNoProtoOpt;
  switch (name) {
    case TCP_NODELAY: return put_int(val, len, opts_.nodelay);
    case TCP_CORK: return put_int(val, len, opts_.cork);
    case TCP_MAXSEG:
      // Linux: the current MSS once connected, else the user's value or 536.
      if (synchronized()) return put_int(val, len, static_cast<int>(mss_cache_));
      return put_int(val, len, opts_.user_mss ? opts_.user_mss : 536);
    case TCP_WINDOW_CLAMP: return put_int(val, len, static_cast<int>(rcv_.window_clamp()));
    case TCP_QUICKACK: return put_int(val, len, rcv_.in_quickack_mode());
    case TCP_KEEPIDLE: return put_int(val, len, static_cast<int>(keepalive_idle().ns() / Duration::s(1).ns()));
    case TCP_KEEPINTVL: return put_int(val, len, static_cast<int>(keepalive_intvl().ns() / Duration::s(1).ns()));
    case TCP_KEEPCNT: return put_int(val, len, keepalive_probes());
    case TCP_USER_TIMEOUT: return put_int(val, len, static_cast<int>(opts_.user_timeout_ms));
    case TCP_THIN_LINEAR_TIMEOUTS: return put_int(val, len, opts_.thin_lto ? 1 : 0);
    case TCP_DEFER_ACCEPT: return put_int(val, len, retrans_to_secs(opts_.defer_accept));
    case TCP_LINGER2:  // Linux: the sysctl's value when unset, -1 when off
      return put_int(val, len, opts_.linger2_s < 0 ? -1 : opts_.linger2_s ? opts_.linger2_s : env_.cfg().tcp_fin_timeout_s);
    case TCP_NOTSENT_LOWAT:
      return put_int(val, len, static_cast<int>(opts_.notsent_lowat));  // Linux: tp->notsent_lowat, 0 = the sysctl
    case TCP_SYNCNT: return put_int(val, len, opts_.syncnt ? opts_.syncnt : env_.cfg().tcp_syn_retries);
    case TCP_FASTOPEN: return put_int(val, len, opts_.fastopen_qlen);
    case TCP_FASTOPEN_NO_COOKIE: return put_int(val, len, opts_.fastopen_no_cookie);
    case TCP_FASTOPEN_CONNECT: return put_int(val, len, opts_.fastopen_connect);
    case TCP_SAVE_SYN: return put_int(val, len, opts_.save_syn);
    case TCP_TX_DELAY: return put_int(val, len, static_cast<int>(opts_.tx_delay_us));
    case TCP_CONGESTION: {
      char name_buf[16] = {};  // Linux TCP_CA_NAME_MAX
      std::string_view n = cc_->name();
      std::memcpy(name_buf, n.data(), std::min(n.size(), sizeof name_buf - 1));
      return put(val, len, name_buf, sizeof name_buf);
    }
    case TCP_CC_INFO: {
      // Linux do_tcp_getsockopt: ca_ops->get_info's union tcp_cc_info, cut
      // to the caller's length; 0 bytes when the algorithm has none (CUBIC, Reno).
      const size_t n = cc::cc_info(*cc_, ccs_, val);
      if (len) *len = n;
      return Errc::kOk;
    }
    case TCP_INFO: {
      // Linux's struct tcp_info layout (uapi), filled from weir's TcpInfo.
      const TcpInfo i = info(last_rcv_);
      struct tcp_info t{};
      t.tcpi_state = i.tcpi_state;
      t.tcpi_ca_state = i.tcpi_ca_state;
      t.tcpi_retransmits = i.tcpi_retransmits;
      t.tcpi_probes = i.tcpi_probes;
      t.tcpi_backoff = i.tcpi_backoff;
      t.tcpi_options = i.tcpi_options;
      t.tcpi_snd_wscale = i.tcpi_snd_wscale & 0xf;
      t.tcpi_rcv_wscale = i.tcpi_rcv_wscale & 0xf;
      t.tcpi_rto = i.tcpi_rto;
      t.tcpi_ato = i.tcpi_ato;
      t.tcpi_snd_mss = i.tcpi_snd_mss;
      t.tcpi_rcv_mss = i.tcpi_rcv_mss;
      t.tcpi_unacked = i.tcpi_unacked;
      t.tcpi_sacked = i.tcpi_sacked;
      t.tcpi_lost = i.tcpi_lost;
      t.tcpi_retrans = i.tcpi_retrans;
      t.tcpi_last_data_sent = i.tcpi_last_data_sent;
      t.tcpi_last_data_recv = i.tcpi_last_data_recv;
      t.tcpi_last_ack_recv = i.tcpi_last_ack_recv;
      t.tcpi_pmtu = i.tcpi_pmtu;
      t.tcpi_rcv_ssthresh = i.tcpi_rcv_ssthresh;
      t.tcpi_rtt = i.tcpi_rtt;
      t.tcpi_rttvar = i.tcpi_rttvar;
      t.tcpi_snd_ssthresh = i.tcpi_snd_ssthresh;
      t.tcpi_snd_cwnd = i.tcpi_snd_cwnd;
      t.tcpi_advmss = i.tcpi_advmss;
      t.tcpi_reordering = i.tcpi_reordering;
      t.tcpi_rcv_rtt = i.tcpi_rcv_rtt;
      t.tcpi_rcv_space = i.tcpi_rcv_space;
      t.tcpi_total_retrans = i.tcpi_total_retrans;
      t.tcpi_pacing_rate = i.tcpi_pacing_rate;
      t.tcpi_max_pacing_rate = i.tcpi_max_pacing_rate;
      t.tcpi_bytes_acked = i.tcpi_bytes_acked;
      t.tcpi_bytes_received = i.tcpi_bytes_received;
      t.tcpi_segs_out = i.tcpi_segs_out;
      t.tcpi_segs_in = i.tcpi_segs_in;
      t.tcpi_notsent_bytes = i.tcpi_notsent_bytes;
      t.tcpi_min_rtt = i.tcpi_min_rtt;
      t.tcpi_data_segs_in = i.tcpi_data_segs_in;
      t.tcpi_data_segs_out = i.tcpi_data_segs_out;
      t.tcpi_delivery_rate = i.tcpi_delivery_rate;
      t.tcpi_delivered = i.tcpi_delivered;
      t.tcpi_bytes_sent = i.tcpi_bytes_sent;
      t.tcpi_bytes_retrans = i.tcpi_bytes_retrans;
      t.tcpi_dsack_dups = i.tcpi_dsack_dups;
      t.tcpi_reord_seen = i.tcpi_reord_seen;
      t.tcpi_rcv_ooopack = i.tcpi_rcv_ooopack;
      t.tcpi_snd_wnd = i.tcpi_snd_wnd;
      t.tcpi_busy_time = i.tcpi_busy_time;
      t.tcpi_rwnd_limited = i.tcpi_rwnd_limited;
      t.tcpi_sndbuf_limited = i.tcpi_sndbuf_limited;
      return put(val, len, &t, sizeof t);
    }
    default: return Errc::kNoProtoOpt;
  }
}

}  // namespace weir::tcp
