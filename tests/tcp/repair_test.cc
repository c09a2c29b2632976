// TCP_REPAIR (Linux tcp.c; CRIU's checkpoint/restore): a connection dumped
// from one stack in repair mode, closed silently, and recreated in a fresh
// stack finishes its transfer byte-exact; the options' errors are Linux's.
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "tcp/harness_helper.h"
#include "wire/packet.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

uint8_t pattern(uint64_t i, uint8_t salt) { return static_cast<uint8_t>((i * 2654435761u >> 11) ^ salt); }

// One host: a stack on a capturing device.
struct Host {
  explicit Host(IpAddr a) : addr(a) { reset(); }
  void reset() {
    stack.reset();
    nif = std::make_unique<CaptureNetif>();
    stack = std::make_unique<Stack>(StackConfig{}, *nif);
    stack->add_address(addr);
  }
  IpAddr addr;
  std::unique_ptr<CaptureNetif> nif;
  std::unique_ptr<Stack> stack;
};

// A parsed segment and which host sent it.
struct Seen {
  bool from_a = false;
  wire::TcpHeader h;
  size_t len = 0;
};

// Two hosts joined by a wire the test drives: pump() delivers what each
// sent, unless `drop` says otherwise; every delivered segment is logged.
struct Rig {
  Host a{IpAddr::v4(10, 0, 0, 1)};
  Host b{IpAddr::v4(10, 0, 0, 2)};
  Time now = Time::zero() + Duration::s(10);
  std::vector<Seen> log;

  Seen parse(bool from_a, const std::vector<uint8_t>& bytes) {
    auto p = wire::parse_tcp_packet(bytes);
    EXPECT_TRUE(p.has_value());
    Seen s;
    s.from_a = from_a;
    if (p) {
      s.h = p->tcp;
      s.len = p->payload.size();
    }
    return s;
  }
  // Delivers one host's queued segments; `drop(i, seen)` filters the i-th data segment.
  template <typename Drop>
  void deliver_from(bool from_a, Drop drop) {
    Host& src = from_a ? a : b;
    Host& dst = from_a ? b : a;
    std::deque<std::vector<uint8_t>> q;
    q.swap(src.nif->out);
    size_t data_i = 0;
    for (auto& bytes : q) {
      Seen s = parse(from_a, bytes);
      if (s.len > 0 && drop(data_i++, s)) continue;
      log.push_back(s);
      dst.stack->input(now, bytes);
    }
  }
  void deliver_from(bool from_a) { deliver_from(from_a, [](size_t, const Seen&) { return false; }); }
  void pump() {
    while (!a.nif->out.empty() || !b.nif->out.empty()) {
      deliver_from(true);
      deliver_from(false);
    }
  }
  void run(Duration d) {
    const Time end = now + d;
    pump();
    for (;;) {
      const Time next = std::min(a.stack->next_deadline(), b.stack->next_deadline());
      if (next > end) break;
      now = max(now, next);
      a.stack->advance(now);
      b.stack->advance(now);
      pump();
    }
    now = end;
  }
  bool rst_seen_by_b() const {
    for (const Seen& s : log)
      if (s.from_a && s.h.has(RST)) return true;
    return false;
  }
};

// Option helpers over a Stack.
Errc set_opt(Stack& st, Time now, SocketId s, int name, int v) {
  return st.setsockopt(now, s, IPPROTO_TCP, name, std::span(reinterpret_cast<const uint8_t*>(&v), sizeof v));
}
template <typename T>
Errc set_struct(Stack& st, Time now, SocketId s, int name, const T& v) {
  return st.setsockopt(now, s, IPPROTO_TCP, name, std::span(reinterpret_cast<const uint8_t*>(&v), sizeof v));
}
Expected<uint32_t, Errc> get_opt(Stack& st, SocketId s, int name) {
  uint32_t v = 0;
  size_t len = sizeof v;
  Errc e = st.getsockopt(s, IPPROTO_TCP, name, std::span(reinterpret_cast<uint8_t*>(&v), sizeof v), &len);
  if (e != Errc::kOk) return Unexpected(e);
  return v;
}
int ioctl_int(Stack& st, SocketId s, unsigned long req) {
  int v = -1;
  EXPECT_EQ(st.ioctl(s, req, &v), Errc::kOk);
  return v;
}

