// Receiver set-up, socket options and the advertised window.
// See receiver.h for the calling protocol; rcv_data.cc has segment arrival
// and reads, rcv_ack.cc the delayed-ACK engine and receive-buffer autotuning.
#include "tcp/receiver.h"

#include <algorithm>
#include <bit>

namespace weir::tcp {

ReceiverConfig ReceiverConfig::from(const StackConfig& c) {
  ReceiverConfig r;
  r.tcp_rmem = c.tcp_rmem;
  r.tcp_moderate_rcvbuf = c.tcp_moderate_rcvbuf;
  r.tcp_adv_win_scale = c.tcp_adv_win_scale;
  r.tcp_dsack = c.tcp_dsack;
  r.ato_min = c.ato_min;
  r.delack_min = c.delack_min;
  r.delack_max = c.delack_max;
  r.route_quickack = c.route_quickack;
  r.fault_seed001 = c.fault_seed001_rcv_wnd_unclamped;
  return r;
}

const char* to_string(RcvDrop d) {
  switch (d) {
    case RcvDrop::kNone: return "none";
    case RcvDrop::kDuplicate: return "duplicate";
    case RcvDrop::kOutOfWindow: return "out-of-window";
    case RcvDrop::kZeroWindow: return "zero-window";
    case RcvDrop::kNoMemory: return "no-memory";
    case RcvDrop::kAfterFin: return "after-fin";
  }
  return "?";
}

// The buffer starts at tcp_rmem[1], as Linux sets sk_rcvbuf for a new socket.
Receiver::Receiver(const ReceiverConfig& cfg)
    : cfg_(cfg), rcvbuf_(std::max(cfg.tcp_rmem[1], kMinRcvbuf)) {}

// ---- buffer <-> window ------------------------------------------------------

uint32_t Receiver::space_from_win(uint64_t win) const {
  const int s = cfg_.tcp_adv_win_scale;
  uint64_t sp;
  if (s <= 0) {
    sp = win << std::min(-s, 31);
  } else {
    const uint64_t num = uint64_t{1} << std::min(s, 31);  // win = space * (num-1)/num
    sp = num > 1 ? (win * num + num - 2) / (num - 1) : win;
  }
  return static_cast<uint32_t>(std::min<uint64_t>(sp, UINT32_MAX));
}

// ---- set-up -------------------------------------------------------------------

// Linux tcp_select_initial_window. The window is quantized to whole segments
// and never above 65535 on the SYN (RFC 7323 §2.2: the SYN window is not
// scaled); the shift is sized for the largest buffer the connection may grow
// to (max of tcp_rmem[2] and rmem_max), so autotuning never outgrows it; the
// clamp is capped at what that shift can express (RFC 7323 §2.3).
InitialWindow Receiver::select_initial_window(uint32_t advmss, bool wscale_ok) {
  advmss_ = std::max<uint32_t>(advmss, 1);
  const uint64_t user_clamp = window_clamp_ ? window_clamp_ : (uint64_t{65535} << 14);
  uint64_t space = std::min<uint64_t>(full_space(), user_clamp);
  if (space > advmss_) space = space / advmss_ * advmss_;
  // Seed 001's bug (lab contrast): rcv_wnd took the whole space; only the
  // SYN's field was capped (syn_window()).
  rcv_wnd_ = static_cast<uint32_t>(std::min<uint64_t>(space, cfg_.fault_seed001 ? UINT32_MAX : 65535));

  uint8_t ws = 0;
  if (wscale_ok) {
    uint64_t s = std::max<uint64_t>({space, cfg_.tcp_rmem[2], cfg_.rmem_max});
    s = std::min(s, user_clamp);
    const int shift = static_cast<int>(std::bit_width(s)) - 1 - 15;  // ilog2(s) - 15
    ws = static_cast<uint8_t>(std::clamp(shift, 0, 14));            // RFC 7323 §2.3: <= 14
  }
  rcv_wscale_ = ws;
  wscale_ok_ = wscale_ok;
  window_clamp_ = static_cast<uint32_t>(std::min<uint64_t>(max_window(), user_clamp));
  rcv_ssthresh_ = std::min(rcv_wnd_, window_clamp_);
  initial_selected_ = true;
  return {rcv_wnd_, window_clamp_, rcv_wscale_, syn_window()};
}

uint16_t Receiver::syn_window() const {
  return static_cast<uint16_t>(std::min<uint32_t>(rcv_wnd_, 65535));
}

void Receiver::on_syn(Time now, const RcvNegotiated& n) {
  if (!initial_selected_) select_initial_window(n.advmss, n.wscale_ok);
  advmss_ = std::max<uint32_t>(n.advmss, 1);
  peer_mss_ = n.peer_mss;
  sack_ok_ = n.sack_ok;
  timestamps_ = n.timestamps;
  // RFC 7323 §2.2: without WSopt in both SYNs neither side scales, so every
  // window must fit 16 bits (the Linux fix in seed 001: keep rcv_wnd,
  // rcv_ssthresh and window_clamp within what the peer can be told).
  if (!n.wscale_ok) {
    rcv_wscale_ = 0;
  }
  // Seed 001's bug (lab contrast): the clamp stays sized for the shift we
  // offered, so rcv_ssthresh and rcv_wnd may grow past 65535.
  if (!n.wscale_ok && !cfg_.fault_seed001) {
    window_clamp_ = std::min<uint32_t>(window_clamp_, 65535);
    rcv_wnd_ = std::min<uint32_t>(rcv_wnd_, 65535);
    rcv_ssthresh_ = std::min<uint32_t>(rcv_ssthresh_, 65535);
  }
  wscale_ok_ = n.wscale_ok;
  irs_ = n.irs;
  rcv_nxt_ = irs_ + 1;  // RFC 9293 §3.10.7.3: RCV.NXT = SEG.SEQ + 1
  rcv_wup_ = rcv_nxt_;
  copied_seq_ = rcv_nxt_;
  compressed_ack_rcv_nxt_ = rcv_nxt_;
  // Linux tcp_initialize_rcv_mss: a guess at the peer's segment size,
  // at most 536 until full-sized segments are seen.
  uint32_t hint = std::min({advmss_, peer_mss_, rcv_wnd_ / 2, kMssDefault});
  rcv_mss_ = std::max(hint, kMinMss);
  synced_ = true;
  init_buffer_space(now);
}

// Linux tcp_init_buffer_space: the clamp no larger than the buffer allows,
// rcv_ssthresh under the clamp, and the first autotuning baseline.
void Receiver::init_buffer_space(Time now) {
  space_time_ = now;
  space_seq_ = copied_seq_;
  const uint32_t maxwin = full_space();
  if (window_clamp_ >= maxwin) window_clamp_ = maxwin;
  rcv_ssthresh_ = std::min(rcv_ssthresh_, window_clamp_);
  rcv_space_ = std::min({rcv_ssthresh_, rcv_wnd_, 10 * advmss_});  // TCP_INIT_CWND segments
  if (rcv_space_ == 0) rcv_space_ = advmss_;
}

// ---- socket options -------------------------------------------------------------

// Linux sock_setsockopt(SO_RCVBUF): capped by net.core.rmem_max, doubled for
// overhead, at least SOCK_MIN_RCVBUF, and autotuning off from then on.
Errc Receiver::set_rcvbuf(uint32_t bytes) {
  const uint64_t val = std::min(bytes, cfg_.rmem_max);
  rcvbuf_ = static_cast<uint32_t>(std::max<uint64_t>(val * 2, kMinRcvbuf));
  rcvbuf_locked_ = true;
  return Errc::kOk;
}

// Linux tcp_set_window_clamp (with the seed-001 fix: never above what the
// negotiated shift can express). Zero resets only before the handshake.
Errc Receiver::set_window_clamp(uint32_t bytes) {
  if (bytes == 0) {
    if (synced_) return Errc::kInval;
    window_clamp_ = 0;
    return Errc::kOk;
  }
  apply_window_clamp(std::max(bytes, kMinRcvbuf / 2));
  return Errc::kOk;
}

void Receiver::apply_window_clamp(uint32_t clamp) {
  if (initial_selected_ && !cfg_.fault_seed001) clamp = std::min(clamp, max_window());
  const uint32_t old = window_clamp_ ? window_clamp_ : max_window();
  if (clamp == old && window_clamp_ != 0) return;
  if (clamp < old) {
    rcv_ssthresh_ = std::min(rcv_ssthresh_, clamp);
  } else {
    rcv_ssthresh_ = std::max(std::min(rcv_wnd_, clamp), rcv_ssthresh_);
  }
  window_clamp_ = clamp;
}

// Linux tcp_set_rcvlowat: at most half the (possible) buffer; without a
// locked buffer the buffer grows to hold `bytes` of window and the clamp
// follows (through tcp_set_window_clamp, the seed-001 fix).
Errc Receiver::set_rcvlowat(uint32_t bytes) {
  const uint32_t cap = (rcvbuf_locked_ ? rcvbuf_ : cfg_.tcp_rmem[2]) >> 1;
  const uint32_t val = std::min(bytes, cap);
  rcvlowat_ = val ? val : 1;
  if (rcvbuf_locked_) return Errc::kOk;
  const uint32_t space = space_from_win(val);
  if (space > rcvbuf_) {
    rcvbuf_ = space;
    apply_window_clamp(std::max(val, kMinRcvbuf / 2));
  }
  return Errc::kOk;
}

// ---- the advertised window ----------------------------------------------------

// Linux __tcp_select_window: the window the free space supports, with
// receiver-side SWS avoidance (RFC 9293 §3.8.6.2.2): it opens only in steps
// of rcv_ssthresh growth (2 x advmss, tcp_grow_window), unscaled windows are
// whole multiples of the peer's segment size, and when less than half the
// buffer is free a window under 1/16 of it or under one segment is
// announced as zero rather than as a sliver.
uint32_t Receiver::compute_window(uint32_t free, uint32_t allowed) const {
  uint32_t mss = rcv_mss_;
  const uint32_t clamp = window_clamp_ ? window_clamp_ : max_window();
  const uint32_t full = std::min(clamp, allowed);
  const uint32_t gran = 1u << rcv_wscale_;
  if (mss > full) {
    mss = full;
    if (mss == 0) return 0;
  }
  if (free < full / 2) {
    free &= ~(gran - 1);  // down to the scale unit: rounding up must not grow a nearly full window
    if (free < (allowed >> 4) || free < mss) return 0;
  }
  free = std::min(free, rcv_ssthresh_);
  if (rcv_wscale_ != 0) {
    // RFC 7323 §2.4 / Appendix F: a window that is not a multiple of the
    // scale unit is rounded UP, so the shift does not take bytes away from it.
    return static_cast<uint32_t>(std::min<uint64_t>(round_up_to_unit(free), max_window()));
  }
  uint32_t window = rcv_wnd_;
  if (window > free || uint64_t{window} + mss <= free) {
    window = free / mss * mss;  // a whole number of segments
  } else if (mss == full && free > window + full / 2) {
    window = free;
  }
  return window;
}

void Receiver::damp_quickack(uint32_t free, uint32_t allowed) {
  // Linux __tcp_select_window: space is short, stop ACKing every segment.
  const uint32_t clamp = window_clamp_ ? window_clamp_ : max_window();
  if (free < std::min(clamp, allowed) / 2) quick_ = 0;
}

// Linux tcp_select_window, with one change: the recorded window is always a
// whole number of scale units, so rcv.wup + rcv.wnd is exactly the right edge
// the peer computes from the header (Linux may record a few bytes more than
// it announces). A window smaller than what is left of the last one is never
// announced (RFC 9293 §3.8.6.2.2 MUST-35 "never shrink"): the remaining window
// is rounded UP to the scale unit (RFC 7323 §2.4, Appendix F), so the edge never moves
// left, even by the few bytes seed 000's Inferno receiver lost to rounding.
uint16_t Receiver::select_window(Counters& c) {
  if (ack_compressed_unreported_ != 0) flush_counters(c);
  const uint32_t old_win = rcv_wnd_;
  const uint32_t cur = receive_window();
  const uint32_t allowed = full_space();
  const uint32_t free = free_space(allowed);
  damp_quickack(free, allowed);  // changes quick_ only, not the window's inputs
  uint32_t nw = compute_window(free, allowed);
  if (nw < cur) {
    if (nw == 0) c.inc(Counter::TcpExtTCPWantZeroWindowAdv);
    nw = cur;
  }
  // Seed 001's bug (lab contrast): Linux before the fix recorded rcv_wnd
  // before capping the header's value (tcp_select_window).
  const uint64_t cap = cfg_.fault_seed001 ? UINT32_MAX : max_window();
  nw = static_cast<uint32_t>(std::min<uint64_t>(round_up_to_unit(nw), cap));
  rcv_wnd_ = nw;
  rcv_wup_ = rcv_nxt_;
  nw = std::min(nw, max_window());
  const auto field = static_cast<uint16_t>(nw >> rcv_wscale_);
  if (field == 0) {
    if (old_win != 0) c.inc(Counter::TcpExtTCPToZeroWindowAdv);
  } else if (old_win == 0) {
    c.inc(Counter::TcpExtTCPFromZeroWindowAdv);
  }
  return field;
}

void Receiver::flush_counters(Counters& c) {
  if (ack_compressed_unreported_ != 0) {
    c.inc(Counter::TcpExtTCPAckCompressed, ack_compressed_unreported_);
    ack_compressed_unreported_ = 0;
  }
}

void Receiver::fill_info(TcpInfo& info) const {
  info.tcpi_rcv_wscale = rcv_wscale_;
  info.tcpi_ato = static_cast<uint32_t>(ato_.us());
  info.tcpi_rcv_mss = rcv_mss_;
  info.tcpi_rcv_ssthresh = rcv_ssthresh_;
  info.tcpi_rcv_rtt = static_cast<uint32_t>(rcv_rtt8_us_ >> 3);
  info.tcpi_rcv_space = rcv_space_;
  info.tcpi_rcv_wnd = rcv_wnd_;
  info.tcpi_bytes_received = bytes_received_;
  info.tcpi_data_segs_in = data_segs_in_;
  info.tcpi_rcv_ooopack = rcv_ooopack_;
}

}  // namespace weir::tcp
