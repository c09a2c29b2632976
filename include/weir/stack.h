// weir::Stack: one host's IP + TCP, a pure single-threaded engine.
// It never reads a clock, sleeps, does I/O or starts a thread. Drivers feed
// it packets (input), timer expiries (advance) and application calls, all
// with the time `now`; it answers with packets on the Netif and readiness.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "weir/addr.h"
#include "weir/config.h"
#include "weir/counters.h"
#include "weir/errors.h"
#include "weir/errqueue.h"
#include "weir/expected.h"
#include "weir/netif.h"
#include "weir/route.h"
#include "weir/tcp_info.h"
#include "weir/time.h"
#include "weir/trace.h"

namespace weir {

using SocketId = uint32_t;
inline constexpr SocketId kNoSocket = 0;

// poll(2) bits, Linux values.
namespace ev {
inline constexpr uint32_t IN = 0x001;
inline constexpr uint32_t PRI = 0x002;  // urgent data waits for recv(MSG_OOB)
inline constexpr uint32_t OUT = 0x004;
inline constexpr uint32_t ERR = 0x008;
inline constexpr uint32_t HUP = 0x010;
inline constexpr uint32_t RDHUP = 0x2000;
}  // namespace ev

// A timewait sock as Linux's inet_diag reports it (inet_twsk_diag_fill):
// its tw_substate as the state (TIME-WAIT 6, or an orphan's FIN-WAIT-2 5),
// the tuple, and the time left on its timer (idiag_timer 3, "timewait").
struct TimewaitSock {
  Endpoint local;
  Endpoint remote;
  uint8_t state = 6;
  Duration expires;
};

class StackImpl;

// The outcome of a Fast Open send (RFC 7413, Linux tcp_sendmsg_fastopen).
// `connecting`: the call began the connection (its SYN is out, with
// `queued` bytes of data); the caller then acts as connect() does
// (EINPROGRESS when nothing rode on the SYN and it may not wait). Otherwise
// `err`/`queued` are an ordinary send's result (EALREADY while connecting).
struct FastOpenSend {
  Errc err = Errc::kOk;
  size_t queued = 0;
  bool connecting = false;
};

class Stack {
 public:
  Stack(const StackConfig& cfg, Netif& netif);
  ~Stack();
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  // ---- driver side ----
  // A datagram arrived from the network. Malformed input is dropped and counted.
  void input(Time now, std::span<const uint8_t> datagram);
  // A receive-offload aggregate (a NIC's LRO or software GRO): one datagram
  // whose TCP payload is several segments of `gso_size` bytes each, merged
  // in order with one header. TCP takes it as one segment, as Linux takes a
  // GRO skb (one ACK decision; the receive MSS estimate is gso_size).
  void input_aggregate(Time now, std::span<const uint8_t> datagram, uint16_t gso_size);
  // A datagram whose TCP checksum the device vouches for: a NIC verified it
  // (Linux CHECKSUM_UNNECESSARY), or a sender on this host left it to be
  // filled in (a TUN's VIRTIO_NET_HDR_F_NEEDS_CSUM, which Linux's receive
  // path takes as valid, skb_csum_unnecessary). It is not summed again; the
  // IPv4 header's checksum still is.
  void input_checksum_valid(Time now, std::span<const uint8_t> datagram);
  // Runs every timer due at or before `now`, in deadline order.
  void advance(Time now);
  // The earliest time advance() has work to do; Time::never() if none.
  Time next_deadline() const;

  // The addresses this host owns (the first of each family is the default source).
  void add_address(const IpAddr& a);
  StackConfig& config();
  const Counters& counters() const;
  void set_trace(TraceSink* sink);

