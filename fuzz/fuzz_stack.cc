// libFuzzer target for the whole stack's input path. One Stack with a
// listener on port 8080 and a connection accepted from a scripted peer; the
// input is a byte program of operations: peer segments (the fuzzer picks
// flags, sequence/ack numbers relative to what the stack sent or raw, window,
// options structured or as raw bytes, payload length), ICMP errors quoting
// the connection, timer advances, and application sends, reads, shutdowns,
// closes, accepts and socket options. Every datagram carries valid IP and TCP
// checksums and the connection's addresses, so it reaches the engine.
//
// Checked beyond "no crash, no sanitizer report": the scoreboard invariant
// checker (built in, see CMakeLists.txt: WEIR_SCOREBOARD_CHECKS), every
// datagram the stack sends parses, the bytes the application reads from the
// connection are the peer's stream at their offsets, the bytes the stack
// sends are the application's stream at their offsets, and time always moves.
// Corpus: corpus/stack/ (see gen_stack_seeds.py for the program format).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include "weir/stack.h"
#include "wire/bytes.h"
#include "wire/checksum.h"
#include "wire/packet.h"

namespace weir::fuzz {
namespace {

using namespace wire::tcp_flag;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_stack: %s\n", what);
  std::abort();
}

// The peer's stream byte at offset `off` (from its ISN + 1), and ours.
uint8_t peer_byte(uint32_t off) { return static_cast<uint8_t>((off * 2654435761u) >> 11); }
uint8_t app_byte(uint64_t off) { return static_cast<uint8_t>((off * 40503u) >> 5) ^ 0x5a; }

// Reads the program; past the end every read yields zeros.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> d) : d_(d) {}
  bool done() const { return pos_ >= d_.size(); }
  uint8_t u8() { return pos_ < d_.size() ? d_[pos_++] : 0; }
  uint16_t u16() { return static_cast<uint16_t>(u8() << 8 | u8()); }
  uint32_t u32() { return static_cast<uint32_t>(u16()) << 16 | u16(); }
  std::span<const uint8_t> take(size_t n) {
    n = std::min(n, d_.size() - std::min(pos_, d_.size()));
    auto s = d_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  std::span<const uint8_t> d_;
  size_t pos_ = 0;
};

class Capture : public Netif {
 public:
  void transmit(std::span<const uint8_t> p) override {
    if (out.size() < 4096) out.emplace_back(p.begin(), p.end());
  }
  uint32_t mtu() const override { return mtu_; }
  std::vector<std::vector<uint8_t>> out;
  uint32_t mtu_ = 1500;
};

struct SegSpec {
  uint8_t flags = ACK;
  Seq32 seq;
  Seq32 ack;
  uint16_t window = 65535;
  wire::TcpOptions opts;
  std::vector<uint8_t> raw_opts;  // used instead of opts when non-empty
  int data_offset = -1;           // forced data offset (words), -1: computed
  uint16_t src_port = 0;
  uint32_t payload_len = 0;
  uint8_t tos = 0;                // the IP ECN field (RFC 3168 §5): ECT, CE
};

class Rig {
 public:
  explicit Rig(Reader& in);
  void run(Reader& in);

 private:
  void handshake(Reader& in);
  void op(Reader& in);
  void seg_op(Reader& in, bool raw_options);
  void icmp_op(Reader& in);
  void app_op(uint8_t kind, Reader& in);
  void sockopt_op(Reader& in);
  void send_seg(const SegSpec& s);
  void send_datagram(std::vector<uint8_t> d);
  void advance_to(Time t);
  void drain();
  void check_out(const wire::TcpPacket& p);
  Seq32 pick_seq(uint8_t mode, Reader& in, Seq32 base);
  wire::IpInfo peer_ip(uint8_t tos = 0) const;
  SocketId pick_socket(Reader& in) { return socks_[in.u8() % socks_.size()]; }

