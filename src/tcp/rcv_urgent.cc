// Application reads and TCP urgent data on the receive side (RFC 9293
// §3.8.5, RFC 6093), as Linux keeps them: one urgent byte at most
// (tp->urg_data, tp->urg_seq), taken out of the stream unless SO_OOBINLINE,
// read once by recv(MSG_OOB); reads stop at the mark (tcp_recvmsg,
// tcp_read_sock). Linux's default tcp_stdurg = 0: the urgent pointer points
// to the byte after the urgent one (RFC 6093 §4, RFC 9293 §3.8.5); with
// tcp_stdurg = 1 at it.
#include <algorithm>

#include "tcp/receiver.h"

namespace weir::tcp {

// Linux tcp_check_urg: a segment's urgent pointer, if it is news.
void Receiver::check_urg(Seq32 seq, uint16_t up, bool stdurg) {
  if (!synced_) return;
  // tcp_stdurg = 0: SEG.UP names the byte after the urgent one (RFC 6093
  // §4); a zero pointer is taken as it is ("if (ptr &&
  // !sysctl_tcp_stdurg) ptr--").
  const Seq32 ptr = seq + (up && !stdurg ? up - 1u : up);
  if (copied_seq_ > ptr) return;  // "urgent data that we've already seen and read"
  if (ptr < rcv_nxt_) return;     // "Do not replay urg ptr": a retransmission's pointer
  // "Do we already have a newer (or duplicate) urgent pointer?"
  if (urg_data_ != UrgData::kNone && !(ptr > urg_seq_)) return;
  // A new mark while the reader sits at the old urgent byte (not inline,
  // not yet stepped over): step over it now, or it would be read as data
  // once the mark moved on (Linux: copied_seq++, SIOCATMARK stays right).
  if (urg_data_ != UrgData::kNone && urg_seq_ == copied_seq_ && !urg_inline_ && copied_seq_ != rcv_nxt_ &&
      !rcvq_.empty()) {
    rcvq_.consume(1);
    copied_seq_ += 1;
  }
  urg_data_ = UrgData::kNotYet;
  urg_seq_ = ptr;
}

// Linux tcp_urg (its second half): while the urgent byte is awaited, any
// segment holding it delivers it, before the text is queued (so also one
// that lands out of order or is then trimmed).
bool Receiver::take_urg_byte(Seq32 seq, std::span<const uint8_t> payload) {
  if (urg_data_ != UrgData::kNotYet) return false;
  const int32_t off = urg_seq_ - seq;
  if (off < 0 || static_cast<size_t>(off) >= payload.size()) return false;
  urg_byte_ = payload[static_cast<size_t>(off)];
  urg_data_ = UrgData::kValid;
  return true;
}

// Linux tcp_recv_urg, the part that depends on the byte: EINVAL ("Yes this
// is right!") when there is none to read, EAGAIN while it has not arrived
// (MSG_OOB never blocks). The caller checks the socket state in between.
Expected<uint8_t, Errc> Receiver::read_urg(bool peek) {
  if (urg_inline_ || urg_data_ == UrgData::kNone || urg_data_ == UrgData::kRead)
    return Unexpected(Errc::kInval);
  if (urg_data_ == UrgData::kNotYet) return Unexpected(Errc::kAgain);
  if (!peek) urg_data_ = UrgData::kRead;
  return urg_byte_;
}

// Linux tcp_inq: with an urgent byte in the readable data (and not inline)
// FIONREAD counts up to the mark only; at the mark it says 0.
size_t Receiver::inq() const {
  if (urg_inline_ || urg_data_ == UrgData::kNone) return readable();
  const int32_t to_mark = urg_seq_ - copied_seq_;
  if (to_mark < 0 || !(urg_seq_ < rcv_nxt_)) return readable();
  return static_cast<size_t>(to_mark);
}

// How many of the `avail` bytes at `off` (past copied_seq) one tcp_recvmsg
// may copy: up to the mark; at the mark nothing once something was copied
// ("Stop if we have read anything"), else all of it, having stepped over
// the urgent byte (`*skip`) unless SO_OOBINLINE keeps it in the stream.
size_t Receiver::urg_limit(size_t off, size_t avail, bool copied, bool* skip) const {
  *skip = false;
  if (urg_data_ == UrgData::kNone) return avail;
  const int32_t to_mark = urg_seq_ - (copied_seq_ + static_cast<uint32_t>(off));
  if (to_mark < 0 || static_cast<size_t>(to_mark) >= avail) return avail;
  if (to_mark > 0) return static_cast<size_t>(to_mark);
  if (copied) return 0;
  *skip = !urg_inline_;
  return avail;
}

// The application reads. Linux tcp_recvmsg: copy (around the urgent byte),
// then tcp_rcv_space_adjust (autotuning), then tcp_cleanup_rbuf (maybe a
// window update). A peek walks the same path without consuming.
ReadResult Receiver::read(Time now, std::span<uint8_t> out, bool peek, Counters& c) {
  flush_counters(c);
  ReadResult r;
  size_t off = 0;
  while (r.bytes < out.size() && off < rcvq_.size()) {
    bool skip = false;
    const size_t avail = std::min(out.size() - r.bytes, rcvq_.size() - off);
    const size_t n = urg_limit(off, avail, r.bytes > 0, &skip);
    if (skip) {
      ++off;
      continue;
    }
    if (n == 0) break;
    rcvq_.peek_at(off, out.subspan(r.bytes, n));
    off += n;
    r.bytes += n;
  }
  r.consumed = off;
  if (peek || off == 0) return r;
  after_read(now, off);
  r.window_update = cleanup_rbuf(r.bytes);
  return r;
}

// splice() from the socket: Linux tcp_read_sock stops at the urgent mark
// ("Stop reading if we hit a patch of urgent data") and, unlike
// tcp_recvmsg, never steps over the byte, SO_OOBINLINE or not.
ReadResult Receiver::read_sock(Time now, std::span<uint8_t> out) {
  ReadResult r;
  size_t n = std::min(out.size(), rcvq_.size());
  if (urg_data_ != UrgData::kNone) {
    const int32_t to_mark = urg_seq_ - copied_seq_;
    if (to_mark >= 0 && static_cast<size_t>(to_mark) < n) n = static_cast<size_t>(to_mark);
  }
  if (n == 0) return r;
  rcvq_.peek(out.first(n));
  r.bytes = r.consumed = n;
  after_read(now, n);
  r.window_update = cleanup_rbuf(n);
  return r;
}

void Receiver::after_read(Time now, size_t consumed) {
  rcvq_.consume(consumed);
  // Nothing follows a FIN: a drained queue gives its storage back.
  if (fin_in_order_) rcvq_.release();
  copied_seq_ += static_cast<uint32_t>(consumed);
  // Linux tcp_recvmsg (skip_copy): once the reader is past the mark there
  // is no urgent data any more.
  if (urg_data_ != UrgData::kNone && copied_seq_ > urg_seq_) urg_data_ = UrgData::kNone;
  rcv_space_adjust(now);
}

}  // namespace weir::tcp
