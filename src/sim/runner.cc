#include "sim/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "link/pcap.h"
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
    const auto& b = p->bytes;
    if (b.size() >= 20 && (b[0] >> 4) == 4) {
      dst = IpAddr::v4(b[16], b[17], b[18], b[19]);
    } else if (b.size() >= 40 && (b[0] >> 4) == 6) {
      std::array<uint8_t, 16> a{};
      std::copy(b.begin() + 24, b.begin() + 40, a.begin());
      dst = IpAddr::v6(a);
    }
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

std::string build(World& w, uint64_t seed, const RunOptions& opt) {
  const Scenario& sc = w.sc;
  std::string err;
  w.monitor = std::make_unique<Monitor>(sc.flows.size());
  const int n_senders = sc.topology == Topology::kDumbbell ? std::max(1, sc.senders) : 1;
  for (int i = 0; i < n_senders; ++i) {
    IpAddr a = sc.topology == Topology::kDumbbell ? IpAddr::v4(10, 0, 1, static_cast<uint8_t>(i + 1))
                                                  : IpAddr::v4(10, 0, 0, 1);
    std::string name = sc.topology == Topology::kDumbbell ? fmt::format("s{}", i + 1) : "client";
    w.hosts.push_back(std::make_unique<Host>(w.loop, w.pool, name, a, host_config(sc.client, seed * 7919 + i + 1),
                                             sc.client.mtu, w.monitor.get(), sc.trace));
  }
  w.hosts.push_back(std::make_unique<Host>(w.loop, w.pool, "server", IpAddr::v4(10, 0, 0, 2),
                                           host_config(sc.server, seed * 7919 + 1000003), sc.server.mtu,
                                           w.monitor.get(), sc.trace));
  Host* server = w.hosts.back().get();
  if (sc.topology == Topology::kTwoHosts) {
    w.hosts[0]->attach(add_link(w, "fwd", sc.fwd, server, opt, &err));
    server->attach(add_link(w, "rev", sc.rev, w.hosts[0].get(), opt, &err));
  } else {
    w.router = std::make_unique<Router>(w.pool);
    Link* bottleneck = add_link(w, "fwd", sc.fwd, server, opt, &err);
    w.router->route(server->addr(), bottleneck);
    server->attach(add_link(w, "rev", sc.rev, w.router.get(), opt, &err));
    for (int i = 0; i < n_senders; ++i) {
      LinkConfig acc = sc.access;
      if (static_cast<size_t>(i) < sc.access_delays.size()) acc.delay = sc.access_delays[static_cast<size_t>(i)];
      Host* h = w.hosts[static_cast<size_t>(i)].get();
      h->attach(add_link(w, fmt::format("s{}-up", i + 1), acc, w.router.get(), opt, &err));
      w.router->route(h->addr(), add_link(w, fmt::format("s{}-down", i + 1), acc, h, opt, &err));
    }
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
  r.keep = w;
  return r;
}

}  // namespace weir::sim
