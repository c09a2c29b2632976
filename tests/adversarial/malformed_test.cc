// Malformed packets of every kind against an established connection: each
// is dropped, counted under its reason (the wire parser's PacketError and
// the MIB counter nstat shows), draws no reply and changes no connection
// state (tcp_info before == after).
#include <gtest/gtest.h>

#include <functional>

#include "adversarial/adv_helper.h"
#include "tcp/harness_helper.h"
#include "wire/bytes.h"
#include "wire/checksum.h"
#include "wire/packet.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;
using Bytes = std::vector<uint8_t>;

constexpr size_t kIp = 20;  // IPv4 header without options

void fix_ip_csum(Bytes& b) {
  b[10] = b[11] = 0;
  wire::store_be16(b.data() + 10, wire::csum_fold(wire::csum_partial({b.data(), kIp})));
}

// The TCP checksum over the addresses the datagram carries.
void fix_tcp_csum(Bytes& b, const Harness&) {
  const size_t len = b.size() - kIp;
  b[kIp + 16] = b[kIp + 17] = 0;
  const IpAddr src = IpAddr::v4(b[12], b[13], b[14], b[15]), dst = IpAddr::v4(b[16], b[17], b[18], b[19]);
  const uint32_t sum = wire::pseudo_header_sum(src, dst, 6, static_cast<uint32_t>(len));
  wire::store_be16(b.data() + kIp + 16, wire::csum_fold(wire::csum_partial({b.data() + kIp, len}, sum)));
}

// A valid in-window data segment with 12 bytes of options (timestamps).
Bytes valid_segment(Harness& h) {
  wire::TcpHeader t;
  t.src_port = h.remote_port;
  t.dst_port = h.local_port;
  t.seq = h.peer_isn_ + 1;
  t.ack = h.iss_ + 1;
  t.flags = ACK | PSH;
  t.window = 65535;
  t.options.ts = wire::TcpTimestamps{h.peer_tsval + static_cast<uint32_t>(h.now().ms()), h.last_tsval};
  wire::IpInfo ip;
  ip.src = h.remote;
  ip.dst = h.local;
  ip.version = 4;
  Bytes payload(10, 0x61);
  return wire::build_tcp_packet(ip, t, payload);
}

struct Case {
  const char* name;
  std::function<void(Bytes&, const Harness&)> mangle;
  Counter counter;
  std::optional<wire::PacketError> parse_error;  // what the parser must say
};

void set_options(Bytes& b, std::initializer_list<uint8_t> opt) {
  size_t i = kIp + 20;
  for (uint8_t x : opt) b[i++] = x;
}

std::vector<Case> cases() {
  using E = wire::PacketError;
  return {
      {"bad TCP checksum", [](Bytes& b, const Harness&) { b[kIp + 16] ^= 0x5a; }, Counter::TcpInCsumErrors,
       E::kTcpBadChecksum},
      {"bad IP checksum", [](Bytes& b, const Harness&) { b[10] ^= 0x01; }, Counter::IpInHdrErrors,
       E::kIpBadChecksum},
      {"bad IP version", [](Bytes& b, const Harness&) { b[0] = 0x35; fix_ip_csum(b); }, Counter::IpInHdrErrors,
       E::kIpBadVersion},
      {"IP header length below 5", [](Bytes& b, const Harness&) { b[0] = 0x44; fix_ip_csum(b); },
       Counter::IpInHdrErrors, E::kIpBadHeaderLength},
      {"IP total length past the datagram",
       [](Bytes& b, const Harness&) { wire::store_be16(b.data() + 2, static_cast<uint16_t>(b.size() + 100)); fix_ip_csum(b); },
       Counter::IpInHdrErrors, E::kIpTruncated},
      {"IP total length inside the TCP header",
       [](Bytes& b, const Harness&) { wire::store_be16(b.data() + 2, kIp + 10); fix_ip_csum(b); },
       Counter::TcpInErrs, E::kTcpTruncated},
      {"IP fragment", [](Bytes& b, const Harness&) { b[6] = 0x20; fix_ip_csum(b); }, Counter::IpInDiscards,
       E::kIpFragment},
      {"not for this host",
       [](Bytes& b, const Harness& h) { b[19] ^= 0x10; fix_ip_csum(b); fix_tcp_csum(b, h); },
       Counter::IpInAddrErrors, std::nullopt},
      {"data offset below 5", [](Bytes& b, const Harness& h) { b[kIp + 12] = 0x40; fix_tcp_csum(b, h); },
       Counter::TcpInErrs, E::kTcpBadDataOffset},
      {"data offset past the segment", [](Bytes& b, const Harness& h) { b[kIp + 12] = 0xf0; fix_tcp_csum(b, h); },
       Counter::TcpInErrs, E::kTcpTruncated},
      {"option runs past the header",
       [](Bytes& b, const Harness& h) { set_options(b, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 8, 10}); fix_tcp_csum(b, h); },
       Counter::TcpInErrs, E::kTcpBadOption},
      {"option length 0",
       [](Bytes& b, const Harness& h) { set_options(b, {1, 1, 30, 0, 1, 1, 1, 1, 1, 1, 1, 1}); fix_tcp_csum(b, h); },
       Counter::TcpInErrs, E::kTcpBadOption},
      {"option length 1",
       [](Bytes& b, const Harness& h) { set_options(b, {5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}); fix_tcp_csum(b, h); },
       Counter::TcpInErrs, E::kTcpBadOption},
      {"truncated TCP header",
       [](Bytes& b, const Harness&) { b.resize(kIp + 12); wire::store_be16(b.data() + 2, kIp + 12); fix_ip_csum(b); },
       Counter::TcpInErrs, E::kTcpTruncated},
  };
}

