// An AF_PACKET socket on one Ethernet interface (a veth end, a NIC) with
// memory-mapped rings shared with the kernel, as Documentation/networking/
// packet_mmap.rst describes them:
//  - RX: a TPACKET_V3 ring of blocks. The kernel packs frames into the
//    current block and hands the block over (block_status TP_STATUS_USER)
//    when it is full or `rx_retire_ms` after its first frame; the socket's
//    fd is then readable. The driver walks every ready block per wake-up
//    and returns each (TP_STATUS_KERNEL) once its frames are consumed: no
//    system call per frame, none per block.
//  - TX: a ring of fixed-size frames (TPACKET_V3's transmit ring has no
//    blocks of variable frames: packet_set_ring refuses the block fields
//    for it). send_frame() fills the next free frame and marks it
//    TP_STATUS_SEND_REQUEST; flush() hands the whole burst over in one
//    sendto(fd, NULL, 0, MSG_DONTWAIT) (tpacket_snd walks the requests).
//    A frame whose slot is still in flight is refused: kDropped.
// Every size is bounded and set at open(); nothing grows afterwards.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "link/frame_sink.h"
#include "weir/expected.h"

namespace weir::link {

struct PacketRingConfig {
  // RX: block_count blocks of block_size bytes (a multiple of the page
  // size, packet_mmap.rst "TPACKET_V3"); 64 x 128 KiB hold ~5,500 frames
  // of 1514 bytes.
  uint32_t rx_block_size = 1u << 17;
  uint32_t rx_block_count = 64;
  // tp_retire_blk_tov: a block that is not full is handed over this many
  // milliseconds after its first frame (1 is the kernel's smallest). This
  // is the latency a lone frame pays on a quiet link.
  uint32_t rx_retire_ms = 1;
  // TX: tx_frame_count frames of tx_frame_size bytes (0: the smallest
  // power of two holding the frame header and the largest frame).
  uint32_t tx_frame_size = 0;
  uint32_t tx_frame_count = 1024;
  // PACKET_QDISC_BYPASS (packet_mmap.rst, "PACKET_QDISC_BYPASS"): frames
  // go straight to the driver's xmit, as a kernel-bypass user expects; no
  // qdisc, so no queueing (and no taps) between the ring and the device.
  bool qdisc_bypass = true;
  // The largest frame accepted either way (0: the interface MTU + 14).
  uint32_t max_frame = 0;
};

// One ring's tpacket_req3 values.
struct RingGeometry {
  uint32_t block_size = 0, block_count = 0, frame_size = 0, frame_count = 0;
  size_t bytes() const { return size_t{block_size} * block_count; }
};

// The rings for `cfg` on a page of `page` bytes, checked as packet_set_ring
// checks them (block size a multiple of the page, frame size a multiple of
// TPACKET_ALIGNMENT and at least TPACKET3_HDRLEN, frame_count = frames per
// block x blocks) and bounded (at most 1 GiB each), or why not.
Expected<RingGeometry, std::string> rx_geometry(const PacketRingConfig& cfg, size_t page, uint32_t max_frame);
Expected<RingGeometry, std::string> tx_geometry(const PacketRingConfig& cfg, size_t page, uint32_t max_frame);
// Where a TX frame's bytes start in its slot: right after the tpacket3_hdr
// (tpacket_parse_header: tp_hdrlen - sizeof(struct sockaddr_ll)).
size_t tx_data_offset();

// What a received frame is to the driver.
enum class RxVerdict : uint8_t {
  kDeliver,               // an ordinary frame: Stack::input checks its checksums
  kDeliverChecksumValid,  // TP_STATUS_CSUMNOTREADY (a local sender's CHECKSUM_PARTIAL) or TP_STATUS_CSUM_VALID
  kOutgoing,              // our own transmission looped to the tap (sll_pkttype PACKET_OUTGOING): skipped
  kOversize,              // longer than max_frame, or cut short (snaplen < len, TP_STATUS_COPY): dropped
  kVlan,                  // the kernel stripped an 802.1Q tag (TP_STATUS_VLAN_VALID): another VLAN's frame
};

struct RxFrame {
  std::span<const uint8_t> bytes;
  RxVerdict verdict = RxVerdict::kDeliver;
  bool losing = false;  // TP_STATUS_LOSING: the kernel dropped frames since the last stats read
};

// Walks the frames of one retired TPACKET_V3 block (a struct
// tpacket_block_desc, then num_pkts struct tpacket3_hdr chained by
// tp_next_offset). Pure: the unit test builds blocks in memory. The kernel
// wrote the block, but every offset is checked against the block anyway;
// a chain that leaves it ends the walk and counts as malformed.
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

struct PacketRingStats {
  uint64_t rx_frames = 0;        // delivered to the driver
  uint64_t rx_bytes = 0;
  uint64_t rx_blocks = 0;        // blocks walked and returned
  uint64_t rx_wakeups = 0;       // drains that found at least one block
  uint64_t rx_csum_ok = 0;       // TP_STATUS_CSUMNOTREADY or TP_STATUS_CSUM_VALID: handed on as valid
  uint64_t rx_outgoing = 0;      // PACKET_OUTGOING skipped
  uint64_t rx_oversize = 0;      // kOversize dropped
  uint64_t rx_vlan = 0;          // kVlan dropped
  uint64_t rx_malformed = 0;     // blocks whose chain left the block
  uint64_t rx_losing = 0;        // frames flagged TP_STATUS_LOSING
  uint64_t rx_kernel_drops = 0;  // tpacket_stats_v3.tp_drops: the ring was full
  uint64_t rx_freeze = 0;        // tpacket_stats_v3.tp_freeze_q_cnt: the kernel found no free block
  uint64_t tx_frames = 0;        // queued on the ring
  uint64_t tx_bytes = 0;
  uint64_t tx_ring_full = 0;     // refused: the next slot still in flight (kDropped)
  uint64_t tx_oversize = 0;      // longer than max_frame: not queued
  uint64_t tx_wrong_format = 0;  // slots the kernel returned TP_STATUS_WRONG_FORMAT
  uint64_t tx_sends = 0;         // sendto() calls (one per burst)
  uint64_t tx_send_errors = 0;   // of those, failed or partial (the rest go at the next flush)
};

class PacketRing final : public FrameSink {
 public:
  // Opens the socket on interface `ifname` in the calling thread's network
  // namespace and maps its rings. Needs CAP_NET_RAW.
  static Expected<std::unique_ptr<PacketRing>, std::string> open(const std::string& ifname,
                                                                 const PacketRingConfig& cfg = {});
  ~PacketRing() override;
  PacketRing(const PacketRing&) = delete;
  PacketRing& operator=(const PacketRing&) = delete;

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }
  uint32_t mtu() const { return mtu_; }
  const std::array<uint8_t, 6>& hw_addr() const { return hw_; }
  const RingGeometry& rx() const { return rx_; }
  const RingGeometry& tx() const { return tx_; }
  // Adds `mac` to the interface's filter for this socket's lifetime
  // (packet(7) PACKET_ADD_MEMBERSHIP: PACKET_MR_UNICAST for a unicast MAC,
  // PACKET_MR_MULTICAST for a group): a NIC then passes frames for weir's
  // own MAC and groups up without going promiscuous.
  Expected<bool, std::string> add_mac(const std::array<uint8_t, 6>& mac);

