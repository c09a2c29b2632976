// The soak driver itself (src/sim/soak.h): a seed decides everything and
// replays exactly, the seeds cover what issue 9 asks for, and the driver
// does report a run that misses its bound.
#include <gtest/gtest.h>

#include <string>

#include "adversarial/adv_helper.h"
#include "sim/soak.h"

namespace weir::test {
namespace {

using sim::LossModel;

TEST(Soak, ASeedReplaysExactly) {
  const sim::SoakCase c = sim::make_soak_case(42);
  EXPECT_EQ(c.describe(), sim::make_soak_case(42).describe());
  const sim::SoakResult a = sim::run_soak(c), b = sim::run_soak(c);
  EXPECT_EQ(a.ok, b.ok);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.elapsed, b.elapsed);
  EXPECT_EQ(a.packets, b.packets);
  EXPECT_EQ(a.events, b.events);
  measured("soak.seed42.elapsed_s", a.elapsed.secs());
}

TEST(Soak, SeedsCoverTheRequiredSpace) {
  int sack[2] = {}, ts[2] = {}, ws[2] = {}, bursty = 0, lossy = 0, dup = 0, corrupt = 0, reorder = 0, jitter = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const sim::SoakCase c = sim::make_soak_case(seed);
    EXPECT_GE(c.bytes_ab, 1u << 20);
    EXPECT_GE(c.bytes_ba, 1u << 20);
    ++sack[c.sack];
    ++ts[c.timestamps];
    ++ws[c.wscale];
    for (const auto* l : {&c.fwd, &c.rev}) {
      EXPECT_LE(l->loss, 0.2);
      if (l->loss_model == LossModel::kGilbertElliott) {
        ++bursty;
        const double bad = l->ge_p / (l->ge_p + l->ge_r);
        EXPECT_LE(bad * l->ge_loss_bad, 0.2 + 1e-9) << "seed " << seed;
      }
      lossy += l->loss > 0.1;
      dup += l->duplicate > 0;
      corrupt += l->corrupt > 0;
      reorder += l->reorder > 0;
      jitter += l->jitter > Duration::zero();
    }
    EXPECT_LT(c.rate_lo_bps, std::max(c.fwd.rate_bps, c.rev.rate_bps)) << "the rate really changes";
  }
  for (int* v : {sack, ts, ws}) {
    EXPECT_GT(v[0], 50);
    EXPECT_GT(v[1], 50);
  }
  for (int v : {bursty, lossy, dup, corrupt, reorder, jitter}) EXPECT_GT(v, 20);
}

// A hand-made case: 1 MiB each way at 10 Mbit/s, 10 ms each way, no pauses.
sim::SoakCase plain_case() {
  sim::SoakCase c;
  c.bytes_ab = c.bytes_ba = 1u << 20;
  c.fwd.delay = c.rev.delay = Duration::ms(10);
  c.fwd.rate_bps = c.rev.rate_bps = c.rate_lo_bps = 10'000'000;
  c.max_pauses = 0;
  return c;
}

TEST(Soak, ACleanLinkIsBoundBySerialisationAlone) {
  sim::SoakCase c = plain_case();
  c.sack = false;
  c.timestamps = false;
  // 10 s + 4 x (2 MiB x 8 x 1.1 / 10 Mbit/s): nothing to price, whatever
  // the options, so the bound stays tight where the link is kind.
  const double ser = 2.0 * (1u << 20) * 8 * 1.1 / 10e6;
  EXPECT_NEAR(sim::soak_bound(c).secs(), 10 + 4 * ser, 1e-6);
  c.sack = c.timestamps = true;
  EXPECT_NEAR(sim::soak_bound(c).secs(), 10 + 4 * ser, 1e-6);
}

TEST(Soak, ReorderingIsPricedOnlyWithoutSack) {
  sim::SoakCase c = plain_case();
  c.rev.jitter = Duration::ms(5);  // reorders: 1.2 ms between packets at 10 Mbit/s
  c.rev.reorder = 0.05;
  c.rev.reorder_hold = Duration::ms(10);
  c.sack = true;
  const Duration with_sack = sim::soak_bound(c);
  c.sack = false;
  const Duration reno = sim::soak_bound(c);
  measured("soak.bound.reordering_reno_over_sack", reno.secs() / with_sack.secs());
  EXPECT_GT(reno.secs(), with_sack.secs() * 2);
  // Jitter that cannot reorder (it only stretches gaps) is not priced.
  c.rev.jitter_reorder = false;
  c.rev.reorder = 0;
  EXPECT_EQ(sim::soak_bound(c), with_sack);
}

