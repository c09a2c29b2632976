// The SACK-panic class (Linux CVE-2019-11477/11478/11479, issue 9): CPU per
// ACK and heap per connection when a peer attacks the sender's scoreboard,
// against a plain cumulative ACK measured in the same run.
//
// Each benchmark is one Stack (the victim, a sender) with a scripted peer:
// the peer's ACKs are built as datagrams with valid checksums and go through
// Stack::input (parse, checksum, the whole ACK path and whatever the stack
// sends in answer). The flight is set up once, outside the timing.
//
//   BM_PlainAck          every ACK acknowledges the next packet (the cost
//                        of a normal ACK, new data sent in answer)
//   BM_SackEveryOtherByte 4 one-byte SACK blocks inside packets per ACK
//                        (CVE-2019-11478: would split the queue into bytes)
//   BM_SackMidPacket     4 blocks per ACK that start and end inside packets
//                        (CVE-2019-11477: fragmenting SACK blocks)
//   BM_SackEveryOtherPacket 4 blocks per ACK, each one whole packet, every
//                        other packet, walking the window then repeating
//   BM_SackOneBlock      no attack: a receiver seeing one-packet reordering;
//                        every ACK cumulatively acknowledges two packets and
//                        SACKs one (the packet after the next), the common
//                        'ACK with one SACK block' of a healthy flow
//   BM_MemcpyReference   memcpy of one 1460-byte packet: a machine-speed
//                        unit measured in the same run, so per-ACK costs can
//                        be compared with figures from other machines as a
//                        ratio
//
// Arg(0): the peer's MSS (48 = tcp_min_snd_mss, what CVE-2019-11479's tiny
// MSS becomes; 1460). Arg(1): packets in flight (initial_cwnd), 128, 1000 or
// 4000, and for issue 6's sizes (MSS 1460, plain ACK at a fixed flight and
// one SACK block) 128, 4096 and 65536: a cost that grows with it is a walk
// of the flight per ACK (issue 6). Counters: allocs_per_ack (calls of the
// global operator new during the timed ACKs, per ACK: steady state must not
// allocate), heap_growth_per_ack (bytes the attack made the victim allocate
// and keep, per ACK), heap_per_conn (heap held by the stack and its
// connection after the write: send buffer and the scoreboard of the flight,
// from mallinfo2), segments_out_per_ack.
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "bench_support.h"
#include "weir/stack.h"
#include "wire/packet.h"


namespace weir {
namespace {

using namespace wire::tcp_flag;

constexpr uint32_t kAcks = 10000;  // iterations of every case

class CountingNetif final : public Netif {
 public:
  void transmit(std::span<const uint8_t> p) override {
    ++sent;
    if (keep) last.assign(p.begin(), p.end());
  }
  uint32_t mtu() const override { return 1500; }
  uint64_t sent = 0;
  bool keep = true;
  std::vector<uint8_t> last;
};

// Heap in use: small chunks plus the mmap()ed large ones (send buffer).
size_t heap_in_use() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// A sender with `flight` packets of `mss` bytes outstanding to a peer that
// negotiated SACK (no timestamps, window 8 MB). Slow start lets the flight
// grow with every ACK unless `fixed_flight`: then the peer's window is
// exactly `flight` packets (window scale 7; a flight above 8 MB uses scale
// 14, rounding the window up to the next 16 KB), so every ACK sees the same
// flight.
class Victim {
 public:
  Victim(uint16_t mss, uint32_t flight, bool fixed_flight = false)
      : mss_(mss),
        flight_(flight),
        wscale_(uint64_t{flight} * mss > (uint64_t{65535} << 7) ? 14 : 7),
        window_(static_cast<uint16_t>(
            fixed_flight ? (uint64_t{flight} * mss + (1u << wscale_) - 1) >> wscale_ : 65535)) {
    StackConfig cfg;
    cfg.initial_cwnd = flight;
    const uint32_t per_ack = fixed_flight ? 2 : 1;  // new packets sent per ACK at most
    const size_t bytes = size_t{flight + per_ack * kAcks + 16} * mss;
    const auto wmem = static_cast<uint32_t>(std::max<size_t>(size_t{64} << 20, 2 * bytes));
    cfg.tcp_wmem = {4096, wmem, wmem};
    const size_t before = heap_in_use();
    stack_ = std::make_unique<Stack>(cfg, nif_);
    stack_->add_address(local_);
    s_ = *stack_->socket();
    (void)stack_->connect(now_, s_, Endpoint{remote_, 80});
    auto syn = wire::parse_tcp_packet(nif_.last);
    iss_ = syn->tcp.seq;
    local_port_ = syn->tcp.src_port;
    wire::TcpHeader h = header(SYN | ACK, iss_ + 1);
    h.options.mss = mss;
    h.options.wscale = wscale_;
    h.options.sack_permitted = true;
    inject(h);
    // Enough for the flight plus one (fixed flight: two) new packets per ACK.
    std::vector<uint8_t> data(bytes, 0x5a);
    size_t off = 0;
    while (off < data.size()) {
      auto w = stack_->send(now_, s_, std::span(data).subspan(off));
      if (!w || *w == 0) break;
      off += *w;
    }
    if (fixed_flight) {
      // The SYN-ACK's window is never scaled (RFC 7323 §2.2), so the first
      // flight stopped at 65535 bytes (44 packets); without this the timed
      // ACKs would open the window step by step and every ACK would clock
      // out more than it frees (1.4 per ACK at 4096, 7.5 at 65536). The
      // peer's window update sends the whole flight before the timing.
      inject(header(ACK, iss_ + 1));
    }
    flight_sent = nif_.sent;
    heap_per_conn = heap_in_use() - before;
    nif_.keep = false;
    una_ = iss_ + 1;
  }

