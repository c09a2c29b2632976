// %{ }% blocks, as packetdrill runs them: at the block's time the socket
// under test's tcp_info is snapshot; after the run one python3 program
// evaluates every block in order with that snapshot's fields as globals
// (so variables carry from block to block). An assertion names its line.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <unistd.h>

#include <fmt/format.h>

#include "pkt/runner_impl.h"

namespace weir::pkt {
namespace {

// (name, value) of every tcp_info field, Linux names.
std::vector<std::pair<const char*, uint64_t>> fields(const TcpInfo& i) {
  return {
      {"tcpi_state", i.tcpi_state}, {"tcpi_ca_state", i.tcpi_ca_state},
      {"tcpi_retransmits", i.tcpi_retransmits}, {"tcpi_probes", i.tcpi_probes},
      {"tcpi_backoff", i.tcpi_backoff}, {"tcpi_options", i.tcpi_options},
      {"tcpi_snd_wscale", i.tcpi_snd_wscale}, {"tcpi_rcv_wscale", i.tcpi_rcv_wscale},
      {"tcpi_delivery_rate_app_limited", i.tcpi_delivery_rate_app_limited},
      {"tcpi_rto", i.tcpi_rto}, {"tcpi_ato", i.tcpi_ato}, {"tcpi_snd_mss", i.tcpi_snd_mss},
      {"tcpi_rcv_mss", i.tcpi_rcv_mss}, {"tcpi_unacked", i.tcpi_unacked},
      {"tcpi_sacked", i.tcpi_sacked}, {"tcpi_lost", i.tcpi_lost}, {"tcpi_retrans", i.tcpi_retrans},
      {"tcpi_fackets", i.tcpi_fackets}, {"tcpi_last_data_sent", i.tcpi_last_data_sent},
      {"tcpi_last_ack_sent", i.tcpi_last_ack_sent}, {"tcpi_last_data_recv", i.tcpi_last_data_recv},
      {"tcpi_last_ack_recv", i.tcpi_last_ack_recv}, {"tcpi_pmtu", i.tcpi_pmtu},
      {"tcpi_rcv_ssthresh", i.tcpi_rcv_ssthresh}, {"tcpi_rtt", i.tcpi_rtt},
      {"tcpi_rttvar", i.tcpi_rttvar}, {"tcpi_snd_ssthresh", i.tcpi_snd_ssthresh},
      {"tcpi_snd_cwnd", i.tcpi_snd_cwnd}, {"tcpi_advmss", i.tcpi_advmss},
      {"tcpi_reordering", i.tcpi_reordering}, {"tcpi_rcv_rtt", i.tcpi_rcv_rtt},
      {"tcpi_rcv_space", i.tcpi_rcv_space}, {"tcpi_total_retrans", i.tcpi_total_retrans},
      {"tcpi_pacing_rate", i.tcpi_pacing_rate}, {"tcpi_max_pacing_rate", i.tcpi_max_pacing_rate},
      {"tcpi_bytes_acked", i.tcpi_bytes_acked}, {"tcpi_bytes_received", i.tcpi_bytes_received},
      {"tcpi_segs_out", i.tcpi_segs_out}, {"tcpi_segs_in", i.tcpi_segs_in},
      {"tcpi_notsent_bytes", i.tcpi_notsent_bytes}, {"tcpi_min_rtt", i.tcpi_min_rtt},
      {"tcpi_data_segs_in", i.tcpi_data_segs_in}, {"tcpi_data_segs_out", i.tcpi_data_segs_out},
      {"tcpi_delivery_rate", i.tcpi_delivery_rate}, {"tcpi_busy_time", i.tcpi_busy_time},
      {"tcpi_rwnd_limited", i.tcpi_rwnd_limited}, {"tcpi_sndbuf_limited", i.tcpi_sndbuf_limited},
      {"tcpi_delivered", i.tcpi_delivered}, {"tcpi_delivered_ce", i.tcpi_delivered_ce},
      {"tcpi_bytes_sent", i.tcpi_bytes_sent}, {"tcpi_bytes_retrans", i.tcpi_bytes_retrans},
      {"tcpi_dsack_dups", i.tcpi_dsack_dups}, {"tcpi_reord_seen", i.tcpi_reord_seen},
      {"tcpi_rcv_ooopack", i.tcpi_rcv_ooopack}, {"tcpi_snd_wnd", i.tcpi_snd_wnd},
      {"tcpi_rcv_wnd", i.tcpi_rcv_wnd}, {"tcpi_rehash", i.tcpi_rehash},
      {"tcpi_total_rto", i.tcpi_total_rto},
      {"tcpi_total_rto_recoveries", i.tcpi_total_rto_recoveries},
      {"tcpi_total_rto_time", i.tcpi_total_rto_time},
  };
}

// Names packetdrill's generated python defines before the blocks.
constexpr const char* kPrelude = R"py(import sys, textwrap
TCP_CA_Open, TCP_CA_Disorder, TCP_CA_CWR, TCP_CA_Recovery, TCP_CA_Loss = 0, 1, 2, 3, 4
TCPI_OPT_TIMESTAMPS, TCPI_OPT_SACK, TCPI_OPT_WSCALE, TCPI_OPT_ECN = 1, 2, 4, 8
TCPI_OPT_ECN_SEEN, TCPI_OPT_SYN_DATA, TCPI_OPT_USEC_TS = 16, 32, 64
TCP_ESTABLISHED, TCP_SYN_SENT, TCP_SYN_RECV, TCP_FIN_WAIT1, TCP_FIN_WAIT2 = 1, 2, 3, 4, 5
TCP_TIME_WAIT, TCP_CLOSE, TCP_CLOSE_WAIT, TCP_LAST_ACK, TCP_LISTEN, TCP_CLOSING = 6, 7, 8, 9, 10, 11
TCP_INFINITE_SSTHRESH = 0x7fffffff
def _weir_block(line, src):
    try:
        # packetdrill writes each block on its own lines of one file, so a
        # block ending in a backslash continues onto an empty line: add it.
        exec(compile(textwrap.dedent(src.lstrip("\n")) + "\n", "line %d" % line, "exec"), globals())
    except AssertionError as e:
        # Name the failing statement and its script line, not just the
        # value the assert printed.
        tb = sys.exc_info()[2]
        while tb.tb_next is not None:
            tb = tb.tb_next
        body = textwrap.dedent(src.lstrip("\n")).splitlines()
        at = tb.tb_lineno
        lead = len(src) - len(src.lstrip("\n"))
        stmt = body[at - 1].strip() if 0 < at <= len(body) else "assert"
        got = (" (got %s)" % e) if str(e) else ""
        print("line %d: assertion failed: %s%s at line %d" % (line, stmt, got, line + lead + at - 1))
        sys.exit(1)
    except Exception as e:
        print("line %d: %s: %s" % (line, type(e).__name__, e))
        sys.exit(2)
)py";

std::string py_string(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "'";
}

}  // namespace

