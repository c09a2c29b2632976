// The per-destination path-MTU cache (RFC 1191 §6.3, RFC 8201 §5.2; Linux
// route exceptions with ip_rt_mtu_expires = 600 s): what one connection
// learns from fragmentation-needed applies to every connection to that
// destination, new and existing, until it expires; the table stays bounded.
#include <gtest/gtest.h>

#include <random>

#include "ip/pmtu_cache.h"
#include "tcp/harness_helper.h"
#include "wire/checksum.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

// ICMP type 3 code 4 (RFC 1191 §4) quoting `ours`: its IP header and the
// first 8 bytes of TCP (ports and sequence number).
std::vector<uint8_t> frag_needed(const Tx& ours, uint16_t mtu) {
  std::vector<uint8_t> q = wire::build_tcp_packet(ours.ip, ours.h, ours.payload);
  q.resize(28);
  std::vector<uint8_t> icmp = {3, 4, 0, 0, 0, 0, static_cast<uint8_t>(mtu >> 8), static_cast<uint8_t>(mtu)};
  icmp.insert(icmp.end(), q.begin(), q.end());
  const uint16_t c = wire::csum_fold(wire::csum_partial(icmp));
  icmp[2] = static_cast<uint8_t>(c >> 8);
  icmp[3] = static_cast<uint8_t>(c);
  const auto src = ours.ip.src.v4_host_order();
  std::vector<uint8_t> ip = {0x45, 0, 0, 0, 0, 0, 0, 0, 64, 1, 0, 0, 192, 0, 2, 254,
                             static_cast<uint8_t>(src >> 24), static_cast<uint8_t>(src >> 16),
                             static_cast<uint8_t>(src >> 8), static_cast<uint8_t>(src)};
  const size_t total = ip.size() + icmp.size();
  ip[2] = static_cast<uint8_t>(total >> 8);
  ip[3] = static_cast<uint8_t>(total);
  const uint16_t hc = wire::csum_fold(wire::csum_partial(ip));
  ip[10] = static_cast<uint8_t>(hc >> 8);
  ip[11] = static_cast<uint8_t>(hc);
  ip.insert(ip.end(), icmp.begin(), icmp.end());
  return ip;
}

// The harness scripts one peer at a time; this keeps a connection's
// scripting state so several can be driven in turn.
struct Peer {
  IpAddr remote;
  uint16_t remote_port = 0;
  uint16_t local_port = 0;
  Seq32 iss;
  Seq32 peer_isn;
  SocketId s = kNoSocket;
};

Peer open_to(Harness& t, IpAddr remote, uint16_t port) {
  t.remote = remote;
  t.remote_port = port;
  const SocketId s = t.active_open();
  return Peer{remote, port, t.local_port, t.iss_, t.peer_isn_, s};
}

void use(Harness& t, const Peer& p) {
  t.remote = p.remote;
  t.remote_port = p.remote_port;
  t.local_port = p.local_port;
  t.iss_ = p.iss;
  t.peer_isn_ = p.peer_isn;
}

// An IPv6 listener on fd00::1 port 8080, the peer at fd00::2.
void listen_v6(Harness& t) {
  t.local = *IpAddr::parse("fd00::1");
  t.remote = *IpAddr::parse("fd00::2");
  t.stack().add_address(t.local);
  t.listener = *t.stack().socket(true);
  ASSERT_EQ(t.stack().bind(t.listener, Endpoint{t.local, 8080}), Errc::kOk);
  ASSERT_EQ(t.stack().listen(t.now(), t.listener, 8), Errc::kOk);
}

uint32_t snd_mss(Harness& t, SocketId s) { return t.stack().tcp_info(s)->tcpi_snd_mss; }

