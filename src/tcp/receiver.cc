#include "tcp/receiver.h"

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

Receiver::Receiver(const ReceiverConfig& cfg) : cfg_(cfg), rcvbuf_(cfg.tcp_rmem[1]) {}
InitialWindow Receiver::select_initial_window(uint32_t, bool) { return {}; }
uint16_t Receiver::syn_window() const { return 0; }
void Receiver::on_syn(Time, const RcvNegotiated& n) { irs_ = n.irs; rcv_nxt_ = n.irs + 1; }
Errc Receiver::set_rcvbuf(uint32_t) { return Errc::kOk; }
Errc Receiver::set_window_clamp(uint32_t) { return Errc::kOk; }
Errc Receiver::set_rcvlowat(uint32_t) { return Errc::kOk; }
void Receiver::set_quickack(bool) {}
void Receiver::enter_quickack_mode() {}
bool Receiver::acceptable(Seq32, uint32_t) const { return false; }
DataOutcome Receiver::on_data(Time, const DataSegment&, Duration, Counters&) { return {}; }
ReadResult Receiver::read(Time, std::span<uint8_t>, bool, Counters&) { return {}; }
bool Receiver::window_update_needed() const { return false; }
uint16_t Receiver::select_window(Counters&) { return 0; }
size_t Receiver::sack_blocks(std::span<SeqRange>, size_t) const { return 0; }
void Receiver::on_ack_sent(Time) {}
void Receiver::on_data_sent(Time) {}
bool Receiver::on_delack_timer(Time, Duration, Counters&) { return false; }
uint32_t Receiver::receive_window() const { return 0; }
bool Receiver::in_quickack_mode() const { return false; }
void Receiver::fill_info(TcpInfo&) const {}

}  // namespace weir::tcp