// What CRIU (libsoccr) keeps of a connection.
struct Dump {
  Endpoint local, remote;
  uint32_t snd_seq = 0;  // write_seq
  uint32_t rcv_seq = 0;  // rcv_nxt
  std::vector<uint8_t> sndq;
  uint32_t unsent = 0;  // SIOCOUTQNSD: the send queue's tail not yet sent
  std::vector<uint8_t> rcvq;
  uint32_t mss = 0;
  TcpInfo info;
  tcp_repair_window win{};
  uint32_t ts = 0;
  int sndbuf = 0, rcvbuf = 0;  // SO_SNDBUF / SO_RCVBUF (CRIU restores them first)
};

int sol_get(Stack& st, SocketId s, int name) {
  int v = 0;
  size_t len = sizeof v;
  EXPECT_EQ(st.getsockopt(s, SOL_SOCKET, name, std::span(reinterpret_cast<uint8_t*>(&v), sizeof v), &len), Errc::kOk);
  return v;
}
Errc sol_set(Stack& st, Time now, SocketId s, int name, int v) {
  return st.setsockopt(now, s, SOL_SOCKET, name, std::span(reinterpret_cast<const uint8_t*>(&v), sizeof v));
}

Dump dump(Stack& st, SocketId s) {
  Dump d;
  d.local = *st.local_endpoint(s);
  d.remote = *st.remote_endpoint(s);
  EXPECT_EQ(set_opt(st, Time::zero(), s, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE), Errc::kOk);
  d.snd_seq = *get_opt(st, s, TCP_QUEUE_SEQ);
  d.sndq.resize(static_cast<size_t>(ioctl_int(st, s, SIOCOUTQ)));
  d.unsent = static_cast<uint32_t>(ioctl_int(st, s, SIOCOUTQNSD));
  if (!d.sndq.empty()) {
    EXPECT_EQ(*st.recv(Time::zero(), s, d.sndq, MSG_PEEK), d.sndq.size());
  }
  EXPECT_EQ(set_opt(st, Time::zero(), s, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE), Errc::kOk);
  d.rcv_seq = *get_opt(st, s, TCP_QUEUE_SEQ);
  d.rcvq.resize(static_cast<size_t>(ioctl_int(st, s, FIONREAD)));
  if (!d.rcvq.empty()) {
    EXPECT_EQ(*st.recv(Time::zero(), s, d.rcvq, MSG_PEEK), d.rcvq.size());
  }
  d.mss = *get_opt(st, s, TCP_MAXSEG);
  d.info = *st.tcp_info(s);
  size_t len = sizeof d.win;
  EXPECT_EQ(st.getsockopt(s, IPPROTO_TCP, TCP_REPAIR_WINDOW,
                          std::span(reinterpret_cast<uint8_t*>(&d.win), sizeof d.win), &len),
            Errc::kOk);
  d.ts = *get_opt(st, s, TCP_TIMESTAMP);
  d.sndbuf = sol_get(st, s, SO_SNDBUF);
  d.rcvbuf = sol_get(st, s, SO_RCVBUF);
  return d;
}