// Sends two full segments on `p`, answers the first with frag-needed(mtu),
// then ACKs everything so no timer runs on.
void learn_pmtu(Harness& t, const Peer& p, uint16_t mtu) {
  use(t, p);
  std::vector<uint8_t> d(1448 * 2, 7);
  t.stack().send(t.now(), p.s, d);
  Tx first = t.expect_tx();
  ASSERT_EQ(first.payload.size(), 1448u);
  t.clear_tx();
  t.inject_bytes(frag_needed(first, mtu));
  t.clear_tx();
  t.inject(ACK, 1, 1 + 1448 * 2);
  t.clear_tx();
}

const IpAddr kA = IpAddr::v4(192, 0, 2, 1);
const IpAddr kB = IpAddr::v4(192, 0, 2, 2);

TEST(PmtuCache, NewConnectionToSameDestinationStartsWithLearntSendMss) {
  Harness t;
  Peer a = open_to(t, kA, 50000);
  learn_pmtu(t, a, 1000);
  EXPECT_EQ(snd_mss(t, a.s), 1000u - 40 - 12);

  // The SYN announces the route's MSS, and the route carries the cached PMTU:
  // Linux dst_metric_advmss -> ipv4_default_advmss(ipv4_mtu(dst) - 40),
  // ipv4_mtu reading the exception's rt_pmtu.
  t.remote_port = 50001;
  SocketId s = *t.stack().socket();
  ASSERT_EQ(t.stack().connect(t.now(), s, Endpoint{kA, 50001}), Errc::kInProgress);
  Tx syn = t.expect_tx();
  ASSERT_TRUE(syn.h.options.mss.has_value());
  EXPECT_EQ(*syn.h.options.mss, 1000u - 40);
  t.clear_tx();
  auto info = *t.stack().tcp_info(s);
  EXPECT_EQ(info.tcpi_pmtu, 1000u);
  EXPECT_EQ(info.tcpi_advmss, 1000u - 40);

  Peer b = open_to(t, kA, 50002);
  use(t, b);
  std::vector<uint8_t> d(3000, 1);
  t.stack().send(t.now(), b.s, d);
  Tx x = t.expect_tx();
  EXPECT_EQ(x.payload.size(), 1000u - 40 - 12);  // 948: the cached PMTU, not 1448
  EXPECT_EQ(t.stack().tcp_info(b.s)->tcpi_pmtu, 1000u);
}

TEST(PmtuCache, ConnectionToAnotherDestinationKeepsInterfaceMtu) {
  Harness t;
  Peer a = open_to(t, kA, 50000);
  learn_pmtu(t, a, 1000);
  Peer b = open_to(t, kB, 50000);
  EXPECT_EQ(snd_mss(t, b.s), 1448u);
  EXPECT_EQ(t.stack().tcp_info(b.s)->tcpi_pmtu, 1500u);
}

TEST(PmtuCache, ExistingConnectionToSameDestinationShrinksAtItsNextSend) {
  Harness t;
  Peer a = open_to(t, kA, 50000);
  Peer b = open_to(t, kA, 50001);
  ASSERT_EQ(snd_mss(t, b.s), 1448u);
  learn_pmtu(t, a, 1200);
  // Linux tcp_current_mss: b picks the route's MTU up when it next sends.
  use(t, b);
  std::vector<uint8_t> d(1448 * 2, 1);
  t.stack().send(t.now(), b.s, d);
  Tx x = t.expect_tx();
  EXPECT_EQ(x.payload.size(), 1200u - 40 - 12);
  EXPECT_EQ(x.payload.size() + 20 + 20 + 12, 1200u);  // the datagram fits the path
  EXPECT_EQ(snd_mss(t, b.s), 1148u);
}

