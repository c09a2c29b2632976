// Linux's TSO deferral (net/ipv4/tcp_output.c tcp_tso_should_defer, as of
// "tcp: fix tcp_tso_should_defer() vs large RTT", 2025): inside one
// tcp_write_xmit pass, a multi-segment skb that only partly fits the
// congestion window waits for the ACK expected within a millisecond instead
// of leaving as a small burst. It matters beyond segment sizes: the window
// stays below cwnd, so tcp_new_space may grow the send buffer
// (tcp_should_expand_sndbuf) and wake a writer (gtests
// notsent-lowat-default.pkt: POLLOUT at the ACK of 17001).
#include <algorithm>

#include "tcp/connection.h"

namespace weir::tcp {
namespace {

constexpr uint32_t kMaxTsoDeferredMss = 3;  // tcp_max_tso_deferred_mss, tcp_tso_win_divisor 0

}  // namespace

// Linux tcp_tso_should_defer for the next unsent skb (the rest of the chunk
// at SND.NXT); called by tcp_write_xmit only for an skb of several
// segments and never for tcp_push_one. `cwnd_limited` is set when the wait
// is for the congestion window (tcp_write_xmit's is_cwnd_limited).
bool Connection::tso_should_defer(Time now, uint32_t mss, bool* cwnd_limited) const {
  const uint32_t in_flight = sb_.in_flight();
  if (snd_.nxt == write_seq_ || in_flight >= ccs_.snd_cwnd) return false;  // tcp_cwnd_test stops first
  if (ca_state_ >= CaState::Recovery) return false;
  const size_t ci = chunk_index(snd_.nxt);
  const Chunk* skb = ci < chunks_.size() ? &chunks_[ci] : nullptr;
  const Seq32 skb_end = skb ? skb->end : write_seq_;
  const uint32_t skb_len = seq_len(snd_.nxt, skb_end);
  if (skb_len <= mss) return false;  // tso_segs 1: tcp_nagle_test decides instead
  // Only right after a transmission (tcp_wstamp_ns less than 1 ms ago): no
  // bursts after a quiet period. Linux sends at delta > 1 ms; on virtual
  // time a script's "+.001" is exactly 1 ms, which on a real kernel is
  // always a little more (gtests shutdown-rdwr-send-queue-ack-close.pkt
  // line 30 sends at once), so exactly 1 ms counts as past.
  if (now - ccs_.wstamp >= Duration::ms(1)) return false;
  const Seq32 wnd_end = snd_.una + snd_.wnd;
  const uint64_t send_win = wnd_end > snd_.nxt ? seq_len(snd_.nxt, wnd_end) : 0;
  if (send_win < mss) return false;  // tcp_snd_wnd_test stops first
  const uint64_t cong_win = uint64_t{ccs_.snd_cwnd - in_flight} * mss_cache_;
  const uint64_t limit = std::min(send_win, cong_win);
  if (limit >= uint64_t{tso_segs()} * mss_cache_) return false;  // a full-sized TSO skb
  if (skb_end != write_seq_ && limit >= skb_len) return false;   // the middle skb goes whole
  const int divisor = env_.cfg().tcp_tso_win_divisor;
  if (divisor > 0) {
    const uint64_t chunk = std::min<uint64_t>(snd_.wnd, uint64_t{ccs_.snd_cwnd} * mss_cache_) / divisor;
    if (limit >= chunk) return false;  // a fraction of the window is available
  } else if (limit > uint64_t{kMaxTsoDeferredMss} * mss_cache_) {
    return false;
  }
  if (sb_.empty()) return false;
  // The ACK of the retransmit queue's head is expected one srtt after it
  // left; later than min(srtt/2, 1 ms) from now, waiting does not pay.
  const Duration srtt = rtt_.srtt();
  const Duration how_far = (sb_.at(0).xmit_time + srtt) - now;
  if (how_far > std::min(Duration::ns(srtt.ns() / 2), Duration::ms(1))) return false;
  if (cong_win < send_win) {
    if (cong_win <= skb_len) {
      *cwnd_limited = true;
      return true;
    }
  } else if (send_win <= skb_len) {
    return true;  // is_rwnd_limited
  }
  // This skb will get no more data (MSG_EOR, or the FIN rides on it).
  if ((skb && skb->eor) || (fin_queued_ && skb_end == write_seq_)) return false;
  return true;  // application-limited: more data may join the tail skb
}

}  // namespace weir::tcp