TEST(Malformed, EachKindIsCountedByReasonAndChangesNothing) {
  for (const Case& k : cases()) {
    Harness h;
    const SocketId s = h.passive_open();
    h.clear_tx();
    const ConnSnapshot before = snapshot(h.stack(), s);
    const uint64_t c0 = counter(h.stack(), k.counter);
    const uint64_t in0 = counter(h.stack(), Counter::TcpInSegs);
    Bytes b = valid_segment(h);
    ASSERT_TRUE(wire::parse_tcp_packet(b).has_value()) << "the unmangled segment is valid";
    k.mangle(b, h);
    auto p = wire::parse_tcp_packet(b);
    if (k.parse_error) {
      ASSERT_FALSE(p.has_value()) << k.name;
      EXPECT_EQ(p.error(), *k.parse_error) << k.name << ": " << wire::to_string(p.error());
    }
    for (int i = 0; i < 3; ++i) h.inject_bytes(b);
    EXPECT_EQ(counter(h.stack(), k.counter) - c0, 3u) << k.name << " counted under " << counter_name(k.counter);
    EXPECT_EQ(counter(h.stack(), Counter::TcpInSegs), in0) << k.name << " never reaches TCP";
    EXPECT_EQ(h.pending(), 0u) << k.name << " draws no reply";
    EXPECT_EQ(snapshot(h.stack(), s), before) << k.name << ": " << describe(snapshot(h.stack(), s));
    std::vector<uint8_t> got;
    drain(h.stack(), h.now(), s, got);
    EXPECT_TRUE(got.empty()) << k.name << " delivered data";
  }
  measured("malformed.kinds", static_cast<double>(cases().size()));
}

// Well-formed but illegal flag combinations reach TCP and are refused there
// without a state change: SYN+FIN in the window draws a challenge ACK (RFC
// 5961 §4.2); a segment without ACK is dropped (RFC 9293 §3.10.7.4).
TEST(Malformed, IllegalFlagCombinationsChangeNothing) {
  struct Flags {
    const char* name;
    uint8_t flags;
    size_t max_replies;
  };
  for (const Flags& f : {Flags{"SYN+FIN", SYN | FIN, 1}, Flags{"SYN+FIN+PSH+URG", SYN | FIN | PSH | URG, 1},
                         Flags{"no flags", 0, 0}, Flags{"FIN without ACK", FIN, 0}}) {
    Harness h;
    const SocketId s = h.passive_open();
    h.clear_tx();
    const ConnSnapshot before = snapshot(h.stack(), s);
    h.inject(f.flags, 1, 1, 10);
    EXPECT_LE(h.pending(), f.max_replies) << f.name;
    while (h.pending()) {
      Tx t = h.expect_tx();
      EXPECT_TRUE(t.has(ACK) && !t.has(RST) && t.payload.empty()) << f.name << ": only a challenge ACK";
    }
    EXPECT_EQ(snapshot(h.stack(), s), before) << f.name << ": " << describe(snapshot(h.stack(), s));
  }
}

// Linux tcp_rcv_state_process (LISTEN): SYN+FIN is dropped (TCP_FLAGS), no
// SYN-ACK and no child.
TEST(Malformed, SynFinToAListenerIsDropped) {
  Harness h;
  h.listener = *h.stack().socket();
  ASSERT_EQ(h.stack().bind(h.listener, Endpoint{h.local, h.local_port}), Errc::kOk);
  ASSERT_EQ(h.stack().listen(h.now(), h.listener, 16), Errc::kOk);
  wire::TcpHeader t;
  t.src_port = h.remote_port;
  t.dst_port = h.local_port;
  t.seq = h.peer_isn_;
  t.flags = SYN | FIN;
  t.window = 65535;
  t.options.mss = 1460;
  h.inject_raw(t);
  EXPECT_EQ(h.pending(), 0u) << "no SYN-ACK to SYN+FIN";
  EXPECT_FALSE(h.stack().accept(h.now(), h.listener).has_value());
}

}  // namespace
}  // namespace weir::test
