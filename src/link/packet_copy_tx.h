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
// Bounded: at most `slots` messages and `slots` x `slot_size` bytes (plus
// a vnet header each),
// allocated once, kept as a ring of bytes (a message never wraps: one that
// does not fit before the end starts again at the front).
// A frame the kernel did not take (a partial sendmmsg, EAGAIN, ENOBUFS)
// stays in its place and goes first at the next flush; a frame the kernel
// refuses for good (any other error) is dropped and counted, as a wire
// loses a frame.
//
// With `vnet` (the socket has PACKET_VNET_HDR) each message starts with a
// struct virtio_net_hdr, and a message may be a TCP super-packet of up to
// 64 KB for the kernel's GSO to cut into MTU-sized frames before the device
// (link/vnet.h; packet_snd, virtio_net_hdr_to_skb, validate_xmit_skb).
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <vector>

#include "link/packet_rx.h"
#include "link/vnet.h"
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

  // A vnet message: the header, an Ethernet header, 64 KB of IP.
  static constexpr uint32_t kMaxVnetMessage = kVnetLen + 14 + 65535;

  CopyTx() = default;
  // `vnet`: every message carries a virtio_net_hdr and may be as long as
  // kMaxVnetMessage (if the bytes allow); else a message is one frame of at
  // most `slot_size` bytes.
  CopyTx(uint32_t slots, uint32_t slot_size, SendFn send = nullptr, bool vnet = false);

  // Copies `frame` (with `vh` in front in vnet mode) behind the queued
  // ones; kDropped when the messages or bytes are all taken by frames not
  // yet sent (tx_ring_full), kSent (counted tx_oversize, lost) when it is
  // longer than a message may be.
  XmitResult put(std::span<const uint8_t> frame, PacketRingStats& st, const VnetHdr& vh = {}) {
    return put({}, frame, st, vh);
  }
  // The same for a frame in two pieces (link header, then the rest).
  XmitResult put(std::span<const uint8_t> head, std::span<const uint8_t> rest, PacketRingStats& st,
                 const VnetHdr& vh = {});
  // Vnet mode: lends room behind the queued messages for one of up to
  // `max` frame bytes, to be written in place (a GSO run being built), or
  // nullptr when there is none. close() queues it as `len` bytes with `vh`.
  // Nothing else may be put while a message is open.
  uint8_t* open(size_t max);
  void close(const VnetHdr& vh, size_t len, PacketRingStats& st);
  // The longest frame put() takes.
  uint32_t max_frame() const { return max_msg_ - (vnet_ ? static_cast<uint32_t>(kVnetLen) : 0); }
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
  // Where `n` bytes go behind the queued messages; nullptr if they do not fit.
  uint8_t* room(size_t n);
  void queue(uint8_t* at, size_t n);

  std::vector<uint8_t> buf_;
  std::vector<iovec> iov_;    // the queued messages' places: iov_[head_], iov_[head_ + 1], ... (mod slots_)
  std::vector<mmsghdr> msgs_;  // one call's messages, in queue order
  uint32_t slots_ = 0, max_msg_ = 0;
  uint32_t head_ = 0, count_ = 0;
  size_t tail_ = 0;  // the byte after the last queued message
  uint8_t* open_ = nullptr;  // the open message's vnet header
  bool vnet_ = false;
  SendFn send_ = nullptr;
};

}  // namespace weir::link
