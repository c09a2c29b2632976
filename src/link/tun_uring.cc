#include "link/tun_uring.h"

#include <liburing.h>

#include <sys/mman.h>

#include <bit>
#include <cerrno>
#include <cstring>

namespace weir::link {

namespace {

// A completion's user_data: what it was (high half) and its slot.
enum Kind : uint64_t { kRx = 1, kTx = 2, kCancel = 3, kRxMulti = 4 };

// IORING_OP_READ_MULTISHOT (Linux 6.7), newer than liburing 2.3's header.
constexpr int kOpReadMultishot = 49;
constexpr uint16_t kBufGroup = 0;
uint64_t tag(Kind k, uint32_t slot) { return k << 32 | slot; }

// Every buffer starts a packet kHead bytes in; a vnet header goes just
// before it, so the IP header stays 16-byte aligned either way.
constexpr size_t kHead = 16;
// A receive buffer holds the largest super-packet plus headroom (TunBatch's size).
constexpr size_t kRxCap = 65536 + 256;

size_t round64(size_t n) { return (n + 63) & ~size_t{63}; }

}  // namespace

TunUring::TunUring(TunDevice& dev, TunUringConfig cfg) : dev_(dev), cfg_(cfg), ring_(std::make_unique<io_uring>()) {}

Expected<std::unique_ptr<TunUring>, std::string> TunUring::open(TunDevice& dev, TunUringConfig cfg) {
  if (cfg.rx_slots == 0 || cfg.tx_slots == 0 || cfg.rx_slots + cfg.tx_slots > 4096)
    return Unexpected(std::string("io_uring: slots must be 1..4096 in all"));
  std::unique_ptr<TunUring> u(new TunUring(dev, cfg));
  // Room in the submission queue for every read and write that can be in
  // flight at once, plus the teardown's cancel; the completion queue is
  // twice that (liburing's default), so it cannot overflow.
  const auto entries = static_cast<unsigned>(std::bit_ceil(cfg.rx_slots + cfg.tx_slots + 1));
  // SUBMIT_ALL (5.18): one bad entry does not hold back the rest of the
  // burst. SINGLE_ISSUER (6.0): only this thread submits. An older kernel
  // refuses the flags (EINVAL): plain rings do the same, a little slower.
  int r = io_uring_queue_init(entries, u->ring_.get(), IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER);
  if (r == -EINVAL) r = io_uring_queue_init(entries, u->ring_.get(), 0);
  if (r < 0) {
    u->ring_.reset();
    return Unexpected(std::string(std::strerror(-r)));
  }
  u->rx_stride_ = round64(kHead + kRxCap);
  u->tx_cap_ = dev.vnet() ? GsoCoalescer::kMax : dev.mtu();
  u->tx_stride_ = round64(kHead + u->tx_cap_);
  // Not zeroed: pages are touched only as slots are used (the vnet pool
  // is 64 KB a slot, and a LIFO free list keeps reusing the same few).
  u->rx_mem_ = std::make_unique_for_overwrite<uint8_t[]>(cfg.rx_slots * u->rx_stride_);
  u->tx_mem_ = std::make_unique_for_overwrite<uint8_t[]>(cfg.tx_slots * u->tx_stride_);
  u->tx_len_.assign(cfg.tx_slots, 0);
  u->tx_segs_.assign(cfg.tx_slots, 0);
  for (size_t i = cfg.tx_slots; i-- > 0;) u->tx_free_.push_back(static_cast<uint32_t>(i));
  u->ready_.reserve(cfg.rx_slots);
  u->batch_.reserve(cfg.rx_slots);
  if (cfg.multishot && u->setup_buf_ring()) {
    u->arm_multishot();
  } else {
    for (uint32_t i = 0; i < cfg.rx_slots; ++i) u->post_read(i);
  }
  return u;
}

// The provided-buffer ring (5.19) and a kernel that reads into it
// multishot (probed: IORING_OP_READ_MULTISHOT); false leaves the
// one-read-per-buffer mode.
bool TunUring::setup_buf_ring() {
  io_uring_probe* probe = io_uring_get_probe_ring(ring_.get());
  const bool has = probe && io_uring_opcode_supported(probe, kOpReadMultishot);
  if (probe) io_uring_free_probe(probe);
  if (!has) return false;
  const auto entries = static_cast<unsigned>(std::bit_ceil(cfg_.rx_slots));
  void* mem = ::mmap(nullptr, entries * sizeof(io_uring_buf), PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) return false;
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uintptr_t>(mem);
  reg.ring_entries = entries;
  reg.bgid = kBufGroup;
  if (io_uring_register_buf_ring(ring_.get(), &reg, 0) < 0) {
    ::munmap(mem, entries * sizeof(io_uring_buf));
    return false;
  }
  br_ = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_ring_init(br_);
  for (uint32_t i = 0; i < cfg_.rx_slots; ++i) give_back(i);
  return true;
}

void TunUring::arm_multishot() {
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  if (!sqe) return;  // cannot happen: the ring has room for every slot
  // No address or length: each read takes the next buffer of the group.
  io_uring_prep_rw(kOpReadMultishot, sqe, dev_.fd(), nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = kBufGroup;
  io_uring_sqe_set_data64(sqe, tag(kRxMulti, 0));
  armed_ = true;
  ++in_flight_;
}

// A buffer goes back to the kernel: into the provided-buffer ring (no
// system call), or with a read of its own.
void TunUring::give_back(uint32_t slot) {
  if (!br_) {
    post_read(slot);
    return;
  }
  const size_t hl = dev_.header_len();
  const int mask = io_uring_buf_ring_mask(static_cast<uint32_t>(std::bit_ceil(cfg_.rx_slots)));
  io_uring_buf_ring_add(br_, rx_buf(slot) + kHead - hl, static_cast<unsigned>(hl + kRxCap), static_cast<uint16_t>(slot),
                        mask, 0);
  io_uring_buf_ring_advance(br_, 1);
  ++rx_posted_;
}

TunUring::~TunUring() {
  if (!ring_) return;
  cancel_all();
  io_uring_queue_exit(ring_.get());
  if (br_) ::munmap(br_, std::bit_ceil(cfg_.rx_slots) * sizeof(io_uring_buf));
}

int TunUring::fd() const { return ring_->ring_fd; }

// Teardown: the kernel must be done with the buffers before they are freed,
// so cancel whatever is in flight (reads waiting for a packet, writes
// waiting for room) and wait for the completions, boundedly.
void TunUring::cancel_all() {
  if (in_flight_ == 0) return;
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  if (!sqe) {
    submit();
    sqe = io_uring_get_sqe(ring_.get());
  }
  if (sqe) {
    io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
    io_uring_sqe_set_data64(sqe, tag(kCancel, 0));
  }
  submit();
  rx_retire_ = true;
  for (int i = 0; i < 100 && in_flight_ > 0; ++i) {
    __kernel_timespec ts{0, 10'000'000};
    io_uring_cqe* cqe = nullptr;
    io_uring_wait_cqe_timeout(ring_.get(), &cqe, &ts);
    reap();
  }
}

bool TunUring::post_read(uint32_t slot) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  if (!sqe) return false;  // cannot happen: the ring has room for every slot
  const size_t hl = dev_.header_len();
  // Offset 0: a TUN device (and a pipe or socket in tests) has no position.
  io_uring_prep_read(sqe, dev_.fd(), rx_buf(slot) + kHead - hl, static_cast<unsigned>(hl + kRxCap), 0);
  io_uring_sqe_set_data64(sqe, tag(kRx, slot));
  ++rx_posted_, ++in_flight_;
  return true;
}

TunDevice::Xmit TunUring::queue(const VnetHdr& h, std::span<const uint8_t> pkt) {
  if (!dev_.tx_fits(h, pkt.size())) return TunDevice::Xmit::kLost;
  if (pkt.size() > tx_cap_) {  // a vnet packet past 64 KB: the kernel would refuse it too
    dev_.count_tx_failed(false);
    return TunDevice::Xmit::kLost;
  }
  // Out of slots: the writes submitted so far may have completed.
  if (tx_free_.empty()) flush();
  io_uring_sqe* sqe = tx_free_.empty() ? nullptr : io_uring_get_sqe(ring_.get());
  if (!sqe) {
    // Every slot in flight: the device's queue is full as far as the
    // engine can tell (tun_write_verdict(ENOBUFS): a local drop).
    ++st_.tx_no_slot;
    dev_.count_tx_failed(true);
    return TunDevice::Xmit::kRefused;
  }
  const uint32_t slot = tx_free_.back();
  tx_free_.pop_back();
  uint8_t* frame = tx_buf(slot) + kHead - dev_.header_len();
  const size_t len = dev_.frame(h, pkt, frame);
  tx_len_[slot] = static_cast<uint32_t>(len);
  tx_segs_[slot] = h.gso_type != 0 ? static_cast<uint32_t>(gso_segments(h, pkt.size())) : 0;
  io_uring_prep_write(sqe, dev_.fd(), frame, static_cast<unsigned>(len), 0);
  io_uring_sqe_set_data64(sqe, tag(kTx, slot));
  ++in_flight_;
  return TunDevice::Xmit::kSent;
}

void TunUring::submit() {
  if (io_uring_sq_ready(ring_.get()) == 0) return;
  // A failed enter (EINTR; EAGAIN: no memory for the requests) leaves the
  // entries in the queue for the next submit.
  if (io_uring_submit(ring_.get()) >= 0) ++st_.submits;
}

void TunUring::flush() {
  // A completion can queue an entry (the multishot read armed again):
  // submit that too, or the device would go unread until the next event,
  // which for a receiver with no timer pending never comes. Bounded: a
  // read that keeps ending leaves its packets in read()'s queue, and the
  // driver comes back for them (rx_pending).
  for (int round = 0; round < 4; ++round) {
    submit();
    reap();
    if (io_uring_sq_ready(ring_.get()) == 0) return;
  }
}

void TunUring::reap() {
  unsigned head;
  unsigned n = 0;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(ring_.get(), head, cqe) {
    ++n;
    const auto slot = static_cast<uint32_t>(cqe->user_data);
    switch (cqe->user_data >> 32) {
      case kRx: complete_rx(slot, cqe->res); break;
      case kTx: complete_tx(slot, cqe->res); break;
      case kRxMulti: complete_multishot(cqe->flags, cqe->res); break;
      default: break;  // the teardown's cancel
    }
  }
  io_uring_cq_advance(ring_.get(), n);
  st_.reaped += n;
}

void TunUring::complete_rx(uint32_t slot, int res) {
  --rx_posted_, --in_flight_;
  if (res >= 0) {
    ready_.push_back({slot, static_cast<uint32_t>(res), false});
    return;
  }
  // As read_one: EINTR and EAGAIN are "nothing yet", post it again. Any
  // other error (EBADFD: the device is gone; ECANCELED at teardown)
  // retires the slot rather than spin on it.
  if ((res == -EINTR || res == -EAGAIN) && !rx_retire_) {
    post_read(slot);
    return;
  }
  ++st_.rx_failed;
}

// One read of the multishot: a buffer filled (F_BUFFER names it), and
// F_MORE while the read stays armed. It ends with ENOBUFS when every
// buffer is out (armed again as soon as one is back), or with an error as
// a single read would.
void TunUring::complete_multishot(uint32_t flags, int res) {
  if (!(flags & IORING_CQE_F_MORE)) armed_ = false, --in_flight_;
  if (flags & IORING_CQE_F_BUFFER) {
    const auto slot = static_cast<uint32_t>(flags >> IORING_CQE_BUFFER_SHIFT);
    --rx_posted_;
    if (res >= 0) ready_.push_back({slot, static_cast<uint32_t>(res), false});
    else give_back(slot);
  }
  if (res < 0 && res != -ENOBUFS && res != -EAGAIN && res != -EINTR) ++st_.rx_failed, rx_retire_ = true;
  // Ended with buffers to read into (given back since it ran out): armed
  // again now, whoever reaped this, rather than at the next release().
  rearm_multishot();
}

// The multishot read ended (for want of buffers) and some are back: armed
// again, unless an error ended it: then the device is gone, and re-arming
// would spin.
void TunUring::rearm_multishot() {
  if (!br_ || armed_ || rx_retire_ || rx_posted_ == 0) return;
  arm_multishot();
  ++st_.rx_rearms;
}

void TunUring::complete_tx(uint32_t slot, int res) {
  --in_flight_;
  const size_t hl = dev_.header_len();
  if (res >= 0 && static_cast<uint32_t>(res) == tx_len_[slot]) {
    dev_.count_tx(tx_len_[slot] - hl);
    if (tx_segs_[slot]) dev_.count_gso_tx(tx_segs_[slot]);
  } else {
    // Too late to tell the engine: a packet the wire lost (tx_dropped),
    // which TCP recovers, as xmit_vnet's other failures.
    dev_.count_tx_failed(false);
  }
  tx_free_.push_back(slot);
}

size_t TunUring::read() {
  release();
  reap();
  const size_t hl = dev_.header_len();
  for (const Done& d : ready_) {
    if (d.len < hl) {  // a runt: cannot happen (read_one skips it too)
      give_back(d.slot);
      continue;
    }
    uint8_t* pkt = rx_buf(d.slot) + kHead;
    bool valid = false;
    dev_.accept_read(hl ? pkt - hl : nullptr, {pkt, d.len - hl}, &valid);
    batch_.push_back({d.slot, static_cast<uint32_t>(d.len - hl), valid});
  }
  ready_.clear();
  if (!batch_.empty()) dev_.count_batch();
  return batch_.size();
}

std::span<const uint8_t> TunUring::packet(size_t i) const { return {rx_buf(batch_[i].slot) + kHead, batch_[i].len}; }

void TunUring::release() {
  for (const Done& d : batch_) give_back(d.slot);
  batch_.clear();
  rearm_multishot();
}

}  // namespace weir::link
