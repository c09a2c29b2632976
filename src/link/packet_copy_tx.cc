#include "link/packet_copy_tx.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "wire/bytes.h"

namespace weir::link {

namespace {

int real_sendmmsg(int fd, mmsghdr* msgs, unsigned n, int flags) { return ::sendmmsg(fd, msgs, n, flags); }

// packet_snd's errors that mean "not now" rather than "never": the send
// buffer is full (sock_alloc_send_pskb, EAGAIN), or the device or its
// peer dropped the frame for want of room (net_xmit_errno of
// NET_XMIT_DROP: ENOBUFS; veth_xmit when the peer's backlog is full).
bool transient(int e) { return e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS || e == EINTR; }

}  // namespace

CopyTx::CopyTx(uint32_t slots, uint32_t slot_size, SendFn send, bool vnet)
    : buf_(size_t{slots} * (slot_size + (vnet ? kVnetLen : 0))),
      iov_(slots),
      msgs_(slots < kMaxBatch ? slots : kMaxBatch),
      slots_(slots),
      max_msg_(vnet ? static_cast<uint32_t>(std::min<size_t>(kMaxVnetMessage, buf_.size())) : slot_size),
      vnet_(vnet),
      send_(send ? send : real_sendmmsg) {}

// The queued bytes run from the head message's start to tail_, wrapping
// once at most: a message that does not fit before the end goes to the
// front if the head's start leaves room there.
uint8_t* CopyTx::room(size_t n) {
  if (count_ == 0) return (tail_ = 0, n <= buf_.size()) ? buf_.data() : nullptr;  // empty: from the front
  if (count_ == slots_) return nullptr;
  const auto head = static_cast<size_t>(static_cast<uint8_t*>(iov_[head_].iov_base) - buf_.data());
  if (tail_ > head) {  // free: [tail_, end), then [0, head)
    if (n <= buf_.size() - tail_) return buf_.data() + tail_;
    return n <= head ? buf_.data() : nullptr;
  }
  return n <= head - tail_ ? buf_.data() + tail_ : nullptr;  // free: [tail_, head)
}

XmitResult CopyTx::put(std::span<const uint8_t> head, std::span<const uint8_t> rest, PacketRingStats& st,
                       const VnetHdr& vh) {
  const size_t pre = vnet_ ? kVnetLen : 0;
  const size_t len = head.size() + rest.size();
  if (pre + len > max_msg_) return ++st.tx_oversize, XmitResult::kSent;  // lost, as on a wire
  uint8_t* at = room(pre + len);
  if (!at) return ++st.tx_ring_full, XmitResult::kDropped;
  if (vnet_) encode_vnet(vh, at);
  wire::put_bytes(wire::put_bytes(at + pre, head), rest);
  queue(at, pre + len);
  ++st.tx_frames;
  st.tx_bytes += len;
  return XmitResult::kSent;
}

uint8_t* CopyTx::open(size_t max) {
  if (!vnet_ || open_) return nullptr;
  open_ = room(std::min<size_t>(kVnetLen + max, max_msg_));
  return open_ ? open_ + kVnetLen : nullptr;
}

void CopyTx::close(const VnetHdr& vh, size_t len, PacketRingStats& st) {
  if (!open_) return;
  encode_vnet(vh, open_);
  queue(open_, kVnetLen + len);
  open_ = nullptr;
  ++st.tx_frames;
  st.tx_bytes += len;
}

void CopyTx::queue(uint8_t* at, size_t n) {
  iovec& v = iov_[(head_ + count_) % slots_];
  v.iov_base = at;
  v.iov_len = n;
  tail_ = static_cast<size_t>(at - buf_.data()) + n;
  ++count_;
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
