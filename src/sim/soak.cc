#include "sim/soak.h"

#include <sys/socket.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "sim/event_loop.h"
#include "sim/host.h"
#include "sim/packet.h"
#include "sim/rng.h"

namespace weir::sim {
namespace {

constexpr uint16_t kPort = 5001;
constexpr uint64_t kMaxEvents = 20'000'000;  // a runaway run stops here (and fails)

// Byte `i` of the stream in direction `dir` of run `seed`: a hash of its
// position, so that a byte delivered twice, dropped or misplaced shows.
uint8_t stream_byte(uint64_t seed, int dir, uint64_t i) {
  uint64_t x = (i >> 3) + seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(dir) * 0xbf58476d1ce4e5b9ull;
  x ^= x >> 31;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 29;
  return static_cast<uint8_t>(x >> ((i & 7) * 8));
}

// One end of the soak: writes its stream in random sizes, reads the other
// with random sizes and checks every byte, pauses now and then, and shuts
// its side down once everything is written.
class SoakApp final : public App {
 public:
  SoakApp(Host& h, const SoakCase& c, int dir, uint64_t to_send, uint64_t to_recv, Rng rng)
      : h_(h), c_(c), dir_(dir), to_send_(to_send), to_recv_(to_recv), rng_(rng) {}

  void set_socket(SocketId s) { s_ = s; h_.watch(s, this); }
  void listen_on(SocketId ls) { listener_ = ls; h_.watch(ls, this); }
  bool done() const { return eof_ && shut_; }
  const std::string& error() const { return error_; }
  Duration pauses() const { return paused_total_; }
  // Where this end is, for a failure report.
  std::string progress() const {
    std::string st = "-";
    if (s_ != kNoSocket)
      if (auto ti = h_.stack().tcp_info(s_))
        st = fmt::format("state {} ca {} cwnd {} unacked {} lost {} retrans {} backoff {} rto {}us snd_wnd {} rcv_wnd {}",
                         ti->tcpi_state, ti->tcpi_ca_state, ti->tcpi_snd_cwnd, ti->tcpi_unacked, ti->tcpi_lost,
                         ti->tcpi_retrans, ti->tcpi_backoff, ti->tcpi_rto, ti->tcpi_snd_wnd, ti->tcpi_rcv_wnd);
    return fmt::format("sent {}/{} received {}/{} eof {} [{}]", sent_, to_send_, received_, to_recv_, eof_, st);
  }

  void on_ready(Time now) override {
    if (now < paused_until_ || !error_.empty()) return;
    if (listener_ != kNoSocket && s_ == kNoSocket) accept(now);
    if (s_ == kNoSocket) return;
    read_all(now);
    write_some(now);
    h_.kick();
    maybe_pause(now);
  }
  void on_event(Time now, uint64_t) override { on_ready(now); }

 private:
  void accept(Time now) {
    auto s = h_.stack().accept(now, listener_);
    if (s) set_socket(*s);
  }
  void fail(std::string what) {
    if (error_.empty()) error_ = fmt::format("{}: {}", dir_ == 0 ? "client" : "server", what);
  }
  void read_all(Time now) {
    std::vector<uint8_t> buf(c_.read_max);
    while (!eof_) {
      size_t want = 1 + rng_.below(c_.read_max);
      auto n = h_.stack().recv(now, s_, std::span(buf.data(), want));
      if (!n) {
        if (n.error() != Errc::kAgain) fail(fmt::format("recv: {}", errc_name(n.error())));
        return;
      }
      if (*n == 0) {
        eof_ = true;
        if (received_ != to_recv_) fail(fmt::format("EOF after {} of {} bytes", received_, to_recv_));
        return;
      }
      for (size_t i = 0; i < *n; ++i) {
        if (buf[i] != stream_byte(c_.seed, 1 - dir_, received_ + i)) {
          fail(fmt::format("byte {} differs", received_ + i));
          return;
        }
      }
      received_ += *n;
    }
  }
  void write_some(Time now) {
    std::vector<uint8_t> buf;
    while (sent_ < to_send_) {
      uint64_t want = std::min<uint64_t>(1 + rng_.below(c_.write_max), to_send_ - sent_);
      buf.resize(want);
      for (uint64_t i = 0; i < want; ++i) buf[i] = stream_byte(c_.seed, dir_, sent_ + i);
      auto n = h_.stack().send(now, s_, buf);
      if (!n) {
        if (n.error() != Errc::kAgain) fail(fmt::format("send: {}", errc_name(n.error())));
        return;
      }
      sent_ += *n;
    }
    if (!shut_) {
      Errc e = h_.stack().shutdown(now, s_, SHUT_WR);
      if (e != Errc::kOk) fail(fmt::format("shutdown: {}", errc_name(e)));
      shut_ = true;
    }
  }
  void maybe_pause(Time now) {
    if (pauses_ >= c_.max_pauses || !rng_.chance(c_.pause_chance)) return;
    ++pauses_;
    Duration d = Duration::ns(static_cast<int64_t>(rng_.below(static_cast<uint64_t>(c_.pause_max.ns()) + 1)));
    paused_until_ = now + d;
    paused_total_ += d;
    h_.loop().at(paused_until_, this);
  }

