// tcp_info with Linux's field names and units (include/uapi/linux/tcp.h):
// times in microseconds unless the name says otherwise, windows in bytes
// where Linux reports bytes and in segments where Linux reports segments.
#pragma once

#include <cstdint>
#include <string>

namespace weir {

// TCP_CA_* states (include/net/tcp.h).
enum class CaState : uint8_t { Open = 0, Disorder = 1, CWR = 2, Recovery = 3, Loss = 4 };
const char* to_string(CaState s);

struct TcpInfo {
  uint8_t tcpi_state = 0;  // Linux TCP_* numbering: 1 ESTABLISHED .. 12 NEW_SYN_RECV
  uint8_t tcpi_ca_state = 0;
  uint8_t tcpi_retransmits = 0;
  uint8_t tcpi_probes = 0;
  uint8_t tcpi_backoff = 0;
  uint8_t tcpi_options = 0;  // TCPI_OPT_TIMESTAMPS 1, SACK 2, WSCALE 4, ECN 8
  uint8_t tcpi_snd_wscale = 0;
  uint8_t tcpi_rcv_wscale = 0;
  uint8_t tcpi_delivery_rate_app_limited = 0;

  uint32_t tcpi_rto = 0;
  uint32_t tcpi_ato = 0;
  uint32_t tcpi_snd_mss = 0;
  uint32_t tcpi_rcv_mss = 0;

  uint32_t tcpi_unacked = 0;  // packets_out
  uint32_t tcpi_sacked = 0;   // sacked_out
  uint32_t tcpi_lost = 0;     // lost_out
  uint32_t tcpi_retrans = 0;  // retrans_out
  uint32_t tcpi_fackets = 0;

  uint32_t tcpi_last_data_sent = 0;  // ms
  uint32_t tcpi_last_ack_sent = 0;   // ms (not tracked by Linux either: 0)
  uint32_t tcpi_last_data_recv = 0;  // ms
  uint32_t tcpi_last_ack_recv = 0;   // ms

  uint32_t tcpi_pmtu = 0;
  uint32_t tcpi_rcv_ssthresh = 0;
  uint32_t tcpi_rtt = 0;     // srtt, us
  uint32_t tcpi_rttvar = 0;  // us
  uint32_t tcpi_snd_ssthresh = 0;  // segments
  uint32_t tcpi_snd_cwnd = 0;      // segments
  uint32_t tcpi_advmss = 0;
  uint32_t tcpi_reordering = 0;

  uint32_t tcpi_rcv_rtt = 0;
  uint32_t tcpi_rcv_space = 0;
  uint32_t tcpi_total_retrans = 0;

  uint64_t tcpi_pacing_rate = 0;      // bytes/s
  uint64_t tcpi_max_pacing_rate = 0;  // bytes/s
  uint64_t tcpi_bytes_acked = 0;
  uint64_t tcpi_bytes_received = 0;
  uint32_t tcpi_segs_out = 0;
  uint32_t tcpi_segs_in = 0;

  uint32_t tcpi_notsent_bytes = 0;
  uint32_t tcpi_min_rtt = 0;  // us
  uint32_t tcpi_data_segs_in = 0;
  uint32_t tcpi_data_segs_out = 0;

  uint64_t tcpi_delivery_rate = 0;  // bytes/s

  uint64_t tcpi_busy_time = 0;       // us
  uint64_t tcpi_rwnd_limited = 0;    // us
  uint64_t tcpi_sndbuf_limited = 0;  // us

  uint32_t tcpi_delivered = 0;
  uint32_t tcpi_delivered_ce = 0;

  uint64_t tcpi_bytes_sent = 0;
  uint64_t tcpi_bytes_retrans = 0;
  uint32_t tcpi_dsack_dups = 0;
  uint32_t tcpi_reord_seen = 0;

  uint32_t tcpi_rcv_ooopack = 0;
  uint32_t tcpi_snd_wnd = 0;
  uint32_t tcpi_rcv_wnd = 0;
  uint32_t tcpi_rehash = 0;
  uint16_t tcpi_total_rto = 0;
  uint16_t tcpi_total_rto_recoveries = 0;
  uint32_t tcpi_total_rto_time = 0;  // ms

  // Congestion-control state, for the lab (not in Linux's tcp_info; Linux
  // reports these through INET_DIAG_VEGASINFO / BBRINFO).
  std::string ca_name;
  uint32_t cubic_wmax = 0;       // segments
  uint32_t cubic_k_ms = 0;
  uint32_t hystart_exit_cwnd = 0;
  uint8_t hystart_exit_reason = 0;  // 0 none, 1 ACK train, 2 delay, 3 loss, 4 HyStart++ CSS end
  uint64_t cubic_epoch_start_ms = 0;  // virtual time (ms) the current CUBIC epoch began; 0: none
  // BBR (Linux struct tcp_bbr_info, plus the mode).
  uint8_t bbr_mode = 0;             // 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT
  uint64_t bbr_bw = 0;              // bytes/s, max-filtered bottleneck bandwidth
  uint32_t bbr_min_rtt = 0;         // us
  uint32_t bbr_pacing_gain = 0;     // << 8
  uint32_t bbr_cwnd_gain = 0;       // << 8
};

}  // namespace weir
