#include "link/tun.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "link/tun_uring.h"
#include "wire/bytes.h"

namespace weir::link {

namespace {

// The device's MTU, read through an ordinary socket (SIOCGIFMTU), since the
// TUN fd itself does not answer interface ioctls.
uint32_t query_mtu(const std::string& name) {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return 1500;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  uint32_t mtu = 1500;
  if (::ioctl(s, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0) mtu = static_cast<uint32_t>(ifr.ifr_mtu);
  ::close(s);
  return mtu;
}

// Asks for IFF_VNET_HDR's header size and the offloads; false if refused.
bool enable_offload(int fd) {
  int sz = static_cast<int>(kVnetLen);
  if (::ioctl(fd, TUNSETVNETHDRSZ, &sz) < 0) return false;
  return ::ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) == 0;
}

}  // namespace

Expected<TunDevice, std::string> TunDevice::open(const std::string& name, bool offload, bool napi) {
  return open_mode(name, IFF_TUN, offload, napi);
}

Expected<TunDevice, std::string> TunDevice::open_tap(const std::string& name) {
  return open_mode(name, IFF_TAP, false, false);
}

Expected<TunDevice, std::string> TunDevice::open_mode(const std::string& name, short mode, bool offload, bool napi) {
  if (name.empty() || name.size() >= IFNAMSIZ) return Unexpected(fmt::format("bad TUN/TAP name '{}'", name));
  int fd = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Unexpected(fmt::format("/dev/net/tun: {}", std::strerror(errno)));
  ifreq ifr{};
  // IFF_NO_PI: no 4-byte packet-information prefix, so reads and writes are
  // bare IP datagrams (the family is in the version nibble), or on a TAP
  // bare Ethernet frames (the EtherType says).
  ifr.ifr_flags = static_cast<short>(mode | IFF_NO_PI | (offload ? IFF_VNET_HDR : 0) | (napi ? IFF_NAPI : 0));
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(fd, TUNSETIFF, &ifr) < 0) {
    int e = errno;
    ::close(fd);
    return Unexpected(fmt::format("TUNSETIFF {}: {}", name, std::strerror(e)));
  }
  // Without the offloads the vnet header is still there (always NONE):
  // correct, just no super-packets.
  if (offload && !enable_offload(fd)) fmt::print(stderr, "weir: {}: TUNSETOFFLOAD refused, no TSO\n", name);
  // Offloads are a property of the device and outlive the fd that set them:
  // without a vnet header to say a checksum is partial, switch them off.
  if (!offload) ::ioctl(fd, TUNSETOFFLOAD, 0);
  std::string actual(ifr.ifr_name);
  return TunDevice(fd, actual, query_mtu(actual), offload, mode == IFF_TAP ? 14 : 0);
}

TunDevice::TunDevice(TunDevice&& o) noexcept
    : fd_(o.fd_), name_(std::move(o.name_)), mtu_(o.mtu_), vnet_(o.vnet_), l2_(o.l2_), st_(o.st_) {
  o.fd_ = -1;
}

TunDevice& TunDevice::operator=(TunDevice&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    name_ = std::move(o.name_);
    mtu_ = o.mtu_;
    vnet_ = o.vnet_;
    l2_ = o.l2_;
    st_ = o.st_;
    o.fd_ = -1;
  }
  return *this;
}

TunDevice::~TunDevice() {
  if (fd_ >= 0) ::close(fd_);
}

long TunDevice::read_one(std::span<uint8_t> buf, bool* csum_valid) {
  uint8_t vh[kVnetLen];
  iovec iov[2] = {{vh, kVnetLen}, {buf.data(), buf.size()}};
  for (;;) {
    ssize_t n = vnet_ ? ::readv(fd_, iov, 2) : ::read(fd_, buf.data(), buf.size());
    if (n >= 0 && vnet_) {
      if (n < static_cast<ssize_t>(kVnetLen)) continue;  // cannot happen: a runt, skip it
      n -= static_cast<ssize_t>(kVnetLen);
    }
    if (n >= 0) return accept_read(vnet_ ? vh : nullptr, buf.first(static_cast<size_t>(n)), csum_valid);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return -errno;
  }
}

