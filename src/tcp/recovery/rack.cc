#include "tcp/recovery/rack.h"

#include <algorithm>

namespace weir::tcp::recovery {

namespace {
// RFC 8985 §6.2 RACK_sent_after().
bool sent_after(Time t1, Seq32 seq1, Time t2, Seq32 seq2) {
  return t1 > t2 || (t1 == t2 && seq1 > seq2);
}
}  // namespace

void Rack::advance(const DeliveredPacket& p, Time now, Duration min_rtt) {
  const Duration rtt = now - p.xmit_time;
  // RFC 8985 §6.2 step 2: ambiguous if retransmitted and faster than the
  // path allows; Linux compares with min_rtt.
  if (p.retransmitted && rtt < min_rtt) return;
  advanced_ = true;
  rtt_ = rtt;  // Linux: RACK.rtt is the RTT of the latest delivered packet
  if (sent_after(p.xmit_time, p.end_seq, xmit_ts_, end_seq_)) {
    xmit_ts_ = p.xmit_time;
    end_seq_ = p.end_seq;
  }
}

void Rack::advance(const AckResult& r) {
  if (!r.rack_latest || !r.rack_rtt) return;
  advanced_ = true;
  rtt_ = *r.rack_rtt;
  if (sent_after(r.rack_latest->xmit_time, r.rack_latest->end_seq, xmit_ts_, end_seq_)) {
    xmit_ts_ = r.rack_latest->xmit_time;
    end_seq_ = r.rack_latest->end_seq;
  }
}

Duration Rack::reo_wnd(const ReoWndInput& in) const {
  if (in.reord_seen == 0) {
    // RFC 8985 §6.2 step 4 / Linux: without evidence of reordering be
    // aggressive in recovery and once dupthresh SACKs arrived.
    if (in.ca_state >= CaState::Recovery) return Duration::zero();
    if (in.sacked_out >= in.reordering && !(in.tcp_recovery & kRackNoDupthresh)) {
      return Duration::zero();
    }
  }
  if (in.min_rtt == Duration::infinite()) return Duration::zero();
  // Linux: min_rtt/4 per step (in whole microseconds), capped by SRTT.
  const Duration quarter = Duration::us(in.min_rtt.us() >> 2);
  return min(quarter * reo_wnd_steps_, in.srtt);
}

RackDetectResult Rack::detect_loss(Scoreboard& sb, Time now, Duration reo_wnd, Duration rto) {
  RackDetectResult r;
  Duration wait = Duration::zero();
  sb.walk_by_xmit_time([&](size_t index, const ScoreboardEntry& e) {
    // The walk leaves out SACKed and lost-not-yet-retransmitted packets.
    if (!sent_after(xmit_ts_, end_seq_, e.xmit_time, e.seq.end)) return false;
    // RFC 8985 §6.2 step 5: lost once RACK.rtt + reo_wnd has passed since
    // it was sent.
    const Duration remaining = rtt_ + reo_wnd - (now - e.xmit_time);
    if (remaining <= Duration::zero()) {
      sb.mark_lost(index);
      ++r.newly_lost;
    } else {
      wait = max(wait, remaining);
    }
    return true;
  });
  if (wait > Duration::zero()) {
    // Linux: jiffies rounding plus TCP_TIMEOUT_MIN, never beyond the RTO.
    r.reo_timeout = now + min(wait + kTimeoutMin, rto);
  }
  return r;
}

RackDetectResult Rack::mark_lost(Scoreboard& sb, Time now, Duration reo_wnd, Duration rto) {
  if (!advanced_) return {};
  advanced_ = false;  // Linux: avoid rescanning until RACK advances again
  return detect_loss(sb, now, reo_wnd, rto);
}

void Rack::on_dsack(uint32_t reord_seen, bool for_tlp_probe) {
  if (reord_seen && !for_tlp_probe) dsack_seen_ = true;
}

void Rack::update_reo_wnd(int tcp_recovery, std::optional<uint64_t> prior_delivered,
                          uint64_t delivered) {
  if ((tcp_recovery & kRackStaticReoWnd) || !prior_delivered) return;
  // Disregard a D-SACK if a round trip has not passed since the last step.
  if (*prior_delivered < last_delivered_) dsack_seen_ = false;
  if (dsack_seen_) {
    reo_wnd_steps_ = static_cast<uint8_t>(std::min<uint32_t>(0xFF, reo_wnd_steps_ + 1u));
    dsack_seen_ = false;
    last_delivered_ = delivered;
    reo_wnd_persist_ = kRackRecoveryThresh;
  } else if (!reo_wnd_persist_) {
    reo_wnd_steps_ = 1;
  }
}

}  // namespace weir::tcp::recovery