  // ---- socket API (non-blocking; Linux errno semantics) ----
  Expected<SocketId, Errc> socket(bool ipv6_family = false);
  Errc bind(SocketId s, const Endpoint& local);
  Errc listen(Time now, SocketId s, int backlog);
  Expected<SocketId, Errc> accept(Time now, SocketId listener, Endpoint* peer = nullptr);
  Errc connect(Time now, SocketId s, const Endpoint& remote);  // kInProgress when started
  Expected<size_t, Errc> send(Time now, SocketId s, std::span<const uint8_t> data, int flags = 0);
  // sendmsg(): `iov` holds the iovec elements' lengths (summing to
  // data.size()); a MSG_ZEROCOPY send pins each element as page fragments,
  // MAX_SKB_FRAGS (17) per skb, as Linux does.
  Expected<size_t, Errc> sendmsg(Time now, SocketId s, std::span<const uint8_t> data,
                                 std::span<const uint32_t> iov, int flags = 0);
  // recvmsg(MSG_ERRQUEUE): the oldest error-queue entry (MSG_ZEROCOPY
  // notifications, SO_TIMESTAMPING timestamps), or kAgain when empty. While
  // the queue is not empty poll() reports ev::ERR.
  Expected<ErrQueueEntry, Errc> recv_error(Time now, SocketId s);
  // sk_error_report() calls on the socket so far (an entry queued, or a
  // zerocopy range extended): each wakes pollers, so EPOLLET reports
  // EPOLLERR again although the queue was never empty in between.
  uint64_t error_reports(SocketId s) const;
  // sendto(MSG_FASTOPEN) to `to`, or the first write on a socket whose
  // TCP_FASTOPEN_CONNECT connect() held the SYN back (`to` unused).
  // `wait`: how long a blocking caller waits for the handshake to write the
  // rest (its sock_sndtimeo; Duration::infinite() without SO_SNDTIMEO);
  // zero: the call does not wait. `flags`: MSG_ZEROCOPY gives the SYN's
  // data a notification.
  FastOpenSend sendto_fastopen(Time now, SocketId s, std::span<const uint8_t> data, const Endpoint* to,
                               Duration wait = Duration::zero(), int flags = 0);
  bool fastopen_deferred(SocketId s) const;  // connect() returned 0, SYN not sent yet
  void flush_tcp_metrics();                  // `ip tcp_metrics flush all`: the Fast Open cookie cache
  // `ip route add|change|replace DEST ... advmss N mtu [lock] N initcwnd N`:
  // the metrics new connections to DEST start from (and the MTU every
  // connection to it reads). kInval: bad prefix; kNoBufs: the table is full.
  Errc set_route(const Route& r);
  // recv(): MSG_PEEK, and MSG_OOB for the urgent byte (Linux tcp_recv_urg:
  // EINVAL when there is none or SO_OOBINLINE, EAGAIN before it arrives).
  // A read stops at the urgent mark and steps over the urgent byte unless
  // SO_OOBINLINE. send(MSG_OOB) makes the end of the write urgent.
  Expected<size_t, Errc> recv(Time now, SocketId s, std::span<uint8_t> out, int flags = 0);
  // splice() from the socket into a pipe, as Linux tcp_splice_read: up to
  // out.size() stream bytes (the pipe's room), never across the urgent mark
  // nor stepping over its byte. Nothing to move: 0 at EOF, or for a
  // blocking call (`nonblock` false: the socket's O_NONBLOCK) stuck at an
  // urgent byte; kAgain when a non-blocking call finds nothing, or when a
  // blocking one must wait for data (the caller waits and calls again).
  Expected<size_t, Errc> splice_read(Time now, SocketId s, std::span<uint8_t> out, bool nonblock);
  Errc shutdown(Time now, SocketId s, int how);  // SHUT_RD / SHUT_WR / SHUT_RDWR
  Errc close(Time now, SocketId s);
  Errc setsockopt(Time now, SocketId s, int level, int name, std::span<const uint8_t> val);
  Errc getsockopt(SocketId s, int level, int name, std::span<uint8_t> val, size_t* len) const;
  Errc ioctl(SocketId s, unsigned long req, int* out) const;
  // SO_RCVTIMEO / SO_SNDTIMEO (Linux sock_rcvtimeo / sock_sndtimeo): how long
  // a blocking recv/accept (rcvtimeo) or send/connect (sndtimeo) may wait
  // before it returns EAGAIN (EINPROGRESS for connect) or the bytes it moved.
  // Duration::infinite() when unset; zero: it does not wait at all.
  Duration rcvtimeo(SocketId s) const;
  Duration sndtimeo(SocketId s) const;  // FIONREAD/SIOCINQ/SIOCOUTQ/SIOCOUTQNSD/SIOCATMARK
  uint32_t poll(SocketId s) const;  // ev:: bits
  Expected<Endpoint, Errc> local_endpoint(SocketId s) const;
  Expected<Endpoint, Errc> remote_endpoint(SocketId s) const;
  Expected<TcpInfo, Errc> tcp_info(SocketId s) const;
  // The text of Linux's /proc/net/tcp (`v6` false: AF_INET sockets) or
  // /proc/net/tcp6 (AF_INET6 sockets), in tcp4_seq_show / tcp6_seq_show's
  // exact layout, timers relative to the last time the stack was given.
  std::string proc_net_tcp(bool v6) const;
  // Every timewait sock, whoever still holds the socket it came from (ss
  // lists them: orphans' entries are in no application's socket list).
  std::vector<TimewaitSock> timewait_socks() const;

  // Called whenever a socket's readiness may have changed (after input,
  // advance or an app call). Drivers use it to wake coroutines or apps.
  using ReadyFn = void (*)(void* ctx, SocketId s, uint32_t events);
  void set_ready_callback(ReadyFn fn, void* ctx);

 private:
  std::unique_ptr<StackImpl> impl_;
};

}  // namespace weir
