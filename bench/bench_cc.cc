// Per-ACK cost of congestion control: the work tcp_ack adds for each ACK
// (delivery-rate sample, pkts_acked, cong_control/cong_avoid, pacing rate).
#include <benchmark/benchmark.h>

#include "tcp/cc/bbr.h"
#include "tcp/cc/cc.h"
#include "tcp/cc/cubic.h"
#include "tcp/cc/reno.h"

namespace {

using namespace weir;
using namespace weir::cc;

// A steady ACK clock: one packet sent and one ACKed every 10 us, 1 ms RTT.
void run_acks(benchmark::State& st, CongestionControl& cc) {
  CcState tp;
  Counters mib;
  tp.mss = 1448;
  tp.srtt = Duration::ms(1);
  tp.min_rtt = Duration::ms(1);
  tp.snd_ssthresh = 100;  // congestion avoidance for CUBIC and Reno
  tp.snd_cwnd = 100;
  tp.is_cwnd_limited = true;
  cc.init(tp, Time::zero());
  Time now = Time::zero();
  uint32_t seq = 0;
  TxRateSnapshot ring[128];
  for (uint32_t i = 0; i < 128; ++i) ring[i] = tp.rate.on_packet_sent(now, i);
  for (auto _ : st) {
    now += Duration::us(10);
    uint32_t k = seq++ & 127;
    RateSample rs;
    rs.prior_in_flight = 100;
    rs.rtt = Duration::ms(1);
    tp.rate.count_delivered(1, false);
    tp.rate.on_packet_delivered(ring[k], now - Duration::ms(1), Seq32(seq * 1448), false, false, rs);
    cc.pkts_acked(tp, AckSample{1, rs.rtt, 0}, now, mib);
    tp.rate.generate(rs, 1, 0, false, tp.min_rtt, now);
    tp.snd_una = Seq32(seq * 1448);
    cong_control(cc, tp, AckEvent{tp.snd_una, true}, rs, now, mib, [] {});
    ring[k] = tp.rate.on_packet_sent(now, 100);
    benchmark::DoNotOptimize(tp.snd_cwnd);
  }
  st.SetItemsProcessed(st.iterations());
}

void BM_RenoPerAck(benchmark::State& st) {
  Reno cc;
  run_acks(st, cc);
}
void BM_CubicPerAck(benchmark::State& st) {
  Cubic cc;
  run_acks(st, cc);
}
void BM_BbrPerAck(benchmark::State& st) {
  Bbr cc;
  run_acks(st, cc);
}
BENCHMARK(BM_RenoPerAck);
BENCHMARK(BM_CubicPerAck);
BENCHMARK(BM_BbrPerAck);

}  // namespace

BENCHMARK_MAIN();
