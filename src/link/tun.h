// A Linux TUN device (IFF_TUN | IFF_NO_PI): every read returns one whole IP
// datagram and every write injects one, which is exactly what weir::Netif
// carries. The fd is non-blocking so a driver can drain it in batches.
//
// With `offload` (IFF_VNET_HDR + TUNSETOFFLOAD TUN_F_CSUM|TSO4|TSO6) every
// read and write carries a struct virtio_net_hdr in front of the datagram,
// and a datagram may be a TCP super-packet of up to 64 KB:
//  - reads: the kernel hands over its TSO/GSO packets unsegmented (one read
//    per 64 KB a Linux sender writes) and may leave the TCP checksum partial
//    (VIRTIO_NET_HDR_F_NEEDS_CSUM); read_one() completes it, so the engine
//    sees an ordinary, if large, IP datagram (it accepts any segment size).
//  - writes: TunNetif coalesces consecutive MSS-sized segments of one flow
//    that the engine emits in one burst (same headers but for SEQ) into one
//    super-packet with gso_size = the segment size; the kernel receives it as
//    one skb, as from GRO, or segments it if it forwards it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "weir/expected.h"
#include "link/vnet.h"
#include "weir/netif.h"

namespace weir::link {

class TunUring;

struct TunStats {
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t rx_batches = 0;  // wake-ups that read at least one packet
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;
  uint64_t tx_dropped = 0;  // write failed (EAGAIN, ENOBUFS, device down)
  uint64_t tx_refused = 0;  // of those: queue full / no buffer, told to the engine
  uint64_t tx_oversize = 0;  // larger than the MTU: not written
  uint64_t rx_gso = 0;        // super-packets read (vnet header, gso_type != NONE)
  uint64_t rx_csum_fixed = 0;  // partial checksums completed (NEEDS_CSUM)
  uint64_t rx_csum_valid = 0;  // checksums handed on as valid (NEEDS_CSUM or DATA_VALID)
  uint64_t tx_gso = 0;        // super-packets written
  uint64_t tx_gso_segs = 0;   // engine segments inside them
};

// What a failed TUN write means to the engine (Netif::try_transmit). The
// device had no room (ENOBUFS: no buffer; EAGAIN/EWOULDBLOCK: the
// non-blocking fd's queue is full): a local drop, as Linux's qdisc
// returning NET_XMIT_DROP, which __tcp_transmit_skb's callers see and react
// to (TCPRetransFail, the probe timer's resource backoff). Any other error
// (device down: EIO; a malformed packet: EINVAL) is reported as sent and
// counted as a drop: a packet the wire lost, which TCP recovers as loss.
XmitResult tun_write_verdict(int err);

class TunDevice {
 public:
  // Attaches to (or creates) the TUN device `name` in the calling thread's
  // network namespace. Needs CAP_NET_ADMIN and /dev/net/tun.
  // `offload`: IFF_VNET_HDR and TSO/checksum offload (see the top). If the
  // kernel refuses TUNSETOFFLOAD the device still works, without super-packets.
  // `napi`: IFF_NAPI, so a write queues the packet for the device's NAPI
  // instance instead of running the input path inside write(2) (which
  // matters once the NAPI is threaded: /sys/class/net/DEV/threaded).
  static Expected<TunDevice, std::string> open(const std::string& name, bool offload = false, bool napi = false);
  // The same device as a TAP (IFF_TAP | IFF_NO_PI): every read and write
  // is one whole Ethernet frame, no vnet header (so the kernel completes
  // checksums before handing frames over). For an EtherLink (TapSink).
  static Expected<TunDevice, std::string> open_tap(const std::string& name);
  TunDevice(TunDevice&& o) noexcept;
  TunDevice& operator=(TunDevice&& o) noexcept;
  TunDevice(const TunDevice&) = delete;
  TunDevice& operator=(const TunDevice&) = delete;
  ~TunDevice();
  // Wraps an fd that is already open (takes ownership), with the name, MTU
  // and vnet mode given: for tests, which cannot open a real device and
  // write to a pipe instead (`tap`: frames, as open_tap).
  static TunDevice adopt(int fd, std::string name, uint32_t mtu = 1500, bool vnet = false, bool tap = false) {
    return TunDevice(fd, std::move(name), mtu, vnet, tap ? 14 : 0);
  }

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }
  uint32_t mtu() const { return mtu_; }
  const TunStats& stats() const { return st_; }
  bool vnet() const { return vnet_; }
  bool tap() const { return l2_ != 0; }

  // Reads one datagram into `buf`; returns its length, 0 when none is
  // waiting (EAGAIN), or -errno.
  // With `csum_valid`, a partial TCP checksum (NEEDS_CSUM) or one the
  // kernel verified (DATA_VALID) is reported there instead of completed,
  // for a consumer that takes such packets as valid (Stack::input_checksum_valid);
  // without it the checksum is completed, as a NIC would, for a consumer
  // that forwards the packet (weir emu).
  long read_one(std::span<uint8_t> buf, bool* csum_valid = nullptr);
  // Writes one datagram; false (and a counted drop) if the kernel refused it.
  bool write_one(std::span<const uint8_t> pkt) { return write_vnet(VnetHdr{}, pkt); }
  // Writes a datagram with its vnet header (a plain write without vnet).
  bool write_vnet(const VnetHdr& h, std::span<const uint8_t> pkt) { return xmit_vnet(h, pkt) == Xmit::kSent; }
  // The same, saying how a failure should be reported: kRefused is the
  // device's queue full / out of buffers (tun_write_verdict), kLost any
  // other failure (oversize, device down).
  enum class Xmit : uint8_t { kSent, kRefused, kLost };
  Xmit xmit_vnet(const VnetHdr& h, std::span<const uint8_t> pkt);
  void count_batch() { ++st_.rx_batches; }
  void count_gso_tx(size_t segs) { ++st_.tx_gso, st_.tx_gso_segs += segs; }