TEST(PmtuCache, LearntMtuExpiresAfter600SecondsOfVirtualTime) {
  Harness t;
  Peer a = open_to(t, kA, 50000);
  learn_pmtu(t, a, 1000);
  t.advance(Duration::s(600) - Duration::ms(1));
  Peer b = open_to(t, kA, 50001);
  EXPECT_EQ(snd_mss(t, b.s), 948u);  // still within ip_rt_mtu_expires
  t.advance(Duration::ms(1));
  Peer c = open_to(t, kA, 50002);
  EXPECT_EQ(snd_mss(t, c.s), 1448u);  // expired: the interface MTU again
  EXPECT_EQ(t.stack().tcp_info(c.s)->tcpi_pmtu, 1500u);
  // An existing connection grows back too when it next sends (Linux
  // tcp_current_mss sees the route's MTU differ from icsk_pmtu_cookie).
  use(t, a);
  std::vector<uint8_t> d(3000, 1);
  t.stack().send(t.now(), a.s, d);
  EXPECT_EQ(t.expect_tx().payload.size(), 1448u);
}

TEST(PmtuCache, BelowMinimumIsClampedToIpRtMinPmtu) {
  Harness t;
  Peer a = open_to(t, kA, 50000);
  learn_pmtu(t, a, 296);
  Peer b = open_to(t, kA, 50001);
  EXPECT_EQ(t.stack().tcp_info(b.s)->tcpi_pmtu, 552u);  // Linux ip_rt_min_pmtu
  EXPECT_EQ(snd_mss(t, b.s), 552u - 40 - 12);
}

TEST(PmtuCache, OutOfWindowQuoteIsCountedAndLearnsNothing) {
  Harness t;
  Peer a = open_to(t, kA, 50000);
  use(t, a);
  std::vector<uint8_t> d(1448, 7);
  t.stack().send(t.now(), a.s, d);
  Tx first = t.expect_tx();
  first.h.seq = first.h.seq + 100000;  // not outstanding: a blind or stale ICMP
  t.inject_bytes(frag_needed(first, 1000));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtOutOfWindowIcmps), 1u);
  EXPECT_EQ(t.stack().tcp_info(a.s)->tcpi_pmtu, 1500u);
  Peer b = open_to(t, kA, 50001);
  EXPECT_EQ(snd_mss(t, b.s), 1448u);
}

TEST(PmtuCache, FloodForUnknownConnectionsLearnsNothing) {
  Harness t;
  Peer a = open_to(t, kA, 50000);
  use(t, a);
  std::vector<uint8_t> d(1448, 7);
  t.stack().send(t.now(), a.s, d);
  Tx ours = t.expect_tx();
  std::mt19937 rng(42);
  for (int i = 0; i < 2000; ++i) {
    Tx fake = ours;
    fake.ip.dst = IpAddr::v4(static_cast<uint32_t>(rng()));
    t.inject_bytes(frag_needed(fake, 600));
  }
  // Linux tcp_v4_err: no socket for the quoted 4-tuple -> ICMP_MIB_INERRORS.
  EXPECT_EQ(t.stack().counters().get(Counter::IcmpInErrors), 2000u);
  EXPECT_EQ(t.stack().tcp_info(a.s)->tcpi_pmtu, 1500u);
}

// frag-needed quoting the segment at SND.UNA of an idle connection `p`
// (Linux accepts seq == snd_una: between(seq, snd_una, snd_nxt)).
std::vector<uint8_t> frag_needed_at_una(Harness& t, const Peer& p, uint16_t mtu) {
  Tx q;
  q.ip.version = 4;
  q.ip.proto = wire::kProtoTcp;
  q.ip.ttl = 64;
  q.ip.df = true;
  q.ip.src = t.local;
  q.ip.dst = p.remote;
  q.h.src_port = p.local_port;
  q.h.dst_port = p.remote_port;
  q.h.seq = p.iss + 1;
  q.h.flags = ACK;
  return frag_needed(q, mtu);
}

