// The timeline: packetdrill's event semantics (run.c) on a virtual clock.
// Relative times anchor to the previous event's actual time, or to its
// script time when both are inbound packets; tolerance is
// max(--tolerance_usecs, --tolerance_percent of the gap since the previous
// event); engine timers run in deadline order between events.
#include "pkt/runner.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "pkt/parser.h"
#include "pkt/runner_impl.h"

namespace weir::pkt {
namespace {

constexpr int kMaxStepsPerInstant = 100000;

bool parse_bool_option(const std::string& v) { return v.empty() || v == "1" || v == "true"; }

}  // namespace

const char* to_string(IpVersion v) {
  switch (v) {
    case IpVersion::kIpv4: return "ipv4";
    case IpVersion::kIpv6: return "ipv6";
    case IpVersion::kIpv4MappedIpv6: return "ipv4-mapped-ipv6";
  }
  return "?";
}

bool parse_ip_version(std::string_view s, IpVersion* out) {
  if (s == "ipv4") *out = IpVersion::kIpv4;
  else if (s == "ipv6") *out = IpVersion::kIpv6;
  else if (s == "ipv4-mapped-ipv6") *out = IpVersion::kIpv4MappedIpv6;
  else return false;
  return true;
}

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "PASS";
    case Outcome::kFail: return "FAIL";
    case Outcome::kSkip: return "SKIP";
  }
  return "?";
}

std::vector<IpVersion> variants_for(const std::string& path) {
  auto ends = [&](std::string_view suf) {
    return path.size() >= suf.size() && path.compare(path.size() - suf.size(), suf.size(), suf) == 0;
  };
  // packetdrill's run_all.py: *v6.pkt is IPv6 only, *v4.pkt IPv4 only.
  if (ends("v6.pkt")) return {IpVersion::kIpv6};
  if (ends("v4.pkt")) return {IpVersion::kIpv4, IpVersion::kIpv4MappedIpv6};
  return {IpVersion::kIpv4, IpVersion::kIpv4MappedIpv6, IpVersion::kIpv6};
}

std::string source_line(const std::string& source, int line) {
  std::istringstream in(source);
  std::string s;
  for (int i = 1; std::getline(in, s); ++i) {
    if (i != line) continue;
    size_t a = s.find_first_not_of(" \t");
    size_t b = s.find_last_not_of(" \t\r");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
  }
  return {};
}

Runner::Runner(const Script& s, const std::string& source, const RunOptions& opt)
    : script_(s), source_(source), opt_(opt) {
  cfg_.ip_version = opt.ip_version;
  // The kernel selftest runner's addresses (tools/testing/selftests/net/packetdrill).
  if (opt.ip_version == IpVersion::kIpv6) {
    cfg_.local_ip = *IpAddr::parse("fd3d:a0b:17d6::1");
    cfg_.remote_ip = *IpAddr::parse("fd3d:fa7b:d17d::1");
    cfg_.mtu = 1520;
  } else {
    cfg_.local_ip = *IpAddr::parse("192.168.0.1");
    cfg_.remote_ip = *IpAddr::parse("192.0.2.1");
  }
}

Runner::~Runner() = default;

Unexpected<Stop> Runner::stop(Outcome o, std::string reason, std::vector<std::string> detail) const {
  return Unexpected<Stop>(Stop{o, std::move(reason), std::move(detail)});
}

Status Runner::engine_status() const {
  if (halted_) return Unexpected<Stop>(*halted_);
  return ok();
}

void Runner::log(const std::string& line) {
  if (opt_.verbose) res_.log.push_back(line);
}

std::string Runner::fmt_time(Time t) const { return fmt::format("{:.6f}", (t - kEpoch).secs()); }

Duration Runner::tolerance_for(Duration delta) const {
  auto pct = Duration::ns(static_cast<int64_t>(cfg_.tolerance_percent / 100.0 *
                                               static_cast<double>(delta.ns())));
  return max(cfg_.tolerance, pct);
}

// Called from inside the engine: a runaway sender is recorded here and ends
// the run at the next engine_status() check.
void Runner::transmit(std::span<const uint8_t> ip_packet) {
  outq_.push_back({now_, std::vector<uint8_t>(ip_packet.begin(), ip_packet.end())});
  res_.packets.emplace_back(now_, outq_.back().bytes);
  if (outq_.size() > 100000 && !halted_)
    halted_ = Stop{Outcome::kFail, "the engine sent more than 100000 unexpected packets", {}};
}

XmitResult Runner::try_transmit(std::span<const uint8_t> ip_packet) {
  if (qdisc_drops_) return XmitResult::kDropped;  // the qdisc's NET_XMIT_DROP
  transmit(ip_packet);
  return XmitResult::kSent;
}

