#include "link/packet_copy_tx.h"

#include <cerrno>
#include <cstring>

namespace weir::link {

namespace {

int real_sendmmsg(int fd, mmsghdr* msgs, unsigned n, int flags) { return ::sendmmsg(fd, msgs, n, flags); }

// packet_snd's errors that mean "not now" rather than "never": the send
// buffer is full (sock_alloc_send_pskb, EAGAIN), or the device or its
// peer dropped the frame for want of room (net_xmit_errno of
// NET_XMIT_DROP: ENOBUFS; veth_xmit when the peer's backlog is full).
bool transient(int e) { return e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS || e == EINTR; }

}  // namespace

CopyTx::CopyTx(uint32_t slots, uint32_t slot_size, SendFn send)
    : buf_(size_t{slots} * slot_size),
      iov_(slots),
      msgs_(slots < kMaxBatch ? slots : kMaxBatch),
      slots_(slots),
      slot_size_(slot_size),
      send_(send ? send : real_sendmmsg) {
  for (uint32_t i = 0; i < slots; ++i) iov_[i].iov_base = buf_.data() + size_t{i} * slot_size;
}

XmitResult CopyTx::put(std::span<const uint8_t> frame, PacketRingStats& st) {
  if (frame.size() > slot_size_) return ++st.tx_oversize, XmitResult::kSent;  // lost, as on a wire
  if (count_ == slots_) return ++st.tx_ring_full, XmitResult::kDropped;
  const uint32_t i = (head_ + count_) % slots_;
  std::memcpy(iov_[i].iov_base, frame.data(), frame.size());
  iov_[i].iov_len = frame.size();
  ++count_;
  ++st.tx_frames;
  st.tx_bytes += frame.size();
  return XmitResult::kSent;
}

void CopyTx::pop(uint32_t n) {
  head_ = (head_ + n) % slots_;
  count_ -= n;
}

// Every call either sends at least one frame, drops one, or stops the
// flush, so a flush makes at most `count_` calls.
void CopyTx::flush(int fd, PacketRingStats& st) {
  while (count_ != 0 && send_batch(fd, st)) {
  }
}

bool CopyTx::send_batch(int fd, PacketRingStats& st) {
  const uint32_t n = count_ < msgs_.size() ? count_ : static_cast<uint32_t>(msgs_.size());
  for (uint32_t j = 0; j < n; ++j) {
    msghdr& h = msgs_[j].msg_hdr;
    h = msghdr{};  // no address: packet_snd sends on the bound interface (packet_cached_dev_get)
    h.msg_iov = &iov_[(head_ + j) % slots_];
    h.msg_iovlen = 1;
  }
  ++st.tx_sends;
  const int r = send_(fd, msgs_.data(), n, MSG_DONTWAIT);
  if (r > 0) {
    pop(static_cast<uint32_t>(r));
    // sendmmsg(2): fewer than asked means the next message failed; its
    // error comes back at the next call, which the next flush makes.
    if (static_cast<uint32_t>(r) == n) return true;
    ++st.tx_send_errors;
    return false;
  }
  ++st.tx_send_errors;
  if (r == 0 || transient(errno)) return false;
  // A refusal for good (ENETDOWN, EMSGSIZE, ...): the head frame is lost.
  pop(1);
  ++st.tx_send_dropped;
  return true;
}

}  // namespace weir::link
