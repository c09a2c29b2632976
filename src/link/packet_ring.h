// An Ethernet interface (a veth end, a NIC) through AF_PACKET with
// memory-mapped rings shared with the kernel, as Documentation/networking/
// packet_mmap.rst describes them. One socket per ring:
//  - RX: a socket bound to ETH_P_ALL on the interface with either ring
//    (PacketRingConfig::rx_ring):
//    TPACKET_V2, fixed slots the kernel hands over one by one as it fills
//    them (the fd is readable at once); the driver walks every ready slot
//    per wake-up and hands each back (link/packet_rx.h FrameRing);
//    TPACKET_V3, blocks the kernel packs frames into and hands over when
//    full or `rx_retire_ms` after their first frame; the driver walks every
//    ready block per wake-up and returns each once its frames are consumed.
//    Neither costs a system call per frame.
//  - TX: a socket bound with protocol 0 (packet_do_bind registers no
//    receive hook for it: it never receives, so no frame is queued to a
//    socket nobody reads), with a ring of fixed-size frames (TPACKET_V3's
//    transmit ring has no blocks of variable frames: packet_set_ring
//    refuses the block fields for it). send_frame() fills the next free
//    frame and marks it TP_STATUS_SEND_REQUEST; flush() hands the whole
//    burst over in one sendto(fd, NULL, 0, MSG_DONTWAIT) (tpacket_snd walks
//    the requests). A frame whose slot is still in flight is refused:
//    kDropped.
//    Or (PacketRingConfig::tx_mode kCopy, link/packet_copy_tx.h) the same
//    socket without a ring: send_frame() copies into a bounded user-space
//    slot array and flush() hands the burst over in one sendmmsg().
// Every size is bounded and set at open(); nothing grows afterwards.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "link/frame_sink.h"
#include "link/packet_copy_rx.h"
#include "link/packet_copy_tx.h"
#include "link/packet_rx.h"
#include "weir/expected.h"

