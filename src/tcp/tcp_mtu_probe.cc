// RFC 4821 PLPMTUD on the connection: the probe built from the send queue,
// its acknowledgment, its loss and RTO black-hole detection, as Linux's
// tcp_mtu_probe, tcp_mtup_probe_success/_failed and tcp_mtu_probing. The
// search itself (sizes, bounds, conditions) is tcp/mtu_probe.h's.
#include <algorithm>

#include "tcp/connection.h"

namespace weir::tcp {

MssMath Connection::mss_math() const {
  const StackConfig& cfg = env_.cfg();
  MssMath m;
  m.net_hdr = tuple_.remote.addr.is_v4() ? 20 : 40;
  m.opt_len = tcp_options_size();
  // Linux rx_opt.mss_clamp: the peer's MSS, bounded by TCP_MAXSEG.
  m.mss_clamp = opts_.user_mss ? std::min<uint32_t>(peer_mss_, opts_.user_mss) : peer_mss_;
  m.min_snd_mss = cfg.tcp_min_snd_mss;
  return m;
}

MtupConfig Connection::mtup_config() const {
  const StackConfig& cfg = env_.cfg();
  MtupConfig c;
  c.mtu_probing = cfg.tcp_mtu_probing;
  c.base_mss = cfg.tcp_base_mss;
  c.probe_threshold = cfg.tcp_probe_threshold;
  c.probe_interval = Duration::s(cfg.tcp_probe_interval_s);
  c.probe_floor = cfg.tcp_mtu_probe_floor;
  return c;
}

// Linux tcp_mtu_probe: when the search allows, the head of the unsent
// queue goes out as one segment of the probe size (RFC 4821 §7.5: probes
// carry application data), and cwnd gives up one packet for it ("we are
// sending effectively two packets"). kWait holds new data back.
MtuProbe::Verdict Connection::mtu_probe(Time now) {
  if (!mtup_.enabled() || snd_.nxt != sb_.high_data()) return MtuProbe::Verdict::kNo;
  ProbeInput in;
  in.now = now;
  in.ca_open = ca_state_ == CaState::Open;
  in.cwnd = ccs_.snd_cwnd;
  in.in_flight = sb_.in_flight();
  in.sack_pending = sack_ok_ && rcv_.has_sack_blocks();  // without building the blocks
  in.mss_cache = mss_cache_;
  in.reordering = rec_.reordering();
  in.unsent = seq_len(snd_.nxt, write_seq_);
  in.snd_wnd = snd_.wnd;
  in.wnd_room = usable_window();
  const MtuProbe::Decision d = mtup_.decide(mtup_config(), mss_math(), in);
  if (d.verdict != MtuProbe::Verdict::kProbe) return d.verdict;
  const Seq32 start = snd_.nxt;
  const bool sent = send_one(now, start, d.size, false, false, false, std::nullopt);  // one packet
  // Linux: a probe the device refused is resegmented by tcp_write_xmit.
  if (!sent) return MtuProbe::Verdict::kNo;
  skbs_.on_sent(snd_.nxt, snd_.una);
  ccs_.snd_cwnd = std::max<uint32_t>(ccs_.snd_cwnd - 1, 1);
  mtup_.on_probe_sent(start, snd_.nxt, mss_math());
  return MtuProbe::Verdict::kProbe;
}

// Linux tcp_mtup_probe_success (RFC 4821 §7.6.2): the window keeps its size
// in bytes, search_low rises to the probe and the MSS follows.
void Connection::mtu_probe_success(Time now) {
  const MssMath m = mss_math();
  ccs_.prior_ssthresh = cc::current_ssthresh(ccs_);
  ccs_.snd_cwnd = mtup_.cwnd_after_success(ccs_.snd_cwnd, mtup_.probe_size(), m, mss_cache_);
  ccs_.snd_cwnd_cnt = 0;
  ccs_.snd_cwnd_stamp = now;
  ccs_.snd_ssthresh = cc::current_ssthresh(ccs_);
  mtup_.on_success();
  update_mss(pmtu_);
  env_.counters().inc(Counter::TcpExtTCPMTUPSuccess);
}

// Linux tcp_fastretrans_alert's MTU probe failure (RFC 4821 §7.6.3): the
// loss at the probe lowers search_high, is not congestion (the cwnd the
// probe took comes back), and the probe is resent at the MSS
// (tcp_simple_retransmit).
void Connection::mtu_probe_failed(Time now) {
  mtup_.on_failure();
  env_.counters().inc(Counter::TcpExtTCPMTUPFail);
  ++ccs_.snd_cwnd;
  simple_retransmit(now);
}

// Linux tcp_write_timeout -> tcp_mtu_probing, once the retries pass
// tcp_retries1 (RFC 4821 §7.8: a black hole looks like repeated timeouts).
void Connection::mtu_blackhole(Time now) {
  if (env_.cfg().tcp_mtu_probing == 0) return;
  mtup_.on_blackhole(mtup_config(), mss_math(), now);
  update_mss(pmtu_);
}

}  // namespace weir::tcp