  Capture nif_;
  StackConfig cfg_;
  std::unique_ptr<Stack> stack_;
  Time now_ = Time::zero() + Duration::s(100);
  bool v6_ = false;
  IpAddr local_, remote_;
  uint16_t peer_port_ = 50000;
  SocketId listener_ = kNoSocket;
  SocketId main_ = kNoSocket;
  std::vector<SocketId> socks_;
  // The peer's view of the main connection.
  Seq32 peer_isn_{1000000};
  Seq32 iss_;            // the stack's ISN
  Seq32 stack_ack_;      // the last ACK the stack sent (its RCV.NXT)
  Seq32 snd_max_;        // the highest sequence the stack sent (+ SYN/FIN)
  Seq32 peer_acked_;     // the last ACK the peer sent
  uint32_t stack_tsval_ = 0;
  bool have_iss_ = false;
  bool peer_ts_ = false;
  bool tuple_reused_ = false;  // a new connection took the main 4-tuple
  bool handshake_done_ = false;  // set-up ended: no SYN-ACK of main can follow
  uint64_t app_sent_ = 0;      // bytes the application queued on main
  uint64_t app_read_ = 0;      // bytes it read from main
  std::vector<uint8_t> buf_;
};

Rig::Rig(Reader& in) {
  // The first byte switches stack features off, so their absence is fuzzed too.
  const uint8_t c = in.u8();
  cfg_.tcp_sack = !(c & 0x01);
  cfg_.tcp_timestamps = !(c & 0x02);
  cfg_.tcp_window_scaling = !(c & 0x04);
  cfg_.tcp_recovery = (c & 0x08) ? 0 : 1;
  if (c & 0x10) cfg_.tcp_congestion_control = "reno";
  if (c & 0x20) cfg_.tcp_rmem = {4096, 8192, 16384};  // reassembly pruning
  if (c & 0x40) cfg_.tcp_wmem = {4096, 8192, 16384};
  v6_ = (c & 0x80) != 0;
  // Protective Load Balancing on, at its most eager: a DCTCP connection
  // (handshake's 0x40) rehashes after every congested round and on idle.
  cfg_.tcp_plb_enabled = 1;
  cfg_.tcp_plb_rehash_rounds = 1;
  cfg_.tcp_plb_idle_rehash_rounds = 1;
  cfg_.tcp_plb_suspend_rto_sec = 1;
  local_ = v6_ ? *IpAddr::parse("fd00::1") : IpAddr::v4(192, 168, 0, 1);
  remote_ = v6_ ? *IpAddr::parse("fd00::2") : IpAddr::v4(192, 0, 2, 1);
  stack_ = std::make_unique<Stack>(cfg_, nif_);
  stack_->add_address(local_);
  buf_.resize(70000);
}

wire::IpInfo Rig::peer_ip(uint8_t tos) const {
  wire::IpInfo ip;
  ip.tos = tos;
  ip.version = v6_ ? 6 : 4;
  ip.src = remote_;
  ip.dst = local_;
  return ip;
}

void Rig::advance_to(Time t) {
  // Every timer runs at its deadline; a deadline that does not move past
  // now after advance() would spin a driver forever.
  for (int i = 0; stack_->next_deadline() <= t; ++i) {
    if (i > 100000) fail("timer deadline never moves past now");
    now_ = max(now_, stack_->next_deadline());
    stack_->advance(now_);
    drain();
  }
  now_ = max(now_, t);
}

void Rig::send_datagram(std::vector<uint8_t> d) {
  stack_->input(now_, d);
  drain();
}

void Rig::send_seg(const SegSpec& s) {
  wire::TcpHeader h;
  h.src_port = s.src_port ? s.src_port : peer_port_;
  h.dst_port = 8080;
  h.seq = s.seq;
  h.ack = s.ack;
  h.flags = s.flags;
  h.window = s.window;
  h.urgent = (s.flags & URG) ? 1 : 0;
  std::vector<uint8_t> body;
  if (s.raw_opts.empty()) {
    h.options = s.opts;
  } else {
    body = s.raw_opts;
    while (body.size() % 4) body.push_back(wire::tcp_opt::EOL);
  }
  const size_t opt_len = body.size();
  const uint32_t off = static_cast<uint32_t>(s.seq - (peer_isn_ + 1));
  body.resize(opt_len + s.payload_len);
  // The stack's data starts where the data offset ends: with a forced
  // offset that is inside the raw options or inside the payload (raw
  // options carry no structured ones, so the header proper is 20 bytes).
  // From there on the bytes are the peer's stream at s.seq, or the read
  // check would blame the stack for the harness's shift.
  size_t data_at = opt_len;
  if (s.data_offset >= 0) data_at = std::min(body.size(), size_t(std::max(0, s.data_offset * 4 - 20)));
  for (size_t i = data_at; i < body.size(); ++i) body[i] = peer_byte(off + static_cast<uint32_t>(i - data_at));
  std::vector<uint8_t> d = wire::build_tcp_packet(peer_ip(s.tos), h, body);
  if (d.empty()) return;
  if (opt_len || s.data_offset >= 0) {
    // Raw options travel as leading payload; the data offset is patched to
    // cover them (or forced) and the checksum updated (RFC 1624).
    uint8_t* tcp = d.data() + (v6_ ? wire::kIpv6Header : wire::kIpv4HeaderMin);
    const uint16_t old_word = wire::load_be16(tcp + 12);
    const int doff = s.data_offset >= 0 ? s.data_offset : 5 + static_cast<int>(opt_len / 4);
    const uint16_t new_word = static_cast<uint16_t>((old_word & 0x0fff) | (doff & 0xf) << 12);
    wire::store_be16(tcp + 12, new_word);
    wire::store_be16(tcp + 16, wire::csum_update16(wire::load_be16(tcp + 16), old_word, new_word));
  }
  if (s.src_port == 0 || s.src_port == peer_port_) {
    if (s.flags & ACK) peer_acked_ = s.ack;
  }
  send_datagram(std::move(d));
}

// A sequence number: relative to `base` (small or large signed offsets) or raw.
Seq32 Rig::pick_seq(uint8_t mode, Reader& in, Seq32 base) {
  switch (mode & 3) {
    case 0: return base;
    case 1: return base + static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(in.u8())));
    case 2: return base + static_cast<uint32_t>(static_cast<int32_t>(static_cast<int16_t>(in.u16())) * 16);
    default: return Seq32(in.u32());
  }
}


