// `weir emu --a NS:TUN --b NS:TUN --link FILE.toml`: a real-time link
// emulator between two TUN devices in two network namespaces, applying the
// lab's own link models (src/sim/link.h: rate, delay, jitter, reordering,
// loss, bounded queue, CoDel), so Linux and weir cross the same path in the
// lab and on a real kernel. This kernel has no netem.
//
// Real-time adapter: the lab's Link runs on a discrete-event loop. Here that
// loop's virtual time is pinned to CLOCK_MONOTONIC: before a packet enters a
// link, the loop is run up to "now"; the reactor sleeps (timerfd, optionally
// spinning the last stretch) until the loop's next event. Each packet a link
// delivers is written at once, and its lateness against the modelled
// departure time goes into a histogram.
//
// One thread per direction, each with its own loop, pool, link and reactor
// (the directions share nothing but the seed): a TUN write runs the
// receiving namespace's input path in the writer's thread, and that must
// not delay the other direction's departures.
//
// Timing fidelity on a loaded machine (the target: every packet within
// 50 us of its modelled departure) by default, each overridable:
//  - SCHED_FIFO for the two forwarding threads (--rt-prio, default 50): a
//    compile job on the same core must not delay a departure; refused
//    (no CAP_SYS_NICE) means a warning and normal priority;
//  - mlockall: a page fault on a pool buffer must not either;
//  - sleep on the timerfd to --spin-us (default 100 us) before the next
//    departure, then busy-poll to the exact time (a timer wake-up is late
//    by tens of microseconds; the report shows by how much);
//  - reads interleaved with departures: a batch of reads (--batch per
//    wake-up) checks the clock after every packet, so reading a burst does
//    not hold back a packet that falls due meanwhile.
// The threads sleep whenever the next departure is further than the spin
// window: spinning all the time under SCHED_FIFO would take both cores of
// a small machine from the very senders whose packets it forwards
// (driver::plan_wait decides, and never spins with nothing due).
//
// --busy (dedicated-core mode, for a machine where the emulator can have a
// core to itself; the rest of the test runs on the others, e.g. taskset as
// bench/emu_timing.sh does): one SCHED_FIFO thread serves both directions,
// pinned (--cpu), and polls instead of sleeping whenever a departure is due
// within --busy-horizon-us, so no departure waits for a timer wake-up. It
// stays within the kernel's RT budget (driver::RtBudget: a FIFO thread that
// runs 950 ms of a second is stopped for the other 50 ms, measured here);
// when the budget is spent it waits as the default mode does. Setting
// kernel.sched_rt_runtime_us=-1 lifts the throttle and the budget with it.
//
// What the histogram measures: the clock when write(2) starts minus the
// modelled departure, i.e. when the packet is handed to the receiving
// device. Not when the write returns: without --napi the write also runs
// the receiving namespace's input path (and whatever that releases, e.g.
// a burst of data an ACK clocks out), which is the receiver's work, timed
// separately as "TUN write time". The write's duration still counts
// wherever it delays the next packet: that packet's own start is late, and
// it is blamed on "tun-write".
//
// --napi (off by default: no consistent gain measured on the shared 2-core
// VM) opens the devices with IFF_NAPI and makes their NAPI threaded, under
// SCHED_FIFO one below the forwarding threads, so a write only queues the
// packet and the input path runs in the kernel thread napi/DEV-0.
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <thread>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command.h"
#include "driver/clock.h"
#include "driver/departure.h"
#include "driver/histogram.h"
#include "driver/netns.h"
#include "driver/reactor.h"
#include "link/tun.h"
#include "sim/event_loop.h"
#include "sim/link.h"
#include "sim/scenario.h"
#include "sim/units.h"

