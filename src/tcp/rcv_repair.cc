// The receive side of TCP_REPAIR (Linux tcp.c: tcp_send_rcvq,
// tcp_repair_options_est, tcp_repair_set_window): a restored connection's
// receive queue and window, set by the application instead of the wire.
#include "tcp/receiver.h"

namespace weir::tcp {

// Linux tcp_send_rcvq: the bytes become an skb at RCV.NXT queued by
// tcp_queue_rcv, so RCV.NXT moves past them and a later read returns them.
// The buffer bounds it as for arriving data (tcp_try_rmem_schedule fails:
// -ENOMEM); no ACK is scheduled, nothing was received from the peer.
Errc Receiver::repair_queue_data(std::span<const uint8_t> data) {
  if (data.empty()) return Errc::kOk;
  if (charged() + data.size() > rcvbuf_) return Errc::kNoMem;
  rcvq_.append(data);
  rcv_nxt_ += static_cast<uint32_t>(data.size());
  bytes_received_ += data.size();  // tcp_rcv_nxt_update
  compressed_ack_rcv_nxt_ = rcv_nxt_;
  return Errc::kOk;
}

// Linux tcp_repair_options_est sets rx_opt.{wscale_ok, rcv_wscale, sack_ok,
// tstamp_ok} in place. weir's receiver capped its windows at 65535 when the
// repaired connect() knew of no scaling (on_syn, RFC 7323 §2.2); with a
// shift the clamp may grow to what it expresses, within the buffer
// (tcp_init_buffer_space's bound).
void Receiver::repair_options(Time now, bool wscale_ok, uint8_t rcv_wscale, bool sack_ok, bool timestamps) {
  if (wscale_ok) {
    wscale_ok_ = true;
    rcv_wscale_ = rcv_wscale;
    window_clamp_ = max_window();
    rcv_ssthresh_ = std::max(rcv_ssthresh_, std::min(rcv_wnd_, window_clamp_));
    init_buffer_space(now);
  }
  sack_ok_ = sack_ok_ || sack_ok;
  timestamps_ = timestamps_ || timestamps;
}

// Linux tcp_repair_set_window: rcv_wnd and rcv_wup as checkpointed, so the
// first segment announces the window the peer last saw (RFC 9293 §3.8.6.2.2:
// the right edge never moves left).
void Receiver::repair_window(uint32_t rcv_wnd, Seq32 rcv_wup) {
  rcv_wnd_ = rcv_wnd;
  rcv_wup_ = rcv_wup;
}

}  // namespace weir::tcp