  // The peer's ACK of `ack` carrying `blocks`.
  void ack(Seq32 ack, std::span<const SeqRange> blocks) {
    wire::TcpHeader h = header(ACK, ack);
    for (const SeqRange& b : blocks) h.options.add_sack(b);
    inject(h);
  }
  void tick() { now_ += Duration::us(5); }

  Seq32 una_;
  uint32_t mss_;
  uint32_t flight_;
  size_t heap_per_conn = 0;
  uint64_t flight_sent = 0;  // packets sent before the timing (handshake ACK included)
  uint8_t wscale_;
  uint16_t window_;
  CountingNetif nif_;

 private:
  wire::TcpHeader header(uint8_t flags, Seq32 ack) const {
    wire::TcpHeader h;
    h.src_port = 80;
    h.dst_port = local_port_;
    h.seq = peer_isn_ + ((flags & SYN) ? 0 : 1);
    h.ack = ack;
    h.flags = flags;
    h.window = (flags & SYN) ? 65535 : window_;
    return h;
  }
  void inject(const wire::TcpHeader& h) {
    wire::IpInfo ip;
    ip.src = remote_;
    ip.dst = local_;
    ip.version = 4;
    buf_.resize(wire::tcp_packet_size(ip, h, 0));
    wire::build_tcp_packet(ip, h, {}, buf_);
    stack_->input(now_, buf_);
  }