long TunDevice::accept_read(const uint8_t* vh, std::span<uint8_t> pkt, bool* csum_valid) {
  if (vh) {
    const VnetHdr h = decode_vnet(vh);
    if (h.gso_type != 0) ++st_.rx_gso;
    // Linux leaves its own packets' TCP checksum partial (CHECKSUM_PARTIAL):
    // valid by construction for a local consumer, else finished here as a
    // NIC would. DATA_VALID: the kernel checked it already.
    if (csum_valid && (*csum_valid = (h.flags & 3) != 0)) ++st_.rx_csum_valid;
    if (!csum_valid && (h.flags & 1) && complete_checksum(pkt, h)) ++st_.rx_csum_fixed;
  }
  ++st_.rx_packets;
  st_.rx_bytes += pkt.size();
  return static_cast<long>(pkt.size());
}

XmitResult tun_write_verdict(int err) {
  return err == ENOBUFS || err == EAGAIN || err == EWOULDBLOCK ? XmitResult::kDropped : XmitResult::kSent;
}

bool TunDevice::tx_fits(const VnetHdr& h, size_t len) {
  if (len <= mtu_ + l2_ || (h.gso_type != 0 && vnet_)) return true;
  ++st_.tx_oversize;
  return false;
}

size_t TunDevice::frame(const VnetHdr& h, std::span<const uint8_t> pkt, uint8_t* out) const {
  if (vnet_) encode_vnet(h, out);
  wire::put_bytes(out + header_len(), pkt);
  return header_len() + pkt.size();
}

TunDevice::Xmit TunDevice::xmit_vnet(const VnetHdr& h, std::span<const uint8_t> pkt) {
  if (!tx_fits(h, pkt.size())) return Xmit::kLost;
  uint8_t vh[kVnetLen];
  encode_vnet(h, vh);
  iovec iov[2] = {{vh, kVnetLen}, {const_cast<uint8_t*>(pkt.data()), pkt.size()}};
  const ssize_t want = static_cast<ssize_t>(pkt.size() + header_len());
  for (;;) {
    ssize_t n = vnet_ ? ::writev(fd_, iov, 2) : ::write(fd_, pkt.data(), pkt.size());
    if (n == want) {
      count_tx(pkt.size());
      return Xmit::kSent;
    }
    if (n < 0 && errno == EINTR) continue;
    const bool refused = n < 0 && tun_write_verdict(errno) == XmitResult::kDropped;
    count_tx_failed(refused);
    // Any other failure (or a short write) is a packet the wire lost.
    return refused ? Xmit::kRefused : Xmit::kLost;
  }
}

TunBatch::TunBatch(size_t max, size_t buf_size) : bufs_(max), lens_(max, 0), csum_valid_(max, 0) {
  for (auto& b : bufs_) b.resize(buf_size);
}

size_t TunBatch::read(TunDevice& dev) {
  n_ = 0;
  while (n_ < bufs_.size()) {
    bool valid = false;
    long r = dev.read_one(bufs_[n_], &valid);
    if (r <= 0) break;
    csum_valid_[n_] = valid;
    lens_[n_++] = static_cast<size_t>(r);
  }
  if (n_) dev.count_batch();
  return n_;
}

XmitResult TunNetif::try_transmit(std::span<const uint8_t> ip_packet) {
  if (!dev_.vnet()) return pass({}, ip_packet);
  return gso_.push({}, ip_packet);
}

TunDevice::Xmit TunNetif::xmit(const VnetHdr& h, std::span<const uint8_t> pkt) {
  return ring_ ? ring_->queue(h, pkt) : dev_.xmit_vnet(h, pkt);
}

void TunNetif::flush() {
  gso_.flush();
  if (ring_) ring_->flush();
}

uint8_t* TunNetif::open(size_t max) {
  if (run_.size() < max) run_.resize(max);
  return run_.data();
}

void TunNetif::close(const VnetHdr& h, size_t len) {
  const TunDevice::Xmit r = xmit(h, std::span<const uint8_t>(run_).first(len));
  // The ring counts a super-packet when its write completes.
  if (r == TunDevice::Xmit::kSent && h.gso_type != 0 && !ring_) dev_.count_gso_tx(gso_segments(h, len));
}

XmitResult TunNetif::pass(std::span<const uint8_t>, std::span<const uint8_t> pkt) {
  return xmit(VnetHdr{}, pkt) == TunDevice::Xmit::kRefused ? XmitResult::kDropped : XmitResult::kSent;
}

}  // namespace weir::link
