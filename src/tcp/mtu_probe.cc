// RFC 4821 PLPMTUD search state, as Linux keeps it in icsk_mtup (see the header).
#include "tcp/mtu_probe.h"

#include <algorithm>

namespace weir::tcp {

// Linux __tcp_mtu_to_mss + tcp_mtu_to_mss: MTU less the fixed headers,
// clamped to the peer's MSS, at least tcp_min_snd_mss, less the options.
uint32_t MssMath::mtu_to_mss(uint32_t mtu) const {
  int64_t mss = int64_t{mtu} - net_hdr - 20;
  mss = std::min<int64_t>(mss, mss_clamp);
  mss = std::max<int64_t>(mss, min_snd_mss);
  mss -= opt_len;
  return static_cast<uint32_t>(std::max<int64_t>(mss, 1));
}

// Linux tcp_mtup_init: RFC 4821 §7.2 starts the search between the base MSS
// (search_low, tcp_base_mss: RFC 4821 §7.2 suggests 1024 bytes) and the
// largest MTU the peer's MSS allows (search_high).
void MtuProbe::init(const MtupConfig& cfg, const MssMath& m, Time now) {
  enabled_ = cfg.mtu_probing > 1;
  search_high_ = m.mss_clamp + 20 + m.net_hdr;
  search_low_ = m.mss_to_mtu(cfg.base_mss);
  probe_size_ = 0;
  if (enabled_) probe_timestamp_ = now;
}

// Linux tcp_sync_mss: the path MTU caps the search; while searching the MSS
// stays at what search_low proved (RFC 4821 §7.3: use the largest size
// known to work).
uint32_t MtuProbe::sync(uint32_t pmtu, uint32_t mss_now, const MssMath& m) {
  if (search_high_ > pmtu) search_high_ = pmtu;
  if (enabled_) mss_now = std::min(mss_now, m.mtu_to_mss(search_low_));
  return mss_now;
}

// Linux tcp_mtu_check_reprobe: RFC 4821 §7.7, after tcp_probe_interval the
// search restarts from today's MSS up to the peer's limit.
void MtuProbe::check_reprobe(const MtupConfig& cfg, const MssMath& m, uint32_t mss_now, Time now) {
  if (now - probe_timestamp_ < cfg.probe_interval) return;
  probe_size_ = 0;
  search_high_ = m.mss_clamp + 20 + m.net_hdr;
  search_low_ = m.mss_to_mtu(mss_now);
  probe_timestamp_ = now;
}

// Linux tcp_mtu_probe, the tests before the probe is built. RFC 4821 §7.4:
// one probe at a time, not during loss recovery, with enough data behind it
// that a lost probe is detected by duplicate ACKs (size_needed: the probe
// and reordering + 1 MSS-sized segments) and room in both windows.
MtuProbe::Decision MtuProbe::decide(const MtupConfig& cfg, const MssMath& m, const ProbeInput& in) {
  // Linux: not probing already, CA_Open, cwnd >= 11, and no SACK blocks in
  // our ACKs (variable option length throws the sizes off).
  if (!enabled_ || probe_size_ != 0 || !in.ca_open || in.cwnd < 11 || in.sack_pending) return {};
  const uint32_t probe = m.mtu_to_mss((search_high_ + search_low_) >> 1);
  const uint64_t size_needed = probe + (uint64_t{in.reordering} + 1) * in.mss_cache;
  const int64_t interval = int64_t{search_high_} - int64_t{search_low_};
  // RFC 4821 §7.6.1: the search ends when the range is below the threshold.
  if (probe > m.mtu_to_mss(search_high_) || interval < int64_t{cfg.probe_threshold}) {
    check_reprobe(cfg, m, in.mss_cache, in.now);
    return {};
  }
  if (in.unsent < size_needed || in.snd_wnd < size_needed) return {};
  if (in.wnd_room < size_needed) return {Verdict::kWait, 0};
  // Linux: wait for cwnd to drain (the probe and one more), unless idle.
  if (in.in_flight + 2 > in.cwnd) return {in.in_flight ? Verdict::kWait : Verdict::kNo, 0};
  return {Verdict::kProbe, probe};
}

void MtuProbe::on_probe_sent(Seq32 start, Seq32 end, const MssMath& m) {
  probe_size_ = m.mss_to_mtu(seq_len(start, end));
  probe_start_ = start;
  probe_end_ = end;
}

// RFC 4821 §7.6.2: an acknowledged probe raises the size known to work.
void MtuProbe::on_success() {
  search_low_ = probe_size_;
  probe_size_ = 0;
}

// RFC 4821 §7.6.3: a lost probe (and no other loss) lowers the upper bound.
void MtuProbe::on_failure() {
  search_high_ = probe_size_ - 1;
  probe_size_ = 0;
}

// Linux tcp_mtu_probing: RFC 4821 §7.8 black-hole detection. Repeated
// timeouts turn the search on (tcp_mtu_probing 1), or, when it is on
// already, halve the MSS known to work, bounded by tcp_base_mss above and
// tcp_mtu_probe_floor / tcp_min_snd_mss below.
void MtuProbe::on_blackhole(const MtupConfig& cfg, const MssMath& m, Time now) {
  if (cfg.mtu_probing == 0) return;
  if (!enabled_) {
    enabled_ = true;
    probe_timestamp_ = now;
    return;
  }
  uint32_t mss = m.mtu_to_mss(search_low_) >> 1;
  mss = std::min(cfg.base_mss, mss);
  mss = std::max({mss, cfg.probe_floor, m.min_snd_mss});
  search_low_ = m.mss_to_mtu(mss);
}

// Linux tcp_mtup_probe_success: the window keeps its size in bytes of the
// path MTU: cwnd * mtu(mss_cache) / probe_size, at least one packet.
uint32_t MtuProbe::cwnd_after_success(uint32_t cwnd, uint32_t probe_mtu, const MssMath& m,
                                      uint32_t mss_cache) const {
  if (probe_mtu == 0) return cwnd;
  const uint64_t val = uint64_t{cwnd} * m.mss_to_mtu(mss_cache) / probe_mtu;
  return static_cast<uint32_t>(std::max<uint64_t>(val, 1));
}

}  // namespace weir::tcp
