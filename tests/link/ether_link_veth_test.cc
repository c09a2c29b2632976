// EtherLink against Linux's own ARP and neighbour discovery, over a veth
// pair in a network namespace the test creates (the thread unshares; the
// namespace goes with its last reference). weir's side is a PacketRing on
// `pa`; Linux owns `pb` with 10.9.0.2/24 and 2001:db8:9::2/64. Checked
// both ways: weir resolves Linux and gets its echo reply; Linux, its cache
// flushed, resolves weir (our ARP reply / NA in the format Linux takes) and
// its UDP datagram arrives. Needs root; skipped without it. Bounded: every
// wait is a poll of at most 3 s in total.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "driver/netns.h"
#include "link/ether_harness.h"
#include "link/ether_link.h"
#include "link/packet_ring.h"
#include "link/private_netns.h"
#include "wire/checksum.h"

namespace weir::link {
namespace {

using namespace weir::link::test;


std::string run_output(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    ::pclose(p);
  }
  return out;
}

// The thread in a fresh namespace: veth pa (weir's, no IPv6 of its own) and
// pb (Linux's addresses, no link-local and no DAD so it sends nothing unasked).
class EtherVeth {
 public:
  EtherVeth() {
    if (!ns_.entered()) return;
    using driver::run_program;
    ok_ = run_program({"ip", "link", "add", "pa", "type", "veth", "peer", "name", "pb"}) == 0;
    write_sysctl("/proc/sys/net/ipv6/conf/pa/disable_ipv6", "1");
    write_sysctl("/proc/sys/net/ipv6/conf/pb/accept_dad", "0");
    ok_ = ok_ && run_program({"ip", "link", "set", "pb", "addrgenmode", "none"}) == 0 &&
          run_program({"ip", "addr", "add", "10.9.0.2/24", "dev", "pb"}) == 0 &&
          run_program({"ip", "-6", "addr", "add", "2001:db8:9::2/64", "dev", "pb", "nodad"}) == 0 &&
          run_program({"ip", "link", "set", "pa", "up"}) == 0 &&
          run_program({"ip", "link", "set", "pb", "up"}) == 0;
  }
  bool ok() const { return ok_; }