Expected<bool, Stop> Runner::step_engine_once(Time limit) {
  Time d = stack_->next_deadline();
  if (pending_) d = min(d, pending_->next_wake());
  if (d.is_never() || d > limit) return false;
  same_instant_ = d <= now_ ? same_instant_ + 1 : 0;
  if (same_instant_ > kMaxStepsPerInstant)
    return stop(Outcome::kFail, fmt::format("engine timers did not settle at {} (next_deadline() kept "
                                            "returning a time already reached)", fmt_time(now_)));
  now_ = max(now_, d);
  stack_->advance(now_);
  if (auto s = engine_status(); !s) return stopped(s);
  if (auto s = poll_pending(); !s) return stopped(s);
  return true;
}

Status Runner::step_engine(Time until) {
  for (;;) {
    auto stepped = step_engine_once(until);
    if (!stepped) return stopped(stepped);
    if (!*stepped) break;
  }
  now_ = max(now_, until);
  return poll_pending();
}

// Linux wakes epoll waiters when data arrives or write space opens up, not
// on every state change; an edge is a readiness bit turning on, or more
// bytes becoming readable, between two samples.
void Runner::sample_epoll() {
  for (auto& [epfd, ep] : fds_) {
    if (ep.kind != FdEntry::Kind::kEpoll) continue;
    for (auto& [fdn, w] : ep.watches) {
      auto it = fds_.find(fdn);
      if (it == fds_.end()) continue;
      uint32_t bits = stack_->poll(it->second.sock);
      int inq = 0;
      stack_->ioctl(it->second.sock, 0x541B /* SIOCINQ */, &inq);
      // sk_error_report wakes the socket's waiters each time (a zerocopy
      // range extended, a timestamp queued) even when EPOLLERR stays set.
      const uint64_t reports = stack_->error_reports(it->second.sock);
      if ((bits & ~w.last_bits) != 0 || inq > w.last_inq || reports > w.last_reports) w.edge_pending = true;
      w.last_bits = bits;
      w.last_inq = inq;
      w.last_reports = reports;
    }
  }
}

Status Runner::poll_pending() {
  sample_epoll();
  if (!pending_) return ok();
  int err = 0;
  const Event* saved = cur_;
  cur_ = pending_->event;  // a failure inside the call names its line
  auto v = pending_->step(now_, &err);
  if (!v) return stopped(v);
  if (!*v) {
    cur_ = saved;
    return ok();
  }
  Pending p = std::move(*pending_);
  pending_.reset();
  Time lo = p.expected_end - p.tolerance;
  Time hi = p.expected_end + p.tolerance;
  if (now_ < lo || now_ > hi)
    return stop(Outcome::kFail, fmt::format("timing error: expected system call to return at {} sec "
                                            "but it returned at {} sec; tolerance {:.6f} sec",
                                            fmt_time(p.expected_end), fmt_time(now_), p.tolerance.secs()));
  log(fmt::format("{} (blocking call at line {} returned {})", fmt_time(now_), p.event->pos.line, **v));
  cur_ = saved;
  return ok();
}

// Runs the engine until the blocking call completes, or fails past `limit`.
Status Runner::finish_pending(Time limit) {
  while (pending_) {
    auto stepped = step_engine_once(limit);
    if (!stepped) return stopped(stepped);
    if (!*stepped && pending_) {
      cur_ = pending_->event;
      return stop(Outcome::kFail, fmt::format("blocking system call did not return by {} sec",
                                              fmt_time(limit)));
    }
  }
  return ok();
}

void apply_option(RunConfig& c, const std::string& name, const std::string& v, bool* unsupported,
                  std::string* why);

// Script options, then the stack under test.
Status Runner::setup() {
  for (const auto& [k, v] : script_.options) {
    bool unsupported = false;
    std::string why;
    apply_option(cfg_, k, v, &unsupported, &why);
    if (unsupported) return stop(Outcome::kSkip, why);
  }
  for (const auto& [k, v] : opt_.overrides) {
    bool unsupported = false;
    std::string why;
    apply_option(cfg_, k, v, &unsupported, &why);
  }
  if (cfg_.ip_version != opt_.ip_version)
    return stop(Outcome::kSkip, fmt::format("script pins --ip_version={}", to_string(cfg_.ip_version)));
  for (const auto& [k, v] : opt_.sysctls)
    if (std::string why = stack_cfg_.set(k, v); !why.empty()) return stop(Outcome::kFail, "--sysctl " + k + ": " + why);
  now_ = kEpoch;
  stack_cfg_.secret = 0x7765697270746bull;  // deterministic ISNs across runs
  stack_ = std::make_unique<Stack>(stack_cfg_, *this);
  stack_->add_address(cfg_.local_ip);
  return ok();
}

