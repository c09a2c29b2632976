// The socket error queue of a TCP connection: MSG_ZEROCOPY completion
// notifications (Linux net/core/skbuff.c msg_zerocopy_*) and SO_TIMESTAMPING
// transmit timestamps (tcp_tx_timestamp, __skb_tstamp_tx, tcp_ack_tstamp).
//
// weir copies every byte into its send ring, so a MSG_ZEROCOPY send is a
// copy that keeps MSG_ZEROCOPY's contract: one notification id per send
// (sk_zckey), reported once all of the send's data is acknowledged and its
// skbs freed, with SO_EE_CODE_ZEROCOPY_COPIED, as Linux reports a send whose
// pages it had to copy (a tun device or loopback does). The segmentation
// stays Linux's: each iovec element is page fragments, at most
// MAX_SKB_FRAGS per skb.
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "tcp/connection.h"
#include "tcp/opt_stats.h"

namespace weir::tcp {
namespace {

constexpr uint32_t kPageSize = 4096;
// net.core.optmem_max (131072 since Linux 6.9, 20480 before): the socket's
// option memory, where each MSG_ZEROCOPY notification skb is charged from
// the send until the application reads it (sock_omalloc).
constexpr uint64_t kOptmemMax = 131072;
constexpr uint32_t kZcByteLimit = 1u << 19;  // msg_zerocopy_realloc: "limit to a few TSO"
constexpr uint32_t kZcMaxLen = 0xFFFF - 1;   // USHRT_MAX - 1 sends in one notification
// Timestamped sends outstanding (Linux: one per skb, so bounded by the send
// buffer); past this the oldest is forgotten and counted as a drop.
constexpr size_t kMaxTxStamps = 4096;

}  // namespace

// Linux tcp_sendmsg_locked: MSG_ZEROCOPY without SO_ZEROCOPY is an ordinary
// send (no notification), as is an empty one.
bool Connection::zc_wanted(int flags, size_t size) const {
  return (flags & MSG_ZEROCOPY) && size > 0 && opts_.zerocopy;
}

// sock_omalloc(sk, 0): allowed while sk_omem_alloc < optmem_max; each
// outstanding or queued notification holds one empty skb.
bool Connection::zc_can_alloc() const {
  const uint64_t held = zc_pending_.size() + errq_.zerocopy_entries();
  return held * ErrQueue::kEmptySkbTruesize < kOptmemMax;
}

// msg_zerocopy_realloc: the send joins the newest notification when the
// write queue's tail skb (unsent bytes) carries it, and the merged one stays
// within USHRT_MAX - 1 sends and 512 KB.
bool Connection::zc_can_merge(size_t size) const {
  if (zc_pending_.empty() || chunks_.empty()) return false;
  const ZcNotification& z = zc_pending_.back();
  if (z.id + z.len != zckey_ || z.len >= kZcMaxLen || z.bytelen + size > kZcByteLimit) return false;
  const Chunk& tail = chunks_.back();
  const Seq32 start = chunks_.size() >= 2 ? chunks_[chunks_.size() - 2].end : snd_.una;
  return snd_.nxt < tail.end && start <= z.last && z.last < tail.end;
}

// tcp_sendmsg_locked's data loop, with the MSG_ZEROCOPY and SO_TIMESTAMPING
// bookkeeping of the same call.
size_t Connection::queue_write(Time now, std::span<const uint8_t> data, int flags, std::span<const uint32_t> iov) {
  if (!zc_wanted(flags, data.size())) {
    const size_t n = copy_to_queue(now, data);
    tstamp_after_send(n);
    return n;
  }
  const bool merge = zc_can_merge(data.size());
  if (!merge && !zc_pending_.empty() && !chunks_.empty()) {
    // skb_zerocopy_iter_stream -EEXIST: an skb points to one notification,
    // so the unsent tail holding the previous one is closed (tcp_mark_push).
    Chunk& tail = chunks_.back();
    const Seq32 start = chunks_.size() >= 2 ? chunks_[chunks_.size() - 2].end : snd_.una;
    const Seq32 last = zc_pending_.back().last;
    if (snd_.nxt < tail.end && start <= last && last < tail.end) {
      tail.psh = true;
      tail.frags = kMaxSkbFrags;
      pushed_seq_ = write_seq_;
    }
  }
  const size_t n = copy_zerocopy(now, data, iov);
  zc_after_send(data.size(), n, merge);
  tstamp_after_send(n);
  return n;
}

// skb_zerocopy_iter_stream: every iovec element is pinned as page fragments
// (one per 4 KiB, buffers taken as page aligned); an skb holding
// MAX_SKB_FRAGS of them takes no more, is marked PSH and a new one starts.
size_t Connection::copy_zerocopy(Time now, std::span<const uint8_t> data, std::span<const uint32_t> iov) {
  const uint32_t whole[1] = {static_cast<uint32_t>(data.size())};
  if (iov.empty()) iov = whole;
  size_t copied = 0;
  for (const uint32_t elem : iov) {
    uint32_t left = static_cast<uint32_t>(std::min<size_t>(elem, data.size() - copied));
    while (left > 0) {
      if (!chunks_.empty()) {
        Chunk& tail = chunks_.back();
        if (tail.frags >= kMaxSkbFrags && snd_.nxt < tail.end && !tail.eor) {
          tail.psh = true;  // tcp_mark_push, then new_segment
          pushed_seq_ = write_seq_;
        }
      }
      const uint32_t piece = std::min(left, kPageSize);
      const Seq32 from = write_seq_;
      const size_t n = copy_to_queue(now, data.subspan(copied, piece));
      if (n > 0) count_frag(from);
      copied += n;
      left -= static_cast<uint32_t>(n);
      if (n < piece) return copied;  // out of send buffer
    }
  }
  return copied;
}

// The chunks holding [from, write_seq_) gained one fragment each (a
// fragment cut by the skb boundary is one in each skb).
void Connection::count_frag(Seq32 from) {
  for (size_t i = chunks_.size(); i-- > 0;) {
    Chunk& c = chunks_[i];
    if (c.end <= from) break;
    if (c.frags < 255) ++c.frags;
    const Seq32 start = i > 0 ? chunks_[i - 1].end : snd_.una;
    if (start <= from) break;
  }
}

// msg_zerocopy_realloc / msg_zerocopy_put_abort: a send that queued nothing
// gives its id back; one that queued bytes takes the next id, or joins the
// newest notification.
void Connection::zc_after_send(size_t size, size_t copied, bool merge) {
  if (copied == 0) return;
  const Seq32 last = write_seq_ - 1u;
  if (merge) {
    ZcNotification& z = zc_pending_.back();
    ++z.len;
    z.bytelen += static_cast<uint32_t>(size);
    z.last = last;
  } else {
    zc_pending_.push_back(ZcNotification{zckey_, 1, static_cast<uint32_t>(size), last});
  }
  ++zckey_;
}

void Connection::zerocopy_syn_data(size_t requested, size_t queued) {
  // tcp_sendmsg_fastopen: the SYN-data skb carries the notification
  // (tcp_send_syn_data: skb_zcopy_set); nothing on the SYN is an abort.
  if (!zc_wanted(MSG_ZEROCOPY, requested) || queued == 0) return;
  zc_pending_.push_back(ZcNotification{zckey_, 1, static_cast<uint32_t>(requested), write_seq_ - 1u});
  ++zckey_;
}

// tcp_tx_timestamp: the write's last skb records the timestamps asked for,
// keyed by the write's last byte. A write that ends in the same unsent skb
// as the previous one moves the key there (shinfo->tskey is overwritten,
// the flags add up).
void Connection::tstamp_after_send(size_t copied) {
  const uint32_t f = opts_.tsflags;
  if (copied == 0 || !(f & (sof::TX_SCHED | sof::TX_SOFTWARE | sof::TX_ACK))) return;
  TxStamp t{write_seq_ - 1u, (f & sof::TX_SCHED) != 0, (f & sof::TX_SOFTWARE) != 0, (f & sof::TX_ACK) != 0};
  if (!tx_stamps_.empty()) {
    TxStamp& b = tx_stamps_.back();
    const size_t i = chunk_index(t.key);
    if (snd_.nxt <= b.key && i < chunks_.size() && chunk_index(b.key) == i) {
      b = TxStamp{t.key, b.sched || t.sched, b.snd || t.snd, b.ack || t.ack, b.xmit};
      return;
    }
  }
  tx_stamps_.push_back(t);
  if (tx_stamps_.size() > kMaxTxStamps) {
    tx_stamps_.pop_front();
    env_.counters().inc(Counter::WeirErrQueueDrops);
  }
}

// Linux sock_set_timestamping (SO_TIMESTAMPING with an int).
Errc Connection::set_timestamping(uint32_t val) {
  if (val & ~sof::MASK) return Errc::kInval;
  if ((val & sof::OPT_ID_TCP) && !(val & sof::OPT_ID)) return Errc::kInval;
  if ((val & sof::OPT_ID) && !(opts_.tsflags & sof::OPT_ID)) {
    // TCP keys count bytes from here: SND.UNA, or write_seq with OPT_ID_TCP.
    if (state_ == State::kClosed || state_ == State::kListen) return Errc::kInval;
    tskey_base_ = (val & sof::OPT_ID_TCP) ? write_seq_ : snd_.una;
  }
  if ((val & sof::OPT_STATS) && !(val & sof::OPT_TSONLY)) return Errc::kInval;
  opts_.tsflags = val;
  return Errc::kOk;
}

// __dev_queue_xmit (SCM_TSTAMP_SCHED, before the device) and the driver's
// skb_tx_timestamp (SCM_TSTAMP_SND, only if the device took the packet):
// on every transmission of the skb holding a key, retransmissions included.
void Connection::tstamp_on_xmit(Time now, Seq32 seq, Seq32 end, bool sent) {
  for (TxStamp& t : tx_stamps_) {
    if (t.key < seq) continue;
    if (end <= t.key) break;
    t.xmit = now;  // tcp_transmit_skb: skb_mstamp_ns, before the device sees it
    if (t.sched) queue_tstamp(now, SCM_TSTAMP_SCHED, t, seq, end, snd_.una);
    if (t.snd && sent) queue_tstamp(now, SCM_TSTAMP_SND, t, seq, end, snd_.una);
  }
}

// __skb_tstamp_tx + __skb_complete_tx_timestamp + sock_queue_err_skb.
// `una`: SND.UNA as the entry is taken (an ACK's new one).
void Connection::queue_tstamp(Time now, uint32_t type, const TxStamp& t, Seq32 from, Seq32 to, Seq32 una) {
  if (orphan_) return;  // nobody can read it (Linux queues it on a dead socket)
  ErrQueueEntry e;
  e.ee.ee_errno = ENOMSG;
  e.ee.ee_origin = SO_EE_ORIGIN_TIMESTAMPING;
  e.ee.ee_info = type;
  if (opts_.tsflags & sof::OPT_ID) e.ee.ee_data = t.key.raw() - tskey_base_.raw();
  e.tstamp = now;
  if (opts_.tsflags & sof::OPT_STATS) {  // set only with OPT_TSONLY (sock_set_timestamping)
    e.payload = tstamp_opt_stats(now, type, t, una);
    e.opt_stats = true;
  } else if (!(opts_.tsflags & sof::OPT_TSONLY)) {
    // A clone of the skb: weir keeps its TCP payload (Linux's clone at the
    // device also holds the headers).
    const uint32_t off = seq_len(snd_.una, seq_max(from, snd_.una));
    const uint32_t len = seq_len(seq_max(from, snd_.una), to);
    if (off < sndq_.size()) {
      e.payload.resize(std::min<size_t>(len, sndq_.size() - off));
      sndq_.copy_out(off, e.payload);
    }
  }
  if (!errq_.push(std::move(e), rcv_.rcvbuf())) env_.counters().inc(Counter::WeirErrQueueDrops);
  events_ |= conn_event::kReadiness;
}

// __skb_tstamp_tx with OPT_STATS: tcp_get_timestamping_opt_stats(sk,
// orig_skb, ack_skb). An ACK timestamp is taken in tcp_clean_rtx_queue,
// after tcp_ack moved snd_una (`una` is the new one) and before the ACK
// reaches congestion control, so cwnd and delivered are the ACK's prior
// values there as in Linux.
std::vector<uint8_t> Connection::tstamp_opt_stats(Time now, uint32_t type, const TxStamp& t, Seq32 una) const {
  OptStatsExtra x;
  x.sndq_size = seq_len(una, write_seq_);
  x.timeout_rehash = static_cast<uint16_t>(timeout_rehash_);
  x.edt_ns = (t.xmit == Time::never() ? now : t.xmit).ns();
  if (type == SCM_TSTAMP_ACK) x.ack_ttl = in_ttl_;
  return opt_stats(info(now), x);
}

// tcp_clean_rtx_queue as SND.UNA moves to `ack`: tcp_ack_tstamp for a key
// newly acknowledged; an skb freed whole drops its notification reference,
// and the last one completes it (msg_zerocopy_callback).
void Connection::errq_on_ack(Time now, Seq32 prior_una, Seq32 ack) {
  while (!tx_stamps_.empty() && tx_stamps_.front().key < ack) {
    const TxStamp t = tx_stamps_.front();
    tx_stamps_.pop_front();
    if (!t.ack || t.key < prior_una) continue;
    Seq32 from = prior_una;
    Seq32 to = ack;
    if (const size_t i = chunk_index(t.key); i < chunks_.size()) {
      from = seq_max(i > 0 ? chunks_[i - 1].end : snd_.una, prior_una);  // tcp_trim_head'ed skb
      to = chunks_[i].end;
    }
    queue_tstamp(now, SCM_TSTAMP_ACK, t, from, to, ack);
  }
  while (!zc_pending_.empty()) {
    const ZcNotification z = zc_pending_.front();
    if (ack <= z.last) break;
    // The skb holding the last byte is freed only once acknowledged whole.
    if (const size_t i = chunk_index(z.last); i < chunks_.size() && ack < chunks_[i].end) break;
    zc_pending_.pop_front();
    // __msg_zerocopy_callback: no notification on a dead socket.
    if (!orphan_) errq_.push_zerocopy(z.id, z.len, true);
    events_ |= conn_event::kReadiness;
  }
}

// tcp_write_queue_purge (reset, abort): every skb is freed, so every
// notification completes; keys no longer sent are forgotten.
void Connection::errq_purge() {
  for (const ZcNotification& z : zc_pending_)
    if (!orphan_) errq_.push_zerocopy(z.id, z.len, true);
  if (!zc_pending_.empty()) events_ |= conn_event::kReadiness;
  zc_pending_.clear();
  tx_stamps_.clear();
}

// ip_recv_error / ipv6_recv_error: the oldest entry. The software timestamp
// is reported only while SOF_TIMESTAMPING_SOFTWARE is on (__sock_recv_timestamp
// reads sk_tsflags at the read).
Expected<ErrQueueEntry, Errc> Connection::recv_error() {
  auto e = errq_.pop();
  if (!e) return Unexpected(Errc::kAgain);
  if (!(opts_.tsflags & sof::SOFTWARE)) e->tstamp.reset();
  events_ |= conn_event::kReadiness;
  return std::move(*e);
}

}  // namespace weir::tcp
