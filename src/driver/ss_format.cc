#include "driver/ss_format.h"

#include <sys/ioctl.h>
#include <linux/sockios.h>

#include <fmt/format.h>

namespace weir::driver {

const char* ss_state_name(uint8_t s) {
  static constexpr const char* kNames[] = {"UNKNOWN",   "ESTAB",      "SYN-SENT", "SYN-RECV",
                                           "FIN-WAIT-1", "FIN-WAIT-2", "TIME-WAIT", "UNCONN",
                                           "CLOSE-WAIT", "LAST-ACK",   "LISTEN",   "CLOSING",
                                           "NEW-SYN-RECV"};
  return s < std::size(kNames) ? kNames[s] : "UNKNOWN";
}

std::string ss_rate(double bps) {
  // iproute2 sprint_bw(): one decimal, the largest unit that keeps it >= 1.
  if (bps > 1e9) return fmt::format("{:.1f}Gbps", bps / 1e9);
  if (bps > 1e6) return fmt::format("{:.1f}Mbps", bps / 1e6);
  if (bps > 1e3) return fmt::format("{:.1f}Kbps", bps / 1e3);
  return fmt::format("{:.0f}bps", bps);
}

namespace {
std::string ms(uint32_t us) { return fmt::format("{:g}", static_cast<double>(us) / 1000.0); }
}  // namespace

std::string ss_info_line(const TcpInfo& i) {
  // iproute2 order: options, congestion control, window scales, timers.
  std::string o = "\t";
  if (i.tcpi_options & 1) o += " ts";
  if (i.tcpi_options & 2) o += " sack";
  o += " " + (i.ca_name.empty() ? std::string("unknown") : i.ca_name);
  if (i.tcpi_options & 4) o += fmt::format(" wscale:{},{}", i.tcpi_snd_wscale, i.tcpi_rcv_wscale);
  o += fmt::format(" rto:{:g} rtt:{}/{} ato:{:g} mss:{} pmtu:{} rcvmss:{} advmss:{} cwnd:{}",
                   i.tcpi_rto / 1000.0, ms(i.tcpi_rtt), ms(i.tcpi_rttvar), i.tcpi_ato / 1000.0,
                   i.tcpi_snd_mss, i.tcpi_pmtu, i.tcpi_rcv_mss, i.tcpi_advmss, i.tcpi_snd_cwnd);
  // ss prints ssthresh only once it is finite (below TCP_INFINITE_SSTHRESH's
  // display cut-off of 0xFFFF).
  if (i.tcpi_snd_ssthresh < 0xFFFF) o += fmt::format(" ssthresh:{}", i.tcpi_snd_ssthresh);
  o += fmt::format(" bytes_sent:{} bytes_retrans:{} bytes_acked:{} bytes_received:{}", i.tcpi_bytes_sent,
                   i.tcpi_bytes_retrans, i.tcpi_bytes_acked, i.tcpi_bytes_received);
  o += fmt::format(" segs_out:{} segs_in:{} data_segs_out:{} data_segs_in:{}", i.tcpi_segs_out, i.tcpi_segs_in,
                   i.tcpi_data_segs_out, i.tcpi_data_segs_in);
  if (i.tcpi_rtt)
    o += " send " + ss_rate(static_cast<double>(i.tcpi_snd_cwnd) * i.tcpi_snd_mss * 8e6 / i.tcpi_rtt);
  o += fmt::format(" lastsnd:{} lastrcv:{} lastack:{}", i.tcpi_last_data_sent, i.tcpi_last_data_recv,
                   i.tcpi_last_ack_recv);
  if (i.tcpi_pacing_rate) o += " pacing_rate " + ss_rate(static_cast<double>(i.tcpi_pacing_rate) * 8);
  if (i.tcpi_delivery_rate) o += " delivery_rate " + ss_rate(static_cast<double>(i.tcpi_delivery_rate) * 8);
  o += fmt::format(" delivered:{}", i.tcpi_delivered);
  if (i.tcpi_delivery_rate_app_limited) o += " app_limited";
  if (i.tcpi_busy_time) o += fmt::format(" busy:{}ms", i.tcpi_busy_time / 1000);
  if (i.tcpi_rwnd_limited) o += fmt::format(" rwnd_limited:{}ms", i.tcpi_rwnd_limited / 1000);
  if (i.tcpi_sndbuf_limited) o += fmt::format(" sndbuf_limited:{}ms", i.tcpi_sndbuf_limited / 1000);
  if (i.tcpi_unacked) o += fmt::format(" unacked:{}", i.tcpi_unacked);
  if (i.tcpi_retrans || i.tcpi_total_retrans) o += fmt::format(" retrans:{}/{}", i.tcpi_retrans, i.tcpi_total_retrans);
  if (i.tcpi_lost) o += fmt::format(" lost:{}", i.tcpi_lost);
  if (i.tcpi_sacked) o += fmt::format(" sacked:{}", i.tcpi_sacked);
  if (i.tcpi_dsack_dups) o += fmt::format(" dsack_dups:{}", i.tcpi_dsack_dups);
  o += fmt::format(" reordering:{}", i.tcpi_reordering);
  if (i.tcpi_reord_seen) o += fmt::format(" reord_seen:{}", i.tcpi_reord_seen);
  if (i.tcpi_rcv_rtt) o += fmt::format(" rcv_rtt:{}", ms(i.tcpi_rcv_rtt));
  o += fmt::format(" rcv_space:{} rcv_ssthresh:{}", i.tcpi_rcv_space, i.tcpi_rcv_ssthresh);
  if (i.tcpi_notsent_bytes) o += fmt::format(" notsent:{}", i.tcpi_notsent_bytes);
  if (i.tcpi_min_rtt) o += fmt::format(" minrtt:{}", ms(i.tcpi_min_rtt));
  o += fmt::format(" snd_wnd:{} rcv_wnd:{}", i.tcpi_snd_wnd, i.tcpi_rcv_wnd);
  // iproute2 tcp_stats_print: "if (s->rehash) out(\" rehash:%u\", ...)" (RTO and PLB moves).
  if (i.tcpi_rehash) o += fmt::format(" rehash:{}", i.tcpi_rehash);
  // weir's own: the slow-start exit, which Linux shows only via tracepoints.
  static constexpr const char* kExit[] = {"none", "ack-train", "delay", "loss", "css"};
  if (i.hystart_exit_reason && i.hystart_exit_reason < std::size(kExit))
    o += fmt::format(" hystart_exit:{}@{}", kExit[i.hystart_exit_reason], i.hystart_exit_cwnd);
  return o + "\n";
}

// iproute2 ss print_ms_timer: minutes, then seconds ("sec" when no
// milliseconds follow, "." when they do), then milliseconds as "%03dms";
// seconds past 9 drop the milliseconds, minutes past 9 the seconds too.
std::string ss_ms_timer(int64_t timeout_ms) {
  const int64_t minutes = timeout_ms / 1000 / 60;
  int64_t secs = timeout_ms / 1000 % 60;
  int64_t msecs = timeout_ms % 1000;
  std::string o;
  if (minutes) {
    msecs = 0;
    o = fmt::format("{}min", minutes);
    if (minutes > 9) secs = 0;
  }
  if (secs) {
    if (secs > 9) msecs = 0;
    o += fmt::format("{}{}", secs, msecs ? "." : "sec");
  }
  if (msecs) o += fmt::format("{:03}ms", msecs);
  return o;
}

namespace {

// A timewait sock's row: no queues (inet_twsk_diag_fill leaves them 0) and,
// as `ss -o` prints it, "timer:(timewait,<left>,0)" on the same line.
std::string ss_timewait_row(const TimewaitSock& tw, bool timer) {
  std::string o = fmt::format("{:<11}{:>7} {:>7} {:>40} {:>40}", ss_state_name(tw.state), 0, 0,
                              tw.local.to_string(), tw.remote.to_string());
  if (timer) o += fmt::format(" timer:(timewait,{},0)", ss_ms_timer(tw.expires.ms()));
  return o + "\n";
}

}  // namespace

std::string format_ss(const Stack& st, const std::vector<SocketId>& socks, Time, bool info) {
  std::string o = fmt::format("{:<11}{:>7} {:>7} {:>40} {:>40}\n", "State", "Recv-Q", "Send-Q",
                              "Local Address:Port", "Peer Address:Port");
  for (SocketId s : socks) {
    auto ti = st.tcp_info(s);
    if (!ti) continue;
    int inq = 0, outq = 0;
    st.ioctl(s, SIOCINQ, &inq);
    st.ioctl(s, SIOCOUTQ, &outq);
    auto le = st.local_endpoint(s);
    auto re = st.remote_endpoint(s);
    std::string local = le ? le->to_string() : "*:*";
    std::string peer = re ? re->to_string() : "*:*";
    o += fmt::format("{:<11}{:>7} {:>7} {:>40} {:>40}\n", ss_state_name(ti->tcpi_state), inq, outq, local, peer);
    if (info && ti->tcpi_state != 10) o += ss_info_line(*ti);
  }
  // The timewait socks are not the application's (an orphan's has no
  // socket left), but ss lists them: inet_diag dumps the established hash.
  for (const TimewaitSock& tw : st.timewait_socks()) o += ss_timewait_row(tw, info);
  return o;
}

std::string format_nstat(const Counters& c, bool zeros) {
  std::string o = "#kernel\n";
  for (size_t i = 0; i < static_cast<size_t>(Counter::kCount); ++i) {
    uint64_t v = c.v[i];
    if (!v && !zeros) continue;
    o += fmt::format("{:<32}{:<15}{}\n", counter_name(static_cast<Counter>(i)), v, "0.0");
  }
  return o;
}

}  // namespace weir::driver