// libsoccr_restore's order: sequence numbers in CLOSE, bind, connect (no
// SYN), options, queues, window, timestamp. Returns the new socket, still
// in repair mode.
SocketId restore(Stack& st, Time now, const Dump& d) {
  const SocketId s = *st.socket();
  // Both are doubled when set. The send buffer is raised to hold the whole
  // queue, which a write may have pushed past SO_SNDBUF by up to an skb
  // (sk_stream_memory_free is checked before each skb, not each byte).
  EXPECT_EQ(sol_set(st, now, s, SO_SNDBUF, std::max(d.sndbuf, static_cast<int>(2 * d.sndq.size())) / 2),
            Errc::kOk);
  EXPECT_EQ(sol_set(st, now, s, SO_RCVBUF, d.rcvbuf / 2), Errc::kOk);
  EXPECT_EQ(set_opt(st, now, s, TCP_REPAIR, TCP_REPAIR_ON), Errc::kOk);
  const uint32_t sent = static_cast<uint32_t>(d.sndq.size()) - d.unsent;
  EXPECT_EQ(set_opt(st, now, s, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE), Errc::kOk);
  EXPECT_EQ(set_opt(st, now, s, TCP_QUEUE_SEQ, static_cast<int>(d.snd_seq - d.sndq.size())), Errc::kOk);
  EXPECT_EQ(set_opt(st, now, s, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE), Errc::kOk);
  EXPECT_EQ(set_opt(st, now, s, TCP_QUEUE_SEQ, static_cast<int>(d.rcv_seq - d.rcvq.size())), Errc::kOk);
  EXPECT_EQ(st.bind(s, d.local), Errc::kOk);
  EXPECT_EQ(st.connect(now, s, d.remote), Errc::kOk);
  tcp_repair_opt opts[4] = {
      {2, d.mss},                                                               // TCPOPT_MSS
      {3, uint32_t{d.info.tcpi_snd_wscale} | uint32_t{d.info.tcpi_rcv_wscale} << 16},  // TCPOPT_WINDOW
      {4, 0},                                                                   // TCPOPT_SACK_PERM
      {8, 0},                                                                   // TCPOPT_TIMESTAMP
  };
  EXPECT_EQ(set_struct(st, now, s, TCP_REPAIR_OPTIONS, opts), Errc::kOk);
  EXPECT_EQ(set_opt(st, now, s, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE), Errc::kOk);
  if (!d.rcvq.empty()) {
    EXPECT_EQ(*st.send(now, s, d.rcvq), d.rcvq.size());
  }
  EXPECT_EQ(set_opt(st, now, s, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE), Errc::kOk);
  if (sent > 0) {
    EXPECT_EQ(*st.send(now, s, std::span(d.sndq).first(sent)), sent);
  }
  EXPECT_EQ(set_struct(st, now, s, TCP_REPAIR_WINDOW, d.win), Errc::kOk);
  EXPECT_EQ(set_opt(st, now, s, TCP_TIMESTAMP, static_cast<int>(d.ts)), Errc::kOk);
  return s;
}

// An application stream: what it wrote and what it read, checked byte by byte.
struct Flow {
  uint8_t salt;
  size_t total;
  size_t written = 0;
  size_t read = 0;
  bool ok = true;
  void write(Stack& st, Time now, SocketId s) {
    while (written < total) {
      std::vector<uint8_t> buf(std::min<size_t>(total - written, 8192));
      for (size_t i = 0; i < buf.size(); ++i) buf[i] = pattern(written + i, salt);
      auto n = st.send(now, s, buf);
      if (!n || *n == 0) return;
      written += *n;
    }
  }
  void drain(Stack& st, Time now, SocketId s) {
    std::vector<uint8_t> buf(65536);
    for (;;) {
      auto n = st.recv(now, s, buf);
      if (!n || *n == 0) return;
      for (size_t i = 0; i < *n; ++i) ok = ok && buf[i] == pattern(read + i, salt);
      read += *n;
    }
  }
};

class RepairRoundTrip : public ::testing::Test {
 protected:
  void open() {
    Stack& b = *rig.b.stack;
    const SocketId l = *b.socket();
    ASSERT_EQ(b.bind(l, Endpoint{rig.b.addr, 80}), Errc::kOk);
    ASSERT_EQ(b.listen(rig.now, l, 8), Errc::kOk);
    sa = *rig.a.stack->socket();
    // Fixed buffers (no autotuning), so the restored socket can hold what
    // the dumped one held (weir has no SO_SNDBUFFORCE past wmem_max).
    ASSERT_EQ(sol_set(*rig.a.stack, rig.now, sa, SO_SNDBUF, 65536), Errc::kOk);
    ASSERT_EQ(sol_set(*rig.a.stack, rig.now, sa, SO_RCVBUF, 65536), Errc::kOk);
    ASSERT_EQ(rig.a.stack->connect(rig.now, sa, Endpoint{rig.b.addr, 80}), Errc::kInProgress);
    rig.run(Duration::ms(1));
    auto acc = b.accept(rig.now, l);
    ASSERT_TRUE(acc.has_value());
    sb = *acc;
  }
  void step(bool a_alive = true) {
    if (a_alive) a_to_b.write(*rig.a.stack, rig.now, sa);
    b_to_a.write(*rig.b.stack, rig.now, sb);
    rig.run(Duration::ms(10));
    if (a_alive) b_to_a.drain(*rig.a.stack, rig.now, sa);
    a_to_b.drain(*rig.b.stack, rig.now, sb);
  }
  Rig rig;
  SocketId sa = kNoSocket, sb = kNoSocket;
  Flow a_to_b{0x5a, 3000000};
  Flow b_to_a{0xa5, 2000000};
};

