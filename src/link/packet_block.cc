// The pure parts of link/packet_ring.h and link/packet_rx.h: ring geometry,
// a frame's verdict, and walking a TPACKET_V3 block. No socket, no
// mapping: unit-tested on memory.
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

// A ring of `count` fixed slots of `size` bytes (0: the smallest power of
// two of at least `need`), each block a page or one slot, so a slot never
// straddles two blocks (packet_mmap.rst: "frames ... cannot be spawned
// across two blocks"); the count rounds up to whole blocks.
Expected<RingGeometry, std::string> slots(uint32_t size, uint32_t count, size_t page, uint32_t need, const char* which) {
  const uint32_t frame = size ? size : pow2_at_least(align(need));
  if (count == 0 || count > kMaxRingFrames)
    return Unexpected(fmt::format("{} ring of {} frames: expected 1 .. {}", which, count, kMaxRingFrames));
  if (frame == 0 || frame > kMaxRing)
    return Unexpected(fmt::format("{} frame size {}: expected 1 .. 1 GiB", which, frame));
  const uint32_t block = frame >= page ? frame : static_cast<uint32_t>(page);
  const uint32_t per_block = block / frame;
  const uint32_t blocks = (count + per_block - 1) / per_block;
  return check({block, blocks, frame, 0}, page, need, which);
}

}  // namespace

size_t tx_data_offset() { return kHdr; }

Expected<RingGeometry, std::string> rx_geometry(const PacketRingConfig& cfg, size_t page, uint32_t max_frame) {
  switch (cfg.rx_ring) {
    case RxRing::kV2: return rx_v2_geometry(cfg, page, max_frame);
    case RxRing::kV3: return rx_v3_geometry(cfg, page, max_frame);
    case RxRing::kCopy: break;
  }
  // No ring: rx_frame_count frames may wait in the socket's queue, read
  // kCopyRxBatch at a time into slots of max_frame bytes.
  if (max_frame == 0 || cfg.rx_frame_count == 0 || cfg.rx_frame_count > kMaxRingFrames)
    return Unexpected(fmt::format("RX copy: {} frames is outside 1 .. {}", cfg.rx_frame_count, kMaxRingFrames));
  return RingGeometry{max_frame * kCopyRxBatch, 1, max_frame, cfg.rx_frame_count};
}

// RX (TPACKET_V2): tpacket_rcv puts the frame at macoff = netoff - maclen,
// netoff = TPACKET_ALIGN(tp_hdrlen + max(maclen, 16)) (tp_reserve 0), and
// cuts whatever passes the slot's end (tp_snaplen < tp_len): a slot holds
// TPACKET_ALIGN(TPACKET2_HDRLEN + 16) - 14 bytes of headers, then an
// Ethernet frame. Slots and blocks as on the TX ring.
Expected<RingGeometry, std::string> rx_v2_geometry(const PacketRingConfig& cfg, size_t page, uint32_t max_frame) {
  const uint32_t need = align(static_cast<uint32_t>(TPACKET2_HDRLEN) + 16) - 14 + max_frame;
  return slots(cfg.rx_frame_size, cfg.rx_frame_count, page, need, "RX");
}

// RX (TPACKET_V3): frames are packed at their own length, so frame_size
// only has to pass packet_set_ring's checks; it is set to the largest
// frame with its headers, which also makes the kernel's frame count
// (tp_frame_nr) a bound on frames per ring.
Expected<RingGeometry, std::string> rx_v3_geometry(const PacketRingConfig& cfg, size_t page, uint32_t max_frame) {
  const uint32_t need = align(static_cast<uint32_t>(TPACKET3_HDRLEN) + max_frame);
  // The block descriptor (BLK_PLUS_PRIV) comes first in every block.
  if (size_t{cfg.rx_block_size} < need + sizeof(tpacket_block_desc))
    return Unexpected(fmt::format("RX block size {} cannot hold one {}-byte frame", cfg.rx_block_size, max_frame));
  return check({cfg.rx_block_size, cfg.rx_block_count, need, 0}, page, need, "RX");
}

// TX: fixed slots, the frame after the tpacket3_hdr (tx_data_offset).
Expected<RingGeometry, std::string> tx_geometry(const PacketRingConfig& cfg, size_t page, uint32_t max_frame) {
  return slots(cfg.tx_frame_size, cfg.tx_frame_count, page, static_cast<uint32_t>(kHdr + max_frame), "TX");
}

// Slots of exactly max_frame bytes (user memory: no header, no alignment
// rule), as many as the TX ring would have.
Expected<RingGeometry, std::string> copy_tx_geometry(const PacketRingConfig& cfg, uint32_t max_frame) {
  const size_t bytes = size_t{max_frame} * cfg.tx_frame_count;
  if (max_frame == 0 || cfg.tx_frame_count == 0 || cfg.tx_frame_count > kMaxRingFrames || bytes > kMaxRing)
    return Unexpected(fmt::format("TX copy slots: {} of {} bytes is outside 1 slot .. 1 GiB", cfg.tx_frame_count,
                                  max_frame));
  return RingGeometry{static_cast<uint32_t>(bytes), 1, max_frame, cfg.tx_frame_count};
}

RxVerdict classify(uint32_t status, uint32_t len, uint32_t snaplen, uint8_t pkttype, uint32_t max_frame) {
  // packet(7): the kernel shows a tap the frames its own interface sends as
  // PACKET_OUTGOING; they are ours (or the kernel's), never input.
  if (pkttype == PACKET_OUTGOING) return RxVerdict::kOutgoing;
  // tpacket_rcv cuts a frame longer than the slot (V2) or the snap length
  // to tp_snaplen, and marks TP_STATUS_COPY when it also queued the whole
  // frame for recvmsg (PACKET_COPY_THRESH): a part of a frame is no frame.
  if ((status & TP_STATUS_COPY) || snaplen < len || len > max_frame) return RxVerdict::kOversize;
  if (status & TP_STATUS_VLAN_VALID) return RxVerdict::kVlan;
  // packet_mmap.rst, TP_STATUS_CSUMNOTREADY: a frame whose checksum is left
  // for hardware to fill in; on veth, a local sender's CHECKSUM_PARTIAL:
  // correct by construction, only not summed yet.
  if (status & (TP_STATUS_CSUMNOTREADY | TP_STATUS_CSUM_VALID)) return RxVerdict::kDeliverChecksumValid;
  return RxVerdict::kDeliver;
}

bool count_rx(PacketRingStats& st, const RxFrame& f) {
  st.rx_losing += f.losing;
  switch (f.verdict) {
    case RxVerdict::kOutgoing: return ++st.rx_outgoing, false;
    case RxVerdict::kOversize: return ++st.rx_oversize, false;
    case RxVerdict::kVlan: return ++st.rx_vlan, false;
    case RxVerdict::kMalformed: return ++st.rx_malformed, false;
    case RxVerdict::kDeliverChecksumValid: ++st.rx_csum_ok; break;
    case RxVerdict::kDeliver: break;
  }
  ++st.rx_frames;
  st.rx_bytes += f.bytes.size();
  return true;
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
  out.verdict = classify(h.tp_status, h.tp_len, h.tp_snaplen, ll.sll_pkttype, max_frame_);
  if (++seen_ < num_) {
    if (h.tp_next_offset == 0) malformed_ = true, seen_ = num_;
    at_ += h.tp_next_offset;
  }
  return true;
}

}  // namespace weir::link
