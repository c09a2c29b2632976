#include "sim/ecmp.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/splitmix.h"

namespace weir::sim {
namespace {

constexpr uint8_t kTcp = 6;
constexpr uint8_t kUdp = 17;

uint64_t load64(std::span<const uint8_t> b, size_t off) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = v << 8 | b[off + i];
  return v;
}

// One seeded mixing step per input word: splitmix64's finaliser spreads
// every input bit over the whole state, so flows that differ in one port
// bit or one flow-label bit land on independent paths.
uint64_t mix(uint64_t h, uint64_t word) {
  uint64_t s = h ^ word;
  return splitmix64(s);
}

// The ports of a TCP or UDP header at `off`, or 0 (Linux's flow dissector
// also leaves them out for other protocols).
uint64_t ports(std::span<const uint8_t> b, size_t off, uint8_t proto) {
  if ((proto != kTcp && proto != kUdp) || b.size() < off + 4) return 0;
  return uint64_t{b[off]} << 24 | uint64_t{b[off + 1]} << 16 | uint64_t{b[off + 2]} << 8 | b[off + 3];
}

}  // namespace

bool ip_destination(std::span<const uint8_t> b, IpAddr* dst) {
  if (b.size() >= 20 && (b[0] >> 4) == 4) {
    *dst = IpAddr::v4(b[16], b[17], b[18], b[19]);
    return true;
  }
  if (b.size() >= 40 && (b[0] >> 4) == 6) {
    std::array<uint8_t, 16> a{};
    std::copy(b.begin() + 24, b.begin() + 40, a.begin());
    *dst = IpAddr::v6(a);
    return true;
  }
  return false;
}

uint32_t ecmp_hash(std::span<const uint8_t> b, uint64_t seed) {
  uint64_t h = mix(seed, 0);
  if (b.size() >= 20 && (b[0] >> 4) == 4) {
    // RFC 791: addresses at 12..19, protocol at 9, IHL words of header.
    const uint8_t proto = b[9];
    h = mix(h, load64(b, 12));
    h = mix(h, uint64_t{proto} << 32 | ports(b, static_cast<size_t>(b[0] & 0xf) * 4, proto));
  } else if (b.size() >= 40 && (b[0] >> 4) == 6) {
    // RFC 8200 §3: flow label in the low 20 bits of the first word, next
    // header at 6, addresses at 8..39. Extension headers are not walked
    // (the lab's stacks send none), so a packet with one hashes without ports.
    const uint8_t proto = b[6];
    const uint64_t label = (uint64_t{b[1]} & 0xf) << 16 | uint64_t{b[2]} << 8 | b[3];
    for (size_t off = 8; off < 40; off += 8) h = mix(h, load64(b, off));
    h = mix(h, label << 40 | uint64_t{proto} << 32 | ports(b, 40, proto));
  }
  return static_cast<uint32_t>(h >> 32);
}

void EcmpSwitch::receive(Time now, Packet* p) {
  IpAddr dst;
  if (ip_destination(p->bytes, &dst)) {
    // A small table (one entry per host on this side): a scan is cheaper than a map.
    for (auto& [addr, link] : local_)
      if (addr == dst) return link->send(now, p);
    if (!paths_.empty()) {
      const size_t i = ecmp_pick(ecmp_hash(p->bytes, seed_), paths_.size());
      PathCounters& c = counters_[i];
      ++c.packets;
      c.bytes += p->bytes.size();
      if (now >= window_start_) c.window_bytes += p->bytes.size();
      return paths_[i]->send(now, p);
    }
  }
  ++no_route_;
  pool_.put(p);
}

void add_path_metrics(const EcmpSwitch& sw, const std::vector<const LinkStats*>& links, bool windowed,
                      std::map<std::string, double>& m) {
  const auto& cs = sw.counters();
  if (cs.empty()) return;
  double total = 0, hi = 0, lo = -1;
  for (const auto& c : cs) total += static_cast<double>(windowed ? c.window_bytes : c.bytes);
  for (size_t i = 0; i < cs.size(); ++i) {
    const std::string p = fmt::format("path.{}.", i + 1);
    const double b = static_cast<double>(windowed ? cs[i].window_bytes : cs[i].bytes);
    m[p + "packets"] = static_cast<double>(cs[i].packets);
    m[p + "bytes"] = static_cast<double>(cs[i].bytes);
    m[p + "window_bytes"] = static_cast<double>(cs[i].window_bytes);
    m[p + "share"] = total > 0 ? b / total : 0;
    if (i < links.size()) {
      m[p + "drops"] = static_cast<double>(links[i]->drops());
      m[p + "ce_marks"] = static_cast<double>(links[i]->ce_marked);
    }
    hi = std::max(hi, b);
    lo = lo < 0 ? b : std::min(lo, b);
  }
  m["path_max_share"] = total > 0 ? hi / total : 0;
  m["path_min_share"] = total > 0 ? lo / total : 0;
  m["path_imbalance"] = total > 0 ? hi / (total / static_cast<double>(cs.size())) : 0;
}

}  // namespace weir::sim
