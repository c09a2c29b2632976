// A SYN flood in the lab: 100 000 SYN/s from random spoofed sources against
// a listener (backlog 128, tcp_max_syn_backlog 128), for one second of
// virtual time, while a legitimate client opens a connection every
// millisecond. The SYN queue fills at once, SYN cookies engage (Linux
// tcp_syncookies = 1), and at least 99 % of the legitimate handshakes
// complete and are accepted. Spoofed sources never answer: the server's
// SYN-ACKs to them are black-holed by the router.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "adversarial/adv_helper.h"
#include "sim/event_loop.h"
#include "sim/host.h"
#include "sim/link.h"
#include "sim/packet.h"
#include "sim/rng.h"
#include "wire/packet.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;
using namespace weir::sim;

const IpAddr kClient = IpAddr::v4(10, 0, 0, 1);
const IpAddr kServer = IpAddr::v4(10, 0, 0, 2);
constexpr uint16_t kPort = 80;

// Delivers to the client what is addressed to it; drops everything else
// (SYN-ACKs to the spoofed sources).
class Router final : public Node {
 public:
  explicit Router(PacketPool& pool) : pool_(pool) {}
  void receive(Time now, Packet* p) override {
    auto parsed = wire::parse_tcp_packet(p->view(), false);
    if (parsed && parsed->ip.dst == kClient && client) {
      client->receive(now, p);
      return;
    }
    ++blackholed;
    pool_.put(p);
  }
  Host* client = nullptr;
  uint64_t blackholed = 0;

 private:
  PacketPool& pool_;
};

// 100 000 SYN/s from random sources in 100.64.0.0/10, random ports and ISNs.
class Flooder final : public EventTarget {
 public:
  Flooder(EventLoop& loop, PacketPool& pool, Link& out, Time until, Rng rng)
      : loop_(loop), pool_(pool), out_(out), until_(until), rng_(rng) {
    loop_.at(loop_.now(), this);
  }
  void on_event(Time now, uint64_t) override {
    if (now >= until_) return;
    wire::TcpHeader h;
    h.src_port = static_cast<uint16_t>(1024 + rng_.below(64000));
    h.dst_port = kPort;
    h.seq = Seq32(static_cast<uint32_t>(rng_.next()));
    h.flags = SYN;
    h.window = 65535;
    if (rng_.chance(0.5)) h.options.mss = 1460;  // half look like real stacks, half like hping
    wire::IpInfo ip;
    ip.version = 4;
    ip.src = IpAddr::v4(static_cast<uint32_t>(0x64400000u | rng_.below(1u << 22)));
    ip.dst = kServer;
    out_.send(now, pool_.make(wire::build_tcp_packet(ip, h, {})));
    ++sent;
    loop_.after(Duration::us(10), this);
  }
  uint64_t sent = 0;

 private:
  EventLoop& loop_;
  PacketPool& pool_;
  Link& out_;
  Time until_;
  Rng rng_;
};

// The server's application: accepts everything it is handed.
class Acceptor final : public App {
 public:
  Acceptor(Host& h, SocketId ls) : h_(h), ls_(ls) { h_.watch(ls, this); }
  void on_ready(Time now) override {
    while (auto s = h_.stack().accept(now, ls_)) ++accepted;
    h_.kick();
  }
  void on_event(Time now, uint64_t) override { on_ready(now); }
  uint64_t accepted = 0;

 private:
  Host& h_;
  SocketId ls_;
};

// The legitimate client: one connect() per millisecond.
class Opener final : public EventTarget {
 public:
  Opener(Host& h, int count) : h_(h), left_(count) { h_.loop().at(h_.loop().now(), this); }
  void on_event(Time now, uint64_t) override {
    if (left_-- <= 0) return;
    auto s = h_.stack().socket();
    if (s && h_.stack().connect(now, *s, Endpoint{kServer, kPort}) == Errc::kInProgress) socks.push_back(*s);
    h_.kick();
    h_.loop().after(Duration::ms(1), this);
  }
  std::vector<SocketId> socks;

 private:
  Host& h_;
  int left_;
};

TEST(SynFlood, CookiesKeepLegitimateHandshakesCompleting) {
  EventLoop loop;
  PacketPool pool;
  StackConfig cfg;
  cfg.tcp_max_syn_backlog = 128;
  Host server(loop, pool, "server", kServer, cfg, 1500, nullptr, false);
  Host client(loop, pool, "client", kClient, cfg, 1500, nullptr, false);
  LinkConfig lc;
  lc.rate_bps = 1'000'000'000;
  lc.delay = Duration::ms(10);
  lc.queue_packets = 10000;
  Rng rng(100000);
  Link fwd("fwd", lc, loop, pool, rng.fork(1));
  Link rev("rev", lc, loop, pool, rng.fork(2));
  Router router(pool);
  router.client = &client;
  fwd.connect(&server);
  rev.connect(&router);
  client.attach(&fwd);
  server.attach(&rev);

  SocketId ls = *server.stack().socket();
  ASSERT_EQ(server.stack().bind(ls, Endpoint{kServer, kPort}), Errc::kOk);
  ASSERT_EQ(server.stack().listen(loop.now(), ls, 128), Errc::kOk);
  Acceptor acceptor(server, ls);
  const Time flood_end = loop.now() + Duration::s(1);
  Flooder flood(loop, pool, fwd, flood_end, rng.fork(3));
  const int kLegit = 1000;
  Opener opener(client, kLegit);
  loop.run_until(flood_end + Duration::s(10));

  int established = 0;
  for (SocketId s : opener.socks) {
    auto ti = client.stack().tcp_info(s);
    established += ti && ti->tcpi_state == 1;
  }
  const Counters& c = server.stack().counters();
  const double ratio = static_cast<double>(std::min<uint64_t>(acceptor.accepted, established)) / kLegit;
  measured("synflood.syns", static_cast<double>(flood.sent));
  measured("synflood.cookies_sent", static_cast<double>(c.get(Counter::TcpExtSyncookiesSent)));
  measured("synflood.cookies_recv", static_cast<double>(c.get(Counter::TcpExtSyncookiesRecv)));
  measured("synflood.cookies_failed", static_cast<double>(c.get(Counter::TcpExtSyncookiesFailed)));
  measured("synflood.reqq_full_do_cookies", static_cast<double>(c.get(Counter::TcpExtTCPReqQFullDoCookies)));
  measured("synflood.legit_established", established);
  measured("synflood.legit_accepted", static_cast<double>(acceptor.accepted));
  measured("synflood.completion_ratio", ratio);
  measured("synflood.synacks_blackholed", static_cast<double>(router.blackholed));
  EXPECT_EQ(flood.sent, 100000u);
  EXPECT_GT(c.get(Counter::TcpExtSyncookiesSent), 90000u) << "cookies engage once the SYN queue is full";
  EXPECT_GT(c.get(Counter::TcpExtSyncookiesRecv), 0u) << "legitimate clients complete through cookies";
  EXPECT_GE(ratio, 0.99);
  EXPECT_LE(acceptor.accepted, static_cast<uint64_t>(kLegit)) << "no spoofed source ever becomes a connection";
}

}  // namespace
}  // namespace weir::test
