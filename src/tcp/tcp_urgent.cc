// TCP urgent data on a connection (RFC 9293 §3.8.5, RFC 6093): the URG bit
// and urgent pointer of arriving segments (the Receiver keeps the mark and
// the byte, rcv_urgent.cc), recv(MSG_OOB), send(MSG_OOB) and the URG bit on
// what we send, and splice() out of the socket. Linux is the reference:
// tcp_urg / tcp_check_urg (tcp_input.c), tcp_recv_urg / tcp_mark_urg /
// tcp_splice_read (tcp.c), __tcp_transmit_skb (tcp_output.c).
// Not modelled: SIGURG (sk_send_sigurg; weir has no signals). tcp_stdurg
// = 1 (RFC 1122 §4.2.2.4's reading, which RFC 6093 §4 retired) changes the
// receive side only, as in Linux: the sender always points past the byte.
#include <sys/socket.h>

#include "tcp/connection.h"

namespace weir::tcp {

using namespace wire::tcp_flag;

// Linux tcp_urg, run on every acceptable segment after its ACK field and
// before its text (tcp_rcv_state_process "step 6: check the URG bit").
void Connection::urg_input(const InSegment& seg) {
  if (seg.h.has(URG)) rcv_.check_urg(seg.h.seq, seg.h.urgent, env_.cfg().tcp_stdurg);
  const Seq32 first = seg.h.seq + (seg.h.has(SYN) ? 1u : 0u);
  if (rcv_.take_urg_byte(first, seg.payload)) events_ |= conn_event::kReadiness;  // sk_data_ready
}

// recv(MSG_OOB): Linux tcp_recvmsg_locked (ENOTCONN on a listener) then
// tcp_recv_urg, in its order: EINVAL with no byte to read (none, already
// read, or SO_OOBINLINE), ENOTCONN on a closed socket that saw no FIN, the
// byte (once; MSG_PEEK leaves it), 0 after EOF, else EAGAIN: "this call
// should never block, independent of the blocking state of the socket".
Expected<size_t, Errc> Connection::recv_urg(std::span<uint8_t> out, int flags) {
  if (state_ == State::kListen) return Unexpected(Errc::kNotConn);
  const Expected<uint8_t, Errc> held = rcv_.read_urg(true);
  if (!held && held.error() == Errc::kInval) return Unexpected(Errc::kInval);
  if (state_ == State::kClosed && !rcv_.fin_received()) return Unexpected(Errc::kNotConn);
  if (held) {
    if (!(flags & MSG_PEEK)) rcv_.read_urg(false);
    events_ |= conn_event::kReadiness;  // POLLPRI goes
    if (out.empty()) return size_t{0};  // Linux: MSG_TRUNC, 0 bytes
    if (!(flags & MSG_TRUNC)) out[0] = *held;
    return size_t{1};
  }
  if (state_ == State::kClosed || rd_shut_ || rcv_.fin_received()) return size_t{0};
  return Unexpected(Errc::kAgain);
}

// Linux tcp_push -> tcp_mark_urg: a send with MSG_OOB moves SND.UP to the
// end of what it queued (RFC 9293 §3.10.2 SEND: with the urgent flag,
// SND.UP marks the end of the data; RFC 6093 §4: one past its last byte).
void Connection::mark_urg() {
  snd_up_ = write_seq_;
  urg_mode_ = snd_up_ != snd_.una;
}

// Linux tcp_clean_rtx_queue: once SND.UNA reaches SND.UP, urgent mode ends
// (snd_up = snd_una, so tcp_urg_mode() is false).
void Connection::urg_acked() {
  if (urg_mode_ && snd_up_ <= snd_.una) urg_mode_ = false;
}

// Linux __tcp_transmit_skb: while SND.UP is ahead of a segment's sequence
// number it carries URG and SEG.UP = SND.UP - SEG.SEQ; a mark more than
// 64 KiB ahead is sent as 0xFFFF while the segment starts within 0xFFFF of
// SND.NXT (as it stands before this segment is sent), so that the receiver
// knows urgent data is coming (RFC 6093 §5 leaves the far mark open).
// urg_header (connection.h) cleared SEG.UP and calls this in urgent mode only.
void Connection::urg_pointer(wire::TcpHeader& h) const {
  const int32_t ahead = snd_up_ - h.seq;
  if (ahead <= 0) return;
  if (ahead < 0x10000) {
    h.urgent = static_cast<uint16_t>(ahead);
    h.flags |= URG;
  } else if (h.seq + 0xFFFFu > snd_.nxt) {
    h.urgent = 0xFFFF;
    h.flags |= URG;
  }
}

// One pass of Linux tcp_splice_read's loop, with the socket's O_NONBLOCK
// as its timeo: bytes via tcp_read_sock; when there are none, in Linux's
// order: SOCK_DONE (a FIN) 0, sk_err, RCV_SHUTDOWN 0, TCP_CLOSE ENOTCONN,
// no timeo EAGAIN, and then, with the receive queue not empty (the reader
// is stuck at an urgent byte tcp_read_sock will not cross), 0 rather than
// a wait that could never end (Linux: "we do not want to loop").
Expected<size_t, Errc> Connection::splice_read(Time now, std::span<uint8_t> out, bool nonblock) {
  if (state_ == State::kListen) return Unexpected(Errc::kNotConn);  // tcp_read_sock
  if (out.empty()) return size_t{0};
  const ReadResult r = rcv_.read_sock(now, out);
  if (r.window_update && synchronized() && state_ != State::kTimeWait) send_ack(now);
  if (r.bytes > 0) {
    events_ |= conn_event::kReadiness;
    return r.bytes;
  }
  if (rcv_.fin_received()) return size_t{0};
  if (error_ != Errc::kOk) {
    const Errc e = error_;
    error_ = Errc::kOk;
    return Unexpected(e);
  }
  if (rd_shut_) return size_t{0};
  if (state_ == State::kClosed) return Unexpected(Errc::kNotConn);
  if (nonblock) return Unexpected(Errc::kAgain);
  if (rcv_.readable() > 0) return size_t{0};
  return Unexpected(Errc::kAgain);
}

}  // namespace weir::tcp