namespace weir::cli {
namespace {

using driver::DepartureContext;
using driver::DepartureRecord;
using driver::ErrorHistogram;

struct EmuConfig {
  sim::LinkConfig a_to_b, b_to_a;
  uint64_t seed = 1;
};

// The link file is a lab scenario (docs/lab.md): [link.fwd] is A -> B (A is
// the client/sender side), [link.rev] is B -> A, `seed` seeds the models.
// The lab's own loader reads it, so the keys, units and error messages are
// the lab's; a link-only file gets a placeholder flow appended, since the
// loader insists on one (emu has no flows of its own).
Expected<EmuConfig, std::string> load_emu_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Unexpected(fmt::format("cannot read {}", path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.find("[[flow]]") == std::string::npos) text += "\n[[flow]]\nbytes = 1\n";
  auto sc = sim::parse_scenario(text, path);
  if (!sc) return Unexpected(sc.error());
  EmuConfig c;
  c.a_to_b = sc->fwd;
  c.b_to_a = sc->rev;
  c.seed = sc->seeds.empty() ? 1 : sc->seeds.front();
  return c;
}

// The far end of a link: writes each delivered packet to a TUN device and
// records how late it left against its modelled departure, and why
// (driver/departure.h: the thread's context says what it was doing).
class TunSink final : public sim::Node {
 public:
  TunSink(link::TunDevice& dev, sim::PacketPool& pool, DepartureContext* ctx) : dev_(dev), pool_(pool), ctx_(ctx) {}
  void use_context(DepartureContext* ctx) { ctx_ = ctx; }
  void receive(Time due, sim::Packet* p) override {
    // The packet departs when it is handed to the kernel; the write itself
    // also runs the receiving namespace's input path in this thread, which
    // is what the write time measures.
    Time start = driver::mono_now();
    dev_.write_one(p->view());
    Time end = driver::mono_now();
    rec.add(due, start, end, *ctx_);
    ctx_->prev_write_end = end;
    pool_.put(p);
  }
  DepartureRecord rec;