  Host& h_;
  const SoakCase& c_;
  int dir_;
  uint64_t to_send_, to_recv_;
  Rng rng_;
  SocketId s_ = kNoSocket;
  SocketId listener_ = kNoSocket;
  uint64_t sent_ = 0, received_ = 0;
  bool eof_ = false, shut_ = false;
  std::string error_;
  Time paused_until_ = Time::zero();
  uint32_t pauses_ = 0;
  Duration paused_total_;
};

// Rate changes: a host's outgoing traffic moves between a fast and a slow
// copy of its link at random times (what is queued on the old one drains
// at the old rate, as when a radio link changes its modulation).
class RateSwitch final : public EventTarget {
 public:
  RateSwitch(EventLoop& loop, Host& h, Link& fast, Link& slow, Duration period, Rng rng)
      : loop_(loop), h_(h), fast_(fast), slow_(slow), period_(period), rng_(rng) {
    h_.attach(&fast_);
    schedule();
  }
  void on_event(Time, uint64_t) override {
    on_fast_ = !on_fast_;
    h_.attach(on_fast_ ? &fast_ : &slow_);
    schedule();
  }

 private:
  void schedule() {
    // Exponential gaps with mean `period`.
    double u = std::max(rng_.uniform(), 1e-9);
    loop_.after(Duration::ns(static_cast<int64_t>(-std::log(u) * static_cast<double>(period_.ns()))), this);
  }
  EventLoop& loop_;
  Host& h_;
  Link& fast_;
  Link& slow_;
  Duration period_;
  Rng rng_;
  bool on_fast_ = true;
};

void pick_impairments(Rng& r, LinkConfig& l) {
  switch (r.below(3)) {
    case 0: l.loss = 0; break;
    case 1: l.loss = r.uniform(0, 0.2); break;
    default: {  // bursts: mean burst 1/ge_r packets, stationary loss <= 20 %
      l.loss_model = LossModel::kGilbertElliott;
      const double target = r.uniform(0, 0.2);
      l.ge_r = r.uniform(0.2, 0.8);
      l.ge_loss_good = 0;
      l.ge_loss_bad = r.uniform(0.5, 1.0);
      const double bad = target / l.ge_loss_bad;  // fraction of time in the bad state
      l.ge_p = bad * l.ge_r / (1 - bad);
      break;
    }
  }
  l.duplicate = r.chance(0.5) ? r.uniform(0, 0.05) : 0;
  l.corrupt = r.chance(0.5) ? r.uniform(0, 0.02) : 0;
  l.jitter = r.chance(0.5) ? Duration::us(static_cast<int64_t>(r.below(10000))) : Duration::zero();
  if (r.chance(0.5)) {
    l.reorder = r.uniform(0, 0.1);
    l.reorder_hold = Duration::us(static_cast<int64_t>(1000 + r.below(20000)));
  }
  l.queue_packets = static_cast<uint32_t>(50 + r.below(1000));
}

double stationary_loss(const LinkConfig& l) {
  if (l.loss_model == LossModel::kBernoulli) return l.loss;
  double bad = l.ge_p / (l.ge_p + l.ge_r);
  return bad * l.ge_loss_bad + (1 - bad) * l.ge_loss_good;
}

// The chance that a packet is lost given that the one before it on the same
// link was: p for Bernoulli loss; for Gilbert-Elliott the chain most likely
// stays bad (1 - r) after a loss. This, not the stationary rate, decides how
// often a timeout's retransmission fails again: with one packet per RTO the
// chain advances one step per attempt, so bursts outlast backoffs.
double repeat_loss(const LinkConfig& l) {
  if (l.loss_model == LossModel::kBernoulli) return l.loss + l.corrupt;
  const double bad_again = (1 - l.ge_r) * l.ge_loss_bad + l.ge_r * l.ge_loss_good;
  return std::min(1.0, bad_again + l.corrupt);
}

// The chance that a packet is overtaken by the three sent back to back
// after it (1500 bytes apart at the link's fast rate), when each takes its own
// uniform jitter in [-J, J]: the soak's links reorder by jitter as netem does
// (LinkConfig::jitter_reorder). Integrated numerically over the packet's own
// jitter x: P = E[prod_k F(x - k tau)], F the jitter's distribution.
double jitter_overtaken_by_three(const LinkConfig& l) {
  if (l.jitter <= Duration::zero() || !l.jitter_reorder || l.rate_bps == 0) return 0;
  const double j = l.jitter.secs(), tau = 1500.0 * 8 / static_cast<double>(l.rate_bps);
  auto cdf = [j](double y) { return std::clamp((y + j) / (2 * j), 0.0, 1.0); };
  constexpr int kSteps = 2000;
  double sum = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double x = -j + 2 * j * (i + 0.5) / kSteps;
    sum += cdf(x - tau) * cdf(x - 2 * tau) * cdf(x - 3 * tau);
  }
  return sum / kSteps;
}

// How an episode can leave its RTO to the next one (Linux, not a model
// choice): the doubled icsk_rto stays until a valid RTT sample runs
// tcp_set_rto and clears icsk_backoff (tcp_ack_update_rtt; RFC 6298 (5.7)).
struct RtoCarry {
  // No timestamps: the next episode starts from the RTO this one armed last
  // with this chance (no valid sample in between: Karn).
  double chance = 0;
  // Timestamps: the ACK of the retransmission that got through is lost with
  // chance `stale`; the sample then comes from a later duplicate ACK that
  // echoes its TSval and spans every wait since (stale_rto_s()).
  double stale = 0;
  double keep = 0;  // otherwise the next starts from this share of this one's first RTO (at least t0)
};

// The RTO after a stale-TSecr sample: k ACKs lost in a row after the
// retransmission that filled the hole (k = j + 1: since the original was
// sent), so the echo is k waits old. Linux tcp_rtt_estimator with m far
// above srtt: srtt ~ m/8, rttvar ~ m/4, RTO = srtt + 4 rttvar ~ 9/8 m,
// capped at TCP_RTO_MAX. The waits before attempts j-k+1 .. j of an episode
// whose m-th wait is rto_at(m).
template <typename RtoAt>
double stale_rto_s(const RtoAt& rto_at, int j, int k) {
  double sample = 0;
  for (int m = j - k + 1; m <= j; ++m) sample += rto_at(m);
  return std::min(120.0, 9.0 / 8.0 * sample);
}

// Expected seconds spent in `episodes` timeout episodes of one connection,
// the first starting at t0, each later one starting from the RTO the one
// before left with the chances in RtoCarry. A Markov chain on log2 of an
// episode's first RTO, on a 1/8 grid (rounded up) from t0 to the 120 s cap
// (Linux TCP_RTO_MAX); an episode fails j times with chance (1 - q) q^j and
// lasts the sum of its RTOs (what PFTK's f(p) approximates to 64 t0).
double chained_timeouts_s(double q, double t0, RtoCarry carry, double episodes) {
  constexpr int kSteps = 8;
  const int cap = static_cast<int>(std::ceil(std::log2(120.0 / t0) * kSteps));
  const int keep = carry.keep > 0 ? static_cast<int>(std::ceil(std::log2(carry.keep) * kSteps)) : -cap - 1;
  const int n = cap + 1;
  auto rto_at = [&](int e) { return std::min(t0 * std::exp2(static_cast<double>(e) / kSteps), 120.0); };
  auto grid = [&](double rto) { return std::clamp(static_cast<int>(std::ceil(std::log2(rto / t0) * kSteps)), 0, cap); };
  std::vector<double> len(n, 0), pi(n, 0), next(n);
  std::vector<std::vector<std::pair<int, double>>> to_next(n);  // start e -> (next episode's start, chance)
  for (int e = 0; e < n; ++e) {
    auto wait = [&](int m) { return rto_at(e + m * kSteps); };
    double reach = 1, elapsed = 0;
    for (int j = 0; j < 64 && reach > 1e-9; ++j) {
      elapsed += wait(j);
      const double p_end = reach * (1 - q);  // the (j+1)-th attempt succeeds
      len[e] += p_end * elapsed;
      to_next[e].emplace_back(std::max(0, e + keep), p_end * (1 - carry.chance - carry.stale));
      to_next[e].emplace_back(std::min(e + (j + 1) * kSteps, cap), p_end * carry.chance);
      // k ACKs lost in a row: the first with chance `stale`, each further
      // one as a failed attempt (q); k = j + 1 takes what is left.
      double k_chance = carry.stale;
      for (int k = 1; k <= j + 1 && carry.stale > 0; ++k) {
        const double here = k <= j ? k_chance * (1 - q) : k_chance;
        to_next[e].emplace_back(grid(stale_rto_s(wait, j, k)), p_end * here);
        k_chance *= q;
      }
      reach *= q;
    }
  }
  pi[0] = 1;
  double total = 0;
  for (int i = 0; i < static_cast<int>(std::ceil(episodes)); ++i) {
    double mean = 0;
    for (int e = 0; e < n; ++e) mean += pi[e] * len[e];
    total += mean * std::min(1.0, episodes - i);  // a fractional last episode counts pro rata
    std::fill(next.begin(), next.end(), 0.0);
    for (int e = 0; e < n; ++e)
      for (const auto& [f, chance] : to_next[e]) next[f] += pi[e] * chance;
    pi = next;
  }
  return total;
}

// PFTK (Padhye et al. 1998) seconds for n segments: p_fr the rate of loss
// indications (fast retransmits), p the rate of losses that may time out
// (a share min(1, 3 sqrt(3p/8)) of them does), the timeouts chained above.
double pftk_s(double n, double p_fr, double p, double q, double rtt_s, double rto_s, RtoCarry carry) {
  double s = p_fr > 0 ? n * rtt_s * std::sqrt(2 * p_fr / 3) : 0;
  if (p > 0) s += chained_timeouts_s(q, rto_s, carry, n * p * std::min(1.0, 3 * std::sqrt(3 * p / 8)));
  return s;
}

}  // namespace

