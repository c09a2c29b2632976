// The copying transmit path of link/packet_ring.h (--packet-tx copy): a
// plain AF_PACKET socket with no TX ring, the burst's frames kept in a
// bounded user-space slot array and handed over with one sendmmsg(2) per
// flush, each frame its own message.
//
// Why copy: a TX ring's frame reaches the device as an skb whose data are
// the ring's pages, attached as page fragments (tpacket_fill_skb), and
// veth must not hand another stack pages it does not own: __dev_forward_skb2
// copies them into new pages (skb_copy_ubufs) and the ring's skb is freed
// later (skb_release_data). packet_snd instead builds one linear skb per
// message with one copy (sock_alloc_send_pskb, memcpy_from_msg), which
// veth forwards as it is. On veth the "zero-copy" ring copies once more.
//
// Bounded: `slots` frames of at most `slot_size` bytes, allocated once.
// A frame the kernel did not take (a partial sendmmsg, EAGAIN, ENOBUFS)
// stays in its slot and goes first at the next flush; a frame the kernel
// refuses for good (any other error) is dropped and counted, as a wire
// loses a frame.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <vector>

#include "link/packet_rx.h"
#include "weir/netif.h"

namespace weir::link {

class CopyTx {
 public:
  // sendmmsg(2)'s shape; tests pass their own to play a kernel that takes
  // part of a burst or refuses it.
  using SendFn = int (*)(int fd, mmsghdr* msgs, unsigned n, int flags);
  // __sys_sendmmsg cuts vlen to UIO_MAXIOV (1024): a longer burst takes
  // more than one call.
  static constexpr unsigned kMaxBatch = 1024;

  CopyTx() = default;
  CopyTx(uint32_t slots, uint32_t slot_size, SendFn send = nullptr);

  // Copies `frame` into the next free slot; kDropped when every slot holds
  // a frame not yet sent (tx_ring_full), kSent (counted tx_oversize, lost)
  // when it is longer than a slot.
  XmitResult put(std::span<const uint8_t> frame, PacketRingStats& st);
  // Sends the queued frames in order on `fd` (bound to the interface).
  void flush(int fd, PacketRingStats& st);
  // Frames queued and not yet taken by the kernel.
  uint32_t pending() const { return count_; }
  uint32_t slots() const { return slots_; }

 private:
  // Sends up to kMaxBatch frames from the head; false when the kernel
  // took none or only part of them (the rest wait for the next flush).
  bool send_batch(int fd, PacketRingStats& st);
  void pop(uint32_t n);

  std::vector<uint8_t> buf_;
  std::vector<iovec> iov_;    // iov_[i] is slot i: its base fixed, its length the frame's
  std::vector<mmsghdr> msgs_;  // one call's messages, in queue order
  uint32_t slots_ = 0, slot_size_ = 0;
  uint32_t head_ = 0, count_ = 0;  // the queued frames: slots head_, head_ + 1, ... (mod slots_)
  SendFn send_ = nullptr;
};

}  // namespace weir::link
