// The virtio-net header (struct virtio_net_hdr) that TUN (IFF_VNET_HDR) and
// AF_PACKET (PACKET_VNET_HDR) put in front of a packet to say its checksum
// is partial or that it is a TCP super-packet for the kernel to segment,
// and GsoCoalescer, which merges the engine's consecutive segments of one
// flow into such super-packets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "weir/netif.h"

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
// fd): `push` each engine packet in order, `flush` at the end of a burst.
// A run is built in place, in room its Output lends (the device's own
// buffer, so the payload is copied once on its way), and handed back with
// its vnet header when it ends; a packet that cannot start a run goes out
// as it came. `l2` is the bytes in front of the IP header (0 on TUN, 14
// for an Ethernet frame), which must be equal for two segments to merge.
class GsoCoalescer {
 public:
  class Output {
   public:
    // Room for a run of up to `max` bytes (link header and IP datagram),
    // or nullptr if there is none now.
    virtual uint8_t* open(size_t max) = 0;
    // The run in the room open() lent is `len` bytes, to go with `h`.
    virtual void close(const VnetHdr& h, size_t len) = 0;
    // A packet that starts no run, as it came: its link header and datagram.
    virtual XmitResult pass(std::span<const uint8_t> l2, std::span<const uint8_t> pkt) = 0;

   protected:
    ~Output() = default;
  };

  // `max`: the longest IP datagram to build (at most kMax).
  GsoCoalescer(Output& out, size_t l2 = 0, size_t max = kMax) : out_(out), l2_(l2), max_(max < kMax ? max : kMax) {}
  // The next packet: `l2` its link header (l2 bytes), `pkt` its IP
  // datagram. kDropped only when it could not be queued at all; a segment
  // held for a run is kSent (if the run is lost later, TCP recovers it).
  XmitResult push(std::span<const uint8_t> l2, std::span<const uint8_t> pkt);
  XmitResult push(std::span<const uint8_t> frame) { return push(frame.first(l2_), frame.subspan(l2_)); }
  void flush();
  static constexpr size_t kMax = 65535;  // IPv4 total length / IPv6 payload length limit

 private:
  bool mergeable(std::span<const uint8_t> l2, std::span<const uint8_t> pkt) const;
  Output& out_;
  size_t l2_;
  size_t max_;
  uint8_t* buf_ = nullptr;  // the run being built (in the Output's room)
  size_t len_ = 0;          // its bytes: link header, first segment's headers, all payloads
  size_t hdr_len_ = 0;      // IP + TCP header bytes of the run
  size_t seg_size_ = 0;     // payload bytes of its first segment (gso_size)
  size_t segs_ = 0;
  bool short_tail_ = false;  // a segment shorter than gso_size ended it
  uint32_t next_seq_ = 0;    // SEQ the next mergeable segment must carry
};

}  // namespace weir::link