  // The framing and accounting of xmit_vnet and read_one, for a path that
  // does its own I/O on fd() (TunUring), so both count alike.
  size_t header_len() const { return vnet_ ? kVnetLen : 0; }
  // False (counted as tx_oversize) for a packet xmit_vnet would not write.
  bool tx_fits(const VnetHdr& h, size_t len);
  // The bytes one write(2) hands over: the vnet header (on a vnet device),
  // then the packet; `out` holds header_len() + pkt.size(). Returns that length.
  size_t frame(const VnetHdr& h, std::span<const uint8_t> pkt, uint8_t* out) const;
  void count_tx(size_t bytes) { ++st_.tx_packets, st_.tx_bytes += bytes; }
  void count_tx_failed(bool refused) { ++st_.tx_dropped, st_.tx_refused += refused; }
  // One datagram read(2) returned: `vh` its vnet header (nullptr on a plain
  // device), `pkt` the datagram. Counts it, applies the header's checksum
  // state as read_one describes, and returns its length.
  long accept_read(const uint8_t* vh, std::span<uint8_t> pkt, bool* csum_valid);

 private:
  TunDevice(int fd, std::string name, uint32_t mtu, bool vnet, uint32_t l2 = 0)
      : fd_(fd), name_(std::move(name)), mtu_(mtu), vnet_(vnet), l2_(l2) {}
  static Expected<TunDevice, std::string> open_mode(const std::string& name, short mode, bool offload, bool napi);
  int fd_ = -1;
  std::string name_;
  uint32_t mtu_ = 1500;
  bool vnet_ = false;
  uint32_t l2_ = 0;  // link-layer header bytes a write carries beyond the MTU: 14 on a TAP
  TunStats st_;
};

// Reads up to `max` datagrams per call into reusable buffers: the batching
// that keeps a busy device from costing one epoll round trip per packet.
class TunBatch {
 public:
  // A buffer holds the largest super-packet (64 KB) plus headroom.
  explicit TunBatch(size_t max = 64, size_t buf_size = 65536 + 256);
  // Fills the batch; returns how many packets were read (0: none waiting).
  size_t read(TunDevice& dev);
  std::span<const uint8_t> packet(size_t i) const { return {bufs_[i].data(), lens_[i]}; }
  // The device vouches for packet i's TCP checksum (TunDevice::read_one).
  bool checksum_valid(size_t i) const { return csum_valid_[i] != 0; }
  size_t size() const { return n_; }

 private:
  std::vector<std::vector<uint8_t>> bufs_;
  std::vector<size_t> lens_;
  std::vector<uint8_t> csum_valid_;
  size_t n_ = 0;
};

// The engine's transmit path onto the device. On a vnet device the packets
// of one burst are coalesced (GsoCoalescer); the driver calls flush() when
// the burst ends (after each batch of input, timers and app calls).
// With a `ring` (TunUring, `--io-uring`) each packet is queued on the ring
// instead of written at once, and flush() submits the burst in one system
// call; a packet the ring has no room for is refused as a full device queue
// would be (kDropped).
class TunNetif final : public Netif, private GsoCoalescer::Output {
 public:
  explicit TunNetif(TunDevice& dev, TunUring* ring = nullptr) : dev_(dev), ring_(ring), gso_(*this) {}
  TunNetif(const TunNetif&) = delete;  // the coalescer holds on to this
  TunNetif& operator=(const TunNetif&) = delete;
  void transmit(std::span<const uint8_t> ip_packet) override { (void)try_transmit(ip_packet); }
  // kDropped when the device refused this packet for want of room (see
  // tun_write_verdict). On a vnet device a segment the coalescer holds for
  // a super-packet is written at the next flush(), after the engine has
  // moved on: it is reported sent, and a refused super-packet is counted
  // (tx_dropped) and recovered by TCP as loss. Packets written at once
  // (pure ACKs, control segments, whatever ends a run) get their verdict.
  XmitResult try_transmit(std::span<const uint8_t> ip_packet) override;
  uint32_t mtu() const override { return dev_.mtu(); }
  // A vnet device takes the coalescer's super-packets (tun_get_user honours
  // the vnet header's gso_type whatever TUNSETOFFLOAD said), so dev_.vnet()
  // would be the answer; not advertised yet: with TSO deferral on this path
  // interop_hystart_exit leaves its band (docs/conformance.md, notsent_lowat).
  bool gso() const override { return false; }
  void flush();

 private:
  // GsoCoalescer::Output: runs are built in run_, then written.
  uint8_t* open(size_t max) override;
  void close(const VnetHdr& h, size_t len) override;
  XmitResult pass(std::span<const uint8_t> l2, std::span<const uint8_t> pkt) override;
  TunDevice::Xmit xmit(const VnetHdr& h, std::span<const uint8_t> pkt);
  TunDevice& dev_;
  TunUring* ring_;
  std::vector<uint8_t> run_;
  GsoCoalescer gso_;
};

}  // namespace weir::link