SoakCase make_soak_case(uint64_t seed) {
  SoakCase c;
  c.seed = seed;
  Rng r(seed * 0x2545f4914f6cdd1dull + 17);
  c.bytes_ab = (1u << 20) + r.below(256 * 1024);
  c.bytes_ba = (1u << 20) + r.below(256 * 1024);
  Duration delay = Duration::us(static_cast<int64_t>(500 + r.below(50000)));
  c.fwd.delay = c.rev.delay = delay;
  c.fwd.rate_bps = 5'000'000 + r.below(95'000'000);
  c.rev.rate_bps = 5'000'000 + r.below(95'000'000);
  c.rate_lo_bps = std::max<uint64_t>(2'000'000, std::min(c.fwd.rate_bps, c.rev.rate_bps) / (2 + r.below(8)));
  c.rate_period = Duration::ms(static_cast<int64_t>(50 + r.below(2000)));
  pick_impairments(r, c.fwd);
  pick_impairments(r, c.rev);
  c.sack = r.chance(0.5);
  c.timestamps = r.chance(0.5);
  c.wscale = r.chance(0.5);
  c.write_max = static_cast<uint32_t>(1 + r.below(r.chance(0.3) ? 2000 : 100000));
  c.read_max = static_cast<uint32_t>(1 + r.below(r.chance(0.3) ? 2000 : 100000));
  c.pause_chance = r.chance(0.5) ? r.uniform(0, 0.05) : 0;
  c.pause_max = Duration::ms(static_cast<int64_t>(r.below(200)));
  c.max_pauses = 20;
  c.bound = soak_bound(c);
  return c;
}