// The checkpoint happens with data in flight both ways: A's last burst is
// unacknowledged (B's ACKs are still on the wire) and one segment of it was
// lost, so B holds out-of-order data; B's burst lost one segment too, so A
// holds in-order data the application has not read and out-of-order data
// (which, as in Linux, is not dumped: B will resend it).
TEST_F(RepairRoundTrip, CheckpointRestoreFinishesTransferByteExact) {
  open();
  for (int i = 0; i < 2; ++i) step();
  // The burst the checkpoint interrupts.
  a_to_b.write(*rig.a.stack, rig.now, sa);
  b_to_a.write(*rig.b.stack, rig.now, sb);
  rig.deliver_from(true, [](size_t i, const Seen&) { return i == 2; });   // A -> B, one lost
  rig.deliver_from(false, [](size_t i, const Seen&) { return i == 1; });  // B -> A, one lost
  // What each side sent since stays on the wire while A is dumped.
  Stack& a = *rig.a.stack;
  ASSERT_EQ(set_opt(a, rig.now, sa, TCP_REPAIR, TCP_REPAIR_ON), Errc::kOk);
  const Dump d = dump(a, sa);
  EXPECT_GT(d.sndq.size(), d.unsent);  // sent but unacknowledged data
  EXPECT_GT(d.unsent, 0u);             // and some never sent
  EXPECT_GT(d.rcvq.size(), 0u);        // received, not read
  EXPECT_TRUE(d.info.tcpi_options & 1);  // TCPI_OPT_TIMESTAMPS
  const size_t on_wire = rig.a.nif->out.size();
  ASSERT_EQ(a.close(rig.now, sa), Errc::kOk);
  a.advance(rig.now + Duration::s(5));
  EXPECT_EQ(rig.a.nif->out.size(), on_wire) << "close() in repair mode sent something";
  rig.deliver_from(true);  // A's last segments reach B

  // A fresh stack with A's address takes the connection over.
  rig.a.reset();
  rig.now += Duration::ms(50);
  sa = restore(*rig.a.stack, rig.now, d);
  EXPECT_TRUE(rig.a.nif->out.empty()) << "the repaired connect or queues went on the wire";
  ASSERT_EQ(set_opt(*rig.a.stack, rig.now, sa, TCP_REPAIR, TCP_REPAIR_OFF), Errc::kOk);
  ASSERT_EQ(rig.a.nif->out.size(), 1u);  // the window probe
  // The unsent tail is an ordinary write now (libsoccr sends it after repair).
  const auto tail = std::span(d.sndq).last(d.unsent);
  ASSERT_EQ(*rig.a.stack->send(rig.now, sa, tail), tail.size());

  for (int i = 0; i < 400 && (a_to_b.read < a_to_b.total || b_to_a.read < b_to_a.total); ++i) step();
  EXPECT_EQ(a_to_b.read, a_to_b.total);
  EXPECT_EQ(b_to_a.read, b_to_a.total);
  EXPECT_TRUE(a_to_b.ok);
  EXPECT_TRUE(b_to_a.ok);
  EXPECT_FALSE(rig.rst_seen_by_b());
  EXPECT_EQ(rig.b.stack->counters().get(Counter::TcpOutRsts), 0u);
}

// A repaired connect on a single harness stack: no SYN, ESTABLISHED at the
// sequence numbers given, and a window probe (ACK at SND.UNA - 1) when
// repair ends.
struct RepairConnect : ::testing::Test {
  Harness t;
  SocketId s = kNoSocket;
  void connect_repaired(uint32_t snd = 1000, uint32_t rcv = 5000) {
    s = *t.stack().socket();
    ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON), Errc::kOk);
    ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE), Errc::kOk);
    ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_QUEUE_SEQ, static_cast<int>(snd)), Errc::kOk);
    ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE), Errc::kOk);
    ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_QUEUE_SEQ, static_cast<int>(rcv)), Errc::kOk);
    ASSERT_EQ(t.stack().bind(s, Endpoint{t.local, t.local_port}), Errc::kOk);
    ASSERT_EQ(t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port}), Errc::kOk);
    EXPECT_EQ(t.pending(), 0u);
  }
};

