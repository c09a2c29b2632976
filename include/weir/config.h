// Stack configuration: Linux's sysctl names and defaults (net.ipv4.tcp_*),
// so `sysctl -w` habits and packetdrill's set-up lines carry over.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weir/time.h"

namespace weir {

struct StackConfig {
  // Buffers: min, default, max (bytes), as net.ipv4.tcp_rmem / tcp_wmem.
  std::array<uint32_t, 3> tcp_rmem{4096, 131072, 6291456};
  std::array<uint32_t, 3> tcp_wmem{4096, 16384, 4194304};
  bool tcp_moderate_rcvbuf = true;
  int tcp_adv_win_scale = 1;

  // Options negotiated on SYN.
  bool tcp_timestamps = true;
  bool tcp_sack = true;
  bool tcp_dsack = true;
  bool tcp_window_scaling = true;
  int tcp_ecn = 2;  // 2: accept ECN when asked, never ask (Linux default)

  // IP header fields (RFC 791 TTL, RFC 2474 DS field). A socket's IP_TTL /
  // IPV6_UNICAST_HOPS of -1 takes ip_default_ttl (net.ipv4.ip_default_ttl,
  // 1..255). tcp_reflect_tos 1: a passive open's SYN-ACK and child take the
  // SYN's DSCP (Linux tcp_v4_send_synack / tcp_v4_syn_recv_sock).
  int ip_default_ttl = 64;
  // The IPv6 counterpart: net.ipv6.conf.{all,default}.hop_limit (1..255),
  // the hop limit of IPv6 packets whose socket has IPV6_UNICAST_HOPS -1
  // (Linux ip6_dst_hoplimit: the device's conf hop_limit; weir has one).
  int ipv6_hop_limit = 64;
  int tcp_reflect_tos = 0;
  // IPv6 flow labels from the transmit hash (tcp/flow_label.h; RFC 6437).
  // net.ipv6.auto_flowlabels 0..3: off, opt-out (Linux's default; a socket
  // may turn it off with IPV6_AUTOFLOWLABEL), opt-in, forced.
  // net.ipv6.flowlabel_state_ranges 1 sets the label's top bit (0x80000) on
  // automatic labels. net.core.txrehash 1: a socket draws a new transmit
  // hash (and label) on a retransmission timeout or duplicate data; a
  // socket takes it at creation (SO_TXREHASH changes it).
  int auto_flowlabels = 1;
  int flowlabel_state_ranges = 0;
  int txrehash = 1;

  // Connection set-up and teardown.
  int tcp_syn_retries = 6;
  int tcp_synack_retries = 5;
  int tcp_retries1 = 3;
  int tcp_retries2 = 15;
  int tcp_orphan_retries = 0;
  int tcp_fin_timeout_s = 60;
  // The urgent pointer's reading: 0 (Linux's default, RFC 6093 §4) points
  // past the urgent byte, 1 at it (RFC 1122 §4.2.2.4). Receive side only.
  bool tcp_stdurg = false;
  // connect() may take over a TIME-WAIT tuple (timestamps on): 0 never,
  // 1 always, 2 on loopback only; after tcp_tw_reuse_delay ms in TIME-WAIT.
  int tcp_tw_reuse = 2;
  uint32_t tcp_tw_reuse_delay = 1000;
  // At most this many timewait socks (TIME-WAIT and an orphan's FIN-WAIT-2
  // stage); past it a connection closes without TIME-WAIT and
  // TcpExtTCPTimeWaitOverflow counts. Linux tcp_sk_init sets half the
  // established hash (ehash_mask + 1) / 2; 4096 is its value for 8192
  // buckets (alloc_large_system_hash, scale 17: a 1 GB machine), the same
  // small table tcp_max_syn_backlog's 128 (max(128, buckets / 128)) implies.
  int tcp_max_tw_buckets = 4096;
  // The ports connect() and bind(port 0) choose from (low, high).
  std::array<uint32_t, 2> ip_local_port_range{32768, 60999};
  // Ports connect() and bind(port 0) never choose, as closed ranges (Linux
  // ip_local_reserved_ports, written "8080,9148-9150"). An explicit bind()
  // may still take them.
  std::vector<std::array<uint16_t, 2>> ip_local_reserved_ports;
  int tcp_syncookies = 1;
  // RFC 7413 Fast Open: Linux's TFO_* bits (tcp/fastopen.h); 1 = client only.
  int tcp_fastopen = 1;
  // Linux tcp_fastopen_blackhole_timeout_sec: the first pause of active
  // Fast Open after a suspected middlebox black hole; 0 (Linux's default
  // since 5.14) never pauses.
  int tcp_fastopen_blackhole_timeout_sec = 0;
  // The server's cookie key(s), "xxxxxxxx-xxxxxxxx-xxxxxxxx-xxxxxxxx[,backup]";
  // empty: one drawn on first use from a generator seeded with `secret`
  // (Linux picks a random key on first use).
  std::string tcp_fastopen_key;
  int tcp_max_syn_backlog = 128;
  uint32_t tcp_min_snd_mss = 48;
  uint32_t tcp_base_mss = 1024;
  // RFC 4821 PLPMTUD (tcp/mtu_probe.h): 0 off, 1 after a black hole, 2 always.
  int tcp_mtu_probing = 0;
  uint32_t tcp_probe_threshold = 8;     // bytes: the search stops below this range
  uint32_t tcp_probe_interval_s = 600;  // the search restarts after this long
  uint32_t tcp_mtu_probe_floor = 48;    // black-hole halving stops at this MSS
  int somaxconn = 4096;
  // `ip route ... quickack 1` (Linux RTAX_QUICKACK) on every route of the
  // host: the receiver ACKs every data segment at once (tcp_in_quickack_mode),
  // as stacks without delayed ACKs do.
  bool route_quickack = false;