namespace {

// The RTO an episode leaves to the next, as Linux would (RtoCarry). An
// episode ends with a retransmission that got through, so what follows it
// is lost at the link's loss rate p, not at the repeat-loss chance q.
// - timestamps: every ACK of new data gives a sample (tcp_ack_update_rtt
//   falls back to TSecr when Karn forbids the sequence sample), so the
//   backoff ends with the episode, but if the ACK of the retransmission that
//   filled the hole is lost (p), the sample comes from a later duplicate ACK
//   for a retransmission below rcv.wup, which echoes the older TSval (Linux
//   tcp_replace_ts_recent needs seq <= rcv_wup and tcp_sequence to pass;
//   RttEcho tests). It spans every wait since that retransmission: one wait
//   (9/16 of the RTO armed last) when one ACK is lost, more when the
//   duplicate ACKs of the following attempts are lost too (each with the
//   repeat chance q), up to the whole episode (stale_rto_s). At the 120 s
//   cap one wait is 120 s, so one lost ACK already leaves the RTO at the
//   cap, not at 9/16 of it. Seeds 2478, 2994, 5017 (traced): samples over
//   1 to 6 waits, e.g. 2478's 345 s over the six waits from 24.3 s to
//   369.4 s, 2994's 120.4 s over three (17 + 34 + 69 s), 5017's 240 s over
//   two at the cap. That RTO is
//   SRTT + 4 RTTVAR, not backoff, so the next episode starts high too when
//   nothing inflates it again: RTTVAR, most of it, loses a quarter per round
//   trip (tcp_rtt_estimator: rttvar moves to mdev_max once per flight),
//   (3/4)^k left after the k round trips between timeouts (1 / (Q p)
//   segments at PFTK's window W = sqrt(8 / 3p) per round trip).
// - no timestamps: an ACK covering a retransmission gives no sample (Karn,
//   tcp_clean_rtx_queue FLAG_RETRANS_DATA_ACKED), so the backoff survives
//   into the next episode unless a never retransmitted packet is ACKed on
//   its own first.
//   - without SACK the sender retransmits the whole flight in Loss (go-back-N
//     from tcp_enter_loss, which marks every packet lost), and a lost
//     retransmission is never marked again: Reno in Loss ignores duplicates
//     unless new data went out after the RTO (tcp_process_loss), and
//     tcp_newreno_mark_lost acts only below Recovery. Any loss among the
//     W packets of the flight (PFTK's window at loss rate p) and the first
//     new one waits for the next RTO, still backed off: 1 - (1 - p)^(W + 1)
//     (seed 6969: the server in LAST-ACK, 51 packets marked lost, six
//     rounds at the 120 s cap).
//   - with SACK, RACK marks a lost retransmission in Loss too
//     (tcp_rack_mark_lost), so only a timeout before the first clean sample
//     carries: the packet after the repair lost (p).
RtoCarry rto_carry(const SoakCase& c, double p) {
  if (p <= 0) return {};
  const double window = std::sqrt(8 / (3 * p));
  if (c.timestamps) {
    const double rtts_between = 1 / (p * std::min(1.0, 3 * std::sqrt(3 * p / 8)) * window);
    return {0, p, std::pow(0.75, rtts_between)};
  }
  if (!c.sack) return {1 - std::pow(1 - p, window + 1), 0, 0};
  return {p, 0, 0};
}

}  // namespace