TEST_F(RepairConnect, NoSynAndWindowProbeOnRepairOff) {
  connect_repaired();
  EXPECT_EQ(get_int(t, s, IPPROTO_TCP, TCP_REPAIR), 1);
  EXPECT_EQ(t.stack().tcp_info(s)->tcpi_state, 1);  // TCP_ESTABLISHED
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF), Errc::kOk);
  Tx probe = t.expect_tx();
  EXPECT_EQ(probe.h.flags, ACK);
  EXPECT_EQ(probe.h.seq, Seq32(999));
  EXPECT_EQ(probe.h.ack, Seq32(5000));
  EXPECT_TRUE(probe.payload.empty());
  EXPECT_EQ(t.stack().counters().get(Counter::TcpExtTCPWinProbe), 1u);
  EXPECT_EQ(get_int(t, s, IPPROTO_TCP, TCP_REPAIR), 0);
}

TEST_F(RepairConnect, OffNoWindowProbeSendsNothing) {
  connect_repaired();
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF_NO_WP), Errc::kOk);
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_EQ(get_int(t, s, IPPROTO_TCP, TCP_REPAIR), 0);
}

// The send queue restored in repair mode is sent-but-unacknowledged: nothing
// goes out until the RTO resends it (tcp_write_xmit's repair path).
TEST_F(RepairConnect, SendQueueIsRetransmittedByTheRto) {
  connect_repaired();
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE), Errc::kOk);
  std::vector<uint8_t> data(300, 7);
  ASSERT_EQ(*t.stack().send(t.now(), s, data), 300u);
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_EQ(get_int(t, s, IPPROTO_TCP, TCP_QUEUE_SEQ), 1300);
  std::vector<uint8_t> peek(300);
  EXPECT_EQ(*t.stack().recv(t.now(), s, peek, MSG_PEEK), 300u);
  EXPECT_EQ(peek, data);
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF_NO_WP), Errc::kOk);
  EXPECT_EQ(t.pending(), 0u);
  t.run_next_timer();
  Tx rtx = t.expect_tx();
  EXPECT_EQ(rtx.h.seq, Seq32(1000));
  EXPECT_EQ(rtx.payload.size(), 300u);
  EXPECT_EQ(t.stack().counters().get(Counter::TcpRetransSegs), 1u);
}

// Data sent to the receive queue is readable once repair ends.
TEST_F(RepairConnect, ReceiveQueueIsReadableAfterRestore) {
  connect_repaired();
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE), Errc::kOk);
  const std::vector<uint8_t> data{1, 2, 3, 4, 5};
  ASSERT_EQ(*t.stack().send(t.now(), s, data), 5u);
  EXPECT_EQ(get_int(t, s, IPPROTO_TCP, TCP_QUEUE_SEQ), 5005);
  EXPECT_EQ(t.pending(), 0u);
  std::vector<uint8_t> out(16);
  EXPECT_EQ(t.stack().recv(t.now(), s, out, 0).error(), Errc::kPerm);  // repair: MSG_PEEK only
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF_NO_WP), Errc::kOk);
  ASSERT_EQ(*t.stack().recv(t.now(), s, out, 0), 5u);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), out.begin()));
}

// The receive queue keeps its bound: tcp_send_rcvq fails with ENOMEM once
// the buffer is full.
TEST_F(RepairConnect, ReceiveQueueRespectsRcvbuf) {
  connect_repaired();
  ASSERT_EQ(set_int(t, s, SOL_SOCKET, SO_RCVBUF, 4096), Errc::kOk);  // 8192 after doubling
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE), Errc::kOk);
  std::vector<uint8_t> data(8000, 1);
  ASSERT_EQ(*t.stack().send(t.now(), s, data), 8000u);
  EXPECT_EQ(t.stack().send(t.now(), s, data).error(), Errc::kNoMem);
}

