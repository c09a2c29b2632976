// The receive side of link/packet_ring.h, pure: what a frame in an
// AF_PACKET RX ring is to the driver, and the two ring layouts of
// Documentation/networking/packet_mmap.rst that weir reads:
//  - TPACKET_V3 (BlockReader): blocks of variable-size frames, a block
//    handed over when full or when its retire timer fires;
//  - TPACKET_V2 (FrameRing): fixed slots, each handed over on its own as
//    tpacket_rcv fills it (TP_STATUS_USER) and handed back by the reader
//    (TP_STATUS_KERNEL).
// No socket, no mapping: the unit tests build rings in memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace weir::link {

// One ring's tpacket_req3 values (tpacket_req's for TPACKET_V2: the same
// first four fields).
struct RingGeometry {
  uint32_t block_size = 0, block_count = 0, frame_size = 0, frame_count = 0;
  size_t bytes() const { return size_t{block_size} * block_count; }
};

// What a received frame is to the driver.
enum class RxVerdict : uint8_t {
  kDeliver,               // an ordinary frame: Stack::input checks its checksums
  kDeliverChecksumValid,  // TP_STATUS_CSUMNOTREADY (a local sender's CHECKSUM_PARTIAL) or TP_STATUS_CSUM_VALID
  kOutgoing,              // our own transmission looped to the tap (sll_pkttype PACKET_OUTGOING): skipped
  kOversize,              // longer than max_frame, or cut short (snaplen < len, TP_STATUS_COPY): dropped
  kVlan,                  // the kernel stripped an 802.1Q tag (TP_STATUS_VLAN_VALID): another VLAN's frame
  kMalformed,             // a V2 slot whose frame reaches past the slot: dropped
};

struct RxFrame {
  std::span<const uint8_t> bytes;
  RxVerdict verdict = RxVerdict::kDeliver;
  bool losing = false;  // TP_STATUS_LOSING: the kernel dropped frames since the last stats read
};

// A frame's verdict from its header fields (the same in both versions).
RxVerdict classify(uint32_t status, uint32_t len, uint32_t snaplen, uint8_t pkttype, uint32_t max_frame);

struct PacketRingStats {
  uint64_t rx_frames = 0;        // delivered to the driver
  uint64_t rx_bytes = 0;
  uint64_t rx_blocks = 0;        // V3: blocks walked and returned
  uint64_t rx_wakeups = 0;       // drains that found at least one block (V3) or frame (V2)
  uint64_t rx_csum_ok = 0;       // TP_STATUS_CSUMNOTREADY or TP_STATUS_CSUM_VALID: handed on as valid
  uint64_t rx_outgoing = 0;      // PACKET_OUTGOING skipped
  uint64_t rx_oversize = 0;      // kOversize dropped
  uint64_t rx_vlan = 0;          // kVlan dropped
  uint64_t rx_malformed = 0;     // V3 blocks whose chain left the block; V2 frames reaching past their slot
  uint64_t rx_losing = 0;        // frames flagged TP_STATUS_LOSING
  uint64_t rx_kernel_drops = 0;  // PACKET_STATISTICS tp_drops: the ring was full
  uint64_t rx_freeze = 0;        // tpacket_stats_v3.tp_freeze_q_cnt: the kernel found no free block
  uint64_t tx_frames = 0;        // queued on the ring
  uint64_t tx_bytes = 0;
  uint64_t tx_ring_full = 0;     // refused: the next slot still in flight (kDropped)
  uint64_t tx_oversize = 0;      // longer than max_frame: not queued
  uint64_t tx_wrong_format = 0;  // slots the kernel returned TP_STATUS_WRONG_FORMAT
  uint64_t tx_sends = 0;         // sendto() (ring) or sendmmsg() (copy) calls: one per burst
  uint64_t tx_send_errors = 0;   // of those, failed or partial (the rest go at the next flush)
  uint64_t tx_send_dropped = 0;  // copy mode: frames the kernel refused for good (not EAGAIN/ENOBUFS)
  uint64_t tx_gso = 0;           // copy mode with GSO: super-packets queued (each counted once in tx_frames)
  uint64_t tx_gso_segs = 0;      // the engine's frames inside them
};

// Counts `f` in `st`; true if it goes on to the driver.
bool count_rx(PacketRingStats& st, const RxFrame& f);

// Walks the frames of one retired TPACKET_V3 block (a struct
// tpacket_block_desc, then num_pkts struct tpacket3_hdr chained by
// tp_next_offset). The kernel wrote the block, but every offset is checked
// against the block anyway; a chain that leaves it ends the walk and counts
// as malformed.
class BlockReader {
 public:
  BlockReader(std::span<const uint8_t> block, uint32_t max_frame);
  // The next frame; false at the end of the block or on a malformed chain.
  bool next(RxFrame& out);
  uint32_t frames() const { return num_; }
  bool malformed() const { return malformed_; }

 private:
  std::span<const uint8_t> b_;
  uint32_t max_frame_;
  uint32_t num_ = 0, seen_ = 0;
  size_t at_ = 0;
  bool malformed_ = false;
};

// A TPACKET_V2 RX ring: frame_count slots of frame_size bytes, block_size
// / frame_size slots per block (packet_lookup_frame's layout). tpacket_rcv
// fills the slots in order from slot 0 and wraps; each slot starts with a
// struct tpacket2_hdr whose tp_status the kernel sets to TP_STATUS_USER
// (after the frame, with a barrier) and the reader sets back to
// TP_STATUS_KERNEL when done (packet_mmap.rst, "TPACKET_V1 --> TPACKET_V2"
// and "Mapping and use of the circular buffer"). The reader follows the
// kernel with one cursor: the next slot to be filled is the next to read.
class FrameRing {
 public:
  FrameRing() = default;
  FrameRing(uint8_t* base, const RingGeometry& g, uint32_t max_frame) : base_(base), g_(g), max_frame_(max_frame) {}

  // Whether the slot at the cursor is the reader's (TP_STATUS_USER).
  bool ready() const;
  // The frame in the slot at the cursor (only when ready()).
  RxFrame read() const;
  // Hands the slot at the cursor back (TP_STATUS_KERNEL) and moves on.
  void release();
  uint32_t cursor() const { return next_; }

  // Visits every ready frame, at most the whole ring (a bounded wake-up),
  // as deliver(bytes, checksum_valid), each slot handed back after its
  // frame. Returns the frames delivered.
  template <class F>
  size_t drain(PacketRingStats& st, F&& deliver, uint32_t max = UINT32_MAX);

 private:
  uint8_t* slot(uint32_t i) const;

  uint8_t* base_ = nullptr;
  RingGeometry g_;
  uint32_t max_frame_ = 0;
  uint32_t next_ = 0;
};

template <class F>
size_t FrameRing::drain(PacketRingStats& st, F&& deliver, uint32_t max) {
  size_t n = 0;
  uint32_t seen = 0;
  for (; seen < g_.frame_count && seen < max && ready(); ++seen) {
    const RxFrame f = read();
    if (count_rx(st, f)) {
      deliver(f.bytes, f.verdict == RxVerdict::kDeliverChecksumValid);
      ++n;
    }
    release();  // after deliver: the bytes live in the slot until then
  }
  st.rx_wakeups += seen != 0;
  return n;
}

}  // namespace weir::link