Duration soak_bound(const SoakCase& c) {
  double p = std::max(stationary_loss(c.fwd) + c.fwd.corrupt, stationary_loss(c.rev) + c.rev.corrupt);
  // Without SACK a packet held back long enough for three later ones to
  // overtake it draws three duplicate ACKs and a fast retransmit (Linux
  // tcp_time_to_recover, dupthresh 3; a Reno sender cannot tell reordering
  // from loss until more duplicates arrive than packets are out,
  // tcp_check_reno_reordering): for the window it is a loss indication.
  // Held-back packets (`reorder`, holds of 1-21 ms) and jitter both do it.
  double p_fr = p;
  if (!c.sack) {
    auto indications = [](const LinkConfig& l) {
      return std::min(1.0, stationary_loss(l) + l.corrupt + l.reorder + jitter_overtaken_by_three(l));
    };
    p_fr = std::max(indications(c.fwd), indications(c.rev));
  }
  double rtt = 2 * (c.fwd.delay.secs() + std::max(c.fwd.jitter, c.rev.jitter).secs());
  double ser = static_cast<double>(c.bytes_ab + c.bytes_ba) * 8 * 1.1 / static_cast<double>(c.rate_lo_bps);
  double n = static_cast<double>(std::max(c.bytes_ab, c.bytes_ba)) / 1448;
  double pauses = 2 * c.max_pauses * c.pause_max.secs();
  // A timeout is repaired when the retransmission and its ACK both arrive.
  const double q = 1 - (1 - repeat_loss(c.fwd)) * (1 - repeat_loss(c.rev));
  double s = 10 + pauses + 4 * (ser + pftk_s(n, p_fr, p, q, rtt, 1.0, rto_carry(c, p)));
  return Duration::ns(static_cast<int64_t>(s * 1e9));
}

