// Equal-cost multipath in the lab: a switch that sends each packet to one
// of N parallel paths chosen by a seeded hash of its flow, so that a flow
// stays on one path (no reordering) until its flow key changes. For IPv6
// the key includes the flow label (RFC 6438 §3: "the flow label ... can be
// used as part of the input to a hash function"), which is what lets a
// sender move its flow by drawing a new label: Protective Load Balancing
// (tcp_plb.c, SIGCOMM 2022) relies on it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/link.h"
#include "sim/packet.h"
#include "weir/addr.h"

namespace weir::sim {

// The destination address of an IPv4 or IPv6 datagram; false for anything
// else (the switch then has no route for it).
bool ip_destination(std::span<const uint8_t> b, IpAddr* dst);

// The multipath hash of one datagram under `seed`: source and destination
// address, protocol, TCP/UDP ports, and for IPv6 the 20-bit flow label.
// Linux's equivalent is fib_multipath_hash_policy 3 with
// fib_multipath_hash_fields = 0x3f (addresses, protocol, flow label,
// ports); every router has its own seed (net.ipv4.fib_multipath_hash_seed),
// so two switches do not pick correlated paths.
uint32_t ecmp_hash(std::span<const uint8_t> b, uint64_t seed);

// Hash-threshold path selection (RFC 2992 §2.2, Linux fib_select_multipath's
// upper bounds): the 32-bit hash space is cut into `n` equal regions and the
// region the hash falls in is the path. A change of `n` moves only flows
// near a region boundary (RFC 2992 §3), unlike hash mod n.
inline size_t ecmp_pick(uint32_t hash, size_t n) {
  return static_cast<size_t>((static_cast<uint64_t>(hash) * n) >> 32);
}

struct PathCounters {
  uint64_t packets = 0;
  uint64_t bytes = 0;
  uint64_t window_bytes = 0;  // bytes sent from the scenario's measure_from on
};

// A switch: destinations on its own side are forwarded by a small table
// (the senders' or the receiver's last hop); everything else goes up one
// of the parallel paths picked by ecmp_hash. Counts per path what it sent.
class EcmpSwitch final : public Node {
 public:
  EcmpSwitch(PacketPool& pool, uint64_t seed, Time window_start)
      : pool_(pool), seed_(seed), window_start_(window_start) {}
  void route(const IpAddr& dst, Link* via) { local_.emplace_back(dst, via); }
  void add_path(Link* l) {
    paths_.push_back(l);
    counters_.emplace_back();
  }
  void receive(Time now, Packet* p) override;

  const std::vector<PathCounters>& counters() const { return counters_; }
  uint64_t no_route() const { return no_route_; }

 private:
  PacketPool& pool_;
  uint64_t seed_;
  Time window_start_;
  std::vector<std::pair<IpAddr, Link*>> local_;
  std::vector<Link*> paths_;
  std::vector<PathCounters> counters_;
  uint64_t no_route_ = 0;
};

// path.<i>.{packets,bytes,window_bytes,share,drops,ce_marks} for the
// switch's paths (1-based) and, over all paths, path_max_share,
// path_min_share and path_imbalance (the busiest path's bytes over the
// mean): shares count from measure_from when the scenario sets it.
void add_path_metrics(const EcmpSwitch& sw, const std::vector<const LinkStats*>& links, bool windowed,
                      std::map<std::string, double>& m);

}  // namespace weir::sim