 private:
  link::TunDevice& dev_;
  sim::PacketPool& pool_;
  DepartureContext* ctx_;
};

// Threaded NAPI for `dev` in namespace `ns`: the device's receive work (the
// input path a write would otherwise run inside write(2)) moves to a kernel
// thread, napi/DEV-N. sysfs shows a namespace's devices only to a sysfs
// mounted in it, which is what `ip netns exec` sets up.
bool make_napi_threaded(const std::string& ns, const std::string& dev) {
  return driver::run_program({"ip", "netns", "exec", ns, "sh", "-c", "echo 1 > /sys/class/net/$0/threaded", dev}) == 0;
}

// The device's NAPI kernel thread (napi/DEV-0: one queue) runs the
// receiving stack's input for every packet written. At normal priority on a
// loaded machine it would add the machine's scheduling delay to the path,
// unseen by the departure histogram; under SCHED_FIFO just below the
// forwarding threads it runs as soon as a core is free of them. (A device
// of the same name in another namespace would match too: harmless.)
int boost_napi_threads(const std::string& dev, int prio) {
  if (prio <= 0) return 0;
  // comm is cut at 15 characters.
  const std::string want = fmt::format("napi/{}-", dev).substr(0, 15);
  int boosted = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string comm;
    std::getline(std::ifstream(e.path() / "comm"), comm);
    if (comm.compare(0, want.size(), want) != 0) continue;
    sched_param sp{};
    sp.sched_priority = prio;
    if (::sched_setscheduler(std::stoi(pid), SCHED_FIFO, &sp) == 0) ++boosted;
  }
  return boosted;
}

Expected<link::TunDevice, std::string> open_in_netns(const std::string& spec, bool napi, int napi_prio) {
  auto colon = spec.find(':');
  if (colon == std::string::npos) return Unexpected(fmt::format("'{}': expected NS:TUN", spec));
  const std::string ns = spec.substr(0, colon);
  Expected<link::TunDevice, std::string> dev = Unexpected(std::string());
  {
    driver::NetnsGuard back;
    auto in = driver::enter_netns(ns);
    if (!in) return Unexpected(in.error());
    dev = link::TunDevice::open(spec.substr(colon + 1), false, napi);
  }
  if (!dev || !napi) return dev;
  if (!make_napi_threaded(ns, dev->name()))
    fmt::print(stderr, "weir emu: {}: threaded NAPI refused; writes run the input path inline\n", spec);
  else if (napi_prio > 0 && boost_napi_threads(dev->name(), napi_prio) == 0)
    fmt::print(stderr, "weir emu: {}: NAPI thread not found or SCHED_FIFO refused\n", spec);
  return dev;
}

nlohmann::json late_json(const DepartureRecord& r) {
  nlohmann::json causes = nlohmann::json::object();
  for (size_t i = 0; i < driver::kLateCauses; ++i) {
    auto c = static_cast<driver::LateCause>(i);
    const ErrorHistogram& h = r.late(c);
    causes[std::string(driver::late_cause_name(c))] = {{"count", h.count()},
                                                        {"max_us", static_cast<double>(h.max().ns()) / 1e3}};
  }
  const ErrorHistogram& w = r.write_time();
  return {{"late_by_cause", causes},
          {"gaps_over_2ms", {{"added", r.gaps_added()}, {"modelled", r.gaps_modelled()}}},
          {"write_time", {{"p50_bound_us", w.percentile_bound(0.5).us()}, {"p99_bound_us", w.percentile_bound(0.99).us()},
                          {"mean_us", static_cast<double>(w.mean().ns()) / 1e3},
                          {"max_us", static_cast<double>(w.max().ns()) / 1e3}}}};
}

nlohmann::json link_json(const sim::Link& l, const DepartureRecord& r) {
  const ErrorHistogram& h = r.all();
  const auto& s = l.stats();
  nlohmann::json j = {{"packets_in", s.packets_in}, {"delivered", s.delivered},
                      {"bytes_delivered", s.bytes_delivered}, {"drop_loss", s.drop_loss},
                      {"drop_queue", s.drop_queue}, {"drop_codel", s.drop_codel},
                      {"reordered", s.reordered}, {"max_queue_packets", s.max_queue_packets},
                      {"ce_marked", s.ce_marked}};
  nlohmann::json buckets = nlohmann::json::array();
  for (size_t i = 0; i < ErrorHistogram::kBuckets; ++i) buckets.push_back(h.bucket(i));
  j["timing"] = {{"samples", h.count()}, {"mean_us", static_cast<double>(h.mean().ns()) / 1e3},
                 {"max_us", static_cast<double>(h.max().ns()) / 1e3},
                 {"within_50us", h.fraction_within(Duration::us(50))},
                 {"p99_bound_us", h.percentile_bound(0.99).us()},
                 {"p999_bound_us", h.percentile_bound(0.999).us()}, {"buckets", buckets}};
  j["timing"].update(late_json(r));
  return j;
}

struct EmuArgs {
  std::string a, b, link, json;
  double duration_s = 0;
  int64_t spin_us = 100;
  int rt_prio = 50;
  bool mlock = true;
  size_t batch = 64;
  bool pin = false;
  bool napi = false;
  bool busy = false;
  int cpu = -1;  // --busy: the forwarding thread's CPU (-1: the last one)
  int64_t busy_horizon_us = 2000;
  bool rt_budget = true;
};

// Pins the calling thread to `cpu` if the machine has more than one
// online; false (with a warning) otherwise.
bool pin_to_cpu(int cpu, const std::string& who) {
  if (::sysconf(_SC_NPROCESSORS_ONLN) < 2) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (int e = ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set); e != 0) {
    fmt::print(stderr, "weir emu: {}: pinning to CPU {} refused ({})\n", who, cpu, std::strerror(e));
    return false;
  }
  return true;
}