TEST_F(RepairConnect, SilentCloseSendsNothing) {
  connect_repaired();
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE), Errc::kOk);
  std::vector<uint8_t> data(100, 7);
  ASSERT_EQ(*t.stack().send(t.now(), s, data), 100u);
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE), Errc::kOk);
  ASSERT_EQ(*t.stack().send(t.now(), s, data), 100u);  // unread data: no RST either
  ASSERT_EQ(t.stack().close(t.now(), s), Errc::kOk);
  t.advance(Duration::s(10));
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_EQ(t.stack().tcp_info(s).error(), Errc::kBadf);  // freed at once
}

// RFC 7323 §3: TSval continues from the dumped clock, however long the
// connection was frozen (Linux tsoffset = val - tcp_time_stamp_raw()).
TEST_F(RepairConnect, TimestampContinuesFromTheSetValue) {
  connect_repaired();
  tcp_repair_opt ts{8, 0};
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_REPAIR_OPTIONS,
                                 std::span(reinterpret_cast<const uint8_t*>(&ts), sizeof ts)),
            Errc::kOk);
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_TIMESTAMP, 123456789), Errc::kOk);
  EXPECT_EQ(get_int(t, s, IPPROTO_TCP, TCP_TIMESTAMP), 123456789);
  t.advance(Duration::ms(250));
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF), Errc::kOk);
  Tx probe = t.expect_tx();
  ASSERT_TRUE(probe.h.options.ts.has_value());
  EXPECT_EQ(probe.h.options.ts->val, 123456789u + 250u);
}

// ---- errors, as Linux returns them ----

TEST_F(RepairConnect, OptionErrors) {
  const SocketId x = *t.stack().socket();
  // Not in repair: TCP_REPAIR_QUEUE EPERM, getting it EINVAL, TCP_QUEUE_SEQ
  // with no queue selected EINVAL, TCP_REPAIR_OPTIONS EINVAL, window and
  // timestamp EPERM.
  EXPECT_EQ(set_int(t, x, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE), Errc::kPerm);
  size_t len = 4;
  int v = 0;
  EXPECT_EQ(t.stack().getsockopt(x, IPPROTO_TCP, TCP_REPAIR_QUEUE, std::span(reinterpret_cast<uint8_t*>(&v), 4), &len),
            Errc::kInval);
  EXPECT_EQ(set_int(t, x, IPPROTO_TCP, TCP_QUEUE_SEQ, 1), Errc::kInval);
  tcp_repair_opt o{2, 1400};
  EXPECT_EQ(t.stack().setsockopt(t.now(), x, IPPROTO_TCP, TCP_REPAIR_OPTIONS,
                                 std::span(reinterpret_cast<const uint8_t*>(&o), sizeof o)),
            Errc::kInval);
  tcp_repair_window w{};
  EXPECT_EQ(t.stack().setsockopt(t.now(), x, IPPROTO_TCP, TCP_REPAIR_WINDOW,
                                 std::span(reinterpret_cast<const uint8_t*>(&w), sizeof w)),
            Errc::kPerm);
  EXPECT_EQ(set_int(t, x, IPPROTO_TCP, TCP_TIMESTAMP, 1), Errc::kPerm);
  // TCP_REPAIR's value: 1, 0, -1 only.
  EXPECT_EQ(set_int(t, x, IPPROTO_TCP, TCP_REPAIR, 2), Errc::kInval);
  ASSERT_EQ(set_int(t, x, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON), Errc::kOk);
  EXPECT_EQ(set_int(t, x, IPPROTO_TCP, TCP_REPAIR_QUEUE, 3), Errc::kInval);  // TCP_QUEUES_NR
  // TCP_REPAIR_OPTIONS before ESTABLISHED: EPERM.
  EXPECT_EQ(t.stack().setsockopt(t.now(), x, IPPROTO_TCP, TCP_REPAIR_OPTIONS,
                                 std::span(reinterpret_cast<const uint8_t*>(&o), sizeof o)),
            Errc::kPerm);
  // TCP_REPAIR_WINDOW: the exact struct.
  EXPECT_EQ(t.stack().setsockopt(t.now(), x, IPPROTO_TCP, TCP_REPAIR_WINDOW,
                                 std::span(reinterpret_cast<const uint8_t*>(&w), sizeof w - 1)),
            Errc::kInval);
  std::array<uint8_t, sizeof(tcp_repair_window) + 4> big{};
  len = big.size();
  EXPECT_EQ(t.stack().getsockopt(x, IPPROTO_TCP, TCP_REPAIR_WINDOW, big, &len), Errc::kInval);
  // A listener can never be repaired (tcp_can_repair_sock).
  const SocketId l = *t.stack().socket();
  ASSERT_EQ(t.stack().bind(l, Endpoint{t.local, 9000}), Errc::kOk);
  ASSERT_EQ(t.stack().listen(t.now(), l, 4), Errc::kOk);
  EXPECT_EQ(set_int(t, l, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON), Errc::kPerm);
}