void Rig::check_out(const wire::TcpPacket& p) {
  const wire::TcpHeader& h = p.tcp;
  if (h.src_port != 8080 || h.dst_port != peer_port_ || tuple_reused_) return;
  if (h.has(SYN)) {
    if (!have_iss_) {  // our SYN-ACK of the main connection
      have_iss_ = true;
      iss_ = h.seq;
      snd_max_ = h.seq + 1;
      stack_ack_ = h.ack;
      if (h.options.ts) stack_tsval_ = h.options.ts->val;
    } else if (h.seq != iss_ || handshake_done_) {
      // A new incarnation of the 4-tuple. Its ISN can equal main's: RFC 6528's
      // clock term M does not move while virtual time stands still.
      tuple_reused_ = true;
    }
    return;
  }
  if (!have_iss_) return;
  if (h.has(ACK)) stack_ack_ = h.ack;
  if (h.options.ts) stack_tsval_ = h.options.ts->val;
  const Seq32 end = h.seq + static_cast<uint32_t>(p.payload.size()) + (h.has(FIN) ? 1u : 0u);
  if (snd_max_ < end) snd_max_ = end;
  // Every byte sent is the application's byte at that stream offset
  // (retransmissions included), and nothing is sent that was never written.
  const uint32_t off = static_cast<uint32_t>(h.seq - (iss_ + 1));
  if (!p.payload.empty() && uint64_t{off} + p.payload.size() > app_sent_) fail("sent bytes never written");
  for (size_t i = 0; i < p.payload.size(); ++i) {
    if (p.payload[i] != app_byte(off + i)) fail("sent a byte that differs from the application's");
  }
}

void Rig::drain() {
  // The stack may transmit from inside drain's callers only; copy first.
  std::vector<std::vector<uint8_t>> out;
  out.swap(nif_.out);
  for (const auto& d : out) {
    auto p = wire::parse_tcp_packet(d);
    if (!p) fail("the stack sent a datagram that does not parse");
    check_out(*p);
  }
}