namespace weir::link {

// The RX ring's layout. TPACKET_V2 by default, by measurement
// (docs/performance-log.md, "Session 17": V2 sent 1.25-3.3x faster than V3
// in 11 of 12 rounds, and received 0.50-1.11x as fast). A V3 block reaches
// weir only when full or when its retire timer fires, and
// prb_retire_rx_blk_timer_expired counts in jiffies (4 ms at HZ=250), so
// a sender's ACKs, which never fill a block, wait for the timer; a V2 slot
// reaches weir as tpacket_rcv fills it. Bulk data fills V3 blocks within
// a fraction of a millisecond, so a receive-mostly weir may prefer V3.
// kCopy: no ring; recvmmsg(2) from the socket's queue (link/packet_copy_rx.h),
// so the receiver's copy runs on the receiver's CPU, not in the softirq of
// whoever sent the frame.
enum class RxRing : uint8_t { kV2, kV3, kCopy };

// How frames are sent (--packet-tx). kRing: the TPACKET_V3 TX ring, whose
// frames leave as skbs holding the ring's pages (tpacket_fill_skb), which
// veth copies into pages of its own (__dev_forward_skb2 ->
// skb_copy_ubufs) before the peer's stack sees them. kCopy: sendmmsg()
// from a user-space slot array, one linear skb per frame (packet_snd),
// which veth forwards as it is (link/packet_copy_tx.h). kCopy by default,
// by measurement (docs/performance-log.md, "Session 18": weir->Linux over
// veth, copy ahead in 7 of 9 alternating rounds at load <= 1.8, ~2.5 us
// of weir's CPU per sent packet against ~3.5 with the ring).
enum class TxMode : uint8_t { kRing, kCopy };

struct PacketRingConfig {
  RxRing rx_ring = RxRing::kV2;
  // V2 RX: rx_frame_count slots of rx_frame_size bytes (0: the smallest
  // power of two holding tpacket_rcv's header room and the largest frame:
  // 2 KiB at MTU 1500). 4,096 slots hold about 5 ms of 1500-byte frames at
  // Linux's veth rate, as many frames as the V3 default.
  uint32_t rx_frame_size = 0;
  uint32_t rx_frame_count = 4096;
  // V3 RX: block_count blocks of block_size bytes (a multiple of the page
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
  // kCopy: tx_frame_count slots of max_frame bytes in user memory.
  TxMode tx_mode = TxMode::kCopy;
  // kCopy: PACKET_VNET_HDR, and consecutive segments of one TCP flow go to
  // the kernel as one super-packet (link/vnet.h) that its GSO cuts into
  // MTU-sized frames before the device (validate_xmit_skb, as the device
  // has TSO and GSO off). Each frame then holds its payload in page
  // fragments of the super-packet's skb, as a Linux sender's do, so the
  // receiving Linux TCP coalesces them in its queue (skb_try_coalesce;
  // packet_snd's own skb for a single frame has a kmalloc'ed head, which
  // it cannot), and their checksum is partial, so it verifies none.
  // Needs the qdisc path: __dev_direct_xmit (PACKET_QDISC_BYPASS) drops an
  // skb that had to be segmented.
  bool tx_gso = true;
  // PACKET_QDISC_BYPASS (packet_mmap.rst, "PACKET_QDISC_BYPASS"): frames
  // go straight to the driver's xmit, as a kernel-bypass user expects; no
  // qdisc, so no queueing (and no taps) between the ring and the device.
  bool qdisc_bypass = true;
  // The largest frame accepted either way (0: the interface MTU + 14).
  uint32_t max_frame = 0;
};

// The rings for `cfg` on a page of `page` bytes, checked as packet_set_ring
// checks them (block size a multiple of the page, frame size a multiple of
// TPACKET_ALIGNMENT and at least TPACKET3_HDRLEN, frame_count = frames per
// block x blocks) and bounded (at most 1 GiB each), or why not.
// rx_geometry is the configured ring's (rx_v2_geometry or rx_v3_geometry).
Expected<RingGeometry, std::string> rx_geometry(const PacketRingConfig& cfg, size_t page, uint32_t max_frame);
Expected<RingGeometry, std::string> rx_v2_geometry(const PacketRingConfig& cfg, size_t page, uint32_t max_frame);
Expected<RingGeometry, std::string> rx_v3_geometry(const PacketRingConfig& cfg, size_t page, uint32_t max_frame);
// The largest slot count --ring-rx-frames and --ring-tx-frames accept
// (each ring is bounded at 1 GiB besides).
constexpr uint32_t kMaxRingFrames = 1u << 20;
Expected<RingGeometry, std::string> tx_geometry(const PacketRingConfig& cfg, size_t page, uint32_t max_frame);
// kCopy's slot array as a geometry (one block of tx_frame_count slots of
// max_frame bytes), bounded at 1 GiB like a ring.
Expected<RingGeometry, std::string> copy_tx_geometry(const PacketRingConfig& cfg, uint32_t max_frame);
// Where a TX frame's bytes start in its slot: right after the tpacket3_hdr
// (tpacket_parse_header: tp_hdrlen - sizeof(struct sockaddr_ll)).
size_t tx_data_offset();

class PacketRing final : public FrameSink {
 public:
  // Opens the two sockets on interface `ifname` in the calling thread's
  // network namespace and maps their rings. Needs CAP_NET_RAW.
  static Expected<std::unique_ptr<PacketRing>, std::string> open(const std::string& ifname,
                                                                 const PacketRingConfig& cfg = {});
  ~PacketRing() override;
  PacketRing(const PacketRing&) = delete;
  PacketRing& operator=(const PacketRing&) = delete;

  // The RX socket: readable when a frame (V2) or block (V3) is ready.
  int fd() const { return rx_fd_; }
  int tx_fd() const { return tx_fd_; }
  RxRing rx_ring() const { return kind_; }
  TxMode tx_mode() const { return tx_mode_; }
  const std::string& name() const { return name_; }
  uint32_t mtu() const { return mtu_; }
  const std::array<uint8_t, 6>& hw_addr() const { return hw_; }
  const RingGeometry& rx() const { return rx_; }
  const RingGeometry& tx() const { return tx_; }
  // Adds `mac` to the interface's filter for the RX socket's lifetime
  // (packet(7) PACKET_ADD_MEMBERSHIP: PACKET_MR_UNICAST for a unicast MAC,
  // PACKET_MR_MULTICAST for a group): a NIC then passes frames for weir's
  // own MAC and groups up without going promiscuous.
  Expected<bool, std::string> add_mac(const std::array<uint8_t, 6>& mac);

