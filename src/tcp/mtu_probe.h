// Packetization-Layer Path MTU Discovery (RFC 4821) as Linux does it
// (icsk_mtup; tcp_mtu_probe, tcp_mtup_probe_success/_failed,
// tcp_mtu_probing): a binary search for the path MTU between search_low
// (known to work) and search_high (not known to fail), one probe segment at
// a time, larger than the MSS and built from data waiting in the send queue.
//
// Sysctls: tcp_mtu_probing 0 (off; only the RTO black-hole rule may turn it
// on, and only when non-zero), 1 (on after an ICMP-less black hole is
// detected), 2 (always on); tcp_base_mss (the starting search_low),
// tcp_probe_threshold (stop when high - low is smaller), tcp_probe_interval
// (restart the search after that long), tcp_mtu_probe_floor (black-hole
// floor).
//
// The unit holds only the search state; the connection feeds it the MSS
// arithmetic of its headers (MssMath) and the sender's state (ProbeInput).
#pragma once

#include <cstdint>

#include "weir/seq.h"
#include "weir/time.h"

namespace weir::tcp {

// Linux tcp_mtu_to_mss / tcp_mss_to_mtu for one connection: the MSS here is
// the data per segment (options excluded), as tp->mss_cache.
struct MssMath {
  uint32_t net_hdr = 20;       // IPv4 20, IPv6 40 (icsk_af_ops->net_header_len)
  uint32_t opt_len = 0;        // tcp_header_len - sizeof(tcphdr): timestamps 12
  uint32_t mss_clamp = 536;    // rx_opt.mss_clamp: the peer's MSS, TCP_MAXSEG
  uint32_t min_snd_mss = 48;   // tcp_min_snd_mss

  uint32_t mtu_to_mss(uint32_t mtu) const;
  uint32_t mss_to_mtu(uint32_t mss) const { return mss + opt_len + 20 + net_hdr; }
};

struct MtupConfig {
  int mtu_probing = 0;             // tcp_mtu_probing
  uint32_t base_mss = 1024;        // tcp_base_mss
  uint32_t probe_threshold = 8;    // tcp_probe_threshold (bytes)
  Duration probe_interval = Duration::s(600);  // tcp_probe_interval
  uint32_t probe_floor = 48;       // tcp_mtu_probe_floor
};

// What tcp_mtu_probe looks at on the sender.
struct ProbeInput {
  Time now;
  bool ca_open = true;        // icsk_ca_state == TCP_CA_Open
  uint32_t cwnd = 0;          // packets
  uint32_t in_flight = 0;     // tcp_packets_in_flight
  bool sack_pending = false;  // rx_opt.num_sacks || rx_opt.dsack: variable headers
  uint32_t mss_cache = 0;     // tp->mss_cache
  uint32_t reordering = 3;    // tp->reordering
  uint32_t unsent = 0;        // write_seq - snd_nxt
  uint32_t snd_wnd = 0;       // the peer's window
  uint32_t wnd_room = 0;      // tcp_wnd_end - snd_nxt
};

class MtuProbe {
 public:
  enum class Verdict {
    kNo,     // -1: no probe now; send normally
    kWait,   //  0: a probe is due but must wait for the window or cwnd to drain
    kProbe,  //  1: send `size` bytes as one probe now
  };
  struct Decision {
    Verdict verdict = Verdict::kNo;
    uint32_t size = 0;  // payload bytes of the probe
  };

  // Linux tcp_mtup_init (connect, and again when established).
  void init(const MtupConfig& cfg, const MssMath& m, Time now);
  // Linux tcp_sync_mss: a path MTU below search_high lowers it; returns the
  // MSS `mss_now` bounded by search_low's while the search is on.
  uint32_t sync(uint32_t pmtu, uint32_t mss_now, const MssMath& m);
  // Linux tcp_mtu_probe's tests, before it builds the probe.
  Decision decide(const MtupConfig& cfg, const MssMath& m, const ProbeInput& in);
  // The probe [start, end) left: remember it (probe_size is its MTU).
  void on_probe_sent(Seq32 start, Seq32 end, const MssMath& m);
  // Linux tcp_clean_rtx_queue: the probe is acknowledged once SND.UNA
  // reaches its end.
  bool acked_by(Seq32 snd_una) const { return probe_size_ != 0 && probe_end_ <= snd_una; }
  // Linux tcp_fastretrans_alert: a loss while SND.UNA is the probe's start
  // is the probe's loss, not congestion.
  bool lost_at(Seq32 snd_una) const { return probe_size_ != 0 && snd_una == probe_start_; }
  // Linux tcp_mtup_probe_success: search_low = probe_size; the caller
  // re-syncs the MSS and rescales cwnd (new_cwnd).
  void on_success();
  // Linux tcp_mtup_probe_failed: search_high = probe_size - 1.
  void on_failure();
  // Linux tcp_mtu_probing on an RTO past tcp_retries1 (black hole): turn
  // the search on (tcp_mtu_probing >= 1), else halve search_low's MSS.
  void on_blackhole(const MtupConfig& cfg, const MssMath& m, Time now);

  // Linux tcp_mtup_probe_success: cwnd * mtu(mss_cache) / probe_size.
  uint32_t cwnd_after_success(uint32_t cwnd, uint32_t probe_mtu, const MssMath& m, uint32_t mss_cache) const;

  bool enabled() const { return enabled_; }
  uint32_t search_low() const { return search_low_; }
  uint32_t search_high() const { return search_high_; }
  uint32_t probe_size() const { return probe_size_; }  // MTU of the probe in flight; 0: none

 private:
  void check_reprobe(const MtupConfig& cfg, const MssMath& m, uint32_t mss_now, Time now);

  bool enabled_ = false;
  uint32_t search_low_ = 0;
  uint32_t search_high_ = 0;
  uint32_t probe_size_ = 0;
  Time probe_timestamp_;
  Seq32 probe_start_;
  Seq32 probe_end_;
};

}  // namespace weir::tcp
