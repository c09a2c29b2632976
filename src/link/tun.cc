#include "link/tun.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

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

}  // namespace

Expected<TunDevice, std::string> TunDevice::open(const std::string& name) {
  if (name.empty() || name.size() >= IFNAMSIZ) return Unexpected(fmt::format("bad TUN name '{}'", name));
  int fd = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Unexpected(fmt::format("/dev/net/tun: {}", std::strerror(errno)));
  ifreq ifr{};
  // IFF_NO_PI: no 4-byte packet-information prefix, so reads and writes are
  // bare IP datagrams (the family is in the version nibble).
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(fd, TUNSETIFF, &ifr) < 0) {
    int e = errno;
    ::close(fd);
    return Unexpected(fmt::format("TUNSETIFF {}: {}", name, std::strerror(e)));
  }
  std::string actual(ifr.ifr_name);
  return TunDevice(fd, actual, query_mtu(actual));
}

TunDevice::TunDevice(TunDevice&& o) noexcept
    : fd_(o.fd_), name_(std::move(o.name_)), mtu_(o.mtu_), st_(o.st_) {
  o.fd_ = -1;
}

TunDevice& TunDevice::operator=(TunDevice&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    name_ = std::move(o.name_);
    mtu_ = o.mtu_;
    st_ = o.st_;
    o.fd_ = -1;
  }
  return *this;
}

TunDevice::~TunDevice() {
  if (fd_ >= 0) ::close(fd_);
}

long TunDevice::read_one(std::span<uint8_t> buf) {
  for (;;) {
    ssize_t n = ::read(fd_, buf.data(), buf.size());
    if (n >= 0) {
      ++st_.rx_packets;
      st_.rx_bytes += static_cast<uint64_t>(n);
      return n;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return -errno;
  }
}

bool TunDevice::write_one(std::span<const uint8_t> pkt) {
  if (pkt.size() > mtu_) {
    ++st_.tx_oversize;
    return false;
  }
  for (;;) {
    ssize_t n = ::write(fd_, pkt.data(), pkt.size());
    if (n == static_cast<ssize_t>(pkt.size())) {
      ++st_.tx_packets;
      st_.tx_bytes += pkt.size();
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    // A TUN write that fails is a packet the wire lost; TCP recovers it.
    ++st_.tx_dropped;
    return false;
  }
}

TunBatch::TunBatch(size_t max, size_t buf_size) : bufs_(max), lens_(max, 0) {
  for (auto& b : bufs_) b.resize(buf_size);
}

size_t TunBatch::read(TunDevice& dev) {
  n_ = 0;
  while (n_ < bufs_.size()) {
    long r = dev.read_one(bufs_[n_]);
    if (r <= 0) break;
    lens_[n_++] = static_cast<size_t>(r);
  }
  if (n_) dev.count_batch();
  return n_;
}

}  // namespace weir::link