// One timed event: its time from the script (relative times anchored as
// packetdrill anchors them), then the packet, call, command or code block.
Status Runner::run_timed(const Event& e, Timeline& tl) {
  const auto* pkt = std::get_if<PacketSpec>(&e.action);
  bool inbound = pkt && pkt->inbound;
  const auto* last_pkt = tl.last ? std::get_if<PacketSpec>(&tl.last->action) : nullptr;
  Time offset = (last_pkt && last_pkt->inbound && inbound) ? tl.last_t : now_;
  const TimeSpec& ts = e.time;
  bool relative = ts.kind == TimeKind::kRelative || ts.kind == TimeKind::kRelativeRange ||
                  ts.kind == TimeKind::kAny;
  Time base = relative ? offset : kEpoch;
  Time t = ts.kind == TimeKind::kAny ? offset : base + ts.start;
  if (tl.first && t != kEpoch && !relative) return stop(Outcome::kFail, "first event should be at time 0");
  if (!relative && tl.last && t < tl.last_t)
    return stop(Outcome::kFail, fmt::format("time goes backward in script from {} to {}",
                                            fmt_time(tl.last_t), fmt_time(t)));
  Duration tol = tl.first ? cfg_.tolerance : tolerance_for(t - tl.last_t);
  tl.first = false;
  Status done = ok();
  if (pkt && !pkt->inbound) {
    Time lo = t - tol, hi = t + tol;
    if (ts.kind == TimeKind::kAbsoluteRange || ts.kind == TimeKind::kRelativeRange) hi = base + ts.end + tol;
    if (ts.kind == TimeKind::kAny) {
      lo = Time::from_ns(0);
      hi = now_ + Duration::s(600);
    }
    done = expect_outbound(e, *pkt, lo, hi, t);
  } else {
    done = run_action(e, t, base, tol);
  }
  tl.last = &e;
  tl.last_t = t;
  return done;
}

// An inbound packet, system call, command or code block due at `t`.
Status Runner::run_action(const Event& e, Time t, Time base, Duration tol) {
  // A new system call waits for a blocked one, as packetdrill's syscall
  // thread would.
  if (std::holds_alternative<SyscallSpec>(e.action) && pending_)
    if (auto s = finish_pending(max(t, pending_->expected_end) + Duration::s(600)); !s) return s;
  if (now_ < t)
    if (auto s = step_engine(t); !s) return s;
  if (now_ > t + tol && e.time.kind != TimeKind::kAny)
    return stop(Outcome::kFail, fmt::format("timing error: expected event at {} sec but it happened "
                                            "at {} sec; tolerance {:.6f} sec",
                                            fmt_time(t), fmt_time(now_), tol.secs()));
  if (const auto* pkt = std::get_if<PacketSpec>(&e.action)) return inject(e, *pkt);
  if (const auto* sc = std::get_if<SyscallSpec>(&e.action)) return run_syscall(e, *sc, t, base, tol);
  if (const auto* cmd = std::get_if<CommandSpec>(&e.action)) return command(e, *cmd, false);
  snapshot_code(e, std::get<CodeSpec>(e.action));
  return ok();
}

// A system call; one that blocks is due back at the script's `...end`
// time, or at once.
Status Runner::run_syscall(const Event& e, const SyscallSpec& sc, Time t, Time base, Duration tol) {
  if (auto s = syscall(e, sc); !s) return s;
  if (!pending_ || pending_->event != &e) return ok();
  const TimeSpec& ts = e.time;
  pending_->tolerance = ts.block_end ? tolerance_for(*ts.block_end - ts.start) : tol;
  pending_->expected_end = ts.block_end ? base + *ts.block_end : t;
  return poll_pending();
}

Status Runner::run_events() {
  if (auto s = setup(); !s) return s;
  Timeline tl;
  tl.last_t = kEpoch;
  for (const Event& e : script_.events) {
    cur_ = &e;
    Status s = e.timed ? run_timed(e, tl) : command(e, std::get<CommandSpec>(e.action), true);
    if (!s) return s;
  }
  if (pending_)
    if (auto s = finish_pending(max(now_, pending_->expected_end) + Duration::s(600)); !s) return s;
  cur_ = nullptr;
  res_.elapsed = now_ - kEpoch;
  if (opt_.run_code) return run_code_blocks();
  return ok();
}

