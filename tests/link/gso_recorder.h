// A GsoCoalescer::Output for tests: lends a buffer for each run and keeps
// every packet handed over (runs and passed packets alike) with its vnet
// header, in order; `room` false plays a device with no room for a run.
// And tcp_segment: a TCP segment whose payload bytes follow its SEQ, so a
// merged run shows where each piece came from.
#pragma once

#include <vector>

#include "link/vnet.h"
#include "wire/packet.h"

namespace weir::link::test {

struct Written {
  VnetHdr h;
  std::vector<uint8_t> pkt;  // link header (if any) and IP datagram
};

struct GsoRecorder final : GsoCoalescer::Output {
  std::vector<Written> out;
  bool room = true;
  std::vector<uint8_t> buf;
  uint8_t* open(size_t max) override {
    if (!room) return nullptr;
    buf.assign(max, 0);
    return buf.data();
  }
  void close(const VnetHdr& h, size_t len) override { out.push_back({h, {buf.begin(), buf.begin() + len}}); }
  XmitResult pass(std::span<const uint8_t> l2, std::span<const uint8_t> pkt) override {
    Written w;
    w.pkt.assign(l2.begin(), l2.end());
    w.pkt.insert(w.pkt.end(), pkt.begin(), pkt.end());
    out.push_back(std::move(w));
    return XmitResult::kSent;
  }
};

inline std::vector<uint8_t> tcp_segment(const IpAddr& src, const IpAddr& dst, uint16_t sport, uint16_t dport,
                                        uint32_t seq, size_t len, uint8_t flags) {
  wire::IpInfo ip;
  ip.version = src.is_v4() ? 4 : 6;
  ip.src = src;
  ip.dst = dst;
  wire::TcpHeader h;
  h.src_port = sport;
  h.dst_port = dport;
  h.seq = Seq32(seq);
  h.ack = Seq32(5000);
  h.flags = flags;
  h.window = 1000;
  std::vector<uint8_t> payload(len);
  for (size_t i = 0; i < len; ++i) payload[i] = static_cast<uint8_t>(seq + i);
  return wire::build_tcp_packet(ip, h, payload);
}

}  // namespace weir::link::test
