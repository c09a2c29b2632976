// TCP-LD (RFC 6069): an ICMP unreachable during retransmission timeouts
// says the path is down rather than congested, so the timer's backoff
// partly undone lets the connection resume soon after the path returns.
#include "tcp/connection.h"

namespace weir::tcp {

// Linux tcp_ld_RTO_revert, called by tcp_v4_err for ICMP net and host
// unreachable (IPv4 only: tcp_v6_err makes no such call). RFC 6069 §4
// step (3): only for the oldest outstanding segment (quoted SEQ ==
// SND.UNA), only while it is being retransmitted by the timer with the RTO
// backed off; one backoff step is reverted and the timer re-armed from the
// head's last transmission (RFC 6069 §4 step (5)), or it fires now if that
// time has passed. In SYN-SENT and SYN-RECEIVED the same error ends the
// connection (on_icmp_unreach), so nothing is reverted there.
void Connection::ld_rto_revert(Time now, Seq32 quoted_seq) {
  if (!synchronized() || fastopen_pending()) return;  // tcp_v4_err: "if (!fastopen && ...)"
  if (quoted_seq != snd_.una || retransmits_ == 0 || backoff_ == 0) return;
  if (!timers_.armed(TimerKind::kRetransmit) || timers_.retransmit_mode != RetransmitMode::kRto) return;
  if (sb_.empty()) return;  // a lone FIN: Linux's WARN_ON_ONCE(!skb) case
  --backoff_;
  // icsk_rto = __tcp_set_rto (or TCP_TIMEOUT_INIT without a sample), backed off.
  const Time due = sb_.at(0).xmit_time + rtt_.backed_off_rto(backoff_);
  if (due > now) {
    timers_.arm(TimerKind::kRetransmit, due);
  } else {
    timers_.cancel(TimerKind::kRetransmit);
    on_rto(now);  // "RTO revert clocked out retransmission": tcp_retransmit_timer
  }
}

}  // namespace weir::tcp