void Rig::handshake(Reader& in) {
  listener_ = *stack_->socket(v6_);
  if (stack_->bind(listener_, Endpoint{local_, 8080}) != Errc::kOk) fail("bind");
  // SO_OOBINLINE (inherited by the child): a URG segment's urgent byte stays
  // in the stream, so reads remain the peer's stream at their offsets; without
  // it the byte leaves the stream (Linux tcp_recvmsg) and the check would not hold.
  const int one = 1;
  const auto one_bytes = std::span(reinterpret_cast<const uint8_t*>(&one), sizeof one);
  if (stack_->setsockopt(now_, listener_, SOL_SOCKET, SO_OOBINLINE, one_bytes) != Errc::kOk) fail("oobinline");
  if (stack_->listen(now_, listener_, 16) != Errc::kOk) fail("listen");
  // The peer's SYN options: which ones, and their values, come from the input.
  const uint8_t o = in.u8();
  SegSpec syn;
  syn.flags = SYN;
  syn.seq = peer_isn_;
  syn.window = in.u16();
  if (o & 0x01) syn.opts.mss = in.u16();
  if (o & 0x02) syn.opts.wscale = in.u8();
  syn.opts.sack_permitted = (o & 0x04) != 0;
  if (o & 0x08) syn.opts.ts = wire::TcpTimestamps{in.u32(), 0};
  peer_ts_ = syn.opts.ts.has_value();
  if (o & 0x10) nif_.mtu_ = 576 + in.u16() % 8500;
  // ECN (RFC 3168 §6.1.1): the SYN asks for it; a DCTCP listener (RFC 8257)
  // takes it whatever tcp_ecn says and echoes CE per packet.
  if (o & 0x20) syn.flags |= ECE | CWR;
  if (o & 0x40) {
    static constexpr char kDctcp[] = "dctcp";
    const auto name = std::span(reinterpret_cast<const uint8_t*>(kDctcp), sizeof kDctcp - 1);
    if (stack_->setsockopt(now_, listener_, IPPROTO_TCP, TCP_CONGESTION, name) != Errc::kOk) fail("dctcp");
  }
  send_seg(syn);  // check_out learns our ISN from the SYN-ACK
  if (!have_iss_) tuple_reused_ = true;
  SegSpec ack;
  ack.seq = peer_isn_ + 1;
  ack.ack = iss_ + 1;
  ack.window = syn.window;
  if (syn.opts.ts) ack.opts.ts = wire::TcpTimestamps{syn.opts.ts->val + 1, stack_tsval_};
  send_seg(ack);
  auto s = stack_->accept(now_, listener_, nullptr);
  if (s) main_ = *s;
  else tuple_reused_ = true;  // no connection (e.g. a refused MSS): checks off
  handshake_done_ = true;
  socks_.push_back(main_ != kNoSocket ? main_ : listener_);
  socks_.push_back(listener_);
}

// Option bits of a structured segment: TS, SACK blocks, MSS, WS, SACK-perm.
void read_options(Reader& in, wire::TcpOptions& o, Seq32 sack_base, uint32_t tsval, uint32_t tsecr) {
  const uint8_t b = in.u8();
  if (b & 0x01) o.ts = wire::TcpTimestamps{tsval, tsecr};
  if (b & 0x02) o.ts = wire::TcpTimestamps{in.u32(), in.u32()};
  if (b & 0x04) {
    const int n = 1 + in.u8() % 4;
    for (int i = 0; i < n; ++i) {
      // Blocks near SND.UNA in steps of 8 bytes, of up to ~32 KB.
      const Seq32 begin = sack_base + static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(in.u8())) * 64);
      o.add_sack(SeqRange{begin, begin + uint32_t{in.u16()} / 2});
    }
  }
  if (b & 0x08) o.mss = in.u16();
  if (b & 0x10) o.wscale = in.u8();
  o.sack_permitted = (b & 0x20) != 0;
}