std::string SoakCase::describe() const {
  auto link = [](const LinkConfig& l) {
    return fmt::format("{:.0f}Mbit {}ms loss {} {:.3f} dup {:.3f} corrupt {:.3f} jitter {}us reorder {:.3f} q {}",
                       static_cast<double>(l.rate_bps) / 1e6, l.delay.ms(),
                       l.loss_model == LossModel::kBernoulli ? "bern" : "ge", stationary_loss(l), l.duplicate,
                       l.corrupt, l.jitter.us(), l.reorder, l.queue_packets);
  };
  return fmt::format("seed {}: {}+{} bytes; fwd [{}]; rev [{}]; low rate {:.1f}Mbit every ~{}ms; sack {} ts {} ws {}; "
                     "write<={} read<={} pause {:.3f}x{}ms; bound {:.1f}s",
                     seed, bytes_ab, bytes_ba, link(fwd), link(rev), static_cast<double>(rate_lo_bps) / 1e6,
                     rate_period.ms(), sack, timestamps, wscale, write_max, read_max, pause_chance, pause_max.ms(),
                     bound.secs());
}

namespace {

StackConfig soak_stack(const SoakCase& c, uint64_t salt) {
  StackConfig cfg;
  cfg.tcp_sack = c.sack;
  cfg.tcp_timestamps = c.timestamps;
  cfg.tcp_window_scaling = c.wscale;
  cfg.secret = c.seed * 0x9e3779b97f4a7c15ull + salt;
  // Gilbert-Elliott loss advances one step per packet (as netem's gemodel),
  // so during a timeout's backoff, with one packet per RTO, a burst can
  // swallow many retransmissions in a row; Linux's tcp_retries2 = 15 then
  // gives up (ETIMEDOUT) after about 15 minutes. Giving up is policy, not
  // integrity: the soak lets the stack retry longer (the link's time bound
  // already prices these episodes) and checks that every byte still arrives.
  cfg.tcp_retries2 = 60;
  // The same for the handshake: 7 lost SYNs in a row (tcp_syn_retries 6,
  // 127 s) end connect() with ETIMEDOUT in Linux; seed 8180 drew that.
  cfg.tcp_syn_retries = 60;
  cfg.tcp_synack_retries = 60;
  return cfg;
}

LinkConfig slow_copy(const LinkConfig& l, uint64_t rate) {
  LinkConfig s = l;
  s.rate_bps = rate;
  return s;
}

// SoakCase::blackhole_after: from then on every packet of both directions
// goes here and is dropped.
class Blackhole final : public Node, public EventTarget {
 public:
  Blackhole(PacketPool& pool, std::vector<Link*> links) : pool_(pool), links_(std::move(links)) {}
  void receive(Time, Packet* p) override { pool_.put(p); }
  void on_event(Time, uint64_t) override {
    for (Link* l : links_) l->connect(this);
  }

