// TUN I/O through an io_uring (liburing), `--io-uring`: instead of one
// read(2) or write(2) per packet, the driver keeps reads posted and queues
// writes, and one io_uring_enter per burst submits them all. On a
// paravirtualised guest the system call entry itself is a quarter to a
// third of a plain TUN's cost per 1500-byte packet (docs/performance-log.md,
// session 13), which is what this saves.
//
// Transmit: each packet (or GSO super-packet on a vnet device) is copied,
// with its vnet header, into a free slot of a fixed pool and queued as a
// write; flush() submits the burst and reaps what completed. A TUN write
// does not wait (tun_get_user: the socket's sndbuf is INT_MAX), so the
// writes are issued in queue order within the submit. No free slot even
// after a submit and reap: the packet is refused (Xmit::kRefused, the
// engine's kDropped), as a full device queue refuses a write(2) with
// ENOBUFS/EAGAIN (tun_write_verdict); a write that completes with an error
// is counted as tx_dropped, as today.
//
// Receive: `rx_slots` buffers stay with the kernel. read() gathers the
// completed reads in completion order, with the vnet header applied
// exactly as TunDevice::read_one does; release() gives their buffers back.
// Where the kernel has IORING_OP_READ_MULTISHOT (6.7) the buffers are a
// provided-buffer ring and one multishot read, armed once, fills them: one
// poll entry on the device, each wake-up reads until the device is empty,
// and a buffer goes back without a system call. Otherwise each buffer has
// its own read posted (submitted at the next flush()); then every packet
// wakes all the posted reads, of which one gets it and the rest poll again
// (127 such losses and io_uring hands a read to an io-wq thread): measured
// ~14 poll re-arms per packet with 64 posted.
//
// Every queue is bounded: at most rx_slots reads and tx_slots writes are in
// flight, the ring has room for all of them (so a submission never fails
// for want of entries), and the completion queue (twice the ring) for all
// of their completions.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "link/tun.h"
#include "weir/expected.h"

struct io_uring;
struct io_uring_buf_ring;

namespace weir::link {

struct TunUringConfig {
  size_t rx_slots = 64;   // receive buffers with the kernel
  size_t tx_slots = 256;  // writes queued or in flight
  bool multishot = true;  // one multishot read if the kernel has it (else one read per buffer)
};

struct TunUringStats {
  uint64_t submits = 0;      // io_uring_enter calls that submitted work
  uint64_t reaped = 0;       // completions
  uint64_t tx_no_slot = 0;   // packets refused: every slot in flight after a submit and reap
  uint64_t rx_failed = 0;    // reads that completed with an error (not re-posted)
  uint64_t rx_rearms = 0;    // multishot read armed again (it ends when every buffer is out)
};

class TunUring {
 public:
  // A ring for `dev` (whose fd it uses, not owns); the error says why
  // io_uring_queue_init failed (old kernel, io_uring_disabled, seccomp).
  static Expected<std::unique_ptr<TunUring>, std::string> open(TunDevice& dev, TunUringConfig cfg = {});
  TunUring(const TunUring&) = delete;
  TunUring& operator=(const TunUring&) = delete;
  ~TunUring();

  // The ring's fd: readable (EPOLLIN) while completions wait to be reaped.
  int fd() const;

  // Queues one packet (with its vnet header on a vnet device); kSent means
  // queued. kRefused: no slot free (counted tx_dropped and tx_refused);
  // kLost: larger than the device takes (tx_oversize).
  TunDevice::Xmit queue(const VnetHdr& h, std::span<const uint8_t> pkt);
  // The burst is over: submit everything queued (writes and re-posted
  // reads) in one system call, then reap the completions there are. A
  // completed read is kept for the next read(): rx_pending() says so.
  void flush();

  // The reads completed so far (reaped now or by an earlier flush), in
  // completion order; re-posts the previous batch first.
  size_t read();
  std::span<const uint8_t> packet(size_t i) const;
  bool checksum_valid(size_t i) const { return batch_[i].csum_valid; }
  size_t size() const { return batch_.size(); }
  // Re-posts the batch's buffers (the engine is done with them).
  void release();
  bool rx_pending() const { return !ready_.empty(); }

  const TunUringStats& stats() const { return st_; }
  size_t tx_free() const { return tx_free_.size(); }
  size_t tx_slots() const { return cfg_.tx_slots; }
  size_t rx_posted() const { return rx_posted_; }
  bool multishot() const { return br_ != nullptr; }

 private:
  struct Done {
    uint32_t slot;
    uint32_t len;
    bool csum_valid;
  };
  TunUring(TunDevice& dev, TunUringConfig cfg);
  bool setup_buf_ring();
  void arm_multishot();
  void rearm_multishot();  // armed again if it ended with buffers to read into
  void complete_multishot(uint32_t flags, int res);
  void give_back(uint32_t slot);
  bool post_read(uint32_t slot);
  void submit();
  void reap();
  void complete_rx(uint32_t slot, int res);
  void complete_tx(uint32_t slot, int res);
  uint8_t* rx_buf(uint32_t slot) const { return rx_mem_.get() + size_t{slot} * rx_stride_; }
  uint8_t* tx_buf(uint32_t slot) const { return tx_mem_.get() + size_t{slot} * tx_stride_; }
  void cancel_all();

  TunDevice& dev_;
  TunUringConfig cfg_;
  std::unique_ptr<io_uring> ring_;
  size_t rx_stride_ = 0, tx_stride_ = 0, tx_cap_ = 0;
  std::unique_ptr<uint8_t[]> rx_mem_, tx_mem_;
  std::vector<uint32_t> tx_free_;  // a stack: the slot used last is warm in the cache
  std::vector<uint32_t> tx_len_;   // bytes handed to write(2) per slot
  std::vector<uint32_t> tx_segs_;  // a super-packet's segments (0: plain)
  std::vector<Done> ready_;        // completed reads not yet read(), at most rx_slots
  std::vector<Done> batch_;        // the reads read() handed out
  size_t rx_posted_ = 0;
  size_t in_flight_ = 0;           // reads and writes prepared and not yet completed
  bool rx_retire_ = false;         // tearing down: post no more reads
  io_uring_buf_ring* br_ = nullptr;  // the provided-buffer ring (multishot mode)
  bool armed_ = false;               // the multishot read is in flight
  TunUringStats st_;
};

}  // namespace weir::link
