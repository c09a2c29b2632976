// Shell lines are emulated, never executed: the set-up idioms of
// packetdrill's TCP scripts map onto the stack's configuration and the
// device; `nstat` greps assert counters; anything else skips the script
// with the command named.
#include <cctype>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "pkt/ip_route.h"
#include "pkt/runner_impl.h"
#include "pkt/shell_files.h"
#include "pkt/shell_text.h"

namespace weir::pkt {
namespace {

// gtests/net/common/defaults.sh: the profile every gtests-tcp script
// starts from (FACK and MPTCP lines have no engine setting). Fast Open:
// client, server, and every listener without TCP_FASTOPEN (0x70403; the
// upper bits are an old per-listener queue length Linux no longer reads),
// under the key behind run_all.py's TFO_COOKIE define.
constexpr std::pair<const char*, const char*> kDefaults[] = {
    {"tcp_rmem", "4096 540000 15728640"},
    {"tcp_wmem", "4096 262144 4194304"},
    {"tcp_timestamps", "1"},
    {"tcp_syn_retries", "5"},
    {"tcp_synack_retries", "5"},
    {"tcp_frto", "2"},
    {"tcp_sack", "1"},
    {"tcp_dsack", "1"},
    {"tcp_reordering", "3"},
    {"tcp_congestion_control", "cubic"},
    {"tcp_slow_start_after_idle", "0"},
    {"tcp_early_retrans", "4"},
    {"tcp_recovery", "1"},
    {"tcp_tso_win_divisor", "3"},
    {"tcp_ecn", "0"},
    {"tcp_pacing_ss_ratio", "200"},
    {"tcp_pacing_ca_ratio", "120"},
    {"tcp_notsent_lowat", "4294967295"},
    {"tcp_syncookies", "1"},
    {"tcp_fastopen", "0x70403"},
    {"tcp_fastopen_key", "a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4"},
};

// Settings that only shape TSO/GSO bursts or features weir does not have;
// accepting them as no-ops is what a kernel without TSO would do.
bool no_op_sysctl(std::string_view key) {
  return key == "tcp_fack" || key == "tcp_autocorking";
}

std::string trim(std::string s) {
  size_t a = s.find_first_not_of(" \t\r\n");
  size_t b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// Splits a backquoted block into commands: lines joined on trailing '\',
// then split at newlines and ';'.
std::vector<std::string> split_commands(const std::string& text) {
  std::string joined;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      joined += ' ';
      ++i;
    } else {
      joined += text[i];
    }
  }
  std::vector<std::string> out;
  std::string cur;
  for (char c : joined + "\n") {
    if (c == '\n' || c == ';') {
      std::string t = trim(cur);
      size_t hash = t.find(" #");
      if (hash != std::string::npos) t = trim(t.substr(0, hash));
      if (!t.empty() && t[0] != '#') out.push_back(t);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> w;
  std::string cur;
  char quote = 0;
  for (char c : s) {
    if (quote) {
      if (c == quote) quote = 0;
      else cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == ' ' || c == '\t') {
      if (!cur.empty()) w.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) w.push_back(cur);
  return w;
}

// A pipeline's commands: split at '|' outside quotes (`||` is handled
// before), each into words.
std::vector<std::vector<std::string>> split_pipeline(const std::string& cmd) {
  std::vector<std::vector<std::string>> stages;
  std::string cur;
  char quote = 0;
  for (char c : cmd) {
    if (quote && c == quote) quote = 0;
    else if (!quote && (c == '"' || c == '\'')) quote = c;
    if (!quote && c == '|') {
      stages.push_back(words(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  stages.push_back(words(cur));
  return stages;
}

bool ends_with(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

}  // namespace

class Shell {
 public:
  explicit Shell(Runner& r) : r_(r) {}

  Status set(std::string key, const std::string& value, const std::string& cmd) {
    for (char& c : key)
      if (c == '/') c = '.';
    for (std::string_view pre : {".proc.sys.", "proc.sys."})
      if (key.rfind(pre, 0) == 0) key = key.substr(pre.size());
    std::string bare = key.rfind("net.ipv4.", 0) == 0 ? key.substr(9) : key;
    if (no_op_sysctl(bare)) return ok();
    std::string err = r_.stack_->config().set(key, value);
    if (!err.empty()) return r_.stop(Outcome::kSkip, fmt::format("unsupported setting in `{}`: {}", cmd, err));
    return ok();
  }

  Status nstat(const std::string& cmd) {
    std::map<std::string, uint64_t> now;
    const Counters& c = r_.stack_->counters();
    for (size_t i = 0; i < static_cast<size_t>(Counter::kCount); ++i)
      now[std::string(counter_name(static_cast<Counter>(i)))] = c.v[i];
    size_t bar = cmd.find('|');
    if (bar == std::string::npos) {
      r_.nstat_base_ = now;  // nstat / nstat -n: take the baseline
      return ok();
    }
    // nstat ... | grep [-q] "NAME *VALUE": the counter moved by VALUE since
    // the last nstat (nstat prints deltas against its history).
    static const std::regex re(R"(([A-Za-z][A-Za-z0-9]+)[^0-9A-Za-z]+([0-9]+))");
    // nstat ... | grep NAME: nstat prints only counters that moved, so the
    // grep (and the command) succeeds when NAME moved at all.
    static const std::regex moved(R"re(grep\s+(?:-q\s+)?"?([A-Za-z][A-Za-z0-9]+)"?\s*(?:>\s*/dev/null)?\s*$)re");
    std::smatch m;
    std::string rest = cmd.substr(bar + 1);
    if (!std::regex_search(rest, m, re)) {
      if (!std::regex_search(rest, m, moved))
        return r_.stop(Outcome::kSkip, fmt::format("unsupported nstat form `{}`", cmd));
      const std::string name = m[1];
      if (!now.count(name)) return r_.stop(Outcome::kSkip, fmt::format("counter {} is not kept by weir", name));
      const uint64_t got = now[name] - r_.nstat_base_[name];
      r_.nstat_base_ = now;
      if (got == 0) return r_.stop(Outcome::kFail, fmt::format("nstat: {} did not move", name));
      return ok();
    }
    std::string name = m[1];
    uint64_t want = std::stoull(m[2]);
    if (!now.count(name)) return r_.stop(Outcome::kSkip, fmt::format("counter {} is not kept by weir", name));
    uint64_t got = now[name] - r_.nstat_base_[name];
    r_.nstat_base_ = now;
    if (got != want) return r_.stop(Outcome::kFail, fmt::format("nstat: {} moved by {}, expected {}", name, got, want));
    return ok();
  }

  // sysctl -q KEY=VALUE ... and set_sysctls.py /proc/sys/KEY=VALUE ...
  Status sysctls(const std::vector<std::string>& w, const std::string& cmd) {
    for (size_t i = 1; i < w.size(); ++i) {
      if (w[i][0] == '-') continue;  // -q, -e, -w
      if (w[i] == ">" || w[i] == "2>") {  // redirections
        ++i;
        continue;
      }
      if (w[i][0] == '>' || w[i].rfind("2>", 0) == 0) continue;
      size_t eq = w[i].find('=');
      if (eq == std::string::npos) return r_.stop(Outcome::kSkip, fmt::format("unsupported command `{}`", cmd));
      std::string value = w[i].substr(eq + 1);
      if (value.rfind("/dev/null", 0) == 0) continue;
      if (auto s = set(w[i].substr(0, eq), value, cmd); !s) return s;
    }
    return ok();
  }

  // ip link set mtu, ethtool -K, tc qdisc: the device; nullopt when `w` is
  // none of those.
  std::optional<Status> device(const std::vector<std::string>& w, const std::string& cmd) {
    const std::string& prog = w[0];
    if (prog == "ip" && w.size() >= 3 && w[1] == "link") {
      for (size_t i = 2; i + 1 < w.size(); ++i)
        if (w[i] == "mtu") {
          r_.cfg_.mtu = static_cast<uint32_t>(std::stoul(w[i + 1]));
          return ok();
        }
    }
    if (prog == "ethtool" && w.size() >= 2 && w[1] == "-K") {
      // tun0's TSO and GSO: with both off the engine does no TSO deferral
      // (Netif::gso). Other features are outside the model.
      for (size_t i = 3; i + 1 < w.size(); i += 2) {
        const bool on = w[i + 1] == "on";
        if (!on && w[i + 1] != "off")
          return Status(r_.stop(Outcome::kSkip, fmt::format("unsupported command `{}`", cmd)));
        if (w[i] == "tso") r_.cfg_.tso = on;
        else if (w[i] == "gso") r_.cfg_.gso = on;
        else if (on) return Status(r_.stop(Outcome::kSkip, fmt::format("unsupported command `{}`", cmd)));
      }
      return ok();
    }
    if (prog == "tc" && w.size() >= 2 && w[1] == "qdisc") {
      if (auto drops = qdisc_drops_all(w)) r_.qdisc_drops_ = *drops;
      for (const std::string& x : w)
        if (x == "fq") return set("net.core.default_qdisc", "fq", cmd);  // pacing at the socket's rate
      for (const std::string& x : w)
        if (x == "fq_codel" || x == "netem")
          return Status(r_.stop(Outcome::kSkip, fmt::format("qdisc {} (pacing/queueing below TCP) is not modelled", x)));
      return ok();  // pfifo: the device queue the runner already is
    }
    return std::nullopt;
  }

  // `tc qdisc add|replace|change dev D root pfifo|bfifo limit 0`: a queue
  // that holds nothing, so every transmit fails locally (NET_XMIT_DROP), as
  // gtests use it to emulate qdisc congestion. Deleting the root qdisc or
  // installing any other one makes the device accept packets again.
  // nullopt: the command changes no qdisc (show).
  static std::optional<bool> qdisc_drops_all(const std::vector<std::string>& w) {
    if (w.size() < 3 || w[2] == "show" || w[2] == "ls") return std::nullopt;
    if (w[2] == "del" || w[2] == "delete") return false;
    bool fifo = false;
    for (size_t i = 3; i < w.size(); ++i) {
      if (w[i] == "pfifo" || w[i] == "bfifo" || w[i] == "pfifo_head_drop") fifo = true;
      if (fifo && w[i] == "limit" && i + 1 < w.size() && w[i + 1] == "0") return true;
    }
    return false;
  }

  // `ip [-6] route add|change|replace ... advmss N mtu [lock] N initcwnd N`:
  // the stack's route metrics. A line iproute2 would reject fails the
  // script (the shell command failed); a metric weir does not model skips it.
  Status route(const std::vector<std::string>& w, const std::string& cmd) {
    auto r = parse_ip_route(w);
    if (!r) {
      const Outcome o = r.error().unsupported ? Outcome::kSkip : Outcome::kFail;
      return r_.stop(o, fmt::format("{} `{}`: {}", r.error().unsupported ? "unsupported route" : "bad route", cmd,
                                    r.error().what));
    }
    if (const Errc e = r_.stack_->set_route(*r); e != Errc::kOk)
      return r_.stop(Outcome::kFail, fmt::format("`{}`: {}", cmd, errc_name(e)));
    return ok();
  }

  // cat/grep over the stack's /proc/net/tcp{,6}; as in packetdrill, a
  // non-zero exit status fails the script.
  Status text(const std::string& cmd) {
    Stack& st = *r_.stack_;
    const ReadFile read = [&st](const std::string& path) -> std::optional<std::string> {
      if (path == "/proc/net/tcp") return st.proc_net_tcp(false);
      if (path == "/proc/net/tcp6") return st.proc_net_tcp(true);
      return std::nullopt;
    };
    const TextRun t = run_text_pipeline(split_pipeline(cmd), read);
    if (!t.unsupported.empty())
      return r_.stop(Outcome::kSkip, fmt::format("unsupported shell command `{}`: {}", cmd, t.unsupported));
    if (!t.out.empty()) r_.log(t.out.substr(0, t.out.size() - 1));
    if (t.status != 0) return r_.stop(Outcome::kFail, fmt::format("`{}` exited with status {}", cmd, t.status));
    return ok();
  }

  Status one(const std::string& cmd) {
    // `a || b`: b runs when a fails (a sysctl this kernel lacks falls back
    // to another command, e.g. tcp_fastopen_cookies || ip tcp_metrics flush).
    if (const size_t orr = cmd.find(" || "); orr != std::string::npos) {
      if (Status a = one(cmd.substr(0, orr)); a) return a;
      return one(cmd.substr(orr + 4));
    }
    std::vector<std::string> w = words(cmd);
    if (w.empty()) return ok();
    const std::string& prog = w[0];
    if (ends_with(prog, "defaults.sh")) {
      for (auto [k, v] : kDefaults)
        if (auto s = set(k, v, cmd); !s) return s;
      return ok();
    }
    if (prog.find("sysctl_restore") != std::string::npos) return ok();  // clean-up script
    if (prog == "sysctl" || ends_with(prog, "set_sysctls.py")) return sysctls(w, cmd);
    if (prog == "nstat") return nstat(cmd);
    if (is_text_command(prog)) return text(cmd);
    if (is_file_command(prog)) {
      const FileRun f = run_file_command(r_.files_, w);
      if (!f.unsupported.empty())
        return r_.stop(Outcome::kSkip, fmt::format("unsupported shell command `{}`: {}", cmd, f.unsupported));
      if (f.status != 0) return r_.stop(Outcome::kFail, fmt::format("`{}`: {}", cmd, f.error));
      return ok();
    }
    // echo N > /sys/module/tcp_cubic/parameters/NAME: a per-stack CUBIC parameter.
    if (prog == "echo" && w.size() == 4 && w[2] == ">" && w[3].rfind("/sys/module/tcp_cubic/", 0) == 0)
      return set(w[3], w[1], cmd);
    // The kernel's tcp_metrics hold the Fast Open client cache (cookies and
    // MSS per destination, tcp_fastopen_cache_set): a flush empties it.
    if (prog == "ip" && w.size() >= 2 && w[1] == "tcp_metrics") {
      if (w.size() >= 3 && w[2] == "flush") r_.stack_->flush_tcp_metrics();
      return ok();
    }
    if (is_ip_route(w)) return route(w, cmd);
    if (auto s = device(w, cmd)) return *s;
    return r_.stop(Outcome::kSkip, fmt::format("unsupported shell command `{}`", cmd));
  }

 private:
  Runner& r_;
};

Status Runner::command(const Event& e, const CommandSpec& c, bool untimed) {
  log(fmt::format("{} `{}` (line {}{})", fmt_time(now_), c.text, e.pos.line, untimed ? ", untimed" : ""));
  Shell sh(*this);
  for (const std::string& cmd : split_commands(c.text))
    if (auto s = sh.one(cmd); !s) return s;
  return ok();
}

}  // namespace weir::pkt
