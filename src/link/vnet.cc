#include "link/vnet.h"

#include <algorithm>
#include <cstring>

#include "wire/bytes.h"
#include "wire/checksum.h"

namespace weir::link {

namespace {

constexpr uint8_t kAck = 0x10, kPsh = 0x08;

uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t get32(const uint8_t* p) { return uint32_t{get16(p)} << 16 | get16(p + 2); }
void put16(uint8_t* p, uint16_t v) { p[0] = static_cast<uint8_t>(v >> 8), p[1] = static_cast<uint8_t>(v); }
uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
void put_le16(uint8_t* p, uint16_t v) { p[0] = static_cast<uint8_t>(v), p[1] = static_cast<uint8_t>(v >> 8); }

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

// The IP datagram cut to the length its header states: an Ethernet frame
// shorter than 60 bytes carries padding (IEEE 802.3 minimum), which is not
// payload. Empty if the header claims more than there is.
std::span<const uint8_t> ip_datagram(std::span<const uint8_t> p) {
  if (p.size() < 40) return {};
  size_t len = p.size();
  if ((p[0] >> 4) == 4) len = get16(p.data() + 2);
  else if ((p[0] >> 4) == 6) len = 40 + size_t{get16(p.data() + 4)};
  return len <= p.size() ? p.first(len) : std::span<const uint8_t>{};
}

}  // namespace

VnetHdr decode_vnet(const uint8_t* b) {
  return VnetHdr{b[0], b[1], le16(b + 2), le16(b + 4), le16(b + 6), le16(b + 8)};
}

void encode_vnet(const VnetHdr& h, uint8_t* b) {
  b[0] = h.flags, b[1] = h.gso_type;
  put_le16(b + 2, h.hdr_len), put_le16(b + 4, h.gso_size), put_le16(b + 6, h.csum_start), put_le16(b + 8, h.csum_offset);
}

// A segment joins the pending super-packet when the kernel's GSO would
// recreate it exactly from the super-packet: the next SEQ, the same size
// (a shorter one ends the run), and every other header byte equal (link
// header, ACK, window, options including TSval, TOS/hop limit). The
// kernel's segmentation (tcp_gso_segment) copies the header to each piece,
// advances SEQ, and keeps PSH only on the last piece, so only the run's
// last segment may carry PSH.
bool GsoCoalescer::mergeable(std::span<const uint8_t> l2, std::span<const uint8_t> p) const {
  if (segs_ == 0 || short_tail_ || p.size() <= hdr_len_) return false;
  if (l2.size() != l2_ || !std::equal(l2.begin(), l2.end(), buf_)) return false;  // a TUN's l2 is empty
  const TcpLayout l = tcp_layout(p);
  if (l.hdr != hdr_len_ || (p[l.ip + 13] & ~kPsh) != kAck) return false;
  const size_t len = p.size() - l.hdr;
  if (len > seg_size_ || len_ - l2_ + len > max_ || get32(p.data() + l.ip + 4) != next_seq_) return false;
  const uint8_t* a = buf_ + l2_;
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

XmitResult GsoCoalescer::push(std::span<const uint8_t> l2, std::span<const uint8_t> pkt) {
  const std::span<const uint8_t> p = ip_datagram(pkt);
  if (mergeable(l2, p)) {
    const size_t ip = p[0] == 0x45 ? 20 : 40;
    const size_t len = p.size() - hdr_len_;
    std::memcpy(buf_ + len_, p.data() + hdr_len_, len);
    len_ += len;
    ++segs_;
    next_seq_ += static_cast<uint32_t>(len);
    if (p[ip + 13] & kPsh) buf_[l2_ + ip + 13] |= kPsh, short_tail_ = true;
    if (len < seg_size_) short_tail_ = true;
    return XmitResult::kSent;
  }
  flush();
  const TcpLayout l = tcp_layout(p);
  if (l2.size() != l2_ || l.hdr == 0 || p.size() == l.hdr || (p[l.ip + 13] & ~kPsh) != kAck || p.size() > max_)
    return out_.pass(l2, pkt);  // not a candidate (control segment, pure ACK, not TCP)
  buf_ = out_.open(l2_ + max_);
  if (!buf_) return out_.pass(l2, pkt);  // no room for a run: alone, if at all
  wire::put_bytes(wire::put_bytes(buf_, l2), p);
  len_ = l2_ + p.size();
  hdr_len_ = l.hdr;
  seg_size_ = p.size() - l.hdr;
  segs_ = 1;
  short_tail_ = (p[l.ip + 13] & kPsh) != 0;
  next_seq_ = get32(p.data() + l.ip + 4) + static_cast<uint32_t>(seg_size_);
  return XmitResult::kSent;
}

// Hands over the pending run: as it came if it is one segment; else with
// the lengths fixed, the TCP checksum left partial (the pseudo-header sum
// in the field, NEEDS_CSUM) and gso_size = the first segment's payload.
void GsoCoalescer::flush() {
  if (segs_ == 0) return;
  VnetHdr h;
  if (segs_ > 1) {
    uint8_t* b = buf_ + l2_;
    const size_t ip = b[0] == 0x45 ? 20 : 40;
    const size_t ip_len = len_ - l2_;
    const auto tcp_len = static_cast<uint32_t>(ip_len - ip);
    uint32_t sum;
    if (ip == 20) {
      put16(b + 2, static_cast<uint16_t>(ip_len));
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
    h.flags = 1;  // VIRTIO_NET_HDR_F_NEEDS_CSUM
    h.gso_type = ip == 20 ? 1 : 4;  // VIRTIO_NET_HDR_GSO_TCPV4 / TCPV6
    h.hdr_len = static_cast<uint16_t>(l2_ + hdr_len_);
    h.gso_size = static_cast<uint16_t>(seg_size_);
    h.csum_start = static_cast<uint16_t>(l2_ + ip);
    h.csum_offset = 16;
  }
  segs_ = 0;
  short_tail_ = false;
  buf_ = nullptr;
  out_.close(h, len_);
}

bool complete_checksum(std::span<uint8_t> pkt, const VnetHdr& h) {
  const size_t at = size_t{h.csum_start} + h.csum_offset;
  if (h.csum_start >= pkt.size() || at + 2 > pkt.size()) return false;
  put16(pkt.data() + at, wire::csum_fold(wire::csum_partial(pkt.subspan(h.csum_start))));
  return true;
}

size_t gso_segments(const VnetHdr& h, size_t len) {
  return h.gso_type == 0 || h.gso_size == 0 ? 1 : (len - h.hdr_len + h.gso_size - 1) / h.gso_size;
}

}  // namespace weir::link