TEST_F(RepairConnect, EstablishedErrors) {
  connect_repaired();
  // TCP_QUEUE_SEQ only in CLOSE.
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE), Errc::kOk);
  EXPECT_EQ(set_int(t, s, IPPROTO_TCP, TCP_QUEUE_SEQ, 1), Errc::kPerm);
  // TCP_NO_QUEUE: send EINVAL, peek EINVAL, TCP_QUEUE_SEQ get EINVAL.
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE), Errc::kOk);
  std::vector<uint8_t> data(10, 1);
  EXPECT_EQ(t.stack().send(t.now(), s, data).error(), Errc::kInval);
  EXPECT_EQ(t.stack().recv(t.now(), s, data, MSG_PEEK).error(), Errc::kInval);
  size_t len = 4;
  int v = 0;
  EXPECT_EQ(t.stack().getsockopt(s, IPPROTO_TCP, TCP_QUEUE_SEQ, std::span(reinterpret_cast<uint8_t*>(&v), 4), &len),
            Errc::kInval);
  // TCP_REPAIR_OPTIONS: a shift above 14 EFBIG, SACK/TS with a value EINVAL.
  tcp_repair_opt ws{3, 15};
  EXPECT_EQ(t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_REPAIR_OPTIONS,
                                 std::span(reinterpret_cast<const uint8_t*>(&ws), sizeof ws)),
            Errc::kFBig);
  tcp_repair_opt sack{4, 1};
  EXPECT_EQ(t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_REPAIR_OPTIONS,
                                 std::span(reinterpret_cast<const uint8_t*>(&sack), sizeof sack)),
            Errc::kInval);
  // TCP_REPAIR_WINDOW's consistency checks.
  tcp_repair_window w{5000, 2000, 1000, 1000, 5000};  // max_window < snd_wnd
  auto set_w = [&] {
    return t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_REPAIR_WINDOW,
                                std::span(reinterpret_cast<const uint8_t*>(&w), sizeof w));
  };
  EXPECT_EQ(set_w(), Errc::kInval);
  w = {7000, 1000, 1000, 1000, 5000};  // snd_wl1 past rcv_nxt + rcv_wnd
  EXPECT_EQ(set_w(), Errc::kInval);
  w = {5000, 1000, 1000, 1000, 5001};  // rcv_wup past rcv_nxt
  EXPECT_EQ(set_w(), Errc::kInval);
  w = {5000, 1000, 2000, 1000, 5000};
  EXPECT_EQ(set_w(), Errc::kOk);
  // The send queue's peek needs room for all of it (skb_copy_datagram_msg: EFAULT).
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE), Errc::kOk);
  ASSERT_EQ(*t.stack().send(t.now(), s, data), 10u);
  std::vector<uint8_t> small(5);
  EXPECT_EQ(t.stack().recv(t.now(), s, small, MSG_PEEK).error(), Errc::kFault);
  // Once data was sent on the wire, TCP_REPAIR_OPTIONS is EPERM (tp->bytes_sent).
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF_NO_WP), Errc::kOk);
  t.run_next_timer();  // the RTO resends the 10 bytes
  ASSERT_EQ(set_int(t, s, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON), Errc::kOk);
  tcp_repair_opt mss{2, 1000};
  EXPECT_EQ(t.stack().setsockopt(t.now(), s, IPPROTO_TCP, TCP_REPAIR_OPTIONS,
                                 std::span(reinterpret_cast<const uint8_t*>(&mss), sizeof mss)),
            Errc::kPerm);
}

}  // namespace
}  // namespace weir::test
