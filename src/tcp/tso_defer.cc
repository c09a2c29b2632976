// Linux tcp_tso_should_defer (see tso_defer.h) and the connection's hook
// into tcp_write_xmit's loop (Connection::push).
#include "tcp/tso_defer.h"

#include <algorithm>

#include "tcp/connection.h"

namespace weir::tcp {
namespace {

// tcp_max_tso_deferred_mss: with tcp_tso_win_divisor 0, defer only while
// at most this many segments fit (a receiver ACKs every other segment).
constexpr uint64_t kMaxTsoDeferredMss = 3;

}  // namespace

TsoDefer tso_should_defer(const TsoDeferInput& in) {
  if (in.in_recovery) return TsoDefer::kSendNow;
  // Only right after a departure (tcp_wstamp_ns within 1 ms): no bursts
  // after a quiet period. Linux defers up to exactly 1 ms (delta > 0 sends);
  // on virtual time a script's "+.001" is exactly 1 ms, which on a real
  // kernel is always a little more (gtests
  // shutdown-rdwr-send-queue-ack-close.pkt line 30 sends at once), so
  // exactly 1 ms counts as past here.
  if (in.since_last_send >= Duration::ms(1)) return TsoDefer::kSendNow;
  const uint64_t mss = in.mss;
  const uint64_t cong_win = uint64_t{in.cwnd - std::min(in.in_flight, in.cwnd)} * mss;
  const uint64_t limit = std::min(in.send_win, cong_win);
  if (limit >= uint64_t{in.max_segs} * mss) return TsoDefer::kSendNow;  // a full-sized TSO skb fits
  // A skb in the middle of the queue gets no more data: send it if it fits.
  if (!in.skb_is_tail && limit >= in.skb_len) return TsoDefer::kSendNow;
  if (in.win_divisor > 0) {
    // At least a fraction of the window is available: use it.
    const uint64_t chunk = std::min<uint64_t>(in.snd_wnd, uint64_t{in.cwnd} * mss) / in.win_divisor;
    if (limit >= chunk) return TsoDefer::kSendNow;
  } else if (limit > kMaxTsoDeferredMss * mss) {
    return TsoDefer::kSendNow;
  }
  if (!in.have_head) return TsoDefer::kSendNow;
  // The head's ACK is expected one srtt after it left; if that is more than
  // min(srtt/2, 1 ms) away, waiting does not pay.
  const Duration how_far = in.srtt - in.head_age;
  if (how_far > std::min(in.srtt / 2, Duration::ms(1))) return TsoDefer::kSendNow;
  if (cong_win < in.send_win) {
    if (cong_win <= in.skb_len) return TsoDefer::kCwndLimited;
  } else if (in.send_win <= in.skb_len) {
    return TsoDefer::kRwndLimited;
  }
  if (in.skb_closed) return TsoDefer::kSendNow;  // it won't get more data: do not wait
  return TsoDefer::kAppLimited;
}

// tcp_write_xmit's test for the skb at the send head (the rest of the chunk
// at SND.NXT): tcp_tso_should_defer, asked only where Linux asks it (more
// than one segment, not tcp_push_one, the pacing, cwnd and window tests
// passed) and only on a GSO device (tso_defer.h). Records why it waits.
bool Connection::tso_defer(Time now, uint32_t mss, bool push_one) {
  if (push_one || !env_.can_gso() || snd_.nxt == write_seq_) return false;
  const uint32_t in_flight = sb_.in_flight();
  if (in_flight >= ccs_.snd_cwnd) return false;                   // tcp_cwnd_test stops first
  if (pacer_.active(ccs_) && ccs_.wstamp > now) return false;     // tcp_pacing_check stops first
  const size_t ci = chunk_index(snd_.nxt);
  const Chunk* skb = ci < chunks_.size() ? &chunks_[ci] : nullptr;
  const Seq32 skb_end = skb ? skb->end : write_seq_;
  const uint32_t skb_len = seq_len(snd_.nxt, skb_end);
  if (skb_len <= mss) return false;                               // tso_segs 1: tcp_nagle_test decides
  const Seq32 wnd_end = snd_.una + snd_.wnd;
  const uint32_t send_win = wnd_end > snd_.nxt ? seq_len(snd_.nxt, wnd_end) : 0;
  if (send_win < mss) return false;                               // tcp_snd_wnd_test stops first
  TsoDeferInput in;
  in.in_recovery = ca_state_ >= CaState::Recovery;
  in.since_last_send = now - ccs_.wstamp;
  in.cwnd = ccs_.snd_cwnd;
  in.in_flight = in_flight;
  in.mss = mss_cache_;
  in.snd_wnd = snd_.wnd;
  in.send_win = send_win;
  in.skb_len = skb_len;
  in.skb_is_tail = skb_end == write_seq_;
  in.skb_closed = (skb && skb->eor) || (fin_queued_ && in.skb_is_tail);
  in.max_segs = tso_segs();
  in.win_divisor = env_.cfg().tcp_tso_win_divisor;
  in.have_head = !sb_.empty();
  if (in.have_head) in.head_age = now - sb_.at(0).xmit_time;
  in.srtt = rtt_.srtt();
  const TsoDefer d = tso_should_defer(in);
  if (d == TsoDefer::kCwndLimited) defer_cwnd_limited_ = true;
  if (d == TsoDefer::kRwndLimited) defer_rwnd_limited_ = true;
  return d != TsoDefer::kSendNow;
}

}  // namespace weir::tcp
