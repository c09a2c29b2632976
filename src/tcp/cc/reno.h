// TCP Reno congestion control as Linux's built-in "reno" (net/ipv4/tcp_cong.c):
// RFC 5681 slow start and congestion avoidance, counting ACKed packets
// (RFC 3465 appropriate byte counting, in packets, as Linux does).
#pragma once

#include "tcp/cc/cc.h"

namespace weir::cc {

class Reno final : public CongestionControl {
 public:
  std::string_view name() const override { return "reno"; }
  void init(CcState& tp, Time now) override;
  uint32_t ssthresh(CcState& tp, Time now) override;
  void cong_avoid(CcState& tp, Seq32 ack, uint32_t acked, Time now, Counters& mib) override;
  uint32_t undo_cwnd(CcState& tp) override;
  void get_info(TcpInfo& info) const override;
};

// The Reno pieces CUBIC reuses, as Linux exports them.
uint32_t reno_ssthresh(const CcState& tp);
uint32_t reno_undo_cwnd(const CcState& tp);
// tcp_reno_cong_avoid: slow start, then about +1 packet per window ACKed.
void reno_cong_avoid(CcState& tp, uint32_t acked);

}  // namespace weir::cc
