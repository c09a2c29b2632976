// `weir pkt` speed: scripts per second for a typical script (handshake,
// a 10-segment flight, ACK, close), parsing alone, and a full run.
#include <string>

#include <benchmark/benchmark.h>

#include "pkt/parser.h"
#include "pkt/runner.h"

namespace {

const std::string kScript = R"(
`./defaults.sh`
    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
   +0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
   +0 bind(3, ..., ...) = 0
   +0 listen(3, 1) = 0
  +.1 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
   +0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>
  +.1 < . 1:1(0) ack 1 win 257
   +0 accept(3, ..., ...) = 4
   +0 write(4, ..., 10000) = 10000
   +0 > P. 1:10001(10000) ack 1
  +.1 < . 1:1(0) ack 10001 win 257
 +.01 < P. 1:1001(1000) ack 10001 win 257
   +0 > . 10001:10001(0) ack 1001
   +0 read(4, ..., 1000) = 1000
   +0 close(4) = 0
   +0 > F. 10001:10001(0) ack 1001
 +.01 < F. 1001:1001(0) ack 10002 win 257
   +0 > . 10002:10002(0) ack 1002
)";

void BM_PktParse(benchmark::State& state) {
  for (auto _ : state) {
    auto s = weir::pkt::parse_script(kScript, "bench.pkt");
    benchmark::DoNotOptimize(s);
  }
  state.counters["scripts/s"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PktParse);

void BM_PktRunScript(benchmark::State& state) {
  auto s = weir::pkt::parse_script(kScript, "bench.pkt");
  if (!s) {
    state.SkipWithError("script does not parse");
    return;
  }
  weir::pkt::RunOptions opt;
  opt.run_code = false;
  int failed = 0;
  for (auto _ : state) {
    auto r = weir::pkt::run_script(*s, kScript, opt);
    failed += r.outcome != weir::pkt::Outcome::kPass;
    benchmark::DoNotOptimize(r);
  }
  state.counters["scripts/s"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate);
  state.counters["failed"] = failed;
}
BENCHMARK(BM_PktRunScript);

}  // namespace

BENCHMARK_MAIN();
