// A Linux TUN device (IFF_TUN | IFF_NO_PI): every read returns one whole IP
// datagram and every write injects one, which is exactly what weir::Netif
// carries. The fd is non-blocking so a driver can drain it in batches.
//
// Not done yet: IFF_VNET_HDR with TSO/GSO super-packets (a 64 KB write in one
// read). Every packet here is at most one MTU.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "weir/expected.h"
#include "weir/netif.h"

namespace weir::link {

struct TunStats {
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t rx_batches = 0;  // wake-ups that read at least one packet
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;
  uint64_t tx_dropped = 0;  // write failed (EAGAIN, ENOBUFS, device down)
  uint64_t tx_oversize = 0;  // larger than the MTU: not written
};

class TunDevice {
 public:
  // Attaches to (or creates) the TUN device `name` in the calling thread's
  // network namespace. Needs CAP_NET_ADMIN and /dev/net/tun.
  static Expected<TunDevice, std::string> open(const std::string& name);
  TunDevice(TunDevice&& o) noexcept;
  TunDevice& operator=(TunDevice&& o) noexcept;
  TunDevice(const TunDevice&) = delete;
  TunDevice& operator=(const TunDevice&) = delete;
  ~TunDevice();

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }
  uint32_t mtu() const { return mtu_; }
  const TunStats& stats() const { return st_; }

  // Reads one datagram into `buf`; returns its length, 0 when none is
  // waiting (EAGAIN), or -errno.
  long read_one(std::span<uint8_t> buf);
  // Writes one datagram; false (and a counted drop) if the kernel refused it.
  bool write_one(std::span<const uint8_t> pkt);
  void count_batch() { ++st_.rx_batches; }

 private:
  TunDevice(int fd, std::string name, uint32_t mtu) : fd_(fd), name_(std::move(name)), mtu_(mtu) {}
  int fd_ = -1;
  std::string name_;
  uint32_t mtu_ = 1500;
  TunStats st_;
};

// Reads up to `max` datagrams per call into reusable buffers: the batching
// that keeps a busy device from costing one epoll round trip per packet.
class TunBatch {
 public:
  explicit TunBatch(size_t max = 64, size_t buf_size = 65536);
  // Fills the batch; returns how many packets were read (0: none waiting).
  size_t read(TunDevice& dev);
  std::span<const uint8_t> packet(size_t i) const { return {bufs_[i].data(), lens_[i]}; }
  size_t size() const { return n_; }

 private:
  std::vector<std::vector<uint8_t>> bufs_;
  std::vector<size_t> lens_;
  size_t n_ = 0;
};

// The engine's transmit path onto the device.
class TunNetif final : public Netif {
 public:
  explicit TunNetif(TunDevice& dev) : dev_(dev) {}
  void transmit(std::span<const uint8_t> ip_packet) override { dev_.write_one(ip_packet); }
  uint32_t mtu() const override { return dev_.mtu(); }

 private:
  TunDevice& dev_;
};

}  // namespace weir::link
