// The pure parts of link/packet_ring.h: ring geometry and walking a
// TPACKET_V3 block. No socket, no mapping: unit-tested on memory.
#include <linux/if_packet.h>

#include <cstring>

#include <fmt/format.h>

#include "link/packet_ring.h"

namespace weir::link {

namespace {

constexpr size_t kMaxRing = size_t{1} << 30;  // our own bound: 1 GiB per ring
// TPACKET_ALIGN(sizeof(struct tpacket3_hdr)): where struct sockaddr_ll
// follows the header in an RX frame, and where a TX frame's data starts.
constexpr size_t kHdr = TPACKET_ALIGN(sizeof(tpacket3_hdr));

uint32_t align(uint32_t v) { return static_cast<uint32_t>(TPACKET_ALIGN(v)); }

uint32_t pow2_at_least(uint32_t v) {
  uint32_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// packet_set_ring's checks, in its order, with our bound on the total.
Expected<RingGeometry, std::string> check(RingGeometry g, size_t page, uint32_t need, const char* which) {
  if (g.block_size == 0 || g.block_size % page != 0)
    return Unexpected(fmt::format("{} block size {} is not a multiple of the page size {}", which, g.block_size, page));
  if (g.frame_size < TPACKET3_HDRLEN || g.frame_size % TPACKET_ALIGNMENT != 0)
    return Unexpected(fmt::format("{} frame size {} is not a multiple of {} of at least {}", which, g.frame_size,
                                  TPACKET_ALIGNMENT, TPACKET3_HDRLEN));
  if (g.frame_size < need || g.frame_size > g.block_size)
    return Unexpected(fmt::format("{} frame size {} does not fit a {}-byte frame in a {}-byte block", which,
                                  g.frame_size, need, g.block_size));
  if (g.block_count == 0 || g.bytes() > kMaxRing)
    return Unexpected(fmt::format("{} ring of {} blocks of {} bytes is outside 1 block .. 1 GiB", which,
                                  g.block_count, g.block_size));
  g.frame_count = g.block_size / g.frame_size * g.block_count;
  return g;
}

}  // namespace

size_t tx_data_offset() { return kHdr; }

// RX (TPACKET_V3): frames are packed at their own length, so frame_size
// only has to pass packet_set_ring's checks; it is set to the largest
// frame with its headers, which also makes the kernel's frame count
// (tp_frame_nr) a bound on frames per ring.
Expected<RingGeometry, std::string> rx_geometry(const PacketRingConfig& cfg, size_t page, uint32_t max_frame) {
  const uint32_t need = align(static_cast<uint32_t>(TPACKET3_HDRLEN) + max_frame);
  // The block descriptor (BLK_PLUS_PRIV) comes first in every block.
  if (size_t{cfg.rx_block_size} < need + sizeof(tpacket_block_desc))
    return Unexpected(fmt::format("RX block size {} cannot hold one {}-byte frame", cfg.rx_block_size, max_frame));
  return check({cfg.rx_block_size, cfg.rx_block_count, need, 0}, page, need, "RX");
}

// TX: fixed slots of frame_size, frames_per_block per block; the blocks are
// one page-multiple each, so a slot never straddles two (packet_mmap.rst:
// "frames ... cannot be spawned across two blocks").
Expected<RingGeometry, std::string> tx_geometry(const PacketRingConfig& cfg, size_t page, uint32_t max_frame) {
  const auto need = static_cast<uint32_t>(kHdr + max_frame);
  const uint32_t frame = cfg.tx_frame_size ? cfg.tx_frame_size : pow2_at_least(align(need));
  if (cfg.tx_frame_count == 0) return Unexpected(std::string("TX ring of 0 frames"));
  const uint32_t block = frame >= page ? frame : static_cast<uint32_t>(page);
  const uint32_t per_block = block / frame;
  const uint32_t blocks = (cfg.tx_frame_count + per_block - 1) / per_block;
  return check({block, blocks, frame, 0}, page, need, "TX");
}

BlockReader::BlockReader(std::span<const uint8_t> block, uint32_t max_frame) : b_(block), max_frame_(max_frame) {
  tpacket_block_desc d;
  if (b_.size() < sizeof d) {
    malformed_ = true;
    return;
  }
  std::memcpy(&d, b_.data(), sizeof d);
  num_ = d.hdr.bh1.num_pkts;
  at_ = d.hdr.bh1.offset_to_first_pkt;
}

// One frame: its tpacket3_hdr, the sockaddr_ll after it (sll_pkttype), the
// frame at tp_mac. tp_next_offset links to the next (0 on the last).
bool BlockReader::next(RxFrame& out) {
  if (malformed_ || seen_ == num_) return false;
  tpacket3_hdr h;
  sockaddr_ll ll;
  if (at_ + kHdr + sizeof ll > b_.size()) return malformed_ = true, false;
  std::memcpy(&h, b_.data() + at_, sizeof h);
  std::memcpy(&ll, b_.data() + at_ + kHdr, sizeof ll);
  if (at_ + h.tp_mac + size_t{h.tp_snaplen} > b_.size()) return malformed_ = true, false;
  out.bytes = b_.subspan(at_ + h.tp_mac, h.tp_snaplen);
  out.losing = (h.tp_status & TP_STATUS_LOSING) != 0;
  // packet(7): the kernel shows a tap the frames its own interface sends as
  // PACKET_OUTGOING; they are ours (or the kernel's), never input.
  if (ll.sll_pkttype == PACKET_OUTGOING) out.verdict = RxVerdict::kOutgoing;
  else if ((h.tp_status & TP_STATUS_COPY) || h.tp_snaplen < h.tp_len || h.tp_len > max_frame_)
    out.verdict = RxVerdict::kOversize;
  else if (h.tp_status & TP_STATUS_VLAN_VALID) out.verdict = RxVerdict::kVlan;
  // packet_mmap.rst, TP_STATUS_CSUMNOTREADY: a frame whose checksum is left
  // for hardware to fill in; on veth, a local sender's CHECKSUM_PARTIAL:
  // correct by construction, only not summed yet.
  else if (h.tp_status & (TP_STATUS_CSUMNOTREADY | TP_STATUS_CSUM_VALID)) out.verdict = RxVerdict::kDeliverChecksumValid;
  else out.verdict = RxVerdict::kDeliver;
  if (++seen_ < num_) {
    if (h.tp_next_offset == 0) malformed_ = true, seen_ = num_;
    at_ += h.tp_next_offset;
  }
  return true;
}

}  // namespace weir::link
