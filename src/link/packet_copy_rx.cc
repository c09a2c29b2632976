#include "link/packet_copy_rx.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace weir::link {

namespace {

int sys_recvmmsg(int fd, mmsghdr* msgs, unsigned n, int flags, timespec* timeout) {
  return ::recvmmsg(fd, msgs, n, flags, timeout);
}

}  // namespace

// packet_recvmsg with PACKET_AUXDATA fills tp_status as tpacket_rcv fills
// a slot's (TP_STATUS_CSUMNOTREADY for CHECKSUM_PARTIAL, TP_STATUS_CSUM_VALID
// for a verified checksum, TP_STATUS_VLAN_VALID for a stripped tag), tp_len
// with the frame's length and tp_snaplen with what was queued, so the
// ring's classify() decides both paths alike.
RxFrame copy_rx_frame(std::span<const uint8_t> bytes, uint32_t len, uint8_t pkttype, const tpacket_auxdata* aux,
                      uint32_t max_frame) {
  const uint32_t status = aux ? aux->tp_status : 0;
  const uint32_t full = aux ? std::max(aux->tp_len, len) : len;
  const auto got = static_cast<uint32_t>(bytes.size());
  return RxFrame{bytes, classify(status, full, got, pkttype, max_frame), false};
}

CopyRx::CopyRx(uint32_t slots, uint32_t max_frame, RecvFn recv)
    : recv_(recv ? recv : sys_recvmmsg),
      max_frame_(max_frame),
      bytes_(size_t{slots} * max_frame),
      msgs_(slots),
      iov_(slots),
      from_(slots),
      ctl_(size_t{slots} * kCtl) {
  for (uint32_t i = 0; i < slots; ++i) {
    iov_[i] = {bytes_.data() + size_t{i} * max_frame, max_frame};
    msghdr& h = msgs_[i].msg_hdr;
    h.msg_name = &from_[i];
    h.msg_iov = &iov_[i];
    h.msg_iovlen = 1;
  }
}

unsigned CopyRx::receive(int fd, unsigned n) {
  // recvmmsg writes msg_namelen, msg_controllen and msg_flags back: reset
  // the ones the previous call shortened.
  for (unsigned i = 0; i < n; ++i) {
    msghdr& h = msgs_[i].msg_hdr;
    h.msg_namelen = sizeof(sockaddr_ll);
    h.msg_control = ctl_.data() + size_t{i} * kCtl;
    h.msg_controllen = kCtl;
    h.msg_flags = 0;
  }
  int r;
  do {
    r = recv_(fd, msgs_.data(), n, MSG_DONTWAIT, nullptr);
  } while (r < 0 && errno == EINTR);
  // EAGAIN: nothing waiting. Any other error (ENETDOWN when the interface
  // went away) ends this drain too; the driver reads again on the next
  // wake-up and the device counters show what arrived.
  return r > 0 ? static_cast<unsigned>(r) : 0;
}

RxFrame CopyRx::frame(unsigned i) const {
  const msghdr& h = msgs_[i].msg_hdr;
  tpacket_auxdata a{};
  const tpacket_auxdata* aux = nullptr;
  // CMSG_FIRSTHDR and CMSG_NXTHDR take a non-const msghdr.
  auto& m = const_cast<msghdr&>(h);
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level == SOL_PACKET && c->cmsg_type == PACKET_AUXDATA &&
        c->cmsg_len >= CMSG_LEN(sizeof(tpacket_auxdata))) {
      std::memcpy(&a, CMSG_DATA(c), sizeof a);
      aux = &a;
    }
  }
  const uint32_t got = std::min(msgs_[i].msg_len, max_frame_);
  // MSG_TRUNC: the frame was longer than the slot (without auxdata, say
  // so by one byte more than was kept).
  const uint32_t len = (h.msg_flags & MSG_TRUNC) ? got + 1 : got;
  return copy_rx_frame({bytes_.data() + size_t{i} * max_frame_, got}, len, from_[i].sll_pkttype, aux, max_frame_);
}

}  // namespace weir::link