TEST(PmtuCache, FloodOfValidPtbsForManyDestinationsEvictsOldestAndCounts) {
  Harness t;
  const size_t n = PmtuCache::kDefaultCapacity + 1;
  std::vector<Peer> peers;
  peers.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    // 198.18.0.0/15 (RFC 2544 benchmarking): one destination per connection.
    const IpAddr dst = IpAddr::v4(198, 18, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i));
    peers.push_back(open_to(t, dst, 443));
    t.inject_bytes(frag_needed_at_una(t, peers.back(), 1000));
    ASSERT_EQ(t.stack().tcp_info(peers.back().s)->tcpi_pmtu, 1000u) << i;
  }
  t.clear_tx();
  EXPECT_EQ(t.stack().counters().get(Counter::WeirPmtuCacheEvictions), 1u);
  // The oldest destination was reclaimed: a new connection to it runs at the
  // link MTU; the newest is still remembered.
  Peer first = open_to(t, peers.front().remote, 444);
  EXPECT_EQ(snd_mss(t, first.s), 1448u);
  Peer last = open_to(t, peers.back().remote, 444);
  EXPECT_EQ(snd_mss(t, last.s), 948u);
}

// ICMPv6 packet too big (RFC 4443 §3.2) from a router, quoting `ours`.
std::vector<uint8_t> packet_too_big6(const Tx& ours, uint32_t mtu) {
  const IpAddr router = *IpAddr::parse("fd00::fe");
  std::vector<uint8_t> q = wire::build_tcp_packet(ours.ip, ours.h, ours.payload);
  q.resize(48);
  std::vector<uint8_t> icmp = {2, 0, 0, 0, static_cast<uint8_t>(mtu >> 24), static_cast<uint8_t>(mtu >> 16),
                               static_cast<uint8_t>(mtu >> 8), static_cast<uint8_t>(mtu)};
  icmp.insert(icmp.end(), q.begin(), q.end());
  const uint32_t ph = wire::pseudo_header_sum(router, ours.ip.src, wire::kProtoIcmpv6,
                                              static_cast<uint32_t>(icmp.size()));
  const uint16_t c = wire::csum_fold(wire::csum_partial(icmp, ph));
  icmp[2] = static_cast<uint8_t>(c >> 8);
  icmp[3] = static_cast<uint8_t>(c);
  std::vector<uint8_t> ip = {0x60, 0, 0, 0, static_cast<uint8_t>(icmp.size() >> 8),
                             static_cast<uint8_t>(icmp.size()), wire::kProtoIcmpv6, 64};
  // Room for the whole packet first: GCC 12 at -O3 reports the growth path
  // of an insert into the 8-byte vector as out of bounds (-Warray-bounds,
  // a false positive, fixed in 13), which -Werror makes a Release build error.
  ip.reserve(ip.size() + 32 + icmp.size());
  ip.insert(ip.end(), router.bytes().begin(), router.bytes().end());
  ip.insert(ip.end(), ours.ip.src.bytes().begin(), ours.ip.src.bytes().end());
  ip.insert(ip.end(), icmp.begin(), icmp.end());
  return ip;
}

TEST(PmtuCache, Ipv6PacketTooBigIsSharedPerDestinationAndClampedTo1280) {
  Harness t;
  ASSERT_NO_FATAL_FAILURE(listen_v6(t));
  SocketId a = t.passive_open();
  std::vector<uint8_t> d(1428 * 2, 1);
  t.stack().send(t.now(), a, d);
  Tx first = t.expect_tx();
  ASSERT_EQ(first.payload.size(), 1428u);
  t.inject_bytes(packet_too_big6(first, 1000));
  EXPECT_EQ(t.stack().counters().get(Counter::Icmp6InPktTooBigs), 1u);
  EXPECT_EQ(t.stack().tcp_info(a)->tcpi_pmtu, 1280u);  // RFC 8200 §5 minimum link MTU
  t.inject(ACK, 1, 1 + 1428 * 2);
  t.clear_tx();
  // A passive open from the same peer: the child starts at the learnt PMTU.
  t.remote_port = 50001;
  SocketId b = t.passive_open();
  EXPECT_EQ(snd_mss(t, b), 1280u - 40 - 20 - 12);
  // Another peer does not.
  t.remote = *IpAddr::parse("fd00::3");
  SocketId c = t.passive_open();
  EXPECT_EQ(snd_mss(t, c), 1500u - 40 - 20 - 12);
}

