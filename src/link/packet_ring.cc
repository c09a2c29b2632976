#include "link/packet_ring.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "wire/bytes.h"

namespace weir::link {

namespace {

std::string err(const std::string& what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

// The interface's MTU and MAC through an ordinary socket (SIOCGIFMTU,
// SIOCGIFHWADDR); false unless it is an Ethernet interface.
bool query_iface(const std::string& name, uint32_t& mtu, std::array<uint8_t, 6>& hw) {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  bool ok = ::ioctl(s, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0;
  if (ok) mtu = static_cast<uint32_t>(ifr.ifr_mtu);
  ok = ok && ::ioctl(s, SIOCGIFHWADDR, &ifr) == 0 && ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER;
  if (ok) std::memcpy(hw.data(), ifr.ifr_hwaddr.sa_data, 6);
  ::close(s);
  return ok;
}

int set_int(int fd, int opt, int v) { return ::setsockopt(fd, SOL_PACKET, opt, &v, sizeof v); }

// tpacket_req3 for both versions: packet_setsockopt copies only
// sizeof(struct tpacket_req), its first four fields, for TPACKET_V2.
int set_ring(int fd, int opt, const RingGeometry& g, uint32_t retire_ms) {
  tpacket_req3 r{};
  r.tp_block_size = g.block_size;
  r.tp_block_nr = g.block_count;
  r.tp_frame_size = g.frame_size;
  r.tp_frame_nr = g.frame_count;
  r.tp_retire_blk_tov = retire_ms;  // RX only; packet_set_ring refuses it on the TX ring
  return ::setsockopt(fd, SOL_PACKET, opt, &r, sizeof r);
}

uint32_t load(const uint32_t& v) { return std::atomic_ref<const uint32_t>(v).load(std::memory_order_acquire); }
void store(uint32_t& v, uint32_t x) { std::atomic_ref<uint32_t>(v).store(x, std::memory_order_release); }

// A raw socket with protocol 0 (packet_create registers no receive hook
// for it: nothing is queued to it until bind names a protocol), mapped
// ring set up in packet_mmap.rst's order: socket, version, ring, mmap,
// then bind.
int packet_socket(int version) {
  const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd >= 0 && set_int(fd, PACKET_VERSION, version) < 0) return ::close(fd), -1;
  return fd;
}

uint8_t* map_ring(int fd, size_t len) {
  void* m = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  return m == MAP_FAILED ? nullptr : static_cast<uint8_t*>(m);
}

int bind_to(int fd, unsigned ifindex, uint16_t proto) {
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(proto);
  sll.sll_ifindex = static_cast<int>(ifindex);
  return ::bind(fd, reinterpret_cast<sockaddr*>(&sll), sizeof sll);
}

}  // namespace

Expected<std::unique_ptr<PacketRing>, std::string> PacketRing::open(const std::string& ifname,
                                                                    const PacketRingConfig& cfg) {
  std::unique_ptr<PacketRing> p(new PacketRing());
  p->name_ = ifname;
  const unsigned index = ::if_nametoindex(ifname.c_str());
  if (index == 0) return Unexpected(err("interface " + ifname));
  if (!query_iface(ifname, p->mtu_, p->hw_)) return Unexpected(fmt::format("{} is not an Ethernet interface", ifname));
  p->max_frame_ = cfg.max_frame ? cfg.max_frame : p->mtu_ + ETH_HLEN;
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  auto rx = rx_geometry(cfg, page, p->max_frame_);
  if (!rx) return Unexpected(rx.error());
  auto tx = cfg.tx_mode == TxMode::kCopy ? copy_tx_geometry(cfg, p->max_frame_) : tx_geometry(cfg, page, p->max_frame_);
  if (!tx) return Unexpected(tx.error());
  p->rx_ = *rx, p->tx_ = *tx;
  // TX first: the RX socket starts receiving at its bind, so it is last.
  p->tx_mode_ = cfg.tx_mode;
  auto tx_open = cfg.tx_mode == TxMode::kCopy ? p->open_copy_tx(index, cfg) : p->open_tx(index, cfg);
  if (!tx_open) return Unexpected(tx_open.error());
  if (auto r = p->open_rx(index, cfg); !r) return Unexpected(r.error());
  return p;
}

// The RX socket: the configured ring, bound to ETH_P_ALL on the interface.
Expected<bool, std::string> PacketRing::open_rx(unsigned ifindex, const PacketRingConfig& cfg) {
  kind_ = cfg.rx_ring;
  if (kind_ == RxRing::kCopy) return open_copy_rx(ifindex, cfg);
  const bool v2 = kind_ == RxRing::kV2;
  rx_fd_ = packet_socket(v2 ? TPACKET_V2 : TPACKET_V3);
  if (rx_fd_ < 0) return Unexpected(err(v2 ? "AF_PACKET socket TPACKET_V2" : "AF_PACKET socket TPACKET_V3"));
  // packet(7) PACKET_IGNORE_OUTGOING (Linux 4.20): frames this host sends
  // on the interface (the TX socket's, when they pass the taps without
  // PACKET_QDISC_BYPASS: dev_queue_xmit_nit skips only the sending
  // socket) never reach this ring. An older kernel refuses it; the frame
  // walk skips PACKET_OUTGOING anyway (classify).
  (void)set_int(rx_fd_, PACKET_IGNORE_OUTGOING, 1);
  if (set_ring(rx_fd_, PACKET_RX_RING, rx_, v2 ? 0 : cfg.rx_retire_ms) < 0) return Unexpected(err("PACKET_RX_RING"));
  rx_map_ = map_ring(rx_fd_, rx_.bytes());
  if (!rx_map_) return Unexpected(err("mmap of the RX ring"));
  if (v2) frames_ = FrameRing(rx_map_, rx_, max_frame_);
  if (bind_to(rx_fd_, ifindex, ETH_P_ALL) < 0) return Unexpected(err("bind to " + name_));
  return true;
}

// The copying RX socket (link/packet_copy_rx.h): no ring; PACKET_AUXDATA
// for what a slot's header would say. Its receive buffer bounds the frames
// waiting in the kernel at about rx_frame_count: packet_rcv charges each
// queued skb's truesize (a 1514-byte frame's is 2-4 KiB: a linear skb's
// kmalloc'ed head, or a GSO segment's page fragment and its head).
Expected<bool, std::string> PacketRing::open_copy_rx(unsigned ifindex, const PacketRingConfig& cfg) {
  rx_fd_ = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (rx_fd_ < 0) return Unexpected(err("AF_PACKET socket"));
  (void)set_int(rx_fd_, PACKET_IGNORE_OUTGOING, 1);  // as open_rx
  if (set_int(rx_fd_, PACKET_AUXDATA, 1) < 0) return Unexpected(err("PACKET_AUXDATA"));
  const int rcvbuf = static_cast<int>(std::min<size_t>(size_t{cfg.rx_frame_count} * 4096, size_t{1} << 30));
  if (::setsockopt(rx_fd_, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) < 0)
    (void)::setsockopt(rx_fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  copy_rx_ = CopyRx(kCopyRxBatch, max_frame_);
  if (bind_to(rx_fd_, ifindex, ETH_P_ALL) < 0) return Unexpected(err("bind to " + name_));
  return true;
}

bool PacketRing::rx_ready() const {
  switch (kind_) {
    case RxRing::kV2: return frames_.ready();
    case RxRing::kV3: return block_ready(rx_next_);
    case RxRing::kCopy: break;
  }
  return copy_rx_.more();
}

// The TX socket: a TPACKET_V3 transmit ring, bound with protocol 0 so it
// never receives (packet_do_bind registers no hook for protocol 0), while
// tpacket_snd still sends on the bound interface (packet_cached_dev) and
// takes each frame's protocol from its Ethernet header
// (packet_parse_headers: dev_parse_header_protocol when the socket's is 0).
Expected<bool, std::string> PacketRing::open_tx(unsigned ifindex, const PacketRingConfig& cfg) {
  tx_fd_ = packet_socket(TPACKET_V3);
  if (tx_fd_ < 0) return Unexpected(err("AF_PACKET socket TPACKET_V3"));
  // PACKET_LOSS (packet_mmap.rst, "PACKET_LOSS"): a frame the kernel
  // refuses is dropped and its slot freed; without it the slot stays
  // TP_STATUS_WRONG_FORMAT and tpacket_snd stops there for good.
  if (set_int(tx_fd_, PACKET_LOSS, 1) < 0) return Unexpected(err("PACKET_LOSS"));
  if (cfg.qdisc_bypass && set_int(tx_fd_, PACKET_QDISC_BYPASS, 1) < 0) return Unexpected(err("PACKET_QDISC_BYPASS"));
  if (set_ring(tx_fd_, PACKET_TX_RING, tx_, 0) < 0) return Unexpected(err("PACKET_TX_RING"));
  tx_map_ = map_ring(tx_fd_, tx_.bytes());
  if (!tx_map_) return Unexpected(err("mmap of the TX ring"));
  if (bind_to(tx_fd_, ifindex, 0) < 0) return Unexpected(err("bind to " + name_));
  // TX slots in flight are charged to the send buffer (tpacket_fill_skb):
  // let the whole ring be in flight, so the ring, not sk_sndbuf, bounds it.
  const int sndbuf = static_cast<int>(tx_.bytes());
  if (::setsockopt(tx_fd_, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf) < 0)
    (void)::setsockopt(tx_fd_, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  return true;
}

// The copying TX socket (link/packet_copy_tx.h): the same socket as the
// ring's, bound with protocol 0 so it never receives, without a ring;
// packet_snd sends each message on the bound interface as one linear skb.
Expected<bool, std::string> PacketRing::open_copy_tx(unsigned ifindex, const PacketRingConfig& cfg) {
  tx_fd_ = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (tx_fd_ < 0) return Unexpected(err("AF_PACKET socket"));
  if (cfg.tx_gso && set_int(tx_fd_, PACKET_VNET_HDR, 1) < 0) return Unexpected(err("PACKET_VNET_HDR"));
  // __dev_direct_xmit drops what validate_xmit_skb had to segment, so a
  // super-packet takes the qdisc path (dev_queue_xmit).
  if (cfg.qdisc_bypass && !cfg.tx_gso && set_int(tx_fd_, PACKET_QDISC_BYPASS, 1) < 0)
    return Unexpected(err("PACKET_QDISC_BYPASS"));
  if (bind_to(tx_fd_, ifindex, 0) < 0) return Unexpected(err("bind to " + name_));
  // A frame's skb is charged to the send buffer until the device is done
  // with it (veth orphans it at once, __dev_forward_skb2): room for every
  // slot at once, so the slot array, not sk_sndbuf, bounds a burst.
  const int sndbuf = static_cast<int>(tx_.bytes() * 2);
  if (::setsockopt(tx_fd_, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf) < 0)
    (void)::setsockopt(tx_fd_, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  copy_ = CopyTx(tx_.frame_count, tx_.frame_size, nullptr, cfg.tx_gso);
  if (cfg.tx_gso) gso_.emplace(gso_out_, ETH_HLEN, copy_.max_frame() - ETH_HLEN);
  return true;
}

PacketRing::~PacketRing() {
  if (rx_map_) ::munmap(rx_map_, rx_.bytes());
  if (tx_map_) ::munmap(tx_map_, tx_.bytes());
  if (rx_fd_ >= 0) ::close(rx_fd_);
  if (tx_fd_ >= 0) ::close(tx_fd_);
}

Expected<bool, std::string> PacketRing::add_mac(const std::array<uint8_t, 6>& mac) {
  packet_mreq mr{};
  mr.mr_ifindex = static_cast<int>(::if_nametoindex(name_.c_str()));
  mr.mr_type = (mac[0] & 1) ? PACKET_MR_MULTICAST : PACKET_MR_UNICAST;  // IEEE 802: the group bit
  mr.mr_alen = 6;
  std::memcpy(mr.mr_address, mac.data(), 6);
  if (::setsockopt(rx_fd_, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) < 0)
    return Unexpected(err("PACKET_ADD_MEMBERSHIP on " + name_));
  return true;
}

// The kernel sets TP_STATUS_USER (with a write barrier before it) when it
// retires a block; the acquire load pairs with that.
bool PacketRing::block_ready(uint32_t i) const {
  const auto* d = reinterpret_cast<const tpacket_block_desc*>(block(i));
  return (load(d->hdr.bh1.block_status) & TP_STATUS_USER) != 0;
}

void PacketRing::release_block(uint32_t i) {
  auto* d = reinterpret_cast<tpacket_block_desc*>(block(i));
  store(d->hdr.bh1.block_status, TP_STATUS_KERNEL);
  ++st_.rx_blocks;
}

uint8_t* PacketRing::tx_slot(uint32_t i) const {
  const uint32_t per_block = tx_.block_size / tx_.frame_size;
  return tx_map_ + size_t{i / per_block} * tx_.block_size + size_t{i % per_block} * tx_.frame_size;
}

// A slot is ours while TP_STATUS_AVAILABLE; the kernel sets it back after
// the frame's skb is freed (tpacket_destruct_skb), or marks it
// TP_STATUS_WRONG_FORMAT if it refused the frame (we reuse it, counted).
XmitResult PacketRing::send_frame(std::span<const uint8_t> head, std::span<const uint8_t> rest) {
  if (head.size() + rest.size() > max_frame_) return ++st_.tx_oversize, XmitResult::kSent;  // lost, as on a wire
  if (tx_mode_ == TxMode::kRing) return ring_send(head, rest);
  if (!gso_) return copy_.put(head, rest, st_);
  return rest.empty() ? gso_->push(head) : gso_->push(head, rest);
}

void PacketRing::GsoOut::close(const VnetHdr& h, size_t len) {
  ring.copy_.close(h, len, ring.st_);
  if (h.gso_type != 0) ++ring.st_.tx_gso, ring.st_.tx_gso_segs += gso_segments(h, len);
}

void PacketRing::flush() {
  if (tx_mode_ == TxMode::kRing) return ring_flush();
  if (gso_) gso_->flush();
  copy_.flush(tx_fd_, st_);
  tx_retry_ = copy_.pending() != 0;
}

XmitResult PacketRing::ring_send(std::span<const uint8_t> head, std::span<const uint8_t> rest) {
  const size_t len = head.size() + rest.size();
  uint8_t* slot = tx_slot(tx_head_);
  auto* h = reinterpret_cast<tpacket3_hdr*>(slot);
  const uint32_t status = load(h->tp_status);
  if (status & TP_STATUS_WRONG_FORMAT) ++st_.tx_wrong_format;
  else if (status != TP_STATUS_AVAILABLE) return ++st_.tx_ring_full, XmitResult::kDropped;
  wire::put_bytes(wire::put_bytes(slot + tx_data_offset(), head), rest);
  h->tp_len = static_cast<uint32_t>(len);
  h->tp_snaplen = h->tp_len;
  h->tp_next_offset = 0;  // tpacket_parse_header refuses variable-size slots
  store(h->tp_status, TP_STATUS_SEND_REQUEST);
  tx_head_ = (tx_head_ + 1) % tx_.frame_count;
  tx_pending_ += len;
  ++st_.tx_frames;
  st_.tx_bytes += len;
  return XmitResult::kSent;
}

// tpacket_snd sends every TP_STATUS_SEND_REQUEST slot from its own cursor
// on; with MSG_DONTWAIT it returns when it finds none or the send buffer is
// full (then the rest stay requested: tx_backlog(), sent at the next flush).
void PacketRing::ring_flush() {
  if (tx_pending_ == 0) return;
  ++st_.tx_sends;
  const ssize_t r = ::sendto(tx_fd_, nullptr, 0, MSG_DONTWAIT, nullptr, 0);
  // The return value is the bytes of the frames sent: fewer than were
  // requested (or an error: EAGAIN, ENOBUFS, the device down) leaves the
  // rest requested, and the next flush asks again.
  const size_t sent = r < 0 ? 0 : static_cast<size_t>(r);
  tx_pending_ -= sent < tx_pending_ ? sent : tx_pending_;
  tx_retry_ = tx_pending_ != 0;
  st_.tx_send_errors += tx_retry_;
}

void PacketRing::read_kernel_stats() {
  // TPACKET_V2's struct tpacket_stats is tpacket_stats_v3's first two
  // fields (packet_getsockopt copies the version's struct, cut to len).
  tpacket_stats_v3 s{};
  socklen_t len = sizeof s;
  if (::getsockopt(rx_fd_, SOL_PACKET, PACKET_STATISTICS, &s, &len) < 0) return;
  st_.rx_kernel_drops += s.tp_drops;
  st_.rx_freeze += s.tp_freeze_q_cnt;
}

std::string PacketRing::describe() const {
  const auto& s = st_;
  // V2: the ring's size (every frame has its own slot); V3: blocks walked;
  // copy: the socket queue's bound.
  std::string rx = "TPACKET_V2", unit = fmt::format("through {} slots", rx_.frame_count);
  if (kind_ == RxRing::kV3) rx = "TPACKET_V3", unit = fmt::format("in {} blocks", s.rx_blocks);
  if (kind_ == RxRing::kCopy) rx = "copying", unit = fmt::format("by recvmmsg from a queue of {} frames", rx_.frame_count);
  return fmt::format(
      "{}: AF_PACKET {} rx {} frames {} bytes {} ({} wake-ups; {} checksums partial or verified), "
      "{} own skipped, {} oversize, {} vlan, {} malformed, {} dropped by the kernel ({} losing, {} freezes); "
      "{} tx {} frames {} bytes in {} {} ({} failed or partial), {} refused (ring full), {} oversize, "
      "{} wrong format, {} refused by the kernel{}\n",
      name_, rx, s.rx_frames, s.rx_bytes, unit, s.rx_wakeups, s.rx_csum_ok,
      s.rx_outgoing, s.rx_oversize, s.rx_vlan, s.rx_malformed, s.rx_kernel_drops, s.rx_losing, s.rx_freeze,
      tx_mode_ == TxMode::kRing ? "TPACKET_V3" : "copying", s.tx_frames, s.tx_bytes, s.tx_sends,
      tx_mode_ == TxMode::kRing ? "sendto" : "sendmmsg", s.tx_send_errors, s.tx_ring_full, s.tx_oversize,
      s.tx_wrong_format, s.tx_send_dropped,
      gso_ ? fmt::format("; {} super-packets holding {} frames (GSO)", s.tx_gso, s.tx_gso_segs) : "");
}

}  // namespace weir::link
