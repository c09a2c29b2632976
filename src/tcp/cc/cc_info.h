// getsockopt(TCP_CC_INFO): the algorithm's own record (Linux union
// tcp_cc_info, filled by tcp_congestion_ops.get_info).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "tcp/cc/cc.h"

namespace weir::cc {

// Linux struct tcp_bbr_info (uapi inet_diag.h), the BBR member of union
// tcp_cc_info: bandwidth in bytes/s split in two words, min RTT in us, gains
// in BBR_UNIT (256).
struct TcpBbrInfo {
  uint32_t bbr_bw_lo = 0;
  uint32_t bbr_bw_hi = 0;
  uint32_t bbr_min_rtt = 0;
  uint32_t bbr_pacing_gain = 0;
  uint32_t bbr_cwnd_gain = 0;
};
static_assert(sizeof(TcpBbrInfo) == 20, "Linux struct tcp_bbr_info is 20 bytes");

// As Linux do_tcp_getsockopt(TCP_CC_INFO): what ops->get_info writes into
// union tcp_cc_info, truncated to out.size(). BBR (struct tcp_bbr_info) and
// DCTCP (struct tcp_dctcp_info, dctcp.h) have a get_info in Linux; CUBIC and
// Reno have none, so 0 bytes. Returns the length written.
size_t cc_info(const CongestionControl& cc, const CcState& tp, std::span<uint8_t> out);

}  // namespace weir::cc