 private:
  PrivateNetns ns_;
  bool ok_ = false;
};

const IpAddr kWeir4 = ip4(10, 9, 0, 1), kLinux4 = ip4(10, 9, 0, 2);
const IpAddr kWeir6 = ip6("2001:db8:9::1"), kLinux6 = ip6("2001:db8:9::2");

std::vector<uint8_t> echo4(const IpAddr& src, const IpAddr& dst) {
  auto p = ipv4_packet(src, dst, 0, 28);
  p[9] = 1;  // ICMP
  wire::store_be16(p.data() + 10, wire::csum_fold(wire::csum_partial(std::span(p).first(20))));
  std::fill(p.begin() + 20, p.end(), 0);
  p[20] = 8;  // echo request
  wire::store_be32(p.data() + 24, 0x12340001);
  wire::store_be16(p.data() + 22, wire::csum_fold(wire::csum_partial(std::span(p).subspan(20))));
  return p;
}

std::vector<uint8_t> echo6(const IpAddr& src, const IpAddr& dst) {
  auto p = ipv6_packet(src, dst, 0, 48);
  p[6] = 58;
  std::fill(p.begin() + 40, p.end(), 0);
  p[40] = 128;  // echo request
  wire::store_be32(p.data() + 44, 0x12340001);
  const uint32_t sum = wire::csum_partial(std::span(p).subspan(40), wire::pseudo_header_sum(src, dst, 58, 8));
  wire::store_be16(p.data() + 42, wire::csum_fold(sum));
  return p;
}

// Drives the ring and the link for up to 3 s (a manual clock moving 10 ms
// per round), handing each IP datagram to `got` until it returns true.
bool pump(PacketRing& ring, EtherLink& link, Time& now,
          const std::function<bool(std::span<const uint8_t>)>& got) {
  bool done = false;
  for (int round = 0; round < 300 && !done; ++round) {
    ring.flush();
    pollfd p{ring.fd(), POLLIN, 0};
    (void)::poll(&p, 1, 10);
    now += Duration::ms(10);
    ring.drain([&](std::span<const uint8_t> f, bool) {
      auto ip = link.input(now, f);
      if (!ip.empty() && !done) done = got(ip);
    });
    link.advance(now);
  }
  ring.flush();
  return done;
}

struct Rig {
  std::unique_ptr<PacketRing> ring;
  std::unique_ptr<EtherLink> link;
  Time now;
  MacAddr linux_mac;
};

bool open_rig(Rig& r) {
  auto ring = PacketRing::open("pa");
  EXPECT_TRUE(ring) << (ring ? "" : ring.error());
  if (!ring) return false;
  r.ring = std::move(*ring);
  EtherLinkConfig c;
  c.mac = mac(1);
  c.mtu = r.ring->mtu();
  c.addrs = {{kWeir4, 24}, {kWeir6, 64}};
  c.dad_transmits = 0;  // the address in use at once, as before DAD existed
  c.mld = false;
  r.link = std::make_unique<EtherLink>(c, *r.ring);
  // From netlink: sysfs still shows the namespace it was mounted in.
  const std::string l = run_output("ip -o link show dev pb");
  const size_t at = l.find("link/ether ");
  auto m = at == std::string::npos ? std::nullopt : MacAddr::parse(l.substr(at + 11, 17));
  EXPECT_TRUE(m);
  r.linux_mac = m.value_or(MacAddr{});
  return true;
}

// A UDP datagram from Linux's socket to weir's address, port 9.
bool linux_sends_udp(int family, const char* to) {
  int s = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  sockaddr_storage ss{};
  socklen_t len;
  if (family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(9);
    ::inet_pton(AF_INET, to, &a->sin_addr);
    len = sizeof(sockaddr_in);
  } else {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(9);
    ::inet_pton(AF_INET6, to, &a->sin6_addr);
    len = sizeof(sockaddr_in6);
  }
  const bool ok = ::sendto(s, "weir", 4, 0, reinterpret_cast<sockaddr*>(&ss), len) == 4;
  ::close(s);
  return ok;
}

#define NEED_ETHER_VETH(ns)                                                      \
  EtherVeth ns;                                                                  \
  if (!ns.ok()) GTEST_SKIP() << "needs root and iproute2 (a veth pair in a private namespace)"

TEST(EtherLinkVeth, ArpResolvesLinuxAndLinuxResolvesUs) {
  NEED_ETHER_VETH(ns);
  Rig r;
  ASSERT_TRUE(open_rig(r));
  // weir -> Linux: ARP request, Linux's reply, the queued echo, its reply.
  r.link->transmit(echo4(kWeir4, kLinux4));
  EXPECT_TRUE(pump(*r.ring, *r.link, r.now, [](std::span<const uint8_t> ip) {
    return ip.size() >= 28 && ip[9] == 1 && ip[20] == 0 && wire::load_be32(ip.data() + 12) == 0x0a090002;
  })) << r.link->describe();
  ASSERT_TRUE(r.link->neighbor(kLinux4));
  EXPECT_EQ(r.link->neighbor(kLinux4)->mac, r.linux_mac);
  EXPECT_EQ(r.link->neighbor(kLinux4)->state, NudState::kReachable);
  // Linux learned us from our request (RFC 826's merge, as we do).
  EXPECT_NE(run_output("ip neigh show 10.9.0.1 dev pb").find("02:00:00:00:00:01"), std::string::npos);
  // Linux -> weir with its cache flushed: it must take our ARP reply.
  ASSERT_EQ(driver::run_program({"ip", "neigh", "flush", "dev", "pb"}), 0);
  const uint64_t replies = r.link->stats().arp_replies_tx;
  ASSERT_TRUE(linux_sends_udp(AF_INET, "10.9.0.1"));
  EXPECT_TRUE(pump(*r.ring, *r.link, r.now, [](std::span<const uint8_t> ip) {
    return ip.size() >= 28 && ip[9] == 17 && wire::load_be16(ip.data() + 22) == 9;
  })) << r.link->describe();
  EXPECT_GT(r.link->stats().arp_replies_tx, replies);
  EXPECT_EQ(r.link->stats().rx_malformed, 0u);
}

TEST(EtherLinkVeth, NeighbourDiscoveryResolvesLinuxAndLinuxResolvesUs) {
  NEED_ETHER_VETH(ns);
  Rig r;
  ASSERT_TRUE(open_rig(r));
  r.link->transmit(echo6(kWeir6, kLinux6));
  EXPECT_TRUE(pump(*r.ring, *r.link, r.now, [](std::span<const uint8_t> ip) {
    return ip.size() >= 48 && ip[6] == 58 && ip[40] == 129;  // echo reply
  })) << r.link->describe();
  ASSERT_TRUE(r.link->neighbor(kLinux6));
  EXPECT_EQ(r.link->neighbor(kLinux6)->mac, r.linux_mac);
  EXPECT_EQ(r.link->neighbor(kLinux6)->state, NudState::kReachable);
  EXPECT_NE(run_output("ip -6 neigh show 2001:db8:9::1 dev pb").find("02:00:00:00:00:01"), std::string::npos);
  // Linux -> weir, cache flushed: its NS goes to our solicited-node group
  // (33:33:ff:00:00:01), which we accept and answer.
  ASSERT_EQ(driver::run_program({"ip", "-6", "neigh", "flush", "dev", "pb"}), 0);
  const uint64_t adverts = r.link->stats().nd_adverts_tx;
  ASSERT_TRUE(linux_sends_udp(AF_INET6, "2001:db8:9::1"));
  EXPECT_TRUE(pump(*r.ring, *r.link, r.now, [](std::span<const uint8_t> ip) {
    return ip.size() >= 48 && ip[6] == 17 && wire::load_be16(ip.data() + 42) == 9;
  })) << r.link->describe();
  EXPECT_GT(r.link->stats().nd_adverts_tx, adverts);
  EXPECT_EQ(r.link->stats().rx_malformed, 0u);
}

}  // namespace
}  // namespace weir::link