  // Visits every ready frame (at most the whole ring, so a wake-up is
  // bounded, and at most `max` with V2 and kCopy) as deliver(bytes,
  // checksum_valid), and returns each slot (V2) or block (V3) to the kernel
  // after its frames. Returns the frames seen (V2, kCopy) or delivered (V3).
  template <class F>
  size_t drain(F&& deliver, uint32_t max = UINT32_MAX);
  // Whether frames may be waiting after a drain that stopped at its `max`.
  bool rx_ready() const;

  using FrameSink::send_frame;
  XmitResult send_frame(std::span<const uint8_t> head, std::span<const uint8_t> rest) override;
  // Hands the burst's frames to the kernel: one sendto() (ring) or
  // sendmmsg() (copy; one per 1024 frames).
  void flush();
  // Frames queued that a failed or partial send left on the ring or in
  // the slot array.
  bool tx_backlog() const { return tx_retry_; }

  // Adds the kernel's drop counts (PACKET_STATISTICS, which resets them on
  // every read) to stats().
  void read_kernel_stats();
  const PacketRingStats& stats() const { return st_; }
  std::string describe() const;

 private:
  PacketRing() = default;
  Expected<bool, std::string> open_rx(unsigned ifindex, const PacketRingConfig& cfg);
  Expected<bool, std::string> open_copy_rx(unsigned ifindex, const PacketRingConfig& cfg);
  Expected<bool, std::string> open_tx(unsigned ifindex, const PacketRingConfig& cfg);
  Expected<bool, std::string> open_copy_tx(unsigned ifindex, const PacketRingConfig& cfg);
  XmitResult ring_send(std::span<const uint8_t> head, std::span<const uint8_t> rest);
  // The coalescer's runs are built in the copy path's own bytes.
  struct GsoOut final : GsoCoalescer::Output {
    explicit GsoOut(PacketRing& r) : ring(r) {}
    uint8_t* open(size_t max) override { return ring.copy_.open(max); }
    void close(const VnetHdr& h, size_t len) override;
    XmitResult pass(std::span<const uint8_t> l2, std::span<const uint8_t> pkt) override {
      return ring.copy_.put(l2, pkt, ring.st_);
    }
    PacketRing& ring;
  };
  void ring_flush();
  uint8_t* block(uint32_t i) const { return rx_map_ + size_t{i} * rx_.block_size; }
  uint8_t* tx_slot(uint32_t i) const;
  bool block_ready(uint32_t i) const;
  void release_block(uint32_t i);
  template <class F>
  size_t drain_blocks(F&& deliver);

  int rx_fd_ = -1, tx_fd_ = -1;
  RxRing kind_ = RxRing::kV2;
  TxMode tx_mode_ = TxMode::kCopy;
  CopyTx copy_;  // kCopy's slots
  GsoOut gso_out_{*this};
  std::optional<GsoCoalescer> gso_;  // kCopy with tx_gso
  std::string name_;
  uint32_t mtu_ = 1500;
  uint32_t max_frame_ = 1514;
  std::array<uint8_t, 6> hw_{};
  RingGeometry rx_, tx_;
  uint8_t* rx_map_ = nullptr;
  uint8_t* tx_map_ = nullptr;
  FrameRing frames_;      // V2: the slots of rx_map_
  CopyRx copy_rx_;        // kCopy's slots
  uint32_t rx_next_ = 0;  // V3: the next block the kernel hands over (it fills them in order)
  uint32_t tx_head_ = 0;  // the next TX slot to fill
  size_t tx_pending_ = 0;  // bytes of the slots requested and not yet sent by a sendto()
  bool tx_retry_ = false;
  PacketRingStats st_;
};

template <class F>
size_t PacketRing::drain(F&& deliver, uint32_t max) {
  switch (kind_) {
    case RxRing::kV2: return frames_.drain(st_, deliver, max);
    case RxRing::kV3: return drain_blocks(deliver);
    case RxRing::kCopy: break;
  }
  return copy_rx_.drain(rx_fd_, st_, deliver, std::min(max, rx_.frame_count));
}

template <class F>
size_t PacketRing::drain_blocks(F&& deliver) {
  size_t n = 0;
  uint32_t blocks = 0;
  for (; blocks < rx_.block_count && block_ready(rx_next_); ++blocks) {
    BlockReader r({block(rx_next_), rx_.block_size}, max_frame_);
    for (RxFrame f; r.next(f);) {
      if (!count_rx(st_, f)) continue;
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
