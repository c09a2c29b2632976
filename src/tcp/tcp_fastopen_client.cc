// The connection's side of an active TCP Fast Open (RFC 7413 §4.1, Linux
// tcp_send_syn_data, tcp_fastopen_defer_connect, tcp_rcv_fastopen_synack):
// the SYN's data, a deferred SYN, and what the SYN-ACK says about both.
// The stack decides what the SYN carries (tcp/fastopen_client.h).
#include <algorithm>
#include <array>

#include "tcp/connection.h"

namespace weir::tcp {

using namespace wire::tcp_flag;

// Linux tcp_send_syn_data: the data goes into the write queue from ISS+1
// (it stays there for retransmission), at most what fits one SYN.
size_t Connection::queue_syn_data(Time now, const ActiveFastOpen& fo, std::span<const uint8_t> data) {
  active_fo_.option = fo.option;
  active_fo_.blackhole_probe |= fo.blackhole_probe;  // set by either check, as Linux
  active_fo_.first_syn = true;
  active_fo_.syn_data = 0;
  active_fo_.write_pending_until = data.empty() ? Time::zero() : fo.writer_until;
  if (!fo.send_data || data.empty()) return 0;
  // The MSS from the path MTU, bounded by the cached MSS (or advmss).
  // tcp_mss_clamp: TCP_MAXSEG bounds it too.
  uint16_t clamp = fo.mss_clamp ? fo.mss_clamp : static_cast<uint16_t>(advmss_);
  if (opts_.user_mss) clamp = std::min<uint16_t>(clamp, opts_.user_mss);
  const uint32_t mtu_mss = pmtu_ - (tuple_.remote.addr.is_v4() ? 40u : 60u);
  const size_t space = fastopen::syn_data_space(mtu_mss, clamp, data.size());
  const size_t n = copy_to_queue(now, data.first(space));
  // The SYN-data skb stays in the retransmit queue as ACK|PSH
  // (tcp_send_syn_data), so its retransmission carries PSH.
  if (n > 0) chunks_.back().psh = true;
  active_fo_.syn_data = static_cast<uint32_t>(n);
  // __inet_stream_connect's writebias: a blocking sender with data left
  // over (fastopen_req->data still set) counts in sk_write_pending.
  active_fo_.write_pending_until = n < data.size() ? fo.writer_until : Time::zero();
  return n;
}

size_t Connection::open_active_fastopen(Time now, const FourTuple& t, const ActiveFastOpen& fo,
                                        std::span<const uint8_t> data) {
  init_active(now, t);
  const size_t n = queue_syn_data(now, fo, data);
  retrans_stamp_ = now;
  send_syn(now);
  arm_rto(now);
  return n;
}

// Linux tcp_v4_connect with DEFER_CONNECT: the port and ISS are chosen and
// the socket is SYN-SENT, but nothing is sent and no timer runs until the
// first write brings the data for the SYN.
void Connection::defer_active_open(Time now, const FourTuple& t) {
  init_active(now, t);
  active_fo_.deferred = true;
}

size_t Connection::send_deferred_syn(Time now, const ActiveFastOpen& fo, std::span<const uint8_t> data) {
  active_fo_.deferred = false;
  const size_t n = queue_syn_data(now, fo, data);
  retrans_stamp_ = now;
  send_syn(now);
  arm_rto(now);
  return n;
}

// Linux tcp_v4_mtu_reduced -> tcp_simple_retransmit in SYN-SENT: the
// SYN-data skb no longer fits the path, so it is marked lost and the
// retransmit queue's head, the SYN (tcp_send_syn_data queued them apart),
// goes again at once, without data and announcing the smaller MSS (the
// route's advmss follows the learnt PMTU). The data follows the SYN-ACK.
void Connection::fastopen_syn_pmtu(Time now, uint32_t mtu) {
  const uint32_t ip_hdr = tuple_.remote.addr.is_v4() ? 20 : 40;
  if (active_fo_.syn_data == 0 || active_fo_.first_syn || active_fo_.deferred) return;
  if (active_fo_.syn_data + ip_hdr + 20 <= mtu) return;
  init_mss();
  ++total_retrans_;
  retransmit_head(now);
  arm_rto(now);
}

// Linux tcp_rcv_fastopen_synack, after the SYN-ACK moved SND.UNA: cache the
// peer's MSS and cookie (RFC 7413 §4.1.3), and when the SYN's data was not
// (wholly) acknowledged, retransmit it at once rather than wait for a
// timeout (§4.1.2: "the client SHOULD ... retransmit the data"). True: the
// retransmission carries the handshake's ACK.
bool Connection::rcv_fastopen_synack(Time now, const InSegment& synack) {
  const wire::TcpHeader& h = synack.h;
  const Seq32 data_end = snd_.iss + 1 + active_fo_.syn_data;
  const bool data_unacked = active_fo_.syn_data > 0 && snd_.una < data_end;
  fastopen::CacheUpdate u;
  if (h.options.mss && *h.options.mss != 0) u.mss = *h.options.mss;
  // An odd-length option is no option (tcp_parse_fastopen_option).
  const bool no_cookie = !h.options.fastopen.has_value();
  if (active_fo_.syn_fastopen) {
    u.cookie = h.options.fastopen;  // an unsolicited cookie is ignored
    if (total_retrans_ > 0) {
      // The SYN timed out and the SYN-ACK neither has a cookie nor acks the
      // data: the peer presumably saw only the plain retransmitted SYNs.
      u.syn_lost = no_cookie && data_unacked;
    } else if (no_cookie && active_fo_.syn_data == 0) {
      // Asked for a cookie and got none: try the other option kind next.
      u.try_exp = active_fo_.exp ? 2 : 1;
    }
  }
  env_.fastopen_cache_set(tuple_, u, now);
  if (data_unacked) {
    // The data is in flight since the SYN; mark it lost and resend it with
    // no congestion response (tcp_mark_skb_lost +
    // tcp_non_congestion_loss_retransmit, as tcp_simple_retransmit).
    auto pkts = sb_.on_send(SeqRange{snd_.una, data_end}, mss_cache_, active_fo_.syn_time);
    if (pkts) rec_.on_sent(*pkts);
    ccs_.packets_out = sb_.packets_out();
    for (size_t i = 0; i < sb_.size(); ++i) sb_.mark_lost(i);
    env_.counters().inc(Counter::TcpExtTCPFastOpenActiveFail);
    retransmit_lost(now);
    return true;
  }
  syn_data_acked_ = active_fo_.syn_data > 0;  // TCPI_OPT_SYN_DATA
  if (syn_data_acked_) env_.counters().inc(Counter::TcpExtTCPFastOpenActive);
  return false;
}

namespace {
// Linux asks whether the route's device is IFF_LOOPBACK; weir's routes
// to 127.0.0.0/8 and ::1 are the only loopback ones.
bool is_loopback(const IpAddr& a) {
  if (a.is_v4()) return (a.v4_host_order() >> 24) == 127;
  std::array<uint8_t, 16> one{};
  one[15] = 1;
  return a.bytes() == one;
}
}  // namespace

// Linux tcp_fastopen_active_detect_blackhole (tcp_write_timeout): a
// connection whose SYN used Fast Open (or carried or had data acked with
// it) that reaches its third consecutive timeout, or gives up before, is
// taken as black-holed by a middlebox: TcpExtTCPFastOpenActiveFail, and
// active Fast Open pauses (when tcp_fastopen_blackhole_timeout_sec is set).
void Connection::fastopen_detect_blackhole(Time now, bool expired) {
  if (!(active_fo_.syn_fastopen || active_fo_.syn_data > 0 || syn_data_acked_)) return;
  if (!(retransmits_ == 2 || (retransmits_ < 2 && expired))) return;
  env_.fastopen_active_disable(now);
  env_.counters().inc(Counter::TcpExtTCPFastOpenActiveFail);
}

// Linux tcp_fastopen_active_disable_ofo_check: an active Fast Open
// connection that got no data but holds a lone FIN out of order had its
// data dropped on the way (a black hole); one that got data while probing
// after a pause shows the path works again. Loopback proves nothing about
// middleboxes, so it never clears the pauses.
Connection::FastOpenCloseCheck Connection::fastopen_close_check() const {
  if (!active_fo_.syn_fastopen) return FastOpenCloseCheck::kNone;
  if (rcv_.data_segs_in() == 0)
    return rcv_.lone_ofo_fin() ? FastOpenCloseCheck::kDisable : FastOpenCloseCheck::kNone;
  if (active_fo_.blackhole_probe && !is_loopback(tuple_.remote.addr)) return FastOpenCloseCheck::kForget;
  return FastOpenCloseCheck::kNone;
}

}  // namespace weir::tcp
