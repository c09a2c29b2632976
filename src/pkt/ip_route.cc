// `ip route add|change|replace` for the runner's shell emulation (see the header).
#include "pkt/ip_route.h"

#include <charconv>

#include <fmt/format.h>

namespace weir::pkt {
namespace {

Unexpected<RouteError> bad(std::string what) { return Unexpected(RouteError{false, std::move(what)}); }

// A decimal metric value, 1..limit (iproute2's get_unsigned; 0 would unset it).
bool number(const std::string& s, uint32_t limit, uint32_t& out) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v == 0 || v > limit) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

// DEST: `default` or ADDR[/LEN] of the family (-4/-6, or the address's own).
Expected<Route, RouteError> destination(const std::string& d, int family) {
  Route r;
  if (d == "default" || d == "all" || d == "any") {
    r.dst = family == 6 ? IpAddr{} : IpAddr::v4(0);
    r.prefix_len = 0;
    return r;
  }
  const size_t slash = d.find('/');
  auto a = IpAddr::parse(d.substr(0, slash));
  if (!a) return bad(fmt::format("destination '{}' is not an IP address", d));
  if ((family == 6 && a->is_v4()) || (family == 4 && !a->is_v4()))
    return bad(fmt::format("destination '{}' is not an IPv{} address", d, family));
  const uint32_t bits = a->is_v4() ? 32 : 128;
  uint32_t len = bits;
  if (slash != std::string::npos) {
    const std::string l = d.substr(slash + 1);
    auto [p, ec] = std::from_chars(l.data(), l.data() + l.size(), len);
    if (ec != std::errc() || p != l.data() + l.size() || len > bits)
      return bad(fmt::format("prefix length '{}' of '{}' is not 0..{}", l, d, bits));
  }
  r.dst = *a;
  r.prefix_len = static_cast<uint8_t>(len);
  return r;
}

// The value after keyword w[i]; empty when the line ends there.
const std::string* value_after(const std::vector<std::string>& w, size_t i) {
  return i + 1 < w.size() ? &w[i + 1] : nullptr;
}

}  // namespace

bool is_ip_route(const std::vector<std::string>& w) {
  if (w.size() < 2 || w[0] != "ip") return false;
  const size_t at = (w[1] == "-4" || w[1] == "-6") ? 2 : 1;
  return at < w.size() && (w[at] == "route" || w[at] == "r" || w[at] == "ro");
}

Expected<Route, RouteError> parse_ip_route(const std::vector<std::string>& w) {
  if (!is_ip_route(w)) return bad("not an `ip route` command");
  int family = 0;
  size_t i = 1;
  if (w[1] == "-4" || w[1] == "-6") family = w[i++] == "-4" ? 4 : 6;
  ++i;  // "route"
  if (i >= w.size()) return bad("missing the action (add, change or replace)");
  const std::string& action = w[i++];
  if (action != "add" && action != "change" && action != "replace")
    return Unexpected(RouteError{true, fmt::format("`ip route {}` is not modelled", action)});
  if (i >= w.size()) return bad("missing the destination");
  auto r = destination(w[i++], family);
  if (!r) return r;
  for (; i < w.size(); ++i) {
    const std::string& k = w[i];
    const std::string* v = value_after(w, i);
    if (k == "via" || k == "dev" || k == "metric" || k == "proto" || k == "src" || k == "table" ||
        k == "scope" || k == "onlink") {
      if (k == "onlink") continue;
      if (!v) return bad(fmt::format("'{}' needs a value", k));
      if (k == "via" && (*v == "inet" || *v == "inet6")) ++i;  // `via inet6 GW`
      ++i;
      continue;
    }
    if (k == "advmss" || k == "initcwnd" || k == "mtu") {
      bool lock = false;
      if (v && *v == "lock") {
        lock = true;
        v = value_after(w, ++i);
      }
      if (!v) return bad(fmt::format("'{}' needs a value", k));
      uint32_t n = 0;
      if (!number(*v, 0xffff, n))
        return bad(fmt::format("'{}' value '{}' is not a number in 1..65535", k, *v));
      if (k == "advmss") r->metrics.advmss = n;
      else if (k == "initcwnd") r->metrics.initcwnd = n;
      else {
        // RFC 791's 68 bytes: no path is smaller. Linux takes an IPv6
        // route's MTU below 1280 as given (gtests mtu_probe/basic-v6 uses 660).
        if (n < 68) return bad(fmt::format("mtu {} is below the minimum 68", n));
        r->metrics.mtu = n;
        r->metrics.mtu_locked = lock;
      }
      ++i;
      continue;
    }
    if (k == "fastopen_no_cookie") {
      if (!v || (*v != "0" && *v != "1")) return bad("'fastopen_no_cookie' needs 0 or 1");
      r->metrics.fastopen_no_cookie = *v == "1";
      ++i;
      continue;
    }
    // rtt, rttvar, cwnd, ssthresh, window, initrwnd, quickack, ...: valid
    // for iproute2 but not modelled; an unknown word is a typo.
    static constexpr std::string_view kOther[] = {"rtt", "rttvar", "rto_min", "cwnd", "ssthresh", "window",
                                                  "initrwnd", "quickack", "features", "congctl",
                                                  "reordering", "hoplimit"};
    for (std::string_view o : kOther)
      if (k == o) return Unexpected(RouteError{true, fmt::format("route metric '{}' is not modelled", k)});
    return bad(fmt::format("unknown word '{}' in the route", k));
  }
  return r;
}

}  // namespace weir::pkt