 private:
  PacketPool& pool_;
  std::vector<Link*> links_;
};

struct SoakWorld {
  EventLoop loop;
  PacketPool pool;
  std::unique_ptr<Host> a, b;
  std::unique_ptr<Link> fwd_fast, fwd_slow, rev_fast, rev_slow;
  std::unique_ptr<RateSwitch> sw_a, sw_b;
  std::unique_ptr<SoakApp> app_a, app_b;
  std::unique_ptr<Blackhole> blackhole;
};

void build(SoakWorld& w, const SoakCase& c) {
  Rng r(c.seed ^ 0x5eed5eed5eedull);
  const IpAddr ia = IpAddr::v4(10, 0, 0, 1), ib = IpAddr::v4(10, 0, 0, 2);
  w.a = std::make_unique<Host>(w.loop, w.pool, "client", ia, soak_stack(c, 1), 1500, nullptr, false);
  w.b = std::make_unique<Host>(w.loop, w.pool, "server", ib, soak_stack(c, 2), 1500, nullptr, false);
  w.fwd_fast = std::make_unique<Link>("fwd", c.fwd, w.loop, w.pool, r.fork(1));
  w.fwd_slow = std::make_unique<Link>("fwd-slow", slow_copy(c.fwd, c.rate_lo_bps), w.loop, w.pool, r.fork(2));
  w.rev_fast = std::make_unique<Link>("rev", c.rev, w.loop, w.pool, r.fork(3));
  w.rev_slow = std::make_unique<Link>("rev-slow", slow_copy(c.rev, c.rate_lo_bps), w.loop, w.pool, r.fork(4));
  w.fwd_fast->connect(w.b.get());
  w.fwd_slow->connect(w.b.get());
  w.rev_fast->connect(w.a.get());
  w.rev_slow->connect(w.a.get());
  w.sw_a = std::make_unique<RateSwitch>(w.loop, *w.a, *w.fwd_fast, *w.fwd_slow, c.rate_period, r.fork(5));
  w.sw_b = std::make_unique<RateSwitch>(w.loop, *w.b, *w.rev_fast, *w.rev_slow, c.rate_period, r.fork(6));
  w.app_a = std::make_unique<SoakApp>(*w.a, c, 0, c.bytes_ab, c.bytes_ba, r.fork(7));
  w.app_b = std::make_unique<SoakApp>(*w.b, c, 1, c.bytes_ba, c.bytes_ab, r.fork(8));
  if (c.blackhole_after) {
    w.blackhole = std::make_unique<Blackhole>(
        w.pool, std::vector<Link*>{w.fwd_fast.get(), w.fwd_slow.get(), w.rev_fast.get(), w.rev_slow.get()});
    w.loop.after(*c.blackhole_after, w.blackhole.get());
  }
}

std::string open(SoakWorld& w) {
  Stack& sb = w.b->stack();
  auto ls = sb.socket();
  if (!ls || sb.bind(*ls, Endpoint{w.b->addr(), kPort}) != Errc::kOk || sb.listen(w.loop.now(), *ls, 16) != Errc::kOk)
    return "server listen failed";
  w.app_b->listen_on(*ls);
  Stack& sa = w.a->stack();
  auto s = sa.socket();
  if (!s) return "client socket failed";
  w.app_a->set_socket(*s);
  if (sa.connect(w.loop.now(), *s, Endpoint{w.b->addr(), kPort}) != Errc::kInProgress) return "connect failed";
  w.a->kick();
  w.b->kick();
  return {};
}

}  // namespace

SoakResult run_soak(const SoakCase& c, const SoakTrace& trace) {
  SoakResult res;
  res.seed = c.seed;
  res.bound = c.bound;
  SoakWorld w;
  build(w, c);
  if (trace.client) w.a->stack().set_trace(trace.client);
  if (trace.server) w.b->stack().set_trace(trace.server);
  if (std::string e = open(w); !e.empty()) {
    res.error = e;
    return res;
  }
  const Time start = w.loop.now(), limit = start + c.bound;
  auto finished = [&] { return w.app_a->done() && w.app_b->done(); };
  auto failed = [&] { return !w.app_a->error().empty() || !w.app_b->error().empty(); };
  while (!finished() && !failed() && w.loop.next_time() <= limit && w.loop.events_run() < kMaxEvents &&
         !w.a->stalled() && !w.b->stalled()) {
    w.loop.step();
  }
  res.elapsed = w.loop.now() - start;
  res.events = w.loop.events_run();
  res.packets = w.fwd_fast->stats().packets_in + w.fwd_slow->stats().packets_in + w.rev_fast->stats().packets_in +
                w.rev_slow->stats().packets_in;
  for (Host* h : {w.a.get(), w.b.get()}) {
    for (SocketId s = 1; s < 8; ++s)
      if (auto ti = h->stack().tcp_info(s)) res.retrans += ti->tcpi_total_retrans;
  }
  if (!w.app_a->error().empty()) res.error = w.app_a->error();
  else if (!w.app_b->error().empty()) res.error = w.app_b->error();
  else if (w.a->stalled() || w.b->stalled()) res.error = "a stack stalled the event loop";
  else if (!finished())
    res.error = fmt::format("not finished after {:.1f}s (bound {:.1f}s, {} events); client {}; server {}",
                            res.elapsed.secs(), c.bound.secs(), res.events, w.app_a->progress(),
                            w.app_b->progress());
  res.ok = res.error.empty();
  return res;
}

}  // namespace weir::sim
