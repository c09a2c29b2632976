// A miniature sender around the recovery machine: scoreboard, a fake
// congestion control with fixed, easily checked rules (ssthresh = cwnd/2,
// undo restores prior_cwnd), TSval = milliseconds + 1000, and the engine's
// per-ACK order (scoreboard, recovery, PRR, retransmit lost packets).
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

#include "tcp/cc/cc.h"
#include "tcp/recovery/recovery.h"
#include "tcp/scoreboard.h"

namespace weir::tcp::testing {

class FakeCc : public cc::CongestionControl {
 public:
  std::string_view name() const override { return "fake"; }
  void init(cc::CcState&, Time) override {}
  uint32_t ssthresh(cc::CcState& tp, Time) override { return std::max(tp.snd_cwnd / 2, 2u); }
  uint32_t undo_cwnd(cc::CcState& tp) override { return std::max(tp.snd_cwnd, tp.prior_cwnd); }
  void get_info(TcpInfo&) const override {}
  void set_state(cc::CcState&, CaState s, Time) override { states.push_back(s); }
  std::vector<CaState> states;
};

class Conn {
 public:
  static constexpr uint32_t kMss = 1000;

  explicit Conn(bool sack, uint32_t base = 5000, int tcp_recovery = 1, bool fault_seed003 = false)
      : base_(base), sb_(Seq32(base), sack) {
    recovery::RecoveryConfig cfg;
    cfg.sack = sack;
    cfg.tcp_recovery = tcp_recovery;
    cfg.fault_seed003 = fault_seed003;
    machine_ = recovery::RecoveryMachine(cfg);
    tp_.snd_cwnd = 10;
    tp_.mss = kMss;
  }

  Seq32 seq(uint32_t off) const { return Seq32(base_) + off; }
  uint32_t tsval() const { return static_cast<uint32_t>(now_.ms()) + 1000; }
  uint32_t tsval_at(Time t) const { return static_cast<uint32_t>(t.ms()) + 1000; }
  void advance(Duration d) { now_ += d; }
  Time now() const { return now_; }

  // Sends `n` new full-sized packets, `gap` apart.
  void send(uint32_t n, Duration gap = Duration::zero()) {
    for (uint32_t i = 0; i < n; ++i) {
      const Seq32 b = sb_.high_data();
      auto r = sb_.on_send({b, b + kMss}, kMss, now_);
      ASSERT_TRUE(r.has_value());
      machine_.on_sent(1);
      if (gap > Duration::zero()) now_ += gap;
    }
  }

  // One ACK; afterwards, as the engine would, PRR and retransmission of
  // lost packets within cwnd.
  recovery::RecoveryResult ack(uint32_t cum, std::initializer_list<std::pair<uint32_t, uint32_t>> sacks = {},
                               std::optional<uint32_t> ts_ecr = std::nullopt,
                               bool can_send_new = false) {
    std::vector<SeqRange> blocks;
    for (auto [b, e] : sacks) blocks.push_back({seq(b), seq(e)});
    const Seq32 prior_una = sb_.high_ack();
    const uint32_t prior_in_flight = sb_.in_flight();
    (void)prior_in_flight;
    sb_.set_rack_min_rtt(min_rtt);  // as the engine does before each ACK
    const AckResult r = sb_.on_ack(seq(cum), blocks, now_);
    recovery::RecoveryAck in(r);
    in.now = now_;
    in.prior_snd_una = prior_una;
    in.snd_una = sb_.high_ack();
    in.snd_nxt = sb_.high_data();
    in.ts_ecr = ts_ecr;
    in.mss = kMss;
    in.min_rtt = min_rtt;
    in.srtt = srtt;
    in.max_window = max_window;
    in.rto = Duration::ms(300);
    in.can_send_new_data = can_send_new;
    auto out = machine_.on_ack(in, sb_, cc_, tp_, mib_);
    EXPECT_EQ(sb_.check_invariants(), "");
    last_dsack_delivered = out.dsack_delivered;
    dsack_dups += out.dsack_dups;
    if (machine_.in_cwnd_reduction()) {
      machine_.cwnd_reduction(tp_, in.sb.delivered_packets + out.reno_delivered, out.newly_lost,
                              in.sb.una_advanced,
                              sb_.in_flight());
    }
    if (out.rexmit == recovery::Rexmit::kLost && auto_retransmit) retransmit_lost();
    return out;
  }

  // Linux tcp_xmit_retransmit_queue(): lost packets, while cwnd allows.
  uint32_t retransmit_lost() {
    uint32_t sent = 0;
    Seq32 from = sb_.high_ack();
    while (sb_.in_flight() < tp_.snd_cwnd) {
      auto i = sb_.next_lost(from);
      if (!i) break;
      const SeqRange r = sb_.at(*i).seq;
      EXPECT_TRUE(sb_.on_retransmit(r, kMss, now_).has_value());
      machine_.on_retransmit(1, tsval());
      retransmitted.push_back(static_cast<uint32_t>(r.begin - seq(0)));
      from = r.end;
      ++sent;
    }
    EXPECT_EQ(sb_.check_invariants(), "");
    return sent;
  }

  // RACK's reordering timer fired.
  recovery::RecoveryResult reo_timeout() {
    auto out = machine_.on_reo_timeout(now_, sb_.high_ack(), sb_.high_data(), Duration::ms(300),
                                       min_rtt, srtt, sb_, cc_, tp_, mib_);
    EXPECT_EQ(sb_.check_invariants(), "");
    if (out.rexmit == recovery::Rexmit::kLost && auto_retransmit) retransmit_lost();
    return out;
  }
  // A TLP probe retransmitting the last packet.
  void send_probe() {
    const SeqRange r = sb_.at(sb_.size() - 1).seq;
    EXPECT_TRUE(sb_.on_retransmit(r, kMss, now_, {}, RetransmitKind::kProbe).has_value());
    machine_.on_probe_sent(sb_.high_data(), true);
  }
  FakeCc& cc() { return cc_; }

  void rto(uint32_t retransmits = 0) {
    recovery::RtoInput in;
    in.now = now_;
    in.snd_una = sb_.high_ack();
    in.snd_nxt = sb_.high_data();
    in.retransmits = retransmits;
    machine_.on_rto(in, sb_, cc_, tp_, mib_);
    EXPECT_EQ(sb_.check_invariants(), "");
  }

  Scoreboard& sb() { return sb_; }
  recovery::RecoveryMachine& machine() { return machine_; }
  cc::CcState& tp() { return tp_; }
  Counters& mib() { return mib_; }
  uint64_t count(Counter c) const { return mib_.get(c); }
  CaState state() const { return machine_.ca_state(); }

  Duration min_rtt = Duration::ms(100);
  Duration srtt = Duration::ms(100);
  uint32_t max_window = 65535;  // the peer's largest window (tp->max_window)
  bool auto_retransmit = true;
  std::vector<uint32_t> retransmitted;  // offsets, in order
  uint32_t last_dsack_delivered = 0;    // RecoveryResult::dsack_delivered of the last ACK
  uint64_t dsack_dups = 0;              // tcpi_dsack_dups as the engine sums it

 private:
  uint32_t base_;
  Time now_ = Time::from_ns(0);
  Scoreboard sb_;
  recovery::RecoveryMachine machine_;
  FakeCc cc_;
  cc::CcState tp_;
  Counters mib_;
};

}  // namespace weir::tcp::testing
