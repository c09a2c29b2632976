// TCP Fast Open, client side (RFC 7413 §4.1, Linux tcp_fastopen_cache_*,
// tcp_fastopen_cookie_check, tcp_send_syn_data, tcp_rcv_fastopen_synack):
// the per-destination cookie cache (bounded, evicting the stalest entry),
// the decision what a SYN carries, and the SYN-with-data path through a
// stack: a cookie request, then the cookie used with data; a SYN-ACK that
// acks only the SYN makes the data go again at once; a SYN retransmission
// carries no data.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <vector>

#include "harness_helper.h"
#include "tcp/fastopen_client.h"
#include "wire/tcp_header.h"

namespace weir {
namespace {

using namespace wire::tcp_flag;
using tcp::fastopen::CacheUpdate;
using tcp::fastopen::ClientCache;
using tcp::fastopen::ClientEntry;

wire::TcpFastOpen cookie_opt(std::vector<uint8_t> bytes, bool exp = false) {
  wire::TcpFastOpen o;
  o.len = static_cast<int8_t>(bytes.size());
  o.exp = exp;
  for (size_t i = 0; i < bytes.size(); ++i) o.cookie[i] = bytes[i];
  return o;
}

const IpAddr kSrc = IpAddr::v4(192, 168, 0, 1);
IpAddr dst(uint8_t i) { return IpAddr::v4(192, 0, 2, i); }

TEST(FastOpenCache, StoresCookieAndMssPerDestination) {
  ClientCache c;
  CacheUpdate u;
  u.mss = 940;
  u.cookie = cookie_opt({1, 2, 3, 4});
  c.set(kSrc, dst(1), u, Time::zero());
  const ClientEntry* e = c.get(kSrc, dst(1));
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->mss, 940);
  EXPECT_EQ(e->cookie.len, 4);
  EXPECT_EQ(e->cookie.val[3], 4);
  // Another destination, or the same one from another source, knows nothing.
  EXPECT_EQ(c.get(kSrc, dst(2)), nullptr);
  EXPECT_EQ(c.get(IpAddr::v4(192, 168, 0, 2), dst(1)), nullptr);
}

TEST(FastOpenCache, SynAckWithoutCookieKeepsTheOldOne) {
  // tcp_fastopen_cache_set: only a cookie of length > 0 replaces the cached one.
  ClientCache c;
  CacheUpdate u;
  u.cookie = cookie_opt({9, 9, 9, 9, 9, 9, 9, 9});
  c.set(kSrc, dst(1), u, Time::zero());
  CacheUpdate none;
  none.mss = 1460;
  c.set(kSrc, dst(1), none, Time::zero());
  EXPECT_EQ(c.get(kSrc, dst(1))->cookie.len, 8);
  EXPECT_EQ(c.get(kSrc, dst(1))->mss, 1460);
}

TEST(FastOpenCache, BoundedEvictsTheStalestDestination) {
  ClientCache c(3);
  for (uint8_t i = 1; i <= 3; ++i) c.set(kSrc, dst(i), CacheUpdate{}, Time::zero());
  c.set(kSrc, dst(1), CacheUpdate{}, Time::zero());  // dst 1 is fresh again: dst 2 is now the stalest
  c.set(kSrc, dst(4), CacheUpdate{}, Time::zero());
  EXPECT_EQ(c.size(), 3u);
  EXPECT_NE(c.get(kSrc, dst(1)), nullptr);
  EXPECT_EQ(c.get(kSrc, dst(2)), nullptr);
  EXPECT_NE(c.get(kSrc, dst(3)), nullptr);
  EXPECT_NE(c.get(kSrc, dst(4)), nullptr);
  for (uint8_t i = 10; i < 200; ++i) c.set(kSrc, dst(i), CacheUpdate{}, Time::zero());
  EXPECT_EQ(c.size(), 3u);  // never grows past the bound
  c.flush();
  EXPECT_EQ(c.size(), 0u);
}

TEST(FastOpenCache, TryExpOnlyMovesForwardWithoutACookie) {
  ClientCache c;
  CacheUpdate u;
  u.try_exp = 1;
  c.set(kSrc, dst(1), u, Time::zero());
  EXPECT_EQ(c.get(kSrc, dst(1))->try_exp, 1);
  u.try_exp = 0;
  c.set(kSrc, dst(1), u, Time::zero());
  EXPECT_EQ(c.get(kSrc, dst(1))->try_exp, 1);
}

TEST(FastOpenDecide, RequestWithoutCookieDataWithCookieOrNoCookieMode) {
  // Nothing cached: a SYN with an empty FO option and no data.
  auto d = tcp::fastopen::client_decide(1, false, nullptr);
  EXPECT_FALSE(d.send_data);
  ASSERT_TRUE(d.option);
  EXPECT_EQ(d.option->len, 0);
  EXPECT_FALSE(d.option->exp);
  // A cached cookie: data and the cookie.
  ClientEntry e;
  e.mss = 940;
  e.cookie.len = 4;
  d = tcp::fastopen::client_decide(1, false, &e);
  EXPECT_TRUE(d.send_data);
  ASSERT_TRUE(d.option);
  EXPECT_EQ(d.option->len, 4);
  EXPECT_EQ(d.mss_clamp, 940);
  // TFO_CLIENT_NO_COOKIE or TCP_FASTOPEN_NO_COOKIE: data, no option at all.
  d = tcp::fastopen::client_decide(5, false, nullptr);
  EXPECT_TRUE(d.send_data);
  EXPECT_FALSE(d.option);
  d = tcp::fastopen::client_decide(1, true, nullptr);
  EXPECT_TRUE(d.send_data);
  EXPECT_FALSE(d.option);
  // try_exp == 1: the request goes in the experimental option.
  ClientEntry x;
  x.try_exp = 1;
  d = tcp::fastopen::client_decide(1, false, &x);
  ASSERT_TRUE(d.option);
  EXPECT_TRUE(d.option->exp);
}

TEST(FastOpenDecide, SynDataSpaceIsMssLessMaxOptionSpace) {
  EXPECT_EQ(tcp::fastopen::syn_data_space(1460, 1460, 5000), 1420u);
  EXPECT_EQ(tcp::fastopen::syn_data_space(1460, 940, 5000), 900u);
  EXPECT_EQ(tcp::fastopen::syn_data_space(1460, 1460, 100), 100u);
}

// The stack path: SYN-ACK from the peer with `fo` and acking `ack` (relative).
void synack(test::Harness& h, uint32_t ack, std::optional<wire::TcpFastOpen> fo) {
  wire::TcpHeader s;
  s.src_port = h.remote_port;
  s.dst_port = h.local_port;
  s.seq = h.peer_isn_;
  s.ack = h.iss_ + ack;
  s.flags = SYN | ACK;
  s.window = 65535;
  h.build_syn_options(s.options, test::PeerOpts{});
  s.options.fastopen = fo;
  h.inject_raw(s);
}

struct FoClient {
  test::Harness h;
  std::vector<uint8_t> data = std::vector<uint8_t>(1000, 7);
  FastOpenSend send(SocketId s) {
    const Endpoint to{h.remote, h.remote_port};
    return h.stack().sendto_fastopen(h.now(), s, data, &to);
  }
  test::Tx syn() {
    test::Tx t = h.expect_tx();
    h.iss_ = t.h.seq;
    h.local_port = t.h.src_port;
    return t;
  }
};

TEST(FastOpenClient, CookieRequestThenDataWithTheCookie) {
  FoClient c;
  SocketId s = *c.h.stack().socket();
  FastOpenSend r = c.send(s);
  EXPECT_TRUE(r.connecting);
  EXPECT_EQ(r.queued, 0u);  // no cookie yet: nothing on the SYN (EINPROGRESS)
  test::Tx syn = c.syn();
  EXPECT_TRUE(syn.payload.empty());
  ASSERT_TRUE(syn.h.options.fastopen);
  EXPECT_EQ(syn.h.options.fastopen->len, 0);  // the cookie request
  synack(c.h, 1, cookie_opt({0xab, 0xcd, 0x12, 0x34}));
  test::Tx ack = c.h.expect_tx();
  EXPECT_TRUE(ack.has(ACK) && !ack.has(SYN));
  EXPECT_EQ(c.h.stack().counters().get(Counter::TcpExtTCPFastOpenActive), 0u);
  c.h.stack().close(c.h.now(), s);
  c.h.clear_tx();

  // The next connection to the same destination puts the data on the SYN.
  c.h.advance(Duration::ms(10));
  SocketId s2 = *c.h.stack().socket();
  r = c.send(s2);
  EXPECT_EQ(r.queued, 1000u);
  syn = c.syn();
  EXPECT_EQ(syn.payload.size(), 1000u);
  ASSERT_TRUE(syn.h.options.fastopen);
  EXPECT_EQ(syn.h.options.fastopen->len, 4);
  EXPECT_EQ(syn.h.options.fastopen->cookie[0], 0xab);
  synack(c.h, 1001, std::nullopt);  // the data acknowledged
  ack = c.h.expect_tx();
  EXPECT_EQ(ack.h.seq, c.h.iss_ + 1001);
  EXPECT_TRUE(ack.payload.empty());
  EXPECT_EQ(c.h.stack().counters().get(Counter::TcpExtTCPFastOpenActive), 1u);
  auto info = c.h.stack().tcp_info(s2);
  ASSERT_TRUE(info);
  EXPECT_NE(info->tcpi_options & 32, 0);  // TCPI_OPT_SYN_DATA
}

TEST(FastOpenClient, SynAckOfSynOnlyResendsTheDataAtOnce) {
  StackConfig cfg;
  cfg.tcp_fastopen = 5;  // client + TFO_CLIENT_NO_COOKIE
  FoClient c{test::Harness(cfg)};
  SocketId s = *c.h.stack().socket();
  EXPECT_EQ(c.send(s).queued, 1000u);
  test::Tx syn = c.syn();
  EXPECT_EQ(syn.payload.size(), 1000u);
  EXPECT_FALSE(syn.h.options.fastopen);  // no cookie mode: no option
  synack(c.h, 1, std::nullopt);          // only the SYN acknowledged
  test::Tx data = c.h.expect_tx();       // the data again, carrying the ACK
  EXPECT_EQ(data.h.seq, c.h.iss_ + 1);
  EXPECT_EQ(data.payload.size(), 1000u);
  EXPECT_TRUE(data.has(ACK) && data.has(PSH));
  EXPECT_EQ(c.h.pending(), 0u);  // no separate pure ACK
  EXPECT_EQ(c.h.stack().counters().get(Counter::TcpExtTCPFastOpenActiveFail), 1u);
  auto info = c.h.stack().tcp_info(s);
  EXPECT_EQ(info->tcpi_options & 32, 0);
  EXPECT_EQ(info->tcpi_retrans, 1u);
}

TEST(FastOpenClient, SynRetransmissionCarriesNoData) {
  StackConfig cfg;
  cfg.tcp_fastopen = 5;
  FoClient c{test::Harness(cfg)};
  SocketId s = *c.h.stack().socket();
  c.send(s);
  EXPECT_EQ(c.syn().payload.size(), 1000u);
  c.h.run_next_timer();  // the SYN's RTO
  test::Tx again = c.h.expect_tx();
  EXPECT_TRUE(again.has(SYN));
  EXPECT_TRUE(again.payload.empty());
  EXPECT_FALSE(again.h.options.fastopen);
  // Still connecting: another Fast Open send is "already in progress".
  EXPECT_EQ(c.send(s).err, Errc::kAlready);
}

TEST(FastOpenClient, ConnectDefersTheSynToTheFirstWrite) {
  StackConfig cfg;
  cfg.tcp_fastopen = 5;
  test::Harness h(cfg);
  SocketId s = *h.stack().socket();
  const int one = 1;
  ASSERT_EQ(h.stack().setsockopt(h.now(), s, 6 /* IPPROTO_TCP */, 30 /* TCP_FASTOPEN_CONNECT */, test::int_opt(one)),
            Errc::kOk);
  EXPECT_EQ(h.stack().connect(h.now(), s, Endpoint{h.remote, h.remote_port}), Errc::kOk);
  EXPECT_EQ(h.pending(), 0u);  // nothing sent yet
  EXPECT_TRUE(h.stack().fastopen_deferred(s));
  EXPECT_NE(h.stack().poll(s) & ev::OUT, 0u);  // writable, so the application writes
  std::vector<uint8_t> d(300, 1);
  FastOpenSend r = h.stack().sendto_fastopen(h.now(), s, d, nullptr);
  EXPECT_TRUE(r.connecting);
  EXPECT_EQ(r.queued, 300u);
  test::Tx syn = h.expect_tx();
  EXPECT_TRUE(syn.has(SYN));
  EXPECT_EQ(syn.payload.size(), 300u);
  EXPECT_FALSE(h.stack().fastopen_deferred(s));
}

// Linux tcp_fastopen_active_should_disable: the pause lasts the timeout
// doubled per consecutive pause, at most 64 times; then one probe; a
// timeout of 0 never pauses.
TEST(FastOpenBlackhole, PauseDoublesUpTo64TimesAndZeroNeverPauses) {
  using tcp::fastopen::Blackhole;
  Blackhole b;
  const Time t0 = Time::zero() + Duration::s(10);
  EXPECT_FALSE(b.disable(0, t0));
  EXPECT_EQ(b.check(0, t0), Blackhole::Verdict::kAllow);
  EXPECT_TRUE(b.disable(100, t0));
  EXPECT_EQ(b.check(100, t0 + Duration::s(99)), Blackhole::Verdict::kPause);
  EXPECT_EQ(b.check(100, t0 + Duration::s(100)), Blackhole::Verdict::kProbe);
  EXPECT_EQ(b.check(0, t0 + Duration::s(1)), Blackhole::Verdict::kAllow);  // turned off meanwhile
  EXPECT_TRUE(b.disable(100, t0));
  EXPECT_EQ(b.check(100, t0 + Duration::s(199)), Blackhole::Verdict::kPause);
  for (int i = 0; i < 20; ++i) b.disable(100, t0);
  EXPECT_EQ(b.check(100, t0 + Duration::s(6399)), Blackhole::Verdict::kPause);
  EXPECT_EQ(b.check(100, t0 + Duration::s(6400)), Blackhole::Verdict::kProbe);
  b.forget();
  EXPECT_EQ(b.check(100, t0), Blackhole::Verdict::kAllow);
}

// Linux tcp_fastopen_active_detect_blackhole: the third consecutive SYN
// timeout of a Fast Open connection counts TCPFastOpenActiveFail and, with
// tcp_fastopen_blackhole_timeout_sec set, pauses Fast Open: the next
// connection sends a plain SYN; after the pause the data rides again.
TEST(FastOpenClient, ThirdSynTimeoutPausesFastOpenStackWide) {
  StackConfig cfg;
  cfg.tcp_fastopen = 5;  // client + no cookie: data on every SYN
  cfg.tcp_fastopen_blackhole_timeout_sec = 3600;
  FoClient c{test::Harness(cfg)};
  SocketId s = *c.h.stack().socket();
  EXPECT_EQ(c.send(s).queued, 1000u);
  c.syn();
  c.h.run_next_timer();
  c.h.run_next_timer();
  EXPECT_EQ(c.h.stack().counters().get(Counter::TcpExtTCPFastOpenBlackhole), 0u);
  c.h.run_next_timer();  // the third timeout
  EXPECT_EQ(c.h.stack().counters().get(Counter::TcpExtTCPFastOpenActiveFail), 1u);
  EXPECT_EQ(c.h.stack().counters().get(Counter::TcpExtTCPFastOpenBlackhole), 1u);
  c.h.stack().close(c.h.now(), s);
  c.h.clear_tx();

  SocketId s2 = *c.h.stack().socket();
  FastOpenSend r = c.send(s2);
  EXPECT_TRUE(r.connecting);
  EXPECT_EQ(r.queued, 0u);
  test::Tx plain = c.syn();
  EXPECT_TRUE(plain.payload.empty());
  EXPECT_FALSE(plain.h.options.fastopen);
  c.h.stack().close(c.h.now(), s2);
  c.h.clear_tx();

  c.h.advance(Duration::s(3600));
  c.h.clear_tx();
  SocketId s3 = *c.h.stack().socket();
  EXPECT_EQ(c.send(s3).queued, 1000u);
  EXPECT_EQ(c.syn().payload.size(), 1000u);
}

// With Linux's default timeout (0) the failure is still counted, but Fast
// Open goes on.
TEST(FastOpenClient, DefaultBlackholeTimeoutCountsButNeverPauses) {
  StackConfig cfg;
  cfg.tcp_fastopen = 5;
  FoClient c{test::Harness(cfg)};
  SocketId s = *c.h.stack().socket();
  c.send(s);
  c.syn();
  for (int i = 0; i < 3; ++i) c.h.run_next_timer();
  EXPECT_EQ(c.h.stack().counters().get(Counter::TcpExtTCPFastOpenActiveFail), 1u);
  EXPECT_EQ(c.h.stack().counters().get(Counter::TcpExtTCPFastOpenBlackhole), 0u);
  c.h.stack().close(c.h.now(), s);
  c.h.clear_tx();
  SocketId s2 = *c.h.stack().socket();
  EXPECT_EQ(c.send(s2).queued, 1000u);
}

// Linux tcp_fastopen_active_disable_ofo_check, when the socket goes: a
// connection whose SYN carried the Fast Open option (tp->syn_fastopen; not
// the no-cookie mode) that got no data but a lone FIN out of order had its
// data dropped on the path: pause. A probe after the pause that gets data
// forgets the pauses.
TEST(FastOpenClient, LoneOutOfOrderFinPausesAndAProbeWithDataForgets) {
  StackConfig cfg;
  cfg.tcp_fastopen_blackhole_timeout_sec = 60;
  FoClient c{test::Harness(cfg)};
  auto abort = [&](SocketId s) {
    struct linger l{1, 0};
    ASSERT_EQ(c.h.stack().setsockopt(c.h.now(), s, SOL_SOCKET, SO_LINGER,
                                     std::span(reinterpret_cast<const uint8_t*>(&l), sizeof l)),
              Errc::kOk);
    c.h.stack().close(c.h.now(), s);
    c.h.clear_tx();
  };
  auto blackholes = [&] { return c.h.stack().counters().get(Counter::TcpExtTCPFastOpenBlackhole); };
  SocketId s0 = *c.h.stack().socket();  // learn a cookie
  c.send(s0);
  c.syn();
  synack(c.h, 1, cookie_opt({1, 2, 3, 4}));
  abort(s0);
  EXPECT_EQ(blackholes(), 0u);  // no data, but no lone FIN either

  SocketId s = *c.h.stack().socket();
  EXPECT_EQ(c.send(s).queued, 1000u);
  c.syn();
  synack(c.h, 1001, std::nullopt);
  c.h.inject(FIN | ACK, 101, 1001);  // the peer's data lost, its FIN not
  c.h.clear_tx();
  abort(s);
  EXPECT_EQ(blackholes(), 1u);
  SocketId paused = *c.h.stack().socket();
  EXPECT_EQ(c.send(paused).queued, 0u);
  abort(paused);

  c.h.advance(Duration::s(60));  // the pause ran out: the next one probes
  c.h.clear_tx();
  SocketId s2 = *c.h.stack().socket();
  EXPECT_EQ(c.send(s2).queued, 1000u);
  c.syn();
  synack(c.h, 1001, std::nullopt);
  std::vector<uint8_t> reply(10, 1);
  c.h.inject_payload(ACK, 1, 1001, reply);
  c.h.clear_tx();
  abort(s2);

  // Forgotten: a new black hole pauses for the base 60 s again, not 120 s.
  SocketId s3 = *c.h.stack().socket();
  c.send(s3);
  c.syn();
  for (int i = 0; i < 3; ++i) c.h.run_next_timer();
  EXPECT_EQ(blackholes(), 2u);
  abort(s3);
  c.h.advance(Duration::s(60));
  c.h.clear_tx();
  SocketId s4 = *c.h.stack().socket();
  EXPECT_EQ(c.send(s4).queued, 1000u);
}

}  // namespace
}  // namespace weir
