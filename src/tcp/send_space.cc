// The send buffer as Linux accounts it (net/ipv4/tcp.c tcp_sendmsg_locked,
// include/net/sock.h, net/core/stream.c, tcp_input.c tcp_check_space):
// sk_wmem_queued in skb truesize, write() taking data skb by skb while
// sk_stream_memory_free, writers woken only when a third of the buffer is
// free (sk_stream_write_space), the buffer grown with the congestion window
// (tcp_sndbuf_expand), and the tcp_info chronographs that time it all.
#include <algorithm>
#include <bit>

#include <sys/socket.h>

#include "tcp/connection.h"

namespace weir::tcp {
namespace {

// Linux's constants for x86_64 (include/net/tcp.h, include/linux/skbuff.h).
constexpr uint32_t kMaxTcpHeader = 320;     // MAX_TCP_HEADER
constexpr uint32_t kSharedInfoSize = 320;   // SKB_DATA_ALIGN(sizeof(struct skb_shared_info))
constexpr uint32_t kSkBuffSize = 256;       // SKB_DATA_ALIGN(sizeof(struct sk_buff))
constexpr uint32_t kGsoMaxSize = 65536;     // sk_gso_max_size (GSO_LEGACY_MAX_SIZE)

}  // namespace

// Linux sk_wmem_queued: the payload from SND.UNA on plus each skb's fixed
// overhead; an skb is each transmitted burst still unacknowledged and each
// unsent chunk (the unsent rest of a partly sent chunk is an skb of its own,
// tso_fragment).
uint64_t Connection::wmem_queued() const {
  // The unsent chunks are those ending after SND.NXT: the chunks from
  // chunk_index(SND.NXT) on (ends ascend), found without a scan.
  const uint64_t skbs = skbs_.live(snd_.una) + (chunks_.size() - chunk_index(snd_.nxt));
  return seq_len(snd_.una, write_seq_) + skbs * SkbLedger::kSkbOverhead;
}

// Linux tcp_notsent_lowat: the socket's TCP_NOTSENT_LOWAT, else the sysctl.
uint32_t Connection::notsent_lowat() const {
  return opts_.notsent_lowat ? opts_.notsent_lowat : env_.cfg().tcp_notsent_lowat;
}

// Linux __sk_stream_memory_free + tcp_stream_memory_free: room while
// sk_wmem_queued is below sk_sndbuf and the unsent bytes are below
// TCP_NOTSENT_LOWAT; a wake-up (`wake` 1) wants them below half of it.
bool Connection::stream_memory_free(int wake) const {
  if (wmem_queued() >= sndbuf_) return false;
  const uint64_t notsent = seq_len(snd_.nxt, write_seq_);
  return (notsent << wake) < notsent_lowat();
}

// Linux __sk_stream_is_writeable(sk, 1), tcp_poll's EPOLLOUT: free space
// (sk_stream_wspace) at least half of what is queued (sk_stream_min_wspace),
// i.e. a third of the buffer free, and memory free in the wake-up sense.
bool Connection::stream_writeable() const {
  const uint64_t queued = wmem_queued();
  const int64_t wspace = static_cast<int64_t>(sndbuf_) - static_cast<int64_t>(queued);
  return wspace >= static_cast<int64_t>(queued >> 1) && stream_memory_free(1);
}

// Linux tcp_should_expand_sndbuf: not when SO_SNDBUF locked the size, nor
// when the congestion window is full (the sender is not buffer-bound).
bool Connection::should_expand_sndbuf() const {
  return opts_.sndbuf == 0 && sb_.in_flight() < ccs_.snd_cwnd;
}

// Linux tcp_sndbuf_expand: room for two windows of max(cwnd, IW,
// reordering+1) segments, each charged as a non-GSO skb whose kmalloc'ed
// head rounds up to a power of two, up to tcp_wmem[2]; never shrinks.
void Connection::expand_sndbuf() {
  const StackConfig& cfg = env_.cfg();
  const uint32_t mss = std::max<uint32_t>(peer_mss_, mss_cache_);
  const uint32_t per_mss = std::bit_ceil(mss + kMaxTcpHeader + kSharedInfoSize) + kSkBuffSize;
  const uint32_t nr_segs = std::max({ccs_.snd_cwnd, 10u, static_cast<uint32_t>(cfg.tcp_reordering + 1)});
  const uint64_t sndmem = uint64_t{2} * nr_segs * per_mss;
  if (sndmem > sndbuf_) sndbuf_ = static_cast<uint32_t>(std::min<uint64_t>(sndmem, cfg.tcp_wmem[2]));
}

// Linux tcp_check_space -> tcp_new_space -> sk_stream_write_space: after an
// ACK's transmissions, a writer that ran out of room (SOCK_NOSPACE) gets the
// buffer grown and is woken once the socket is writeable again; the
// sndbuf-limited clock stops with the wake-up.
void Connection::check_space(Time now) {
  if (!nospace_) return;
  skbs_.on_acked(snd_.una);
  if (should_expand_sndbuf()) expand_sndbuf();
  write_space();
  if (!nospace_) chrono_.stop(now, Chrono::kSndbufLimited, queues_empty());
}

// Linux sk_stream_write_space: once writeable, SOCK_NOSPACE clears and the
// waiters (blocked writers, poll, epoll) are woken.
void Connection::write_space() {
  if (!stream_writeable()) return;
  nospace_ = false;
  events_ |= conn_event::kReadiness;
}

// Linux tcp_data_snd_check after an incoming segment: tcp_clean_rtx_queue
// stopped the busy clock if it emptied the retransmit queue; then
// tcp_push_pending_frames and tcp_check_space.
void Connection::data_snd_check(Time now) {
  if (sb_.packets_out() == 0) chrono_.stop(now, Chrono::kBusy, queues_empty());
  push(now, false);
  check_space(now);
}

bool Connection::queues_empty() const { return snd_.una == write_seq_; }

// Room for this write in the write queue's tail skb: Linux appends to
// tcp_write_queue_tail() while size_goal - skb->len > 0 and the skb is not
// closed (tcp_skb_can_collapse_to, MSG_EOR). A wholly sent chunk is in the
// retransmit queue and takes nothing more.
uint32_t Connection::tail_room(uint32_t goal) const {
  if (chunks_.empty()) return 0;
  const Chunk& tail = chunks_.back();
  if (tail.eor || tail.frags >= kMaxSkbFrags || tail.end <= snd_.nxt) return 0;
  const Seq32 start = chunks_.size() >= 2 ? chunks_[chunks_.size() - 2].end : snd_.una;
  const uint32_t len = seq_len(seq_max(start, snd_.nxt), tail.end);
  return len < goal ? goal - len : 0;
}

// Linux tcp_skb_entail: a new skb at the tail of the write queue; the busy
// clock starts and an idle restart is checked (RFC 5681 §4.1).
void Connection::open_chunk(Time now) {
  chunks_.push_back(Chunk{write_seq_, false, false});
  chrono_.start(now, Chrono::kBusy);
  cc::slow_start_after_idle_check(*cc_, ccs_, rtt_.rto(), init_cwnd_,
                                  env_.cfg().tcp_slow_start_after_idle != 0, now);
}

// Linux tcp_sendmsg_locked's copy loop: fill the tail skb to size_goal, open
// a new one only while sk_stream_memory_free; a full skb is pushed at once
// when forced_push() holds (tcp_mark_push) or when it is the next to send
// (tcp_push_one). Returns the bytes taken; the rest waits for space.
size_t Connection::copy_to_queue(Time now, std::span<const uint8_t> data) {
  prune_chunks();
  skbs_.on_acked(snd_.una);
  const uint32_t goal = std::min(size_goal(), kGsoMaxSize);
  const size_t hard_limit = std::max<size_t>(sndbuf_, env_.cfg().tcp_wmem[2]) + 2 * kGsoMaxSize;
  size_t copied = 0;
  while (copied < data.size()) {
    uint32_t room = tail_room(goal);
    if (room == 0) {
      if (!stream_memory_free(0)) break;  // wait_for_space
      open_chunk(now);
      room = goal;
    } else {
      split_sent_head();
    }
    const size_t n = sndq_.append(data.subspan(copied, std::min<size_t>(room, data.size() - copied)), hard_limit);
    if (n == 0) break;
    Chunk& tail = chunks_.back();
    if (copied == 0) tail.psh = false;  // Linux: the first copy of a sendmsg clears the skb's PSH
    tail.end += static_cast<uint32_t>(n);
    write_seq_ += static_cast<uint32_t>(n);
    copied += n;
    if (copied == data.size() || n < room) continue;
    if (forced_push(write_seq_)) {
      tail.psh = true;  // tcp_mark_push
      pushed_seq_ = write_seq_;
      push(now, false);
    } else if (chunk_index(snd_.nxt) == chunks_.size() - 1) {
      push(now, false, true);  // tcp_push_one
    }
  }
  prune_chunks();
  return copied;
}

// The tail chunk's sent head stays behind as its own skb once more data
// joins the unsent rest (Linux tso_fragment split them at the burst's end).
void Connection::split_sent_head() {
  Chunk& tail = chunks_.back();
  const Seq32 start = chunks_.size() >= 2 ? chunks_[chunks_.size() - 2].end : snd_.una;
  if (start < snd_.nxt && snd_.nxt < tail.end) chunks_.insert(chunks_.size() - 1, Chunk{snd_.nxt, tail.psh, false});
}

// Linux tcp_push at the end of tcp_sendmsg_locked: the write's last skb is
// marked PSH unless MSG_MORE (always when the write stopped for space,
// whose tcp_push drops MSG_MORE) or when forced_push() holds; MSG_EOR closes
// the skb to later writes once the whole message is in.
void Connection::mark_write_end(int flags, bool partial) {
  if (chunks_.empty()) return;
  if (partial || !(flags & MSG_MORE) || forced_push(write_seq_)) {
    chunks_.back().psh = true;
    pushed_seq_ = write_seq_;
  }
  if ((flags & MSG_EOR) && !partial) chunks_.back().eor = true;
  if (flags & MSG_OOB) mark_urg();  // tcp_push -> tcp_mark_urg (tcp_urgent.cc)
}

// Linux tcp_cwnd_validate's application-limited branch: the sender sent
// what it had, was not cwnd-limited and the writer is out of buffer
// (SOCK_NOSPACE): the time until it is woken counts as sndbuf-limited.
void Connection::chrono_after_xmit(Time now, bool rwnd_limited) {
  if (rwnd_limited) {
    chrono_.start(now, Chrono::kRwndLimited);  // tcp_write_xmit
  } else {
    chrono_.stop(now, Chrono::kRwndLimited, queues_empty());
  }
}

void Connection::chrono_sndbuf_check(Time now) {
  const bool est = state_ == State::kEstablished || state_ == State::kCloseWait;
  if (!cc::is_cwnd_limited(ccs_) && snd_.nxt == write_seq_ && nospace_ && est)
    chrono_.start(now, Chrono::kSndbufLimited);
}

}  // namespace weir::tcp
