// Test rig for EtherLink: a FrameSink that records frames, builders for
// minimal IP packets, and two links joined by hand-delivered frames.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "link/ether_link.h"
#include "link/ndisc.h"
#include "wire/bytes.h"

namespace weir::link::test {

inline Time at_ms(int64_t ms) { return Time::from_ns(ms * 1000000); }

struct RecordingSink : FrameSink {
  std::vector<std::vector<uint8_t>> frames;
  bool refuse = false;
  using FrameSink::send_frame;
  XmitResult send_frame(std::span<const uint8_t> head, std::span<const uint8_t> rest) override {
    if (refuse) return XmitResult::kDropped;
    frames.emplace_back(head.begin(), head.end());
    frames.back().insert(frames.back().end(), rest.begin(), rest.end());
    return XmitResult::kSent;
  }
  std::vector<std::vector<uint8_t>> take() {
    auto out = std::move(frames);
    frames.clear();
    return out;
  }
};

inline MacAddr mac(uint8_t last) { return MacAddr{{0x02, 0, 0, 0, 0, last}}; }
inline IpAddr ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) { return IpAddr::v4(a, b, c, d); }
inline IpAddr ip6(const char* text) { return *IpAddr::parse(text); }

// A minimal IPv4 packet: header fields that EtherLink reads (version,
// total length, addresses) and `len - 20` payload bytes all equal to `tag`.
inline std::vector<uint8_t> ipv4_packet(const IpAddr& src, const IpAddr& dst, uint8_t tag,
                                        size_t len = 40) {
  std::vector<uint8_t> p(len, tag);
  p[0] = 0x45;
  p[1] = 0;
  wire::store_be16(p.data() + 2, static_cast<uint16_t>(len));
  p[8] = 64;
  p[9] = 6;
  wire::store_be32(p.data() + 12, src.v4_host_order());
  wire::store_be32(p.data() + 16, dst.v4_host_order());
  return p;
}

inline std::vector<uint8_t> ipv6_packet(const IpAddr& src, const IpAddr& dst, uint8_t tag,
                                        size_t len = 60) {
  std::vector<uint8_t> p(len, tag);
  p[0] = 0x60;
  p[1] = p[2] = p[3] = 0;
  wire::store_be16(p.data() + 4, static_cast<uint16_t>(len - 40));
  p[6] = 6;  // TCP
  p[7] = 64;
  std::copy(src.bytes().begin(), src.bytes().end(), p.begin() + 8);
  std::copy(dst.bytes().begin(), dst.bytes().end(), p.begin() + 24);
  return p;
}

inline MacAddr frame_dst(const std::vector<uint8_t>& f) {
  MacAddr m;
  std::copy(f.begin(), f.begin() + 6, m.b.begin());
  return m;
}
inline uint16_t frame_type(const std::vector<uint8_t>& f) { return wire::load_be16(f.data() + 12); }
inline std::span<const uint8_t> frame_payload(const std::vector<uint8_t>& f) {
  return std::span<const uint8_t>(f).subspan(kEtherHeaderLen);
}

// A neighbour discovery message and the frame that carries it.
inline NdMessage nd_message(uint8_t type, const IpAddr& src, const IpAddr& dst, const IpAddr& target,
                            std::optional<MacAddr> lladdr = std::nullopt) {
  NdMessage m;
  m.type = type;
  m.src = src;
  m.dst = dst;
  m.target = target;
  m.lladdr = lladdr;
  return m;
}
inline std::vector<uint8_t> nd_frame(const MacAddr& dst, const MacAddr& src, const NdMessage& m) {
  std::vector<uint8_t> f(kEtherHeaderLen + kNdPacketLen);
  write_ether_header(f.data(), {dst, src, kEthPIpv6});
  f.resize(kEtherHeaderLen + emit_nd(m, f.data() + kEtherHeaderLen));
  return f;
}

// Host A (.1, MAC ...:01) and host B (.2, MAC ...:02) on 10.0.0.0/24 and
// 2001:db8::/64, each with its own recording sink.
struct TwoHosts {
  RecordingSink sink_a, sink_b;
  EtherLink a, b;
  std::vector<std::vector<uint8_t>> up_a, up_b;  // IP datagrams handed to each stack

  static EtherLinkConfig config(uint8_t host) {
    EtherLinkConfig c;
    c.mac = mac(host);
    c.addrs = {{ip4(10, 0, 0, host), 24}, {ip6(host == 1 ? "2001:db8::1" : "2001:db8::2"), 64}};
    // Addresses usable at once and no MLD reports: these tests count
    // frames (dad_test.cc and mld_test.cc turn both on).
    c.dad_transmits = 0;
    c.mld = false;
    return c;
  }
  TwoHosts() : TwoHosts(config(1), config(2)) {}
  TwoHosts(EtherLinkConfig ca, EtherLinkConfig cb) : a(std::move(ca), sink_a), b(std::move(cb), sink_b) {}

  // Delivers every frame each side has sent to the other, until quiet.
  // Returns the number of frames delivered.
  size_t exchange(Time now) {
    size_t n = 0;
    for (;;) {
      auto fa = sink_a.take();
      auto fb = sink_b.take();
      if (fa.empty() && fb.empty()) return n;
      for (auto& f : fa) {
        if (auto ip = b.input(now, f); !ip.empty()) up_b.emplace_back(ip.begin(), ip.end());
      }
      for (auto& f : fb) {
        if (auto ip = a.input(now, f); !ip.empty()) up_a.emplace_back(ip.begin(), ip.end());
      }
      n += fa.size() + fb.size();
    }
  }
};

// A resolves B's IPv4 address (10.0.0.2) over ARP at 0 ms: the first
// packet queues, the broadcast request is answered, the entry is
// REACHABLE. Returns the entry's REACHABLE deadline.
inline Time resolve_v4(TwoHosts& h) {
  const IpAddr a = ip4(10, 0, 0, 1), b = ip4(10, 0, 0, 2);
  h.a.advance(at_ms(0));
  h.a.transmit(ipv4_packet(a, b, 1));
  h.exchange(at_ms(0));
  EXPECT_EQ(h.a.neighbor(b)->state, NudState::kReachable);
  return h.a.neighbor(b)->deadline;
}

}  // namespace weir::link::test
