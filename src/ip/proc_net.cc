// /proc/net/tcp and /proc/net/tcp6 as Linux prints them (net/ipv4/tcp_ipv4.c
// tcp4_seq_show, get_tcp4_sock, get_openreq4, get_timewait4_sock;
// net/ipv6/tcp_ipv6.c tcp6_seq_show and its get_* helpers). Listeners come
// first (Linux walks the listening hash before the established one), then
// connections by socket id; Linux's bucket order is a hash's and not kept.
#include <linux/sockios.h>

#include <algorithm>

#include <fmt/format.h>

#include "ip/stack_impl.h"
#include "tcp/cc/cc.h"

namespace weir {
namespace {

constexpr int kTmpSz = 150;  // TMPSZ: IPv4 lines are padded to 149 characters

// jiffies_to_clock_t: USER_HZ (100) ticks.
uint64_t clock_ticks(Duration d) { return d.ns() <= 0 ? 0 : static_cast<uint64_t>(d.ns() / 10'000'000); }

// The be32 words as a little-endian host reads them (%08X of __be32).
uint32_t le_word(const uint8_t* b) {
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

std::string hex_addr(const Endpoint& e, bool v6) {
  const uint8_t* b = e.addr.bytes().data();
  if (!v6) return fmt::format("{:08X}:{:04X}", le_word(b + 12), e.port);
  return fmt::format("{:08X}{:08X}{:08X}{:08X}:{:04X}", le_word(b), le_word(b + 4), le_word(b + 8),
                     le_word(b + 12), e.port);
}

// An IPv4 line is padded to TMPSZ - 1 (seq_setwidth / seq_pad); IPv6's are not.
std::string line(std::string s, bool v6) {
  if (!v6 && s.size() < kTmpSz - 1) s.append(kTmpSz - 1 - s.size(), ' ');
  return s + '\n';
}

std::string header(bool v6) {
  if (v6)
    return "  sl  local_address                         remote_address                        st tx_queue "
           "rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
  return line("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
              false);
}

}  // namespace

std::string StackImpl::proc_net_tcp(bool v6) const {
  std::vector<const Socket*> rows;
  for (const auto& [ep, id] : listeners_)
    if (const Socket* s = find(id); s && s->listener && s->v6 == v6) rows.push_back(s);
  std::vector<const Socket*> conns;
  for (const auto& [id, s] : sockets_)
    if (s->conn && !s->listener && s->in_demux && s->v6 == v6) conns.push_back(s.get());
  std::sort(conns.begin(), conns.end(), [](const Socket* a, const Socket* b) { return a->id < b->id; });
  rows.insert(rows.end(), conns.begin(), conns.end());
  std::string out = header(v6);
  int sl = 0;
  for (const Socket* s : rows) out += proc_row(*s, sl++, v6);
  return out;
}

// inet_diag_dump_icsk walks the established hash, where the timewait socks
// are (sk_state TCP_TIME_WAIT, reported with tw_substate); by socket id here.
std::vector<TimewaitSock> StackImpl::timewait_socks() const {
  std::vector<SocketId> ids;
  for (const auto& [id, s] : sockets_)
    if (s->conn && s->in_demux && s->conn->timewait_sock()) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  std::vector<TimewaitSock> out;
  for (SocketId id : ids) {
    const tcp::Connection& c = *find(id)->conn;
    const Time end = c.next_deadline();
    const Duration left = end.is_never() || end < last_now_ ? Duration::zero() : end - last_now_;
    out.push_back({c.tuple().local, c.tuple().remote, tcp::linux_state(c.state()), left});
  }
  return out;
}

// One socket's line: get_tcp4_sock for full sockets, get_openreq4 for a
// child still in SYN-RECEIVED (Linux's request sock), get_timewait4_sock
// for a timewait sock (TIME-WAIT, or an orphan's FIN-WAIT-2 timewait stage:
// its tw_substate, 06 or 05). The kernel pointer (%pK) prints as zeros, as it does for
// a reader without CAP_SYSLOG; uid is 0 (root runs the stack).
std::string StackImpl::proc_row(const Socket& s, int sl, bool v6) const {
  const tcp::Connection& c = *s.conn;
  const Endpoint local = s.listener ? s.listener->local() : c.tuple().local;
  const Endpoint remote = s.listener ? Endpoint{v6 ? IpAddr::v6({}) : IpAddr::v4(0), 0} : c.tuple().remote;
  const std::string addrs = fmt::format("{:4}: {} {}", sl, hex_addr(local, v6), hex_addr(remote, v6));
  const tcp::Connection::ProcTimer t = c.proc_timer();
  const uint64_t when = t.active ? clock_ticks(t.expires - last_now_) : 0;
  constexpr const char* kPtr = "0000000000000000";
  if (c.timewait_sock())
    return line(fmt::format("{} {:02X} 00000000:00000000 03:{:08X} 00000000     0        0 0 3 {}", addrs,
                            tcp::linux_state(c.state()),
                            c.next_deadline().is_never() ? 0 : clock_ticks(c.next_deadline() - last_now_), kPtr), v6);
  const bool request = !s.app_open && s.listener_parent && c.state() == tcp::State::kSynReceived &&
                       !c.fastopen_pending();
  if (request)
    return line(fmt::format("{} 03 00000000:00000000 01:{:08X} {:08X}     0        0 0 0 {}", addrs, when,
                            c.retransmits(), kPtr), v6);
  int txq = 0, rxq = 0;
  uint32_t refcnt = 1;  // the hash table's reference
  int tail = 0;         // the listener's Fast Open max_qlen, else ssthresh or -1 in initial slow start
  const TcpInfo i = c.info(last_now_);
  if (s.listener) {
    rxq = static_cast<int>(s.listener->accept_queue_len());  // sk_ack_backlog
    refcnt = 1 + static_cast<uint32_t>(s.listener->syn_queue_len());  // each request sock holds one
    tail = c.opts().fastopen_qlen;
  } else {
    c.ioctl(0x5411 /* SIOCOUTQ */, &txq);
    c.ioctl(0x541B /* SIOCINQ */, &rxq);
    refcnt += (s.app_open ? 1 : 0) + (t.active ? 1 : 0);  // the file; a pending timer (sk_reset_timer)
    tail = i.tcpi_snd_ssthresh >= cc::kInfiniteSsthresh ? -1 : static_cast<int>(i.tcpi_snd_ssthresh);
  }
  const uint8_t st = s.listener ? 10 : i.tcpi_state;
  return line(fmt::format("{} {:02X} {:08X}:{:08X} {:02X}:{:08X} {:08X} {:5} {:8} {} {} {} {} {} {} {} {}", addrs,
                          st, static_cast<uint32_t>(txq), static_cast<uint32_t>(rxq), t.active, when,
                          c.retransmits(), 0, c.probes_out(), s.app_open ? s.id : 0, refcnt, kPtr,
                          i.tcpi_rto / 10000, i.tcpi_ato / 10000, 0, i.tcpi_snd_cwnd, tail),
              v6);
}

}  // namespace weir