  std::unique_ptr<Stack> stack_;
  SocketId s_ = kNoSocket;
  Time now_ = Time::zero() + Duration::s(1);
  IpAddr local_ = IpAddr::v4(10, 0, 0, 1);
  IpAddr remote_ = IpAddr::v4(10, 0, 0, 2);
  Seq32 iss_;
  Seq32 peer_isn_{7000};
  uint16_t local_port_ = 0;
  std::vector<uint8_t> buf_;
};

void report(benchmark::State& state, const Victim& v, size_t heap0, uint64_t sent0, uint64_t allocs0) {
  const auto n = static_cast<double>(state.iterations());
  state.counters["allocs_per_ack"] = benchmark::Counter(static_cast<double>(bench::g_allocs.load() - allocs0) / n);
  state.counters["heap_per_conn"] = benchmark::Counter(static_cast<double>(v.heap_per_conn));
  state.counters["heap_growth_per_ack"] =
      benchmark::Counter(static_cast<double>(static_cast<int64_t>(heap_in_use() - heap0)) / n);
  state.counters["sent_before"] = benchmark::Counter(static_cast<double>(v.flight_sent));
  state.counters["segments_out_per_ack"] = benchmark::Counter(static_cast<double>(v.nif_.sent - sent0) / n);
  state.SetItemsProcessed(state.iterations());
}

// Runs `make_blocks(i, blocks)` -> block count for ACK number i at snd.una.
template <typename F>
void run_attack(benchmark::State& state, F make_blocks) {
  Victim v(static_cast<uint16_t>(state.range(0)), static_cast<uint32_t>(state.range(1)));
  std::array<SeqRange, wire::kMaxSackBlocks> blocks{};
  const size_t heap0 = heap_in_use();
  const uint64_t sent0 = v.nif_.sent;
  const uint64_t allocs0 = bench::g_allocs.load();
  uint32_t i = 0;
  for (auto _ : state) {
    const size_t n = make_blocks(v, i++, blocks);
    v.ack(v.una_, std::span(blocks.data(), n));
    v.tick();
  }
  report(state, v, heap0, sent0, allocs0);
}

void BM_PlainAck(benchmark::State& state) {
  Victim v(static_cast<uint16_t>(state.range(0)), static_cast<uint32_t>(state.range(1)),
           state.range(2) != 0);
  const size_t heap0 = heap_in_use();
  const uint64_t sent0 = v.nif_.sent;
  const uint64_t allocs0 = bench::g_allocs.load();
  for (auto _ : state) {
    v.una_ += v.mss_;
    v.ack(v.una_, {});
    v.tick();
  }
  report(state, v, heap0, sent0, allocs0);
}

// One-byte blocks at odd offsets inside packets, moving on every ACK.
void BM_SackEveryOtherByte(benchmark::State& state) {
  run_attack(state, [](Victim& v, uint32_t i, auto& b) {
    const uint32_t span = v.flight_ * v.mss_ - 16;
    const uint32_t base = 1 + (i * 8) % span;
    for (uint32_t k = 0; k < 4; ++k) b[k] = SeqRange{v.una_ + base + 2 * k, v.una_ + base + 2 * k + 1};
    return size_t{4};
  });
}

// Blocks that start and end inside packets (a third of the way in, two
// thirds into the next), walking the flight.
void BM_SackMidPacket(benchmark::State& state) {
  run_attack(state, [](Victim& v, uint32_t i, auto& b) {
    const uint32_t m = v.mss_;
    for (uint32_t k = 0; k < 4; ++k) {
      const uint32_t pkt = 1 + (i * 8 + 2 * k) % (v.flight_ - 3);
      b[k] = SeqRange{v.una_ + pkt * m + m / 3, v.una_ + (pkt + 1) * m + 2 * m / 3};
    }
    return size_t{4};
  });
}

// Whole packets, every other one, four per ACK; once the window is walked
// the same blocks come again (duplicate SACKs).
void BM_SackEveryOtherPacket(benchmark::State& state) {
  run_attack(state, [](Victim& v, uint32_t i, auto& b) {
    const uint32_t m = v.mss_;
    for (uint32_t k = 0; k < 4; ++k) {
      const uint32_t pkt = 1 + (i * 8 + 2 * k) % (v.flight_ - 2);
      b[k] = SeqRange{v.una_ + pkt * m, v.una_ + (pkt + 1) * m};
    }
    return size_t{4};
  });
}

// One-packet reordering: ACK i acknowledges up to the hole it leaves and
// SACKs the packet just above it; ACK i+1 fills that hole. Every ACK
// carries one SACK block and acknowledges two packets.
void BM_SackOneBlock(benchmark::State& state) {
  Victim v(static_cast<uint16_t>(state.range(0)), static_cast<uint32_t>(state.range(1)), true);
  const size_t heap0 = heap_in_use();
  const uint64_t sent0 = v.nif_.sent;
  const uint64_t allocs0 = bench::g_allocs.load();
  const uint32_t m = v.mss_;
  v.una_ += m;
  for (auto _ : state) {
    const SeqRange block{v.una_ + m, v.una_ + 2 * m};
    v.ack(v.una_, std::span(&block, 1));
    v.una_ += 2 * m;
    v.tick();
  }
  report(state, v, heap0, sent0, allocs0);
}

// Fixed iteration counts keep the flight from running out (the ACKs consume
// it) and every case comparable. Arg(2) of BM_PlainAck: 1 = fixed flight.
void args(benchmark::internal::Benchmark* b) {
  for (int64_t flight : {128, 1000, 4000})
    for (int64_t mss : {48, 1460}) b->Args({mss, flight});
}
void plain_args(benchmark::internal::Benchmark* b) {
  for (int64_t fixed : {0, 1})
    for (int64_t flight : {128, 1000, 4000})
      for (int64_t mss : {48, 1460}) b->Args({mss, flight, fixed});
  for (int64_t flight : {4096, 65536}) b->Args({1460, flight, 1});
}
// Issue 6's flight sizes for the one-SACK-block ACK (128 is in args()).
void sack_one_args(benchmark::internal::Benchmark* b) {
  args(b);
  for (int64_t flight : {4096, 65536}) b->Args({1460, flight});
}
BENCHMARK(weir::bench::BM_MemcpyReference)->Name("BM_MemcpyReference");
BENCHMARK(BM_PlainAck)->Apply(plain_args)->Iterations(kAcks);
BENCHMARK(BM_SackOneBlock)->Apply(sack_one_args)->Iterations(kAcks);
BENCHMARK(BM_SackEveryOtherByte)->Apply(args)->Iterations(kAcks);
BENCHMARK(BM_SackMidPacket)->Apply(args)->Iterations(kAcks);
BENCHMARK(BM_SackEveryOtherPacket)->Apply(args)->Iterations(kAcks);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
