// connect() and TIME-WAIT: when a new active open may take over the tuple
// of a connection still in TIME-WAIT (Linux tcp_twsk_unique,
// __inet_check_established, __inet_hash_connect).
#include "ip/stack_impl.h"

namespace weir {
namespace {

// Linux tcp_twsk_unique's "loopback traffic" for tcp_tw_reuse = 2:
// 127.0.0.0/8, ::1, or an IPv4-mapped loopback, at either end.
bool loopback(const IpAddr& a) {
  if (a.is_v4()) return (a.v4_host_order() >> 24) == 127;
  static const IpAddr kV6Loopback = *IpAddr::parse("::1");
  return a == kV6Loopback;
}

}  // namespace

// Linux tcp_twsk_unique. Only with timestamps (tw_ts_recent_stamp != 0) is
// it safe: PAWS on the new connection rejects the old one's duplicates.
// A socket that already had its port (bind() before connect(): twp ==
// NULL) takes the tuple at once; the ephemeral search does so only with
// tcp_tw_reuse (1, or 2 for loopback) and once tcp_tw_reuse_delay ms have
// passed since TIME-WAIT began ("time_after32(tcp_clock_ms(),
// reuse_thresh)": strictly after). The timewait sock is taken whoever
// still holds the socket it came from: to them that socket is CLOSED
// already (tcp_time_wait -> tcp_done; Connection::end_time_wait).
bool StackImpl::tw_recyclable(const Socket& tw, bool port_was_bound, Time now) const {
  // Any timewait sock, a FIN-WAIT-2 one too (__inet_check_established
  // looks at sk_state == TCP_TIME_WAIT, which every tw_substate has).
  if (!tw.conn || !tw.conn->timewait_sock()) return false;
  if (!tw.conn->ts_ok()) return false;
  if (port_was_bound) return true;
  int reuse = cfg_.tcp_tw_reuse;
  const FourTuple& t = tw.conn->tuple();
  if (reuse == 2 && !loopback(t.local.addr) && !loopback(t.remote.addr)) reuse = 0;
  if (reuse == 0) return false;
  return now > tw.conn->time_wait_entry() + Duration::ms(cfg_.tcp_tw_reuse_delay);
}

// __inet_check_established: the new socket inherits the sequence space and
// TS.Recent, the TIME-WAIT one goes (inet_twsk_deschedule_put), counted as
// LINUX_MIB_TIMEWAITRECYCLED.
void StackImpl::recycle_time_wait(Time now, SocketId tw, Socket& s) {
  Socket* o = find(tw);
  if (!o || !o->conn) return;
  s.conn->seed_from_time_wait(o->conn->time_wait_seed());
  counters_.inc(Counter::TcpExtTWRecycled);
  kill_time_wait(now, *o);
}

// The timewait sock goes before its time (a connect() or a new SYN takes
// the tuple). An orphan's socket goes with it; a socket the application or
// a listener's accept queue still holds stays, CLOSED, without the tuple
// and (unless bind() named it) the port.
void StackImpl::kill_time_wait(Time now, Socket& tw) {
  if (tw.conn->orphan()) {
    reap(tw.id);
    return;
  }
  tw.conn->end_time_wait(now);
  after_call(tw);
}

}  // namespace weir
