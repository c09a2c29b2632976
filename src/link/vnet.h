// The virtio-net header (struct virtio_net_hdr) that TUN (IFF_VNET_HDR) and
// AF_PACKET (PACKET_VNET_HDR) put in front of a packet to say its checksum
// is partial or that it is a TCP super-packet for the kernel to segment,
// and GsoCoalescer, which merges the engine's consecutive segments of one
// flow into such super-packets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace weir::link {

// The header's fields (little-endian on x86, the legacy layout: 10 bytes).
struct VnetHdr {
  uint8_t flags = 0;     // VIRTIO_NET_HDR_F_NEEDS_CSUM = 1, F_DATA_VALID = 2
  uint8_t gso_type = 0;  // NONE = 0, TCPV4 = 1, TCPV6 = 4
  uint16_t hdr_len = 0;  // link + IP + TCP header bytes
  uint16_t gso_size = 0;  // payload bytes per segment
  uint16_t csum_start = 0;  // checksum the bytes from here to the end...
  uint16_t csum_offset = 0;  // ...and store it this far past csum_start
};
inline constexpr size_t kVnetLen = 10;

VnetHdr decode_vnet(const uint8_t* b);
void encode_vnet(const VnetHdr& h, uint8_t* b);

// Completes a partial checksum the way a NIC would: sums from csum_start to
// the end (the field already holds the pseudo-header sum) and stores it.
// False if the offsets do not fit the packet.
bool complete_checksum(std::span<uint8_t> pkt, const VnetHdr& h);

// How many segments the kernel's GSO cuts a `len`-byte packet with header
// `h` into (1 for a plain packet).
size_t gso_segments(const VnetHdr& h, size_t len);

// Merges consecutive TCP segments of one flow into super-packets. Pure (no
// fd): `push` each engine packet in order, `flush` at the end of a burst;
// `out` gets every packet to write with its vnet header, in order. `l2` is
// the bytes in front of the IP header (0 on TUN, 14 for an Ethernet frame),
// which must be equal for two segments to merge.
class GsoCoalescer {
 public:
  using Sink = void (*)(void* ctx, const VnetHdr& h, std::span<const uint8_t> pkt);
  // `max`: the longest IP datagram to build (at most kMax).
  GsoCoalescer(Sink out, void* ctx, size_t l2 = 0, size_t max = kMax)
      : out_(out), ctx_(ctx), l2_(l2), max_(max < kMax ? max : kMax) {
    buf_.reserve(l2 + max_);
  }
  void push(std::span<const uint8_t> pkt);
  void flush();
  static constexpr size_t kMax = 65535;  // IPv4 total length / IPv6 payload length limit

 private:
  bool mergeable(std::span<const uint8_t> pkt) const;
  Sink out_;
  void* ctx_;
  size_t l2_;
  size_t max_;
  std::vector<uint8_t> buf_;  // the pending packet: first segment's headers, all payloads
  size_t hdr_len_ = 0;        // IP + TCP header bytes of the pending packet
  size_t seg_size_ = 0;       // payload bytes of its first segment (gso_size)
  size_t segs_ = 0;
  bool short_tail_ = false;   // a segment shorter than gso_size ended it
  uint32_t next_seq_ = 0;     // SEQ the next mergeable segment must carry
};

}  // namespace weir::link
