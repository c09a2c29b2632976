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
#include "wire/checksum.h"

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

constexpr size_t kVnetLen = TunDevice::kVnetLen;

uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t get32(const uint8_t* p) { return uint32_t{get16(p)} << 16 | get16(p + 2); }
void put16(uint8_t* p, uint16_t v) { p[0] = static_cast<uint8_t>(v >> 8), p[1] = static_cast<uint8_t>(v); }
uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
void put_le16(uint8_t* p, uint16_t v) { p[0] = static_cast<uint8_t>(v), p[1] = static_cast<uint8_t>(v >> 8); }

VnetHdr decode_vnet(const uint8_t* b) {
  return VnetHdr{b[0], b[1], le16(b + 2), le16(b + 4), le16(b + 6), le16(b + 8)};
}

void encode_vnet(const VnetHdr& h, uint8_t* b) {
  b[0] = h.flags, b[1] = h.gso_type;
  put_le16(b + 2, h.hdr_len), put_le16(b + 4, h.gso_size), put_le16(b + 6, h.csum_start), put_le16(b + 8, h.csum_offset);
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
  std::memcpy(out + header_len(), pkt.data(), pkt.size());
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

namespace {

constexpr uint8_t kAck = 0x10, kPsh = 0x08;

// Where a packet's TCP header starts and how long IP + TCP headers are; 0
// if it is not a plain TCP datagram (IPv4 without options or fragments, or
// IPv6 with TCP as the first next header).
struct TcpLayout {
  size_t ip = 0, hdr = 0;
};

TcpLayout tcp_layout(std::span<const uint8_t> p) {
  TcpLayout l;
  if (p.size() >= 40 && p[0] == 0x45 && p[9] == 6 && (get16(p.data() + 6) & 0x3fff) == 0) l.ip = 20;
  else if (p.size() >= 60 && (p[0] >> 4) == 6 && p[6] == 6) l.ip = 40;
  else return {};
  l.hdr = l.ip + (p[l.ip + 12] >> 4) * 4u;
  if (l.hdr < l.ip + 20 || l.hdr > p.size()) return {};
  return l;
}

}  // namespace

// A segment joins the pending super-packet when the kernel's GSO would
// recreate it exactly from the super-packet: the next SEQ, the same size
// (a shorter one ends the run), and every other header byte equal (ACK,
// window, options including TSval, TOS/hop limit). The kernel's segmentation
// (tcp_gso_segment) copies the header to each piece, advances SEQ, and keeps
// PSH only on the last piece, so only the run's last segment may carry PSH.
bool GsoCoalescer::mergeable(std::span<const uint8_t> p) const {
  if (segs_ == 0 || short_tail_ || p.size() <= hdr_len_) return false;
  const TcpLayout l = tcp_layout(p);
  if (l.hdr != hdr_len_ || (p[l.ip + 13] & ~kPsh) != kAck) return false;
  const size_t len = p.size() - l.hdr;
  if (len > seg_size_ || buf_.size() + len > kMax || get32(p.data() + l.ip + 4) != next_seq_) return false;
  const uint8_t* a = buf_.data();
  const uint8_t* b = p.data();
  if (l.ip == 20) {  // IPv4: all but total length, ID and header checksum
    if (a[1] != b[1] || get16(a + 6) != get16(b + 6) || a[8] != b[8] || std::memcmp(a + 12, b + 12, 8) != 0)
      return false;
  } else if (std::memcmp(a, b, 4) != 0 || std::memcmp(a + 6, b + 6, 34) != 0) {  // IPv6: all but the length
    return false;
  }
  // TCP: ports, then ACK through the end of the options but for the flags
  // byte and the checksum.
  const uint8_t* ta = a + l.ip;
  const uint8_t* tb = b + l.ip;
  return std::memcmp(ta, tb, 4) == 0 && std::memcmp(ta + 8, tb + 8, 5) == 0 && std::memcmp(ta + 14, tb + 14, 2) == 0 &&
         std::memcmp(ta + 18, tb + 18, l.hdr - l.ip - 18) == 0;
}

void GsoCoalescer::push(std::span<const uint8_t> p) {
  if (mergeable(p)) {
    const size_t ip = buf_[0] == 0x45 ? 20 : 40;
    const size_t len = p.size() - hdr_len_;
    buf_.insert(buf_.end(), p.begin() + static_cast<std::ptrdiff_t>(hdr_len_), p.end());
    ++segs_;
    next_seq_ += static_cast<uint32_t>(len);
    if (p[ip + 13] & kPsh) buf_[ip + 13] |= kPsh, short_tail_ = true;
    if (len < seg_size_) short_tail_ = true;
    return;
  }
  flush();
  const TcpLayout l = tcp_layout(p);
  if (l.hdr == 0 || p.size() == l.hdr || (p[l.ip + 13] & ~kPsh) != kAck || p.size() > kMax) {
    out_(ctx_, VnetHdr{}, p);  // not a candidate (control segment, pure ACK, not TCP)
    return;
  }
  buf_.assign(p.begin(), p.end());
  hdr_len_ = l.hdr;
  seg_size_ = p.size() - l.hdr;
  segs_ = 1;
  short_tail_ = (p[l.ip + 13] & kPsh) != 0;
  next_seq_ = get32(p.data() + l.ip + 4) + static_cast<uint32_t>(seg_size_);
}

// Writes the pending packet: as it came if it is one segment; else with the
// lengths fixed, the TCP checksum left partial (the pseudo-header sum in the
// field, NEEDS_CSUM) and gso_size = the first segment's payload.
void GsoCoalescer::flush() {
  if (segs_ == 0) return;
  if (segs_ > 1) {
    uint8_t* b = buf_.data();
    const size_t ip = b[0] == 0x45 ? 20 : 40;
    const auto tcp_len = static_cast<uint32_t>(buf_.size() - ip);
    uint32_t sum;
    if (ip == 20) {
      put16(b + 2, static_cast<uint16_t>(buf_.size()));
      put16(b + 10, 0);
      put16(b + 10, wire::csum_fold(wire::csum_partial({b, 20})));
      sum = wire::csum_partial({b + 12, 8});
    } else {
      put16(b + 4, static_cast<uint16_t>(tcp_len));
      sum = wire::csum_partial({b + 8, 32});
    }
    // RFC 9293 §3.1 pseudo-header: addresses, protocol, TCP length; stored
    // folded but not inverted, as CHECKSUM_PARTIAL expects.
    put16(b + ip + 16, static_cast<uint16_t>(~wire::csum_fold(sum + 6 + tcp_len)));
    VnetHdr h;
    h.flags = 1;  // VIRTIO_NET_HDR_F_NEEDS_CSUM
    h.gso_type = ip == 20 ? 1 : 4;  // VIRTIO_NET_HDR_GSO_TCPV4 / TCPV6
    h.hdr_len = static_cast<uint16_t>(hdr_len_);
    h.gso_size = static_cast<uint16_t>(seg_size_);
    h.csum_start = static_cast<uint16_t>(ip);
    h.csum_offset = 16;
    out_(ctx_, h, buf_);
  } else {
    out_(ctx_, VnetHdr{}, buf_);
  }
  segs_ = 0;
  short_tail_ = false;
  buf_.clear();
}

bool complete_checksum(std::span<uint8_t> pkt, const VnetHdr& h) {
  const size_t at = size_t{h.csum_start} + h.csum_offset;
  if (h.csum_start >= pkt.size() || at + 2 > pkt.size()) return false;
  put16(pkt.data() + at, wire::csum_fold(wire::csum_partial(pkt.subspan(h.csum_start))));
  return true;
}

XmitResult TunNetif::try_transmit(std::span<const uint8_t> ip_packet) {
  if (!dev_.vnet())
    return xmit(VnetHdr{}, ip_packet) == TunDevice::Xmit::kRefused ? XmitResult::kDropped : XmitResult::kSent;
  // The coalescer writes this packet itself (emit() sees its bytes) or
  // holds it for a super-packet.
  current_ = ip_packet.data();
  current_result_ = XmitResult::kSent;
  gso_.push(ip_packet);
  current_ = nullptr;
  return current_result_;
}

TunDevice::Xmit TunNetif::xmit(const VnetHdr& h, std::span<const uint8_t> pkt) {
  return ring_ ? ring_->queue(h, pkt) : dev_.xmit_vnet(h, pkt);
}

void TunNetif::flush() {
  gso_.flush();
  if (ring_) ring_->flush();
}

void TunNetif::emit(void* self, const VnetHdr& h, std::span<const uint8_t> pkt) {
  auto* n = static_cast<TunNetif*>(self);
  const TunDevice::Xmit r = n->xmit(h, pkt);
  // The ring counts a super-packet when its write completes.
  if (r == TunDevice::Xmit::kSent && h.gso_type != 0 && !n->ring_)
    n->dev_.count_gso_tx(gso_segments(h, pkt.size()));
  if (pkt.data() == n->current_ && r == TunDevice::Xmit::kRefused) n->current_result_ = XmitResult::kDropped;
}

size_t gso_segments(const VnetHdr& h, size_t len) {
  return h.gso_type == 0 || h.gso_size == 0 ? 1 : (len - h.hdr_len + h.gso_size - 1) / h.gso_size;
}

}  // namespace weir::link