void Runner::snapshot_code(const Event& e, const CodeSpec& c) {
  CodeSnapshot snap;
  snap.line = e.pos.line;
  snap.text = c.text;
  auto it = fds_.find(sut_fd_);
  if (it != fds_.end()) {
    // packetdrill reads tcp_info at the block's time: bring the stack's
    // clock there (every deadline up to now_ has already fired), so the
    // tcpi_last_* ages count to it.
    stack_->advance(now_);
    auto info = stack_->tcp_info(it->second.sock);
    if (info) snap.info = *info;
  }
  log(fmt::format("{} %{{ ... }}% (line {}){}", fmt_time(now_), e.pos.line,
                  snap.info ? fmt::format(" cwnd {} ssthresh {} ca_state {}", snap.info->tcpi_snd_cwnd,
                                          snap.info->tcpi_snd_ssthresh, snap.info->tcpi_ca_state)
                            : " (no socket under test)"));
  code_.push_back(std::move(snap));
}

std::string default_python() {
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

Status Runner::run_code_blocks() {
  if (code_.empty()) return ok();
  std::string prog = kPrelude;
  for (const CodeSnapshot& s : code_) {
    if (s.info)
      for (auto [name, v] : fields(*s.info)) prog += fmt::format("{} = {}\n", name, v);
    prog += fmt::format("_weir_block({}, {})\n", s.line, py_string(s.text));
  }
  char path[] = "/tmp/weir-pkt-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return stop(Outcome::kSkip, "cannot create a temporary file for the %{ }% blocks");
  close(fd);
  {
    std::ofstream out(path);
    out << prog;
  }
  std::string cmd = fmt::format("{} {} 2>&1", opt_.python, path);
  FILE* p = popen(cmd.c_str(), "r");
  std::string output;
  if (p) {
    char buf[512];
    while (fgets(buf, sizeof buf, p)) output += buf;
  }
  int status = p ? pclose(p) : -1;
  unlink(path);
  if (!p || (WIFEXITED(status) && WEXITSTATUS(status) == 127))
    return stop(Outcome::kSkip, fmt::format("{} is not available for the %{{ }}% blocks", opt_.python));
  if (status != 0) {
    while (!output.empty() && output.back() == '\n') output.pop_back();
    // The failure is the last line (the prelude prints it, then exits);
    // what the blocks printed before it becomes detail.
    const size_t nl = output.rfind('\n');
    const std::string reason = nl == std::string::npos ? output : output.substr(nl + 1);
    std::vector<std::string> printed;
    if (nl != std::string::npos) {
      std::string before = output.substr(0, nl);
      std::replace(before.begin(), before.end(), '\n', ' ');
      printed.push_back("the blocks printed: " + before);
    }
    int line = 0;
    std::sscanf(reason.c_str(), "line %d", &line);
    for (const Event& e : script_.events)
      if (e.pos.line == line) cur_ = &e;
    return stop(Outcome::kFail, reason.empty() ? "%{ }% block failed" : reason, printed);
  }
  return ok();
}

}  // namespace weir::pkt