// SCHED_FIFO for the calling thread; false (with a warning) if refused.
bool go_realtime(int prio, const std::string& who) {
  if (prio <= 0) return false;
  sched_param sp{};
  sp.sched_priority = prio;
  if (int e = ::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &sp); e != 0) {
    fmt::print(stderr, "weir emu: {}: SCHED_FIFO {} refused ({}); running at normal priority, timing will suffer\n",
               who, prio, std::strerror(e));
    return false;
  }
  return true;
}

// One direction of the path: reads `from`, models the link, writes `to`.
// A Forwarder (one thread) runs one direction, or both in --busy mode.
class Direction {
 public:
  Direction(std::string name, const sim::LinkConfig& cfg, sim::Rng rng, link::TunDevice& from, link::TunDevice& to)
      : from_(from), link_(std::move(name), cfg, loop_, pool_, rng), sink_(to, pool_, &own_ctx_) {
    link_.connect(&sink_);
    buf_.resize(65536 + 256);
  }
  // The thread's context (what it was doing when a packet fell due), shared
  // by the directions one thread serves: a write of one delays the other.
  void use_context(DepartureContext* ctx) { ctx_ = ctx, sink_.use_context(ctx); }
  // The loop starts at the real clock so modelled times are real times.
  void start(Time now) { loop_.run_until(now); }
  void run_until(Time now) { loop_.run_until(now); }
  Time next_time() const { return loop_.next_time(); }

  // Up to `max` packets from the device, each stamped and offered to the
  // link as it is read; departures that fall due between two reads leave
  // between them (a read costs a few microseconds, a batch up to hundreds):
  // `tick` runs every direction the thread serves up to now.
  template <typename Tick>
  void read_batch(size_t max, Tick&& tick) {
    size_t n = 0;
    for (; n < max; ++n) {
      long r = from_.read_one(buf_);
      if (r <= 0) break;
      Time now = driver::mono_now();
      tick(now);
      link_.send(now, pool_.make(std::span<const uint8_t>(buf_.data(), static_cast<size_t>(r))));
    }
    if (n) from_.count_batch();
  }

  int fd() const { return from_.fd(); }
  const sim::Link& link() const { return link_; }
  const ErrorHistogram& hist() const { return sink_.rec.all(); }
  const DepartureRecord& record() const { return sink_.rec; }

 private:
  link::TunDevice& from_;
  sim::EventLoop loop_;
  sim::PacketPool pool_;
  sim::Link link_;
  DepartureContext own_ctx_;
  DepartureContext* ctx_ = &own_ctx_;
  TunSink sink_;
  std::vector<uint8_t> buf_;
};

// The kernel's RT throttle settings (kernel.sched_rt_runtime_us, _period_us).
driver::RtBudget kernel_rt_budget() {
  auto read = [](const char* path, int64_t dflt) {
    int64_t v = dflt;
    std::ifstream in(path);
    in >> v;
    return in ? v : dflt;
  };
  return driver::RtBudget::from_kernel(read("/proc/sys/kernel/sched_rt_runtime_us", 950000),
                                       read("/proc/sys/kernel/sched_rt_period_us", 1000000));
}

// One forwarding thread: its reactor, and the directions it serves (one by
// default; both with --busy, on a dedicated core).
class Forwarder {
 public:
  Forwarder(std::string name, std::vector<Direction*> dirs) : name_(std::move(name)), dirs_(std::move(dirs)) {
    for (Direction* d : dirs_) d->use_context(&ctx_);
  }

