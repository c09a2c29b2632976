// The copying receive path of link/packet_ring.h (--ring-rx copy): a plain
// AF_PACKET socket with no RX ring, read with recvmmsg(2) into a bounded
// array of user-space slots, one frame per slot.
//
// Why copy: a ring is filled by tpacket_rcv, which copies each frame into
// its slot in the softirq that delivers it, and on veth that softirq runs
// on the sending CPU (veth_xmit -> __netif_rx -> the sender's own backlog).
// So a ring charges the receiver's copy, and the cache misses on slots the
// reader's CPU last touched (packet_lookup_frame), to the sender: 32 % of a
// weir sender's samples when both ends are weir (docs/performance-log.md,
// "Session 21"). packet_rcv instead queues the skb itself (a clone, no
// payload copy), and the copy happens in the reader's recvmmsg, on the
// reader's CPU, as Linux's own TCP receiver copies in its recvmsg.
//
// Per frame the kernel says through PACKET_AUXDATA what a ring slot's
// header says (tp_status's checksum and VLAN bits, tp_len, tp_snaplen),
// and through the sockaddr_ll the packet type; copy_rx_frame turns them
// into the ring's verdicts (link/packet_rx.h classify).
//
// Bounded: `slots` slots of `max_frame` bytes, allocated once; one drain
// reads at most `limit` frames. The socket's receive buffer bounds what
// waits in the kernel (packet_rcv drops past sk_rcvbuf: tp_drops).
#pragma once

#include <linux/if_packet.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "link/packet_rx.h"

namespace weir::link {

// What a frame recvmsg returned is, from what came with it: its bytes
// (cut to the slot), the length the kernel had (`len`, more than the bytes
// when MSG_TRUNC cut it), the sender's sockaddr_ll packet type, and the
// auxdata when the kernel gave one (nullptr: none, as without
// PACKET_AUXDATA). Pure, for tests.
RxFrame copy_rx_frame(std::span<const uint8_t> bytes, uint32_t len, uint8_t pkttype, const tpacket_auxdata* aux,
                      uint32_t max_frame);

// Frames per recvmmsg: the copy path's slots.
constexpr uint32_t kCopyRxBatch = 64;

class CopyRx {
 public:
  // recvmmsg(2)'s shape; tests pass their own to play the kernel.
  using RecvFn = int (*)(int fd, mmsghdr* msgs, unsigned n, int flags, timespec* timeout);

  CopyRx() = default;
  CopyRx(uint32_t slots, uint32_t max_frame, RecvFn recv = nullptr);
  // The message headers point into the vectors' buffers, which a move
  // carries along and a copy would not.
  CopyRx(const CopyRx&) = delete;
  CopyRx& operator=(const CopyRx&) = delete;
  CopyRx(CopyRx&&) = default;
  CopyRx& operator=(CopyRx&&) = default;

  // Reads up to `limit` frames from `fd` (non-blocking) and visits each as
  // deliver(bytes, checksum_valid); the rest are counted in `st`. Returns
  // the frames read (delivered or not). `more()` afterwards: the last call
  // filled every slot, so the socket may hold more.
  template <class F>
  size_t drain(int fd, PacketRingStats& st, F&& deliver, uint32_t limit);
  bool more() const { return more_; }

 private:
  // One recvmmsg into the first `n` slots; the messages read (0 when none).
  unsigned receive(int fd, unsigned n);
  RxFrame frame(unsigned i) const;

  RecvFn recv_ = nullptr;
  uint32_t max_frame_ = 0;
  std::vector<uint8_t> bytes_;
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iov_;
  std::vector<sockaddr_ll> from_;
  // Room for one PACKET_AUXDATA control message per slot.
  static constexpr size_t kCtl = CMSG_SPACE(sizeof(tpacket_auxdata));
  std::vector<uint8_t> ctl_;
  bool more_ = false;
};

template <class F>
size_t CopyRx::drain(int fd, PacketRingStats& st, F&& deliver, uint32_t limit) {
  size_t seen = 0;
  more_ = false;
  while (seen < limit) {
    const auto want = static_cast<unsigned>(std::min<size_t>(msgs_.size(), limit - seen));
    const unsigned got = receive(fd, want);
    for (unsigned i = 0; i < got; ++i) {
      const RxFrame f = frame(i);
      if (count_rx(st, f)) deliver(f.bytes, f.verdict == RxVerdict::kDeliverChecksumValid);
    }
    seen += got;
    more_ = got == want && got != 0;
    if (!more_) break;
  }
  st.rx_wakeups += seen != 0;
  return seen;
}

}  // namespace weir::link
