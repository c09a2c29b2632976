// libFuzzer target for the Ethernet layer: the ARP and NS/NA parsers on raw
// bytes (an accepted NS/NA must survive emit and parse unchanged), then an
// EtherLink driven by the input as a sequence of operations, with its bounds
// checked after each. Corpus: corpus/ether/.
//
// Operation stream: one byte picks the operation (low two bits):
//   0 frame:     a 16-bit big-endian length, then that many bytes to input()
//   1 transmit:  a 16-bit length, then that many bytes to try_transmit()
//   2 advance:   one byte, time moves on by that many times 50 ms
//   3 peer:      one byte selecting a well-formed ARP reply or NA from the
//                peer for the address of an entry being resolved
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "link/arp.h"
#include "link/ether_link.h"
#include "link/ndisc.h"
#include "wire/packet.h"

namespace weir::link {
namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

struct CheckingSink : FrameSink {
  uint32_t mtu = 0;
  XmitResult send_frame(std::span<const uint8_t> head, std::span<const uint8_t> rest) override {
    const size_t len = head.size() + rest.size();
    check(len >= kEtherHeaderLen && len <= mtu + kEtherHeaderLen);
    return XmitResult::kSent;
  }
};

void check_codecs(std::span<const uint8_t> data) {
  (void)parse_arp(data);
  auto nd = parse_nd(data);
  if (!nd) return;
  uint8_t buf[kNdPacketLen];
  const size_t len = emit_nd(*nd, buf);
  auto again = parse_nd(std::span<const uint8_t>(buf, len));
  check(again.has_value());
  check(again->target == nd->target && again->src == nd->src && again->dst == nd->dst);
  check(again->lladdr == nd->lladdr && again->solicited == nd->solicited);
}

EtherLinkConfig config() {
  EtherLinkConfig c;
  c.mac = MacAddr{{2, 0, 0, 0, 0, 1}};
  c.mtu = 1280;
  c.addrs = {{IpAddr::v4(10, 0, 0, 1), 24}, {*IpAddr::parse("2001:db8::1"), 64}};
  c.gateway4 = IpAddr::v4(10, 0, 0, 254);
  c.gateway6 = *IpAddr::parse("2001:db8::fe");
  c.neigh.gc_thresh3 = 8;           // small, so eviction and refusal are reached
  c.neigh.unres_qlen_bytes = 8192;  // likewise the queue bound
  return c;
}

// An ARP reply (v4) or a solicited NA (v6) from 02:..:02 claiming `ip`.
std::vector<uint8_t> peer_answer(const IpAddr& ip) {
  const MacAddr us{{2, 0, 0, 0, 0, 1}}, peer{{2, 0, 0, 0, 0, 2}};
  std::vector<uint8_t> f(kEtherHeaderLen + kNdPacketLen);
  if (ip.is_v4()) {
    write_ether_header(f.data(), {us, peer, kEthPArp});
    emit_arp({.op = kArpOpReply, .sha = peer, .spa = ip.v4_host_order(), .tha = us,
              .tpa = IpAddr::v4(10, 0, 0, 1).v4_host_order()},
             f.data() + kEtherHeaderLen);
    f.resize(kEtherHeaderLen + kArpLen);
    return f;
  }
  NdMessage na;
  na.type = kIcmp6NeighAdvert;
  na.src = na.target = ip;
  na.dst = *IpAddr::parse("2001:db8::1");
  na.solicited = na.override_flag = true;
  na.lladdr = peer;
  write_ether_header(f.data(), {us, peer, kEthPIpv6});
  f.resize(kEtherHeaderLen + emit_nd(na, f.data() + kEtherHeaderLen));
  return f;
}

void run_link(std::span<const uint8_t> data) {
  CheckingSink sink;
  const EtherLinkConfig cfg = config();
  sink.mtu = cfg.mtu;
  EtherLink link(cfg, sink);
  Time now = Time::zero();
  std::vector<IpAddr> asked;  // next hops the link has been asked to reach
  size_t i = 0;
  auto take = [&](size_t n) {
    n = std::min(n, data.size() - i);
    auto s = data.subspan(i, n);
    i += n;
    return s;
  };
  while (i < data.size()) {
    const uint8_t op = data[i++] & 3;
    if (op == 0 || op == 1) {
      const auto h = take(2);
      const size_t len = h.size() == 2 ? (size_t{h[0]} << 8 | h[1]) : 0;
      const auto bytes = take(len);
      if (op == 0) {
        const auto ip = link.input(now, bytes);
        check(ip.empty() || (ip.data() >= bytes.data() && ip.data() + ip.size() <= bytes.data() + bytes.size()));
      } else {
        (void)link.try_transmit(bytes);
        if (bytes.size() >= 40 && (bytes[0] >> 4) == 6) {
          std::array<uint8_t, 16> d;
          std::copy(bytes.begin() + 24, bytes.begin() + 40, d.begin());
          asked.push_back(IpAddr::v6(d));
        } else if (bytes.size() >= 20 && (bytes[0] >> 4) == 4) {
          asked.push_back(IpAddr::v4((uint32_t{bytes[16]} << 24) | (uint32_t{bytes[17]} << 16) |
                                     (uint32_t{bytes[18]} << 8) | bytes[19]));
        }
      }
    } else if (op == 2) {
      const auto t = take(1);
      now += Duration::ms(50) * (t.empty() ? 1 : t[0]);
      link.advance(now);
      check(link.next_deadline() > now);  // every expired timer ran and re-armed later
      // Errors for failed resolutions: bounded, and each a well-formed ICMP
      // or ICMPv6 datagram (the stack's parser takes it, or it quotes no TCP).
      const auto local = link.take_local();
      check(local.size() <= EtherLink::kMaxLocal);
      for (const auto& d : local) {
        check(d.size() >= 28 && d.size() <= 1280);
        const auto e = wire::parse_icmp_error(d);
        check(e || e.error() != wire::PacketError::kIpBadChecksum);
      }
    } else {
      const auto t = take(1);
      if (!asked.empty()) {
        const auto f = peer_answer(asked[(t.empty() ? 0 : t[0]) % asked.size()]);
        (void)link.input(now, f);
      }
    }
    // Bounds: both tables at gc_thresh3, every queue within its bytes.
    check(link.neighbor_count() <= 2 * cfg.neigh.gc_thresh3);
    for (const IpAddr& a : asked) {
      if (const Neighbor* n = link.neighbor(a)) check(n->queue_bytes <= cfg.neigh.unres_qlen_bytes);
    }
  }
  (void)link.describe();
}

}  // namespace
}  // namespace weir::link

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weir::link::check_codecs({data, size});
  weir::link::run_link({data, size});
  return 0;
}