RunResult Runner::run() {
  Status s = run_events();
  if (s) {
    res_.outcome = Outcome::kPass;
    return res_;
  }
  res_.outcome = s.error().outcome;
  res_.reason = s.error().reason;
  res_.detail = s.error().detail;
  if (cur_) {
    res_.line = cur_->pos.line;
    res_.script_line = source_line(source_, cur_->pos.line);
  }
  res_.elapsed = now_ - kEpoch;
  return res_;
}

void apply_option(RunConfig& c, const std::string& name, const std::string& v, bool* unsupported,
                  std::string* why) {
  auto num = [&]() { return std::strtod(v.c_str(), nullptr); };
  if (name == "tolerance_usecs") c.tolerance = Duration::us(static_cast<int64_t>(num()));
  else if (name == "tolerance_percent") c.tolerance_percent = num();
  else if (name == "tcp_ts_tick_usecs") c.ts_tick_usecs = static_cast<int64_t>(num());
  else if (name == "tcp_ts_ecr_scaled") c.ts_ecr_scaled = parse_bool_option(v);
  else if (name == "strict_segments") c.strict_segments = parse_bool_option(v);
  else if (name == "mss") c.mss = static_cast<uint32_t>(num());
  else if (name == "mtu") c.mtu = static_cast<uint32_t>(num());
  else if (name == "bind_port") c.bind_port = static_cast<uint16_t>(num());
  else if (name == "connect_port") c.connect_port = static_cast<uint16_t>(num());
  else if (name == "ip_version") {
    if (!parse_ip_version(v, &c.ip_version)) {
      *unsupported = true;
      *why = fmt::format("bad --ip_version={}", v);
    }
  } else if (name == "local_ip" || name == "remote_ip") {
    // Only an address of the variant's family applies (packetdrill scripts
    // that name IPv4 addresses run in the IPv4 variants).
    auto a = IpAddr::parse(v);
    bool v4_variant = c.ip_version != IpVersion::kIpv6;
    if (a && a->is_v4() == v4_variant) (name == "local_ip" ? c.local_ip : c.remote_ip) = *a;
  } else if (name == "gateway_ip" || name == "netmask_ip" || name == "send_omit_free" ||
             name == "verbose" || name == "debug" || name == "speed" || name == "define") {
    // Device details that do not change what the engine sees.
  } else {
    *unsupported = true;
    *why = fmt::format("unsupported option --{}", name);
  }
}

RunResult run_script(const Script& script, const std::string& source, const RunOptions& opt) {
  Runner r(script, source, opt);
  return r.run();
}

RunResult run_file(const std::string& path, const RunOptions& opt) {
  RunResult res;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    res.outcome = Outcome::kFail;
    res.reason = fmt::format("{}: cannot read the file", path);
    return res;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string source = ss.str();
  // packetdrill's run_all.py defines these per variant. TFO_COOKIE is the
  // Fast Open cookie (SipHash of the SYN's addresses, tcp/fastopen.h) under
  // defaults.sh's key for the addresses this runner uses (192.0.2.1 ->
  // 192.168.0.1, fd3d:fa7b:d17d::1 -> fd3d:a0b:17d6::1), as the current
  // run_all.py and the kernel's ksft_runner.sh define it; older run_all.py
  // versions gave de4f234f0f433a55 / 6aa6ae70c288023b for their older local
  // addresses (192.168.0.2, fd3d:fa7b:d17d::0 <- 2001:db8::1).
  // TFO_COOKIE_ZERO: the same under the all-zero key.
  const bool v6 = opt.ip_version == IpVersion::kIpv6;
  std::map<std::string, std::string> defines = {
      {"TFO_COOKIE", v6 ? "c1d1e9742a47a9bc" : "3021b9d889017eeb"},
      {"TFO_COOKIE_ZERO", v6 ? "82af1a8f9a205c34" : "b7c12350a90dc8f5"},
      // The ICMP code the Fast Open ICMP scripts send (ksft_runner.sh).
      {"CODE", "host_unreachable"},
      {"CMSG_LEVEL_IP", opt.ip_version == IpVersion::kIpv4 ? "SOL_IP" : "SOL_IPV6"},
      {"CMSG_TYPE_RECVERR", opt.ip_version == IpVersion::kIpv4 ? "IP_RECVERR" : "IPV6_RECVERR"},
  };
  for (const auto& [k, v] : opt.defines) defines[k] = v;
  auto script = parse_script(source, path, defines);
  if (!script) {
    res.outcome = Outcome::kFail;
    res.reason = script.error().to_string();
    res.line = script.error().pos.line;
    res.script_line = source_line(source, res.line);
    return res;
  }
  return run_script(*script, source, opt);
}

}  // namespace weir::pkt