// An IPv6 destination with a cached PMTU of 1400: the SYN advertises
// 1400 - 60 (Linux ip6_default_advmss over the exception's RTAX_MTU) and data
// goes out in segments of 1340 less the timestamp option.
TEST(PmtuCache, Ipv6CachedPmtuSetsSynMssAndSendMss) {
  Harness t;
  ASSERT_NO_FATAL_FAILURE(listen_v6(t));
  SocketId a = t.passive_open();
  std::vector<uint8_t> d(1428, 1);
  t.stack().send(t.now(), a, d);
  Tx first = t.expect_tx();
  t.inject_bytes(packet_too_big6(first, 1400));
  ASSERT_EQ(t.stack().tcp_info(a)->tcpi_pmtu, 1400u);
  t.inject(ACK, 1, 1 + 1428);
  t.clear_tx();

  t.remote_port = 50001;
  SocketId s = *t.stack().socket(true);
  ASSERT_EQ(t.stack().connect(t.now(), s, Endpoint{t.remote, 50001}), Errc::kInProgress);
  Tx syn = t.expect_tx();
  ASSERT_TRUE(syn.h.options.mss.has_value());
  EXPECT_EQ(*syn.h.options.mss, 1400u - 60);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_advmss, 1400u - 60);
  // The peer offers more (1440); the path bounds the send MSS.
  t.answer_syn(syn, PeerOpts{.mss = 1440});
  t.expect_tx();
  EXPECT_EQ(snd_mss(t, s), 1400u - 60 - 12);
  std::vector<uint8_t> big(4000, 2);
  t.stack().send(t.now(), s, big);
  Tx x = t.expect_tx();
  EXPECT_EQ(x.payload.size(), 1400u - 60 - 12);
  EXPECT_EQ(x.ip.version, 6);
}

// The interface MTU is advertised when nothing is cached (and the floor of
// ip6_rt_min_advmss, 1220, never lets a small link lower it further).
TEST(PmtuCache, Ipv6WithoutCachedPmtuAdvertisesInterfaceMss) {
  Harness t(StackConfig{}, 1300);
  t.local = *IpAddr::parse("fd00::1");
  t.remote = *IpAddr::parse("fd00::2");
  t.stack().add_address(t.local);
  SocketId s = *t.stack().socket(true);
  ASSERT_EQ(t.stack().connect(t.now(), s, Endpoint{t.remote, 50001}), Errc::kInProgress);
  Tx syn = t.expect_tx();
  ASSERT_TRUE(syn.h.options.mss.has_value());
  EXPECT_EQ(*syn.h.options.mss, 1240u);  // 1300 - 40 - 20
}

// Linux tcp_v4_err: between(seq, snd_una, snd_nxt), both ends included.
TEST(IcmpQuote, SeqAtSndNxtAndAtSndUnaAccepted) {
  Harness t;
  Peer a = open_to(t, kA, 50000);
  use(t, a);
  std::vector<uint8_t> d(1448 * 2, 7);
  t.stack().send(t.now(), a.s, d);
  Tx first = t.expect_tx();
  t.clear_tx();
  Tx at_nxt = first;
  at_nxt.h.seq = first.h.seq + 1448 * 2;  // SND.NXT exactly
  t.inject_bytes(frag_needed(at_nxt, 1200));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtOutOfWindowIcmps), 0u);
  EXPECT_EQ(t.stack().tcp_info(a.s)->tcpi_pmtu, 1200u);
  t.clear_tx();
  t.inject_bytes(frag_needed(first, 1100));  // SND.UNA exactly
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtOutOfWindowIcmps), 0u);
  EXPECT_EQ(t.stack().tcp_info(a.s)->tcpi_pmtu, 1100u);
}