  // Visits every frame of every ready block (at most the whole ring, so a
  // wake-up is bounded) as deliver(bytes, checksum_valid), and returns each
  // block to the kernel after its frames. Returns the frames delivered.
  template <class F>
  size_t drain(F&& deliver);

  XmitResult send_frame(std::span<const uint8_t> frame) override;
  // Hands the burst's frames to the kernel: one sendto().
  void flush();
  // Frames queued that a failed or partial sendto() left on the ring.
  bool tx_backlog() const { return tx_retry_; }

  // Adds the kernel's drop counts (PACKET_STATISTICS, which resets them on
  // every read) to stats().
  void read_kernel_stats();
  const PacketRingStats& stats() const { return st_; }
  std::string describe() const;

 private:
  PacketRing() = default;
  uint8_t* block(uint32_t i) const { return map_ + size_t{i} * rx_.block_size; }
  uint8_t* tx_slot(uint32_t i) const;
  bool block_ready(uint32_t i) const;
  void release_block(uint32_t i);
  bool account(const RxFrame& f);

  int fd_ = -1;
  std::string name_;
  uint32_t mtu_ = 1500;
  uint32_t max_frame_ = 1514;
  std::array<uint8_t, 6> hw_{};
  RingGeometry rx_, tx_;
  uint8_t* map_ = nullptr;
  size_t map_len_ = 0;
  uint32_t rx_next_ = 0;  // the next block the kernel hands over (it fills them in order)
  uint32_t tx_head_ = 0;  // the next TX slot to fill
  size_t tx_pending_ = 0;  // bytes of the slots requested and not yet sent by a sendto()
  bool tx_retry_ = false;
  PacketRingStats st_;
};

template <class F>
size_t PacketRing::drain(F&& deliver) {
  size_t n = 0;
  uint32_t blocks = 0;
  for (; blocks < rx_.block_count && block_ready(rx_next_); ++blocks) {
    BlockReader r({block(rx_next_), rx_.block_size}, max_frame_);
    for (RxFrame f; r.next(f);) {
      if (!account(f)) continue;
      deliver(f.bytes, f.verdict == RxVerdict::kDeliverChecksumValid);
      ++n;
    }
    st_.rx_malformed += r.malformed();
    release_block(rx_next_);
    rx_next_ = (rx_next_ + 1) % rx_.block_count;
  }
  st_.rx_wakeups += blocks != 0;
  return n;
}

}  // namespace weir::link