  // Runs in its own thread until `stop_fd` becomes readable.
  void run(const EmuArgs& args, int stop_fd, int cpu) {
    // Each direction on its own core (--pin), or the one busy thread on
    // its dedicated core: two SCHED_FIFO threads on one core delay each
    // other by a whole spin window or TUN write.
    if (cpu >= 0) pinned_ = pin_to_cpu(cpu, name_), cpu_ = cpu;
    rt_ = go_realtime(args.rt_prio, name_);
    if (auto r = rx_.init(false); !r) return (void)fmt::print(stderr, "weir emu: {}\n", r.error());
    rx_.set_spin(Duration::us(args.spin_us));
    // Busy: poll whenever a departure is due within the horizon, within
    // the kernel's RT budget (a SCHED_FIFO thread that polls for 950 ms of
    // a second is stopped for the other 50 ms).
    // (Not in the default mode: at 1 Gbit/s its threads poll nearly all
    // the time too, but making them sleep before the throttle did not cut
    // the worst case there (30-50 ms stalls inside TUN writes remained) and
    // cost 5-10 % of departures within 50 us, measured 30 Nov.)
    if (args.busy)
      rx_.set_busy(Duration::us(args.busy_horizon_us), rt_ && args.rt_budget ? kernel_rt_budget() : driver::RtBudget());
    const Time now0 = driver::mono_now();
    for (Direction* d : dirs_) d->start(now0);
    auto tick = [this](Time now) {
      for (Direction* d : dirs_) d->run_until(now);
    };
    for (Direction* d : dirs_)
      (void)rx_.watch(d->fd(), EPOLLIN, [this, d, &args, tick](uint32_t) {
        ctx_ = {DepartureContext::Phase::kRead, rx_.last_wait_start(), rx_.last_wait_end(), rx_.last_wait_slept(),
                ctx_.prev_write_end};
        d->read_batch(args.batch, tick);
        rearm();
      });
    (void)rx_.watch(stop_fd, EPOLLIN, [&](uint32_t) { rx_.stop(); });
    rx_.on_timer([this, tick](Time now) {
      ctx_ = {DepartureContext::Phase::kTimer, rx_.last_wait_start(), rx_.last_wait_end(), rx_.last_wait_slept(),
              ctx_.prev_write_end};
      tick(now);
      rearm();
    });
    rx_.run();
  }

  bool realtime() const { return rt_; }
  bool pinned() const { return pinned_; }
  int cpu() const { return cpu_; }
  Duration spin_window() const { return rx_.spin_window(); }
  const driver::ReactorStats& stats() const { return rx_.stats(); }
  const driver::RtBudget& budget() const { return rx_.budget(); }

 private:
  void rearm() {
    Time next = Time::never();
    for (Direction* d : dirs_) next = std::min(next, d->next_time());
    rx_.set_deadline(next);
  }
  std::string name_;
  std::vector<Direction*> dirs_;
  DepartureContext ctx_;
  driver::Reactor rx_;
  bool rt_ = false;
  bool pinned_ = false;
  int cpu_ = -1;
};

