// ICMP and ICMPv6 errors quoting our TCP segments (RFC 1122 §4.2.3.9,
// RFC 5461): unreachable (soft or hard), fragmentation needed / packet too
// big (RFC 1191, RFC 8201), time exceeded. Linux icmp_err_convert values.
#include <algorithm>

#include "ip/stack_impl.h"

namespace weir {
namespace {

struct IcmpMeaning {
  bool pmtu = false;
  bool ignore = false;
  Errc err = Errc::kHostUnreach;
};

IcmpMeaning classify(const wire::IcmpError& e) {
  IcmpMeaning m;
  if (e.ip.version == 4) {
    if (e.type == 3) {  // destination unreachable
      switch (e.code) {
        case 0: m.err = Errc::kNetUnreach; break;
        case 1: m.err = Errc::kHostUnreach; break;
        case 2: m.err = Errc::kNoProtoOpt; break;
        case 3: m.err = Errc::kConnRefused; break;
        case 4: m.pmtu = true; break;
        case 5: m.err = Errc::kOpNotSupp; break;
        case 6: m.err = Errc::kNetUnreach; break;
        case 9: case 10: case 13: m.err = Errc::kHostUnreach; break;
        default: m.err = Errc::kHostUnreach; break;
      }
    } else if (e.type == 11) {
      m.err = Errc::kHostUnreach;  // time exceeded: Linux tcp_v4_err
    } else {
      m.ignore = true;
    }
  } else {
    if (e.type == 1) {
      switch (e.code) {
        case 0: m.err = Errc::kNetUnreach; break;
        case 1: m.err = Errc::kPerm; break;  // EACCES in Linux; weir has EPERM
        case 4: m.err = Errc::kConnRefused; break;
        default: m.err = Errc::kHostUnreach; break;
      }
    } else if (e.type == 2) {
      m.pmtu = true;
    } else if (e.type == 3) {
      m.err = Errc::kHostUnreach;
    } else {
      m.ignore = true;
    }
  }
  return m;
}

}  // namespace

// Fragmentation needed / packet too big for one of our connections: once the
// quoted segment is one we have outstanding (Linux tcp_v4_err), remember the
// PMTU for the destination (Linux __ip_rt_update_pmtu -> fib_nh_exception,
// rt6_do_update_pmtu -> rt6_exception) so every connection to it uses it,
// then shrink this connection at once (tcp_v4_mtu_reduced).
void StackImpl::input_pmtu(Time now, Socket& s, uint32_t mtu, Seq32 quoted_seq) {
  const IpAddr& dst = s.conn->tuple().remote.addr;
  // RTAX_LOCK on the route's MTU: Linux __ip_rt_update_pmtu (IPv4) and
  // rt6_do_update_pmtu's dst_metric_locked test (IPv6) learn nothing.
  if (route(dst).mtu_locked) return;
  const uint64_t evicted = pmtu_cache_.evictions();
  pmtu_cache_.learn(dst, mtu, netif_.mtu(), now);
  counters_.inc(Counter::WeirPmtuCacheEvictions, pmtu_cache_.evictions() - evicted);
  s.conn->on_pmtu(now, std::min(mtu, path_mtu(dst)), quoted_seq);
}

void StackImpl::input_icmp(Time now, std::span<const uint8_t> datagram) {
  auto e = wire::parse_icmp_error(datagram);
  if (!e) {
    counters_.inc(Counter::IpInUnknownProtos);
    return;
  }
  counters_.inc(Counter::IcmpInMsgs);
  const IcmpMeaning m = classify(*e);
  if (m.ignore) return;
  if (e->ip.version == 4 && e->type == 3) counters_.inc(Counter::IcmpInDestUnreachs);
  if (e->ip.version == 6 && e->type == 2) counters_.inc(Counter::Icmp6InPktTooBigs);
  // Our segment as quoted: its source is us.
  const FourTuple t{Endpoint{e->quoted_ip.src, e->quoted_src_port},
                    Endpoint{e->quoted_ip.dst, e->quoted_dst_port}};
  auto it = demux_.find(t);
  if (it == demux_.end()) {
    counters_.inc(Counter::IcmpInErrors);
    return;
  }
  Socket* s = find(it->second);
  if (!s || !s->conn) return;
  // Linux tcp_v4_err / tcp_v6_err: whatever the type, the quoted segment must
  // be one we sent and is not yet acknowledged, between(seq, snd_una, snd_nxt)
  // (RFC 5927 §4.1); anything else may be forged.
  if (!s->conn->icmp_quote_in_window(e->quoted_seq)) {
    counters_.inc(Counter::TcpExtOutOfWindowIcmps);  // LINUX_MIB_OUTOFWINDOWICMPS
    return;
  }
  if (m.pmtu) {
    input_pmtu(now, *s, e->mtu, e->quoted_seq);
  } else {
    // Linux tcp_v4_err: ICMP_NET_UNREACH and ICMP_HOST_UNREACH may revert
    // the RTO's backoff (RFC 6069) before the error is recorded.
    if (e->ip.version == 4 && e->type == 3 && (e->code == 0 || e->code == 1))
      s->conn->ld_rto_revert(now, e->quoted_seq);
    // RFC 1122 §4.2.3.9: soft unless connecting (Linux: fatal in SYN-SENT).
    s->conn->on_icmp_unreach(now, m.err, false, e->quoted_seq);
  }
  after_call(*s);
}

}  // namespace weir