TEST(IcmpQuote, SeqJustOutsideEitherEdgeRejectedAndCounted) {
  Harness t;
  Peer a = open_to(t, kA, 50000);
  use(t, a);
  std::vector<uint8_t> d(1448 * 2, 7);
  t.stack().send(t.now(), a.s, d);
  Tx first = t.expect_tx();
  t.clear_tx();
  Tx past = first;
  past.h.seq = first.h.seq + 1448 * 2 + 1;  // SND.NXT + 1
  t.inject_bytes(frag_needed(past, 1200));
  Tx before = first;
  before.h.seq = first.h.seq - 1;  // SND.UNA - 1
  t.inject_bytes(frag_needed(before, 1200));
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtOutOfWindowIcmps), 2u);
  EXPECT_EQ(t.stack().tcp_info(a.s)->tcpi_pmtu, 1500u);
}

// Host unreachable (type 3 code 1) goes through the same check: outside the
// window it is counted, not recorded as the connection's soft error.
TEST(IcmpQuote, UnreachableOutsideWindowCountedAsOutOfWindow) {
  Harness t;
  Peer a = open_to(t, kA, 50000);
  use(t, a);
  std::vector<uint8_t> d(100, 7);
  t.stack().send(t.now(), a.s, d);
  Tx first = t.expect_tx();
  Tx past = first;
  past.h.seq = first.h.seq + 101;  // SND.NXT + 1
  std::vector<uint8_t> icmp = frag_needed(past, 0);
  icmp[20] = 3;
  icmp[21] = 1;  // host unreachable; checksum fixed below
  icmp[22] = icmp[23] = 0;
  const uint16_t c = wire::csum_fold(wire::csum_partial(std::span(icmp).subspan(20)));
  icmp[22] = static_cast<uint8_t>(c >> 8);
  icmp[23] = static_cast<uint8_t>(c);
  t.inject_bytes(icmp);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtOutOfWindowIcmps), 1u);
}

// The table itself: bounded, oldest evicted first, only lowering.
TEST(PmtuCacheTable, StaysWithinBoundUnderFloodEvictingOldest) {
  PmtuCache c;
  std::mt19937 rng(7);
  Time now = Time::zero();
  std::vector<IpAddr> seen;
  const size_t n = PmtuCache::kDefaultCapacity * 3;
  for (size_t i = 0; i < n; ++i) {
    IpAddr dst = IpAddr::v4(static_cast<uint32_t>(rng()) | 1u);
    seen.push_back(dst);
    c.learn(dst, 1000 + static_cast<uint32_t>(i % 400), 1500, now);
    now = now + Duration::ms(1);
    ASSERT_LE(c.size(), PmtuCache::kDefaultCapacity);
  }
  EXPECT_EQ(c.size(), PmtuCache::kDefaultCapacity);
  EXPECT_GE(c.evictions(), n - PmtuCache::kDefaultCapacity - 8);  // a few random repeats
  EXPECT_FALSE(c.lookup(seen.front(), now).has_value());  // the oldest went first
  EXPECT_TRUE(c.lookup(seen.back(), now).has_value());
}

TEST(PmtuCacheTable, OnlyLowersAndNeverAboveTheLink) {
  PmtuCache c(4);
  const Time t0 = Time::zero();
  const IpAddr a = IpAddr::v4(10, 0, 0, 1);
  EXPECT_FALSE(c.learn(a, 9000, 1500, t0));  // above the link: RFC 1191 §6.3
  EXPECT_TRUE(c.learn(a, 1400, 1500, t0));
  EXPECT_FALSE(c.learn(a, 1450, 1500, t0));  // higher than known
  EXPECT_EQ(c.lookup(a, t0).value_or(0), 1400u);
  EXPECT_TRUE(c.learn(a, 1300, 1500, t0));
  EXPECT_EQ(c.lookup(a, t0).value_or(0), 1300u);
  const IpAddr v6 = *IpAddr::parse("fd00::9");
  EXPECT_TRUE(c.learn(v6, 600, 1500, t0));
  EXPECT_EQ(c.lookup(v6, t0).value_or(0), 1280u);  // RFC 8200 §5 minimum
  c.expire(t0 + PmtuCache::kExpires);
  EXPECT_TRUE(c.empty());
}

}  // namespace
}  // namespace weir::test
