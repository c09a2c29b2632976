// StackConfig::set: sysctl-style keys. A table maps each name to its field
// so that a bad key or value is reported with what was expected.
#include <algorithm>
#include <charconv>
#include <string>
#include <variant>

#include <fmt/format.h>

#include "weir/config.h"

namespace weir {
namespace {

using PortRanges = std::vector<std::array<uint16_t, 2>>;
using Field = std::variant<int StackConfig::*, bool StackConfig::*, uint32_t StackConfig::*,
                           std::array<uint32_t, 3> StackConfig::*, std::array<uint32_t, 2> StackConfig::*,
                           std::string StackConfig::*, PortRanges StackConfig::*>;

struct Key {
  std::string_view name;
  Field field;
};

constexpr Key kKeys[] = {
    {"tcp_rmem", &StackConfig::tcp_rmem},
    {"tcp_wmem", &StackConfig::tcp_wmem},
    {"tcp_moderate_rcvbuf", &StackConfig::tcp_moderate_rcvbuf},
    {"tcp_adv_win_scale", &StackConfig::tcp_adv_win_scale},
    {"tcp_timestamps", &StackConfig::tcp_timestamps},
    {"tcp_sack", &StackConfig::tcp_sack},
    {"tcp_dsack", &StackConfig::tcp_dsack},
    {"tcp_window_scaling", &StackConfig::tcp_window_scaling},
    {"tcp_ecn", &StackConfig::tcp_ecn},
    {"ip_default_ttl", &StackConfig::ip_default_ttl},
    {"ipv6.conf.all.hop_limit", &StackConfig::ipv6_hop_limit},
    {"ipv6.conf.default.hop_limit", &StackConfig::ipv6_hop_limit},
    {"tcp_reflect_tos", &StackConfig::tcp_reflect_tos},
    {"auto_flowlabels", &StackConfig::auto_flowlabels},
    {"flowlabel_state_ranges", &StackConfig::flowlabel_state_ranges},
    {"txrehash", &StackConfig::txrehash},
    {"tcp_syn_retries", &StackConfig::tcp_syn_retries},
    {"tcp_synack_retries", &StackConfig::tcp_synack_retries},
    {"tcp_retries1", &StackConfig::tcp_retries1},
    {"tcp_retries2", &StackConfig::tcp_retries2},
    {"tcp_orphan_retries", &StackConfig::tcp_orphan_retries},
    {"tcp_fin_timeout", &StackConfig::tcp_fin_timeout_s},
    {"tcp_stdurg", &StackConfig::tcp_stdurg},
    {"tcp_tw_reuse", &StackConfig::tcp_tw_reuse},
    {"tcp_tw_reuse_delay", &StackConfig::tcp_tw_reuse_delay},
    {"tcp_max_tw_buckets", &StackConfig::tcp_max_tw_buckets},
    {"ip_local_port_range", &StackConfig::ip_local_port_range},
    {"ip_local_reserved_ports", &StackConfig::ip_local_reserved_ports},
    {"tcp_syncookies", &StackConfig::tcp_syncookies},
    {"tcp_fastopen", &StackConfig::tcp_fastopen},
    {"tcp_fastopen_blackhole_timeout_sec", &StackConfig::tcp_fastopen_blackhole_timeout_sec},
    {"tcp_fastopen_key", &StackConfig::tcp_fastopen_key},
    {"tcp_max_syn_backlog", &StackConfig::tcp_max_syn_backlog},
    {"tcp_min_snd_mss", &StackConfig::tcp_min_snd_mss},
    {"tcp_base_mss", &StackConfig::tcp_base_mss},
    {"tcp_mtu_probing", &StackConfig::tcp_mtu_probing},
    {"tcp_probe_threshold", &StackConfig::tcp_probe_threshold},
    {"tcp_probe_interval", &StackConfig::tcp_probe_interval_s},
    {"tcp_mtu_probe_floor", &StackConfig::tcp_mtu_probe_floor},
    {"somaxconn", &StackConfig::somaxconn},
    {"route_quickack", &StackConfig::route_quickack},
    {"tcp_keepalive_time", &StackConfig::tcp_keepalive_time_s},
    {"tcp_keepalive_intvl", &StackConfig::tcp_keepalive_intvl_s},
    {"tcp_keepalive_probes", &StackConfig::tcp_keepalive_probes},
    {"tcp_congestion_control", &StackConfig::tcp_congestion_control},
    {"tcp_recovery", &StackConfig::tcp_recovery},
    {"tcp_early_retrans", &StackConfig::tcp_early_retrans},
    {"tcp_frto", &StackConfig::tcp_frto},
    {"tcp_reordering", &StackConfig::tcp_reordering},
    {"tcp_max_reordering", &StackConfig::tcp_max_reordering},
    {"tcp_slow_start_after_idle", &StackConfig::tcp_slow_start_after_idle},
    {"tcp_thin_linear_timeouts", &StackConfig::tcp_thin_linear_timeouts},
    {"tcp_min_rtt_wlen", &StackConfig::tcp_min_rtt_wlen_s},
    {"tcp_pacing_ss_ratio", &StackConfig::tcp_pacing_ss_ratio},
    {"tcp_pacing_ca_ratio", &StackConfig::tcp_pacing_ca_ratio},
    {"tcp_tso_win_divisor", &StackConfig::tcp_tso_win_divisor},
    {"tcp_retrans_collapse", &StackConfig::tcp_retrans_collapse},
    {"tcp_min_tso_segs", &StackConfig::tcp_min_tso_segs},
    {"tcp_notsent_lowat", &StackConfig::tcp_notsent_lowat},
    {"tcp_limit_output_bytes", &StackConfig::tcp_limit_output_bytes},
    {"tcp_challenge_ack_limit", &StackConfig::tcp_challenge_ack_limit},
    {"tcp_invalid_ratelimit", &StackConfig::tcp_invalid_ratelimit_ms},
    {"initial_cwnd", &StackConfig::initial_cwnd},
    {"default_qdisc", &StackConfig::default_qdisc},
    {"tcp_plb_enabled", &StackConfig::tcp_plb_enabled},
    {"tcp_plb_idle_rehash_rounds", &StackConfig::tcp_plb_idle_rehash_rounds},
    {"tcp_plb_rehash_rounds", &StackConfig::tcp_plb_rehash_rounds},
    {"tcp_plb_suspend_rto_sec", &StackConfig::tcp_plb_suspend_rto_sec},
    {"tcp_plb_cong_thresh", &StackConfig::tcp_plb_cong_thresh},
    {"tcp_cubic_hystart", &StackConfig::tcp_cubic_hystart},
    {"tcp_cubic_hystart_detect", &StackConfig::tcp_cubic_hystart_detect},
    {"tcp_cubic_hystart_low_window", &StackConfig::tcp_cubic_hystart_low_window},
    {"tcp_cubic_hystart_ack_delta_us", &StackConfig::tcp_cubic_hystart_ack_delta_us},
    {"tcp_cubic_fast_convergence", &StackConfig::tcp_cubic_fast_convergence},
    {"tcp_cubic_beta", &StackConfig::tcp_cubic_beta},
    {"tcp_cubic_bic_scale", &StackConfig::tcp_cubic_bic_scale},
    {"tcp_cubic_tcp_friendliness", &StackConfig::tcp_cubic_tcp_friendliness},
    {"tcp_cubic_initial_ssthresh", &StackConfig::tcp_cubic_initial_ssthresh},
    {"fault_seed000_usable_wraps", &StackConfig::fault_seed000_usable_wraps},
    {"fault_seed001_rcv_wnd_unclamped", &StackConfig::fault_seed001_rcv_wnd_unclamped},
    {"fault_seed002_sacked_acked_leak", &StackConfig::fault_seed002_sacked_acked_leak},
    {"fault_seed003_undo_without_proof", &StackConfig::fault_seed003_undo_without_proof},
    {"fault_seed004_hystart_round_start", &StackConfig::fault_seed004_hystart_round_start},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

bool parse_int(std::string_view s, int64_t& out) {
  s = trim(s);
  // Linux's proc_dointvec takes C literals: "0x70403" is hexadecimal.
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

// N non-negative numbers separated by blanks, as /proc/sys vectors; `out`
// is left alone unless all N parse.
template <size_t N>
bool parse_list(std::string_view v, std::array<uint32_t, N>& out) {
  std::array<uint32_t, N> got{};
  size_t i = 0;
  size_t pos = 0;
  while (pos < v.size() && i < N) {
    while (pos < v.size() && (v[pos] == ' ' || v[pos] == '\t')) ++pos;
    size_t end = pos;
    while (end < v.size() && v[end] != ' ' && v[end] != '\t') ++end;
    if (end == pos) break;
    int64_t n = 0;
    if (!parse_int(v.substr(pos, end - pos), n) || n < 0 || n > 0xffffffffll) return false;
    got[i++] = static_cast<uint32_t>(n);
    pos = end;
  }
  while (pos < v.size() && (v[pos] == ' ' || v[pos] == '\t' || v[pos] == '\n')) ++pos;
  if (i != N || pos != v.size()) return false;
  out = got;
  return true;
}

// Linux proc_do_large_bitmap: "a,b-c,..." of ports 0..65535, each range
// ascending; an empty value clears the set. `out` is left alone on error.
bool parse_port_ranges(std::string_view v, PortRanges& out) {
  PortRanges got;
  v = trim(v);
  while (!v.empty()) {
    const size_t comma = v.find(',');
    const std::string_view item = trim(v.substr(0, comma));
    v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
    const size_t dash = item.find('-');
    int64_t a = 0;
    int64_t b = 0;
    if (!parse_int(item.substr(0, dash), a)) return false;
    b = a;
    if (dash != std::string_view::npos && !parse_int(item.substr(dash + 1), b)) return false;
    if (a < 0 || b > 65535 || b < a) return false;
    got.push_back({static_cast<uint16_t>(a), static_cast<uint16_t>(b)});
  }
  out = std::move(got);
  return true;
}

// The int sysctls whose handlers bound their values (Linux
// proc_dointvec_minmax / proc_dou8vec_minmax): EINVAL outside [lo, hi].
// ipv4_table: tcp_tw_reuse 0..2, ip_default_ttl ip_ttl_min..ip_ttl_max,
// tcp_reflect_tos 0..1; addrconf: conf hop_limit 1..255; ipv6_table: auto_flowlabels to
// IP6_AUTO_FLOW_LABEL_MAX, flowlabel_state_ranges 0..1; net.core txrehash
// SOCK_TXREHASH_DISABLED..ENABLED.
struct IntRange {
  std::string_view name;
  int StackConfig::*field;
  int lo, hi;
  std::string_view expected;  // as the error message says it
};

constexpr IntRange kIntRanges[] = {
    {"tcp_tw_reuse", &StackConfig::tcp_tw_reuse, 0, 2, "0, 1 or 2"},
    {"ip_default_ttl", &StackConfig::ip_default_ttl, 1, 255, "1..255"},
    // addrconf_sysctl: hop_limit by proc_dointvec_minmax, 1..255.
    {"ipv6.conf.all.hop_limit", &StackConfig::ipv6_hop_limit, 1, 255, "1..255"},
    {"ipv6.conf.default.hop_limit", &StackConfig::ipv6_hop_limit, 1, 255, "1..255"},
    {"tcp_reflect_tos", &StackConfig::tcp_reflect_tos, 0, 1, "0 or 1"},
    {"auto_flowlabels", &StackConfig::auto_flowlabels, 0, 3, "0..3"},
    {"flowlabel_state_ranges", &StackConfig::flowlabel_state_ranges, 0, 1, "0 or 1"},
    {"txrehash", &StackConfig::txrehash, 0, 1, "0 or 1"},
    {"tcp_retrans_collapse", &StackConfig::tcp_retrans_collapse, 0, 255, "0..255"},  // proc_dou8vec_minmax
    // sysctl_net_ipv4.c: u8 vectors, the round counts up to tcp_plb_max_rounds
    // (31), the threshold an int up to tcp_plb_max_cong_thresh (256).
    {"tcp_plb_enabled", &StackConfig::tcp_plb_enabled, 0, 1, "0 or 1"},
    {"tcp_plb_idle_rehash_rounds", &StackConfig::tcp_plb_idle_rehash_rounds, 0, 31, "0..31"},
    {"tcp_plb_rehash_rounds", &StackConfig::tcp_plb_rehash_rounds, 0, 31, "0..31"},
    {"tcp_plb_suspend_rto_sec", &StackConfig::tcp_plb_suspend_rto_sec, 0, 255, "0..255"},
    {"tcp_plb_cong_thresh", &StackConfig::tcp_plb_cong_thresh, 0, 256, "0..256"},
};

// The sysctls whose handlers bound their values (above, and
// ipv4_local_port_range): EINVAL outside.
std::string check_range(const StackConfig& c, std::string_view name) {
  for (const IntRange& r : kIntRanges) {
    const int v = c.*r.field;
    if (name == r.name && (v < r.lo || v > r.hi)) return fmt::format("{}: expected {}, got {}", r.name, r.expected, v);
  }
  // tcp_tw_reuse_delay_max: TCP_PAWS_MSL seconds.
  if (name == "tcp_tw_reuse_delay" && (c.tcp_tw_reuse_delay < 1 || c.tcp_tw_reuse_delay > 60000))
    return fmt::format("tcp_tw_reuse_delay: expected 1..60000 ms, got {}", c.tcp_tw_reuse_delay);
  const auto& r = c.ip_local_port_range;
  if (name == "ip_local_port_range" && (r[0] < 1 || r[1] > 65535 || r[1] < r[0]))
    return fmt::format("ip_local_port_range: expected 'low high' with 1 <= low <= high <= 65535, got '{} {}'",
                       r[0], r[1]);
  return {};
}

std::string set_field(StackConfig& c, const Key& k, std::string_view v) {
  int64_t n = 0;
  if (auto* f = std::get_if<int StackConfig::*>(&k.field)) {
    if (!parse_int(v, n)) return fmt::format("{}: expected an integer, got '{}'", k.name, v);
    c.*(*f) = static_cast<int>(n);
  } else if (auto* b = std::get_if<bool StackConfig::*>(&k.field)) {
    if (!parse_int(v, n)) return fmt::format("{}: expected 0 or 1, got '{}'", k.name, v);
    c.*(*b) = n != 0;
  } else if (auto* u = std::get_if<uint32_t StackConfig::*>(&k.field)) {
    if (!parse_int(v, n) || n < 0 || n > 0xffffffffll)
      return fmt::format("{}: expected an unsigned integer, got '{}'", k.name, v);
    c.*(*u) = static_cast<uint32_t>(n);
  } else if (auto* a = std::get_if<std::array<uint32_t, 3> StackConfig::*>(&k.field)) {
    if (!parse_list(v, c.*(*a)))
      return fmt::format("{}: expected three byte counts 'min default max', got '{}'", k.name, v);
  } else if (auto* a2 = std::get_if<std::array<uint32_t, 2> StackConfig::*>(&k.field)) {
    if (!parse_list(v, c.*(*a2))) return fmt::format("{}: expected two numbers 'low high', got '{}'", k.name, v);
  } else if (auto* s = std::get_if<std::string StackConfig::*>(&k.field)) {
    c.*(*s) = std::string(v);
  } else if (auto* pr = std::get_if<PortRanges StackConfig::*>(&k.field)) {
    if (!parse_port_ranges(v, c.*(*pr)))
      return fmt::format("{}: expected ports and ranges 0..65535 like '8080,9148-9150', got '{}'", k.name, v);
  }
  return {};
}

}  // namespace

std::string StackConfig::set(std::string_view key, std::string_view value) {
  // Module parameters of tcp_cubic, as a path or dotted: tcp_cubic_<name>.
  for (std::string_view prefix : {"/sys/module/tcp_cubic/parameters/", ".sys.module.tcp_cubic.parameters.",
                                  "sys.module.tcp_cubic.parameters."}) {
    if (key.substr(0, prefix.size()) == prefix)
      return set("tcp_cubic_" + std::string(key.substr(prefix.size())), value);
  }
  // A /proc/sys path names the sysctl its dotted form names (sysctl(8)).
  if (constexpr std::string_view proc = "/proc/sys/"; key.substr(0, proc.size()) == proc) {
    std::string dotted(key.substr(proc.size()));
    std::replace(dotted.begin(), dotted.end(), '/', '.');
    return set(dotted, value);
  }
  // Per-device keys keep their family (net.ipv4.conf.* are other settings).
  if (key.substr(0, 14) == "net.ipv6.conf.") key.remove_prefix(4);
  for (std::string_view prefix : {"net.ipv4.", "net.ipv6.", "net.core."}) {
    if (key.substr(0, prefix.size()) == prefix) {
      key.remove_prefix(prefix.size());
      break;
    }
  }
  for (const Key& k : kKeys) {
    if (k.name != key) continue;
    StackConfig before = *this;
    std::string err = set_field(*this, k, value);
    if (err.empty()) err = check_range(*this, key);
    if (!err.empty()) *this = before;  // a refused value changes nothing
    return err;
  }
  return fmt::format("unknown setting '{}'", key);
}

}  // namespace weir
