// The runner's internals, shared by runner.cc (timeline), packets.cc
// (inbound build, outbound match), syscalls.cc, shell.cc and code.cc.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pkt/ast.h"
#include "pkt/runner.h"
#include "weir/config.h"
#include "weir/expected.h"
#include "weir/netif.h"
#include "weir/stack.h"
#include "wire/packet.h"

namespace weir::pkt {

// The virtual epoch: scripts start here rather than at 0 so that engine
// code which treats time 0 specially is caught. Script time t is the
// engine's kEpoch + t (also in SO_TIMESTAMPING timestamps).
inline constexpr Time kEpoch = Time::from_ns(100'000'000'000);

// packetdrill's run-time settings (config.c), from the script header and
// the command line.
struct RunConfig {
  IpVersion ip_version = IpVersion::kIpv4;
  IpAddr local_ip;
  IpAddr remote_ip;
  uint16_t bind_port = 8080;     // packetdrill --bind_port
  uint16_t connect_port = 8080;  // packetdrill --connect_port
  Duration tolerance = Duration::us(4000);
  double tolerance_percent = 12.5;
  int64_t ts_tick_usecs = 0;     // 0: outbound TS val not checked
  bool ts_ecr_scaled = false;
  bool strict_segments = false;
  uint32_t mss = 0;    // inbound super-packets split at this size (0: off)
  uint32_t mtu = 1500;
  // packetdrill's tun0 offers TSO and GSO; `ethtool -K tun0 tso off gso off`
  // turns them off (the device can GSO while either is on).
  bool tso = true;
  bool gso = true;
};

// A script-level result: the run stops at the first failure or skip.
struct Stop {
  Outcome outcome;
  std::string reason;
  std::vector<std::string> detail;
};

// Every step of the run that can end it returns the Stop that ends the
// script, or carries on; the runner never throws (project rule: errors are
// values, weir::Expected).
struct Done {};
using Status = Expected<Done, Stop>;
inline Status ok() { return Done{}; }
// Passes an earlier step's Stop on, whatever that step's value type.
template <typename T>
Unexpected<Stop> stopped(const Expected<T, Stop>& e) {
  return Unexpected<Stop>(e.error());
}

// An in-memory pipe (Linux pipe(2)) for splice() scripts: bytes in order,
// bounded by Linux's default pipe size, PIPE_DEF_BUFFERS (16) pages of 4 KiB.
// Linux counts the room in page slots (a splice of a few bytes can take a
// whole slot); here it is counted in bytes.
struct Pipe {
  static constexpr size_t kCapacity = 16 * 4096;
  static constexpr size_t kPipeBuf = 4096;  // PIPE_BUF: writes up to this size are atomic
  std::deque<uint8_t> bytes;
  bool reader_open = true;
  bool writer_open = true;
  size_t room() const { return kCapacity - bytes.size(); }
};

// The runner's files: what a script's shell lines create (`dd ...
// of=PATH`) for it to open() and sendfile() from. packetdrill scripts write
// zeros, since payloads are not compared; only sizes are kept. Bounded.
struct FileSystem {
  static constexpr size_t kMaxFiles = 64;
  static constexpr uint64_t kMaxBytes = 64ull << 20;
  std::map<std::string, uint64_t> sizes;  // path -> length in bytes
  uint64_t total() const {
    uint64_t t = 0;
    for (const auto& [p, n] : sizes) t += n;
    return t;
  }
};

// One script fd.
struct FdEntry {
  enum class Kind { kSocket, kEpoll, kPipeRead, kPipeWrite, kFile } kind = Kind::kSocket;
  SocketId sock = kNoSocket;
  std::shared_ptr<Pipe> pipe;  // kPipeRead / kPipeWrite: the pipe this end belongs to
  std::string path;            // kFile: the runner file it reads
  uint64_t file_pos = 0;       // kFile: the file offset
  uint64_t file_size = 0;      // kFile: its length when opened (an rm after open keeps it, as an inode)
  bool is_pipe() const { return kind == Kind::kPipeRead || kind == Kind::kPipeWrite; }
  bool nonblock = false;
  bool listener = false;
  bool inq = false;  // TCP_INQ: recvmsg() reports a TCP_CM_INQ cmsg
  int pmtudisc = 1;  // IP_MTU_DISCOVER (Linux default for TCP: IP_PMTUDISC_WANT)
  bool active = false;  // connect() or a Fast Open send began a connection on it
  // epoll: watched fd -> (interest events, data fd), and ET/ONESHOT state
  struct Watch {
    uint32_t events = 0;
    int64_t data = 0;
    bool armed = true;       // EPOLLONESHOT not yet fired
    bool edge_pending = true;  // EPOLLET: a wake-up since the last report
    uint32_t last_bits = 0;    // readiness when last sampled
    int last_inq = 0;          // bytes readable when last sampled
    uint64_t last_reports = 0;  // error-queue reports (sk_error_report) when last sampled
  };
  std::map<int, Watch> watches;
};

// The connection under test: its 4-tuple and the script<->live mappings of
// sequence numbers and TS values (packetdrill run_packet.c semantics).
struct Conn {
  bool known = false;
  Endpoint local;   // live addresses of the stack's side
  Endpoint remote;  // the script's side
  bool local_isn_known = false;
  uint32_t script_local_isn = 0;
  uint32_t live_local_isn = 0;
  uint32_t remote_isn = 0;  // script == live for the script's own side
  std::map<uint32_t, uint32_t> ts_val_map;  // script TS val -> live TS val
  bool first_ts = false;
  uint32_t first_script_ts_val = 0;
  uint32_t first_live_ts_val = 0;
  bool accepted = false;
  bool closed = false;  // the script closed the socket under test
};

// A captured outbound datagram.
struct OutPacket {
  Time at;
  std::vector<uint8_t> bytes;
};

// A blocking call in progress (`start...end`, or a call on a blocking
// socket that could not finish at once): retried after every engine step.
struct Pending {
  const Event* event = nullptr;
  Time started;
  Time expected_end;  // when the script says it returns
  Duration tolerance;
  Time wake = Time::never();  // a poll()/epoll_wait() timeout: completes then
  // A deadline the call moves while it runs (a Fast Open sendto's second
  // wait); when set it is read instead of `wake`.
  std::shared_ptr<const Time> moving_wake;
  Time next_wake() const { return moving_wake ? *moving_wake : wake; }
  // The call's value once it is done, nothing while it still blocks.
  std::function<Expected<std::optional<int64_t>, Stop>(Time now, int* err)> step;
};

// What `%{ }%` blocks see: tcp_info at the block's time.
struct CodeSnapshot {
  int line = 0;
  std::string text;
  std::optional<TcpInfo> info;
};

// Where the timeline stands: the previous timed event and its script time.
struct Timeline {
  bool first = true;
  const Event* last = nullptr;
  Time last_t;
};

class Runner : public Netif {
 public:
  Runner(const Script& s, const std::string& source, const RunOptions& opt);
  ~Runner() override;
  RunResult run();

  // Netif
  void transmit(std::span<const uint8_t> ip_packet) override;
  // The device's verdict: while `qdisc_drops_` every packet is dropped
  // locally and never reaches the script (packetdrill's tun sees nothing).
  XmitResult try_transmit(std::span<const uint8_t> ip_packet) override;
  uint32_t mtu() const override { return cfg_.mtu; }
  bool gso() const override { return cfg_.tso || cfg_.gso; }

  // ---- runner.cc ----
  Status setup();
  Status run_events();
  Status run_timed(const Event& e, Timeline& tl);
  Status run_action(const Event& e, Time t, Time base, Duration tol);
  Status run_syscall(const Event& e, const SyscallSpec& s, Time t, Time base, Duration tol);
  // The Stop that ends the script (return it, or pass it on with stopped()).
  Unexpected<Stop> stop(Outcome o, std::string reason, std::vector<std::string> detail = {}) const;
  Status engine_status() const;  // a Stop the engine's callbacks recorded (transmit)
  Status step_engine(Time until);                       // run timers up to `until`
  Expected<bool, Stop> step_engine_once(Time limit);    // one deadline <= limit; false if none
  Status poll_pending();
  void sample_epoll();  // EPOLLET: note readiness edges after every engine step
  Status finish_pending(Time limit);
  Duration tolerance_for(Duration script_delta) const;
  void log(const std::string& line);
  std::string fmt_time(Time t) const;

  // ---- packets.cc ----
  Status inject(const Event& e, const PacketSpec& p);
  Status inject_icmp(const Event& e, const PacketSpec& p, uint32_t local_off);
  Status inbound_options(const PacketSpec& p, uint32_t local_off, wire::TcpOptions& o);
  Status send_inbound(const Event& e, const PacketSpec& p, const wire::TcpHeader& h, const wire::IpInfo& ip);
  Status expect_outbound(const Event& e, const PacketSpec& p, Time lo, Time hi, Time expected);
  Expected<bool, Stop> next_outbound(Time limit);
  void drop_foreign_outbound();
  void learn_conn(const wire::TcpPacket& pk, const PacketSpec& p);
  std::string describe_live(const wire::TcpPacket& pk, uint32_t payload_len) const;

  // ---- syscalls.cc ----
  Status syscall(const Event& e, const SyscallSpec& s);

  // ---- shell.cc ----
  Status command(const Event& e, const CommandSpec& c, bool untimed);

  // ---- code.cc ----
  void snapshot_code(const Event& e, const CodeSpec& c);
  Status run_code_blocks();

  // state
  const Script& script_;
  const std::string& source_;
  RunOptions opt_;
  RunConfig cfg_;
  StackConfig stack_cfg_;
  std::unique_ptr<Stack> stack_;
  Time now_ = Time::zero();
  std::deque<OutPacket> outq_;
  std::map<int, FdEntry> fds_;
  FileSystem files_;
  // The local port of the active connection under test, kept after its
  // close() (packetdrill keeps socket_under_test's tuple); 0: none.
  uint16_t sut_port_ = 0;
  int sut_fd_ = -1;  // the socket under test (tcp_info for %{ }% blocks)
  Conn conn_;
  uint16_t next_remote_port_ = 40000;
  std::optional<Pending> pending_;
  std::vector<CodeSnapshot> code_;
  std::map<std::string, uint64_t> nstat_base_;
  const Event* cur_ = nullptr;
  RunResult res_;
  int same_instant_ = 0;
  std::optional<Stop> halted_;  // set from transmit(), which cannot return a Stop
  bool qdisc_drops_ = false;    // `tc qdisc ... pfifo limit 0` installed (shell.cc)
};

// The source line `line` (1-based) of `source`, trimmed.
std::string source_line(const std::string& source, int line);

}  // namespace weir::pkt