void Rig::seg_op(Reader& in, bool raw_options) {
  SegSpec s;
  s.flags = in.u8();
  const uint8_t modes = in.u8();
  s.seq = pick_seq(modes, in, stack_ack_);
  s.ack = pick_seq(modes >> 2, in, snd_max_);
  s.window = in.u16();
  if (modes & 0x10) s.src_port = in.u16();  // another 4-tuple (listener, RST replies)
  if (raw_options) {
    auto raw = in.take(in.u8() % 41);
    s.raw_opts.assign(raw.begin(), raw.end());
    if (modes & 0x20) s.data_offset = in.u8() & 0xf;
  } else {
    const uint32_t tsval = 5000 + static_cast<uint32_t>(now_.ms());
    read_options(in, s.opts, peer_acked_, tsval, stack_tsval_);
  }
  s.payload_len = (modes & 0x40) ? in.u16() % 9000 : in.u8() * 8u;
  if (modes & 0x80) s.tos = in.u8() & 3;  // ECT(1), ECT(0) or CE
  send_seg(s);
}

// An ICMP error quoting a segment of the main connection (RFC 1191 / RFC
// 8201 path MTU, RFC 5927 soft errors).
void Rig::icmp_op(Reader& in) {
  const uint8_t type = in.u8(), code = in.u8();
  const uint32_t mtu = in.u16();
  const Seq32 seq = pick_seq(in.u8(), in, peer_acked_);
  const size_t iph = v6_ ? wire::kIpv6Header : wire::kIpv4HeaderMin;
  std::vector<uint8_t> icmp(8 + iph + 8);
  icmp[0] = type;
  icmp[1] = code;
  if (v6_) wire::store_be32(&icmp[4], mtu);
  else wire::store_be16(&icmp[6], static_cast<uint16_t>(mtu));
  // The quoted header: a datagram from us to the peer.
  wire::IpInfo q;
  q.version = v6_ ? 6 : 4;
  q.src = local_;
  q.dst = remote_;
  wire::TcpHeader th;
  th.src_port = 8080;
  th.dst_port = peer_port_;
  th.seq = seq;
  th.flags = ACK;
  std::vector<uint8_t> quoted = wire::build_tcp_packet(q, th, {});
  std::copy_n(quoted.begin(), iph + 8, icmp.begin() + 8);
  wire::IpInfo ip = peer_ip();
  ip.proto = v6_ ? wire::kProtoIcmpv6 : wire::kProtoIcmp;
  const uint32_t sum = v6_ ? wire::pseudo_header_sum(ip.src, ip.dst, ip.proto, static_cast<uint32_t>(icmp.size())) : 0;
  wire::store_be16(&icmp[2], wire::csum_fold(wire::csum_partial(icmp, sum)));
  // The outer header, built as an IPv4 or IPv6 header by hand.
  std::vector<uint8_t> d(iph);
  if (v6_) {
    d[0] = 0x60;
    wire::store_be16(&d[4], static_cast<uint16_t>(icmp.size()));
    d[6] = ip.proto;
    d[7] = 64;
    std::copy_n(remote_.bytes().begin(), 16, d.begin() + 8);
    std::copy_n(local_.bytes().begin(), 16, d.begin() + 24);
  } else {
    d[0] = 0x45;
    wire::store_be16(&d[2], static_cast<uint16_t>(iph + icmp.size()));
    d[8] = 64;
    d[9] = ip.proto;
    wire::store_be32(&d[12], remote_.v4_host_order());
    wire::store_be32(&d[16], local_.v4_host_order());
    wire::store_be16(&d[10], wire::csum_fold(wire::csum_partial(d)));
  }
  d.insert(d.end(), icmp.begin(), icmp.end());
  send_datagram(std::move(d));
}