TEST(Soak, TimeoutsArePricedWithAndWithoutTimestamps) {
  sim::SoakCase c = plain_case();
  const Duration clean = sim::soak_bound(c);
  c.fwd.loss = 0.05;
  for (bool ts : {false, true}) {
    c.timestamps = ts;
    c.fwd.loss = 0.05;
    const Duration five = sim::soak_bound(c);
    c.fwd.loss = 0.10;
    const Duration ten = sim::soak_bound(c);
    measured(ts ? "soak.bound.ts_loss10_over_loss5" : "soak.bound.no_ts_loss10_over_loss5", ten.secs() / five.secs());
    EXPECT_GT(five.secs(), 2 * clean.secs()) << "ts " << ts;
    // Twice the loss: more timeouts and longer chains of them.
    EXPECT_GT(ten.secs(), 2 * five.secs()) << "ts " << ts;
  }
}

TEST(Soak, WithoutSackOrTimestampsTheBackoffCarriesThroughTheFlight) {
  // Reno in Loss never marks a lost retransmission again and no ACK in the
  // go-back-N gives a sample (Karn), so any loss in the retransmitted flight
  // waits for the next RTO still backed off; with SACK, RACK repairs it.
  sim::SoakCase c = plain_case();
  c.fwd.loss = 0.10;
  c.timestamps = false;
  c.sack = true;
  const Duration sack = sim::soak_bound(c);
  c.sack = false;
  const Duration reno = sim::soak_bound(c);
  measured("soak.bound.no_ts_loss10_reno_over_sack", reno.secs() / sack.secs());
  EXPECT_GT(reno.secs(), 2 * sack.secs());
}

TEST(Soak, AStaleEchoAtTheRtoCapIsPricedAtTheCap) {
  // With timestamps on a path losing most ACKs in bursts, a stale echo
  // spans several waits and leaves the RTO near the 120 s cap: the bound
  // grows with the burstiness of the ACK path at the same stationary loss.
  sim::SoakCase c = plain_case();
  c.sack = false;
  c.timestamps = true;
  c.fwd.loss = 0.10;
  c.rev.loss = 0.10;
  const Duration bernoulli = sim::soak_bound(c);
  c.rev.loss_model = LossModel::kGilbertElliott;
  c.rev.ge_r = 0.2;
  c.rev.ge_loss_good = 0;
  c.rev.ge_loss_bad = 1.0;
  c.rev.ge_p = 0.1 * c.rev.ge_r / 0.9;  // stationary 10 %
  const Duration bursty = sim::soak_bound(c);
  measured("soak.bound.ts_bursty_acks_over_bernoulli", bursty.secs() / bernoulli.secs());
  EXPECT_GT(bursty.secs(), 2 * bernoulli.secs());
}

// Seeds that missed the bound before it priced Linux's behaviour: 8961
// (reordering and jitter, no SACK: Reno's false fast retransmits), 4982,
// 5162 and 6969 (no timestamps: the backoff carried from episode to episode
// and, without SACK, through the go-back-N in Loss), 2478, 2994
// and 5017 (timestamps, no SACK: stale echoes spanning several RTO waits;
// 5017 takes 3850 s of its 4696 s bound at 0e5301a, as at 2a57205; it missed
// the bound only with the since-reverted TSO-deferral engine of session 5).
TEST(Soak, SeedsThatLinuxSlowsDownFinishWithinTheirBound) {
  for (uint64_t seed : {8961u, 4982u, 5162u, 6969u, 2478u, 2994u, 5017u}) {
    const sim::SoakResult r = sim::run_soak(sim::make_soak_case(seed));
    EXPECT_TRUE(r.ok) << "seed " << seed << ": " << r.error;
    measured("soak.seed" + std::to_string(seed) + ".bound_used", r.elapsed.secs() / r.bound.secs());
  }
}

// A connection that stalls for good (every packet dropped from 2 s on) is
// reported as not finished once its bound, derived from the link, runs out;
// the same seed passes without the blackhole.
TEST(Soak, AStalledConnectionFailsAtItsBound) {
  sim::SoakCase c = sim::make_soak_case(3);
  ASSERT_TRUE(sim::run_soak(c).ok);
  c.blackhole_after = Duration::s(2);
  const sim::SoakResult r = sim::run_soak(c);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("not finished"), std::string::npos) << r.error;
  EXPECT_LE(r.elapsed, c.bound);
  EXPECT_GT(r.elapsed, c.bound - Duration::s(130)) << "it ran until the bound (RTOs at most 120 s apart)";
}

TEST(Soak, ARunThatMissesItsBoundFails) {
  sim::SoakCase c = sim::make_soak_case(3);
  c.bound = Duration::ms(50);
  const sim::SoakResult r = sim::run_soak(c);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("not finished"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace weir::test