void report(const EmuArgs& args, const Direction& ab, const Direction& ba, const std::vector<Forwarder*>& fw) {
  ErrorHistogram all = ba.hist();
  all.merge(ab.hist());
  for (const auto* d : {&ab, &ba}) {
    const auto& s = d->link().stats();
    fmt::print("{}: in {} delivered {} ({} bytes) drops loss {} queue {} codel {} reordered {} max-queue {}\n",
               d->link().name(), s.packets_in, s.delivered, s.bytes_delivered, s.drop_loss, s.drop_queue,
               s.drop_codel, s.reordered, s.max_queue_packets);
  }
  fmt::print("timing error (actual - modelled departure):\n{}", all.format());
  fmt::print("p99 <= {}us  p99.9 <= {}us  max {:.1f}us\n", all.percentile_bound(0.99).us(),
             all.percentile_bound(0.999).us(), static_cast<double>(all.max().ns()) / 1e3);
  fmt::print("within 50us: {:.3f}% (a->b {:.3f}%, b->a {:.3f}%)\n", 100.0 * all.fraction_within(Duration::us(50)),
             100.0 * ab.hist().fraction_within(Duration::us(50)), 100.0 * ba.hist().fraction_within(Duration::us(50)));
  for (const auto* d : {&ab, &ba}) fmt::print("{} {}", d->link().name(), d->record().format_causes());
  ErrorHistogram wake;
  uint64_t wakeups = 0, spins = 0, refusals = 0, yields = 0;
  bool rt = true, pinned = true;
  std::string windows;
  for (const Forwarder* f : fw) {
    wake.merge(f->stats().wake_late);
    wakeups += f->stats().wakeups, spins += f->stats().spins, refusals += f->stats().budget_refusals;
    yields += f->stats().forced_yields;
    rt = rt && f->realtime(), pinned = pinned && f->pinned();
    windows += fmt::format("{}{:.1f}", windows.empty() ? "" : " / ", static_cast<double>(f->spin_window().ns()) / 1e3);
  }
  // A wake-up later than the spin window means the departure after it was
  // met by luck or missed: the window (or the machine) is the limit.
  fmt::print("timer wake-ups {}: p99 late <= {}us, max {:.1f}us (spin window at most {}us, at the end {}us); "
             "SCHED_FIFO: {}; pinned: {}; RT budget: {}, forced sleeps {}\n",
             wake.count(), wake.percentile_bound(0.99).us(), static_cast<double>(wake.max().ns()) / 1e3, args.spin_us,
             windows, rt ? "yes" : "no", pinned ? "yes" : "no",
             fw.front()->budget().limited() ? fmt::format("{:.0f}%", 100.0 * fw.front()->budget().share()) : "none",
             yields);
  if (args.busy) {
    fmt::print("busy: one thread on CPU {}, polling within {}us of a departure; waits that slept for want of "
               "RT budget: {}\n",
               fw.front()->cpu(), args.busy_horizon_us, refusals);
  }
  if (!args.json.empty()) {
    nlohmann::json j = {{"a_to_b", link_json(ab.link(), ab.record())}, {"b_to_a", link_json(ba.link(), ba.record())},
                        {"wakeups", wakeups},
                        {"spins", spins},
                        {"realtime", rt},
                        {"pinned", pinned},
                        {"busy", args.busy},
                        {"budget_refusals", refusals},
                        {"forced_yields", yields},
                        {"spin_us", args.spin_us},
                        {"timer_wake_late", {{"samples", wake.count()},
                                             {"p99_bound_us", wake.percentile_bound(0.99).us()},
                                             {"max_us", static_cast<double>(wake.max().ns()) / 1e3}}}};
    std::ofstream(args.json) << j.dump(2) << "\n";
  }
}

int run_emu(const EmuArgs& args) {
  auto cfg = load_emu_config(args.link);
  if (!cfg) return fmt::print(stderr, "weir emu: {}\n", cfg.error()), 2;
  // Locked memory: no page fault (pool growth, a cold stack page) may
  // stall a forwarding thread.
  if (args.mlock && ::mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
    fmt::print(stderr, "weir emu: mlockall refused ({}); continuing unlocked\n", std::strerror(errno));
  const int napi_prio = args.rt_prio - 1;
  auto ta = open_in_netns(args.a, args.napi, napi_prio);
  if (!ta) return fmt::print(stderr, "weir emu: --a {}: {}\n", args.a, ta.error()), 1;
  auto tb = open_in_netns(args.b, args.napi, napi_prio);
  if (!tb) return fmt::print(stderr, "weir emu: --b {}: {}\n", args.b, tb.error()), 1;
  // The main thread owns the signals (blocked here, so the direction
  // threads inherit the mask) and the --duration timer.
  driver::Reactor main;
  if (auto r = main.init(); !r) return fmt::print(stderr, "weir emu: {}\n", r.error()), 1;
  sim::Rng rng(cfg->seed);
  Direction ab("a->b", cfg->a_to_b, rng.fork(1), *ta, *tb);
  Direction ba("b->a", cfg->b_to_a, rng.fork(2), *tb, *ta);
  // Default: a thread per direction. --busy: one thread for both, pinned
  // to its own core and polling while packets are queued.
  std::vector<std::unique_ptr<Forwarder>> fw;
  if (args.busy) {
    fw.push_back(std::make_unique<Forwarder>("a<->b", std::vector<Direction*>{&ab, &ba}));
  } else {
    fw.push_back(std::make_unique<Forwarder>("a->b", std::vector<Direction*>{&ab}));
    fw.push_back(std::make_unique<Forwarder>("b->a", std::vector<Direction*>{&ba}));
  }
  const int ncpu = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  std::vector<int> stops;
  std::vector<std::thread> threads;
  for (size_t i = 0; i < fw.size(); ++i) {
    int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) return fmt::print(stderr, "weir emu: eventfd failed\n"), 1;
    stops.push_back(fd);
    int cpu = -1;
    if (args.busy) cpu = args.cpu >= 0 ? args.cpu : ncpu - 1;
    else if (args.pin) cpu = static_cast<int>(i);
    threads.emplace_back([&, i, fd, cpu] { fw[i]->run(args, fd, cpu); });
  }
  Time end = args.duration_s > 0 ? driver::mono_now() + Duration::ns(static_cast<int64_t>(args.duration_s * 1e9))
                                 : Time::never();
  main.on_timer([&](Time) { main.stop(); });
  main.set_deadline(end);
  main.on_signal([&](int) { main.stop(); });
  fmt::print(stderr, "weir emu: {} <-> {} running (Ctrl-C to stop)\n", args.a, args.b);
  main.run();
  const uint64_t one = 1;
  for (int fd : stops) (void)!::write(fd, &one, sizeof one);
  for (auto& t : threads) t.join();
  for (int fd : stops) ::close(fd);
  std::vector<Forwarder*> raw;
  for (auto& f : fw) raw.push_back(f.get());
  report(args, ab, ba, raw);
  return 0;
}

