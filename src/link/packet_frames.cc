// FrameRing (link/packet_rx.h): reading a TPACKET_V2 RX ring slot by slot.
#include <linux/if_packet.h>

#include <cstring>

#include "link/packet_rx.h"

namespace weir::link {

namespace {

// Where struct sockaddr_ll follows the header in a slot (tpacket_rcv:
// h.raw + TPACKET_ALIGN(sizeof(struct tpacket2_hdr))).
constexpr size_t kLl = TPACKET_ALIGN(sizeof(tpacket2_hdr));

}  // namespace

uint8_t* FrameRing::slot(uint32_t i) const {
  const uint32_t per_block = g_.block_size / g_.frame_size;
  return base_ + size_t{i / per_block} * g_.block_size + size_t{i % per_block} * g_.frame_size;
}

// tpacket_rcv writes the frame, then smp_wmb(), then tp_status
// (__packet_set_status): the acquire load pairs with that, so the frame is
// complete once TP_STATUS_USER is seen.
bool FrameRing::ready() const {
  const auto* h = reinterpret_cast<const tpacket2_hdr*>(slot(next_));
  return (std::atomic_ref<const uint32_t>(h->tp_status).load(std::memory_order_acquire) & TP_STATUS_USER) != 0;
}

// The header fields are copied out first: the kernel owns nothing in the
// slot now, but the checks below then read one consistent copy.
RxFrame FrameRing::read() const {
  const uint8_t* s = slot(next_);
  tpacket2_hdr h;
  sockaddr_ll ll;
  std::memcpy(&h, s, sizeof h);
  std::memcpy(&ll, s + kLl, sizeof ll);
  RxFrame f;
  f.losing = (h.tp_status & TP_STATUS_LOSING) != 0;
  // The kernel keeps tp_mac + tp_snaplen within the slot; a slot saying
  // otherwise is not read past its end.
  if (h.tp_mac < kLl + sizeof ll || size_t{h.tp_mac} + h.tp_snaplen > g_.frame_size) {
    f.verdict = RxVerdict::kMalformed;
    return f;
  }
  f.bytes = {s + h.tp_mac, h.tp_snaplen};
  f.verdict = classify(h.tp_status, h.tp_len, h.tp_snaplen, ll.sll_pkttype, max_frame_);
  return f;
}

// packet_mmap.rst: the user hands a frame back by setting its status to
// TP_STATUS_KERNEL; the release store orders our reads of the slot before
// the kernel may fill it again (tpacket_rcv tests the status first).
void FrameRing::release() {
  auto* h = reinterpret_cast<tpacket2_hdr*>(slot(next_));
  std::atomic_ref<uint32_t>(h->tp_status).store(TP_STATUS_KERNEL, std::memory_order_release);
  next_ = next_ + 1 == g_.frame_count ? 0 : next_ + 1;
}

}  // namespace weir::link
