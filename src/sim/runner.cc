#include "sim/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "link/pcap.h"
#include "sim/ecmp.h"
#include "sim/event_loop.h"
#include "sim/host.h"
#include "sim/metrics.h"

namespace weir::sim {
namespace {

// Forwards by IPv4/IPv6 destination address (the dumbbell's router).
class Router final : public Node {
 public:
  explicit Router(PacketPool& pool) : pool_(pool) {}
  void route(const IpAddr& dst, Link* via) { table_.emplace_back(dst, via); }
  void receive(Time now, Packet* p) override {
    IpAddr dst;
    ip_destination(p->bytes, &dst);
    for (auto& [addr, link] : table_)
      if (addr == dst) return link->send(now, p);
    ++no_route_;
    pool_.put(p);
  }
  uint64_t no_route() const { return no_route_; }

 private:
  PacketPool& pool_;
  std::vector<std::pair<IpAddr, Link*>> table_;
  uint64_t no_route_ = 0;
};

class PcapCapture final : public PacketTap {
 public:
  explicit PcapCapture(std::unique_ptr<link::PcapWriter> w) : w_(std::move(w)) {}
  void tap(Time now, std::span<const uint8_t> bytes) override { w_->write(now, bytes); }
  void flush() { w_->flush(); }

 private:
  std::unique_ptr<link::PcapWriter> w_;
};

struct World {
  EventLoop loop;
  PacketPool pool;
  Rng rng;
  std::unique_ptr<Monitor> monitor;
  std::vector<std::unique_ptr<Host>> hosts;  // senders first, receiver last
  std::vector<std::unique_ptr<Link>> links;
  std::unique_ptr<Router> router;
  std::unique_ptr<EcmpSwitch> ingress, egress;  // ecmp: senders' side, receiver's side
  std::vector<const LinkStats*> path_links;     // ecmp: forward link of each path
  std::vector<std::unique_ptr<PcapCapture>> captures;
  std::vector<FlowStats> stats;
  std::vector<std::unique_ptr<SenderApp>> senders;
  std::vector<std::unique_ptr<ReceiverApp>> receivers;
  Scenario sc;
  explicit World(uint64_t seed) : rng(seed) {}
};

StackConfig host_config(const HostSpec& h, uint64_t secret) {
  StackConfig c;
  for (const auto& [k, v] : h.sysctl) c.set(k, v);  // validated at load time
  c.secret = secret;
  return c;
}

Link* add_link(World& w, const std::string& name, const LinkConfig& cfg, Node* dst, const RunOptions& opt,
               std::string* err) {
  w.links.push_back(std::make_unique<Link>(name, cfg, w.loop, w.pool, w.rng.fork(w.links.size() + 1)));
  Link* l = w.links.back().get();
  l->connect(dst);
  if (!opt.pcap_dir.empty() && w.sc.capture) {
    auto pw = link::PcapWriter::open(fmt::format("{}/link-{}.pcap", opt.pcap_dir, name));
    if (!pw) *err = pw.error();
    else {
      w.captures.push_back(std::make_unique<PcapCapture>(std::move(*pw)));
      l->set_tap(w.captures.back().get());
    }
  }
  return l;
}

// Host addresses: 10.0.<net>.<host> (RFC 1918), or for IPv6 hosts
// fd00:0:0:<net>::<host> in a unique local prefix (RFC 4193), so the two
// families number the same hosts alike.
IpAddr host_addr(Family f, uint8_t net, uint8_t host) {
  if (f == Family::kIpv4) return IpAddr::v4(10, 0, net, host);
  std::array<uint8_t, 16> a{};
  a[0] = 0xfd;
  a[7] = net;
  a[15] = host;
  return IpAddr::v6(a);
}

// Per-sender access links (dumbbell, ecmp) into `hub`, and `hub`'s route back.
template <typename Hub>
void add_access(World& w, int n_senders, Hub& hub, const RunOptions& opt, std::string* err) {
  const Scenario& sc = w.sc;
  for (int i = 0; i < n_senders; ++i) {
    LinkConfig acc = sc.access;
    if (static_cast<size_t>(i) < sc.access_delays.size()) acc.delay = sc.access_delays[static_cast<size_t>(i)];
    Host* h = w.hosts[static_cast<size_t>(i)].get();
    h->attach(add_link(w, fmt::format("s{}-up", i + 1), acc, &hub, opt, err));
    hub.route(h->addr(), add_link(w, fmt::format("s{}-down", i + 1), acc, h, opt, err));
  }
}

// senders -> ingress switch -> path i (hashed) -> egress switch -> `fwd` ->
// receiver, and back: receiver -> `rev` -> egress -> path i (hashed by the
// egress switch's own seed) -> ingress -> sender. Each path's config is used
// in both directions.
void build_ecmp(World& w, int n_senders, Host* server, uint64_t seed, const RunOptions& opt, std::string* err) {
  const Scenario& sc = w.sc;
  const Time window = Time::zero() + sc.measure_from;
  w.ingress = std::make_unique<EcmpSwitch>(w.pool, seed * 0x9e3779b97f4a7c15ull + 1, window);
  w.egress = std::make_unique<EcmpSwitch>(w.pool, seed * 0x9e3779b97f4a7c15ull + 2, window);
  for (size_t i = 0; i < sc.paths.size(); ++i) {
    Link* f = add_link(w, fmt::format("p{}-fwd", i + 1), sc.paths[i], w.egress.get(), opt, err);
    w.ingress->add_path(f);
    w.path_links.push_back(&f->stats());
    w.egress->add_path(add_link(w, fmt::format("p{}-rev", i + 1), sc.paths[i], w.ingress.get(), opt, err));
  }
  w.egress->route(server->addr(), add_link(w, "fwd", sc.fwd, server, opt, err));
  server->attach(add_link(w, "rev", sc.rev, w.egress.get(), opt, err));
  add_access(w, n_senders, *w.ingress, opt, err);
}

std::string build(World& w, uint64_t seed, const RunOptions& opt) {
  const Scenario& sc = w.sc;
  std::string err;
  w.monitor = std::make_unique<Monitor>(sc.flows.size());
  const bool many = sc.topology != Topology::kTwoHosts;
  const int n_senders = many ? std::max(1, sc.senders) : 1;
  for (int i = 0; i < n_senders; ++i) {
    IpAddr a = many ? host_addr(sc.family, 1, static_cast<uint8_t>(i + 1)) : host_addr(sc.family, 0, 1);
    std::string name = many ? fmt::format("s{}", i + 1) : "client";
    w.hosts.push_back(std::make_unique<Host>(w.loop, w.pool, name, a, host_config(sc.client, seed * 7919 + i + 1),
                                             sc.client.mtu, w.monitor.get(), sc.trace));
  }
  w.hosts.push_back(std::make_unique<Host>(w.loop, w.pool, "server", host_addr(sc.family, 0, 2),
                                           host_config(sc.server, seed * 7919 + 1000003), sc.server.mtu,
                                           w.monitor.get(), sc.trace));
  Host* server = w.hosts.back().get();
  if (sc.topology == Topology::kTwoHosts) {
    w.hosts[0]->attach(add_link(w, "fwd", sc.fwd, server, opt, &err));
    server->attach(add_link(w, "rev", sc.rev, w.hosts[0].get(), opt, &err));
  } else if (sc.topology == Topology::kEcmp) {
    build_ecmp(w, n_senders, server, seed, opt, &err);
  } else {
    w.router = std::make_unique<Router>(w.pool);
    Link* bottleneck = add_link(w, "fwd", sc.fwd, server, opt, &err);
    w.router->route(server->addr(), bottleneck);
    server->attach(add_link(w, "rev", sc.rev, w.router.get(), opt, &err));
    add_access(w, n_senders, *w.router, opt, &err);
  }
  w.stats.resize(sc.flows.size());
  for (size_t i = 0; i < sc.flows.size(); ++i) {
    const FlowSpec& f = sc.flows[i];
    Endpoint ep{server->addr(), static_cast<uint16_t>(kServerPortBase + f.id)};
    w.receivers.push_back(std::make_unique<ReceiverApp>(*server, f, ep, w.stats[i]));
    Host& h = *w.hosts[static_cast<size_t>(std::min(f.sender, n_senders - 1))];
    w.senders.push_back(std::make_unique<SenderApp>(h, f, ep, w.stats[i]));
  }
  return err;
}

bool all_completed(const World& w) {
  for (const auto& s : w.stats)
    if (!s.completed) return false;
  return true;
}

// Which traced connection on `h` carries sequence numbers from `isn`.
const ConnTrace* find_conn(const Host& h, Seq32 isn, uint64_t span) {
  for (const auto& [id, c] : h.trace().conns()) {
    Seq32 una(c.last_snd_una);
    if (isn <= una && seq_len(isn, una) <= span + 2) return &c;
  }
  return nullptr;
}

// PLB's moves (Linux tcp_plb_check_rehash counts each in
// LINUX_MIB_TCPPLBREHASH), summed over the hosts, and per flow the sender's
// tcpi_rehash (PLB and timeout rehashes, tcp_get_info).
void host_metrics(const World& w, RunResult& r) {
  uint64_t plb = 0;
  for (const auto& h : w.hosts) plb += h->stack().counters().get(Counter::TcpExtTCPPLBRehash);
  r.metrics["plb_rehash"] = static_cast<double>(plb);
  for (size_t i = 0; i < w.stats.size(); ++i)
    if (w.stats[i].sender_info)
      r.metrics[fmt::format("flow.{}.rehash", w.sc.flows[i].id)] = w.stats[i].sender_info->tcpi_rehash;
}

}  // namespace

RunResult run_once(const Scenario& sc, uint64_t seed, const RunOptions& opt) {
  auto w = std::make_shared<World>(seed);
  w->sc = sc;
  RunResult r;
  r.seed = seed;
  r.error = build(*w, seed, opt);
  const auto wall0 = std::chrono::steady_clock::now();
  auto wall = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count(); };
  const Time end = Time::zero() + sc.duration;
  double next_report = 0.1;
  // Virtual-time slices: the early stop (all flows done) is checked at slice
  // boundaries, so it does not depend on wall time.
  const Duration slice = Duration::ms(10);
  for (Time t = Time::zero(); t < end && !w->loop.stopped();) {
    t = std::min(end, t + slice);
    w->loop.run_until(t);
    if (all_completed(*w)) break;
    if (opt.progress && wall() >= next_report) {
      next_report = wall() + 0.1;
      opt.progress(Progress{w->loop.now(), end, wall(), w->loop.events_run()});
    }
  }
  if (w->loop.overflows()) r.error = "event queue overflow: the run was stopped";
  for (const auto& h : w->hosts)
    if (h->stalled()) r.error = fmt::format("host {}: the stack's timer deadline stayed in the past: the run was stopped", h->name());
  r.wall_s = wall();
  r.events = w->loop.events_run();
  r.simulated = w->loop.now() - Time::zero();
  for (auto& a : w->senders) a->snapshot(w->loop.now());
  for (auto& a : w->receivers) a->snapshot(w->loop.now());
  for (auto& c : w->captures) c->flush();
  const Host& server = *w->hosts.back();
  for (size_t i = 0; i < sc.flows.size(); ++i) {
    FlowView v;
    v.id = sc.flows[i].id;
    v.spec = &w->sc.flows[i];
    v.stats = &w->stats[i];
    v.watch = &w->monitor->flow(i);
    const Host& sender = *w->hosts[static_cast<size_t>(std::min<int>(sc.flows[i].sender, static_cast<int>(w->hosts.size()) - 2))];
    if (v.watch->syn_seen) v.sender = find_conn(sender, v.watch->isn, v.stats->bytes_written);
    if (v.watch->synack_seen)
      v.receiver = find_conn(server, v.watch->peer_isn,
                             uint64_t{sc.flows[i].transactions} * sc.flows[i].response);
    r.flows.push_back(v);
  }
  for (const auto& l : w->links) {
    r.links.push_back(LinkView{l->name(), &l->stats(), &l->config()});
    r.packets += l->stats().packets_in;
  }
  compute_run_metrics(r, w->loop.now());
  if (w->ingress) add_path_metrics(*w->ingress, w->path_links, sc.measure_from > Duration::zero(), r.metrics);
  host_metrics(*w, r);
  r.keep = w;
  return r;
}

}  // namespace weir::sim