Register reg("emu", [](CLI::App& app) -> std::function<int()> {
  app.description("Real-time link emulator between two TUN devices, using the lab's link models");
  auto args = std::make_shared<EmuArgs>();
  app.add_option("--a", args->a, "side A: NETNS:TUN")->required();
  app.add_option("--b", args->b, "side B: NETNS:TUN")->required();
  app.add_option("--link", args->link, "link model: a lab scenario file ([link.fwd] = A->B, [link.rev] = B->A, seed)")->required();
  app.add_option("--duration", args->duration_s, "stop after this many seconds (default: until signalled)");
  app.add_option("--spin-us", args->spin_us, "busy-poll this long before each departure (default 100; 0: sleep only)");
  app.add_option("--rt-prio", args->rt_prio, "forwarding threads under SCHED_FIFO at this priority (default 50; 0: normal)")
      ->check(CLI::Range(0, 99));
  app.add_flag("--no-mlock", [args](int64_t n) { args->mlock = n == 0; }, "do not mlockall()");
  app.add_option("--batch", args->batch, "packets read per device per wake-up");
  app.add_flag("--pin", args->pin, "pin the a->b thread to CPU 0 and b->a to CPU 1 (if 2+ CPUs)");
  app.add_flag("--busy", args->busy,
               "dedicated-core mode: one thread serves both directions, pinned (--cpu), and polls instead of "
               "sleeping while a departure is due within --busy-horizon-us, within the kernel's RT budget; "
               "run the rest of the test on the other CPUs (taskset)");
  app.add_flag("--no-rt-budget", [args](int64_t n) { args->rt_budget = n == 0; },
               "--busy: poll regardless of the kernel's RT throttle (kernel.sched_rt_runtime_us)");
  app.add_option("--cpu", args->cpu, "--busy: the forwarding thread's CPU (default: the last one)");
  app.add_option("--busy-horizon-us", args->busy_horizon_us,
                 "--busy: poll when the next departure is this close (default 2000)");
  app.add_flag("--napi", args->napi,
               "open the devices with IFF_NAPI, threaded: the receiving stack's input runs in a kernel thread, "
               "not inside the emulator's write");
  app.add_option("--json", args->json, "write link statistics and the timing histogram here");
  return [args] { return run_emu(*args); };
});

}  // namespace
}  // namespace weir::cli