void Rig::app_op(uint8_t kind, Reader& in) {
  const SocketId s = pick_socket(in);
  const size_t n = in.u16();
  if (kind == 0) {  // send
    const uint64_t base = s == main_ ? app_sent_ : 0;
    for (size_t i = 0; i < n; ++i) buf_[i] = app_byte(base + i);
    auto r = stack_->send(now_, s, {buf_.data(), n}, 0);
    if (r && s == main_) app_sent_ += *r;
  } else if (kind == 1) {  // recv, possibly MSG_PEEK
    const int flags = (n & 1) ? MSG_PEEK : 0;
    auto r = stack_->recv(now_, s, {buf_.data(), n}, flags);
    if (r && s == main_ && !tuple_reused_) {
      for (size_t i = 0; i < *r; ++i) {
        if (buf_[i] != peer_byte(static_cast<uint32_t>(app_read_ + i))) fail("read a byte the peer never sent there");
      }
      if (!flags) app_read_ += *r;
    }
  } else if (kind == 2) {
    (void)stack_->shutdown(now_, s, static_cast<int>(n % 3));
  } else if (kind == 3) {
    (void)stack_->close(now_, s);
    if (s == main_) main_ = kNoSocket;  // its id may be reused: checks by id end
  } else {
    auto a = stack_->accept(now_, listener_, nullptr);
    if (a && socks_.size() < 16) socks_.push_back(*a);
  }
  drain();
}

void Rig::sockopt_op(Reader& in) {
  static constexpr int kOpts[][2] = {
      {IPPROTO_TCP, TCP_NODELAY},      {IPPROTO_TCP, TCP_CORK},       {IPPROTO_TCP, TCP_MAXSEG},
      {IPPROTO_TCP, TCP_WINDOW_CLAMP}, {IPPROTO_TCP, TCP_QUICKACK},   {IPPROTO_TCP, TCP_KEEPIDLE},
      {IPPROTO_TCP, TCP_KEEPINTVL},    {IPPROTO_TCP, TCP_KEEPCNT},    {IPPROTO_TCP, TCP_USER_TIMEOUT},
      {IPPROTO_TCP, TCP_NOTSENT_LOWAT}, {SOL_SOCKET, SO_RCVBUF},      {SOL_SOCKET, SO_SNDBUF},
      {SOL_SOCKET, SO_RCVLOWAT},       {SOL_SOCKET, SO_KEEPALIVE},
  };
  const SocketId s = pick_socket(in);
  const auto& o = kOpts[in.u8() % std::size(kOpts)];
  const int v = static_cast<int>(in.u32());
  uint8_t val[sizeof(int)];
  std::copy_n(reinterpret_cast<const uint8_t*>(&v), sizeof v, val);
  (void)stack_->setsockopt(now_, s, o[0], o[1], val);
  drain();
}

void Rig::op(Reader& in) {
  const uint8_t k = in.u8();
  switch (k % 13) {
    case 0: seg_op(in, false); break;
    case 1: seg_op(in, true); break;
    case 2: advance_to(now_ + Duration::ms(in.u8())); break;
    case 3: advance_to(now_ + Duration::ms(100 * int64_t{in.u8()})); break;
    case 4: advance_to(min(stack_->next_deadline(), now_ + Duration::s(1000))); break;
    case 5: case 6: case 7: case 8: case 9: app_op(static_cast<uint8_t>(k % 13 - 5), in); break;
    case 10: sockopt_op(in); break;
    case 11: icmp_op(in); break;
    default: {  // the peer ACKs everything, or sends in-order data
      SegSpec s;
      s.seq = stack_ack_;
      s.ack = snd_max_;
      s.window = in.u16();
      if (peer_ts_) s.opts.ts = wire::TcpTimestamps{5000 + static_cast<uint32_t>(now_.ms()), stack_tsval_};
      s.payload_len = (k & 0x80) ? in.u16() % 1500 : 0;
      send_seg(s);
    }
  }
  // Whatever happened, the readiness and info queries answer.
  for (SocketId s : socks_) {
    (void)stack_->poll(s);
    (void)stack_->tcp_info(s);
  }
}

void Rig::run(Reader& in) {
  handshake(in);
  for (int ops = 0; !in.done() && ops < 4000; ++ops) op(in);
  // A final stretch of time: every timer that is left runs.
  advance_to(now_ + Duration::s(300));
}

}  // namespace
}  // namespace weir::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weir::fuzz::Reader in({data, size});
  weir::fuzz::Rig rig(in);
  rig.run(in);
  return 0;
}