  // Keepalive (seconds).
  int tcp_keepalive_time_s = 7200;
  int tcp_keepalive_intvl_s = 75;
  int tcp_keepalive_probes = 9;

  // Loss recovery and congestion control.
  std::string tcp_congestion_control = "cubic";
  int tcp_recovery = 1;  // bit 0: RACK-TLP loss detection
  int tcp_early_retrans = 3;
  int tcp_frto = 2;
  int tcp_reordering = 3;
  int tcp_max_reordering = 300;
  int tcp_slow_start_after_idle = 1;
  int tcp_thin_linear_timeouts = 0;
  int tcp_min_rtt_wlen_s = 300;
  int tcp_pacing_ss_ratio = 200;
  int tcp_pacing_ca_ratio = 120;
  int tcp_tso_win_divisor = 3;
  // Linux tcp_retrans_collapse (a u8, default 1): a small retransmission
  // absorbs the packets after it (tcp_retrans_try_collapse); 0 never.
  int tcp_retrans_collapse = 1;
  uint32_t tcp_min_tso_segs = 2;  // the smallest burst tcp_tso_autosize chooses
  uint32_t tcp_notsent_lowat = 0xffffffff;
  uint32_t tcp_limit_output_bytes = 1048576;  // accepted for scripts: TSQ limits a device queue weir does not have
  int tcp_challenge_ack_limit = 1000;  // per second, global
  uint32_t tcp_invalid_ratelimit_ms = 500;
  uint32_t initial_cwnd = 10;          // RFC 6928, Linux TCP_INIT_CWND
  // net.core.default_qdisc: "fq" paces every socket at its pacing rate (Linux
  // sch_fq honours TCP's departure stamps); otherwise only BBR and
  // SO_MAX_PACING_RATE sockets are paced (tcp/pacing.h).
  std::string default_qdisc = "pfifo_fast";

  // CUBIC's module parameters (/sys/module/tcp_cubic/parameters/*), per
  // stack; keys "tcp_cubic_<name>". hystart 2 selects HyStart++ (RFC 9406).
  int tcp_cubic_hystart = 1;
  int tcp_cubic_hystart_detect = 3;
  uint32_t tcp_cubic_hystart_low_window = 16;
  uint32_t tcp_cubic_hystart_ack_delta_us = 2000;
  bool tcp_cubic_fast_convergence = true;
  uint32_t tcp_cubic_beta = 717;
  uint32_t tcp_cubic_bic_scale = 41;
  bool tcp_cubic_tcp_friendliness = true;
  uint32_t tcp_cubic_initial_ssthresh = 0;

  // Protective Load Balancing (net.ipv4.tcp_plb_*, tcp/cc/plb.h): DCTCP
  // moves a connection congested for tcp_plb_rehash_rounds rounds (CE share
  // >= tcp_plb_cong_thresh / 256) to a new flow label. Linux's defaults.
  int tcp_plb_enabled = 0;
  int tcp_plb_idle_rehash_rounds = 3;
  int tcp_plb_rehash_rounds = 12;
  int tcp_plb_suspend_rto_sec = 60;
  int tcp_plb_cong_thresh = 128;

  // The five seed bugs (../shared/seeds, docs/lab.md "Seed contrasts"),
  // off by default and never meant for use: each puts back one shape weir
  // must not have, so the lab can show that its experiment tells the bug
  // from the fix (an experiment that cannot fail proves nothing). Keys
  // "fault_seed<NNN>_<shape>", set per host in a scenario's [contrast].
  //  000 Inferno: the usable window wraps when the peer's right edge
  //      retreats behind snd.nxt, and the sender runs past the edge.
  //  001 Linux before 6.18: with window scaling off, rcv_wnd, rcv_ssthresh
  //      and window_clamp grow past the 65535 the header can carry.
  //  002 gVisor: a packet SACKed outside recovery and then cumulatively
  //      ACKed stays counted in flight until recovery, an RTO or an empty
  //      queue recounts it.
  //  003 Linux 6.6.85: a non-SACK connection held at high_seq takes a
  //      cleared retrans_stamp as proof that a retransmission was spurious.
  //  004 Linux 5.8-6.13: CUBIC's HyStart starts no new round below
  //      hystart_low_window, so its first ACK-train round starts late.
  bool fault_seed000_usable_wraps = false;
  bool fault_seed001_rcv_wnd_unclamped = false;
  bool fault_seed002_sacked_acked_leak = false;
  bool fault_seed003_undo_without_proof = false;
  bool fault_seed004_hystart_round_start = false;

  // Timer constants Linux compiles in (include/net/tcp.h), settable here.
  Duration rto_initial = Duration::s(1);     // TCP_TIMEOUT_INIT, RFC 6298 (2.1)
  Duration rto_min = Duration::ms(200);      // TCP_RTO_MIN
  Duration rto_max = Duration::s(120);       // TCP_RTO_MAX
  Duration delack_min = Duration::ms(40);    // TCP_DELACK_MIN
  Duration delack_max = Duration::ms(200);   // TCP_DELACK_MAX
  Duration ato_min = Duration::ms(40);       // TCP_ATO_MIN

  // A secret for RFC 6528 ISNs and SYN cookies, supplied by the driver so
  // that runs are reproducible.
  uint64_t secret = 0x5745495221u;

  // Sets a key by its sysctl name ("net.ipv4.tcp_sack" or "tcp_sack") from
  // its text value ("1", "4096 87380 6291456", "cubic"). Returns an empty
  // string on success, otherwise what is wrong.
  std::string set(std::string_view key, std::string_view value);
};

}  // namespace weir
