// The socket error queue (Linux sk_error_queue): what recvmsg(MSG_ERRQUEUE)
// returns. weir queues two kinds of entry on a TCP socket, as Linux does:
// MSG_ZEROCOPY completion notifications (SO_EE_ORIGIN_ZEROCOPY) and
// SO_TIMESTAMPING transmit timestamps (SO_EE_ORIGIN_TIMESTAMPING). Names and
// values are Linux's (include/uapi/linux/errqueue.h, net_tstamp.h), so a
// ported application reads them unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "weir/time.h"

namespace weir {

// struct sock_extended_err, byte for byte.
struct SockExtendedErr {
  uint32_t ee_errno = 0;
  uint8_t ee_origin = 0;
  uint8_t ee_type = 0;
  uint8_t ee_code = 0;
  uint8_t ee_pad = 0;
  uint32_t ee_info = 0;
  uint32_t ee_data = 0;
};
static_assert(sizeof(SockExtendedErr) == 16);

// ee_origin and ee_code values. <linux/errqueue.h> defines these names as
// macros with the same values; either header may come first.
#ifndef SO_EE_ORIGIN_NONE
inline constexpr uint8_t SO_EE_ORIGIN_NONE = 0;
inline constexpr uint8_t SO_EE_ORIGIN_LOCAL = 1;
inline constexpr uint8_t SO_EE_ORIGIN_ICMP = 2;
inline constexpr uint8_t SO_EE_ORIGIN_ICMP6 = 3;
inline constexpr uint8_t SO_EE_ORIGIN_TXSTATUS = 4;
inline constexpr uint8_t SO_EE_ORIGIN_ZEROCOPY = 5;
inline constexpr uint8_t SO_EE_ORIGIN_TXTIME = 6;
inline constexpr uint8_t SO_EE_ORIGIN_TIMESTAMPING = SO_EE_ORIGIN_TXSTATUS;
inline constexpr uint8_t SO_EE_CODE_ZEROCOPY_COPIED = 1;
#endif

// SO_TIMESTAMPING flags (include/uapi/linux/net_tstamp.h).
namespace sof {
inline constexpr uint32_t TX_HARDWARE = 1u << 0;
inline constexpr uint32_t TX_SOFTWARE = 1u << 1;
inline constexpr uint32_t RX_HARDWARE = 1u << 2;
inline constexpr uint32_t RX_SOFTWARE = 1u << 3;
inline constexpr uint32_t SOFTWARE = 1u << 4;
inline constexpr uint32_t SYS_HARDWARE = 1u << 5;
inline constexpr uint32_t RAW_HARDWARE = 1u << 6;
inline constexpr uint32_t OPT_ID = 1u << 7;
inline constexpr uint32_t TX_SCHED = 1u << 8;
inline constexpr uint32_t TX_ACK = 1u << 9;
inline constexpr uint32_t OPT_CMSG = 1u << 10;
inline constexpr uint32_t OPT_TSONLY = 1u << 11;
inline constexpr uint32_t OPT_STATS = 1u << 12;
inline constexpr uint32_t OPT_PKTINFO = 1u << 13;
inline constexpr uint32_t OPT_TX_SWHW = 1u << 14;
inline constexpr uint32_t BIND_PHC = 1u << 15;
inline constexpr uint32_t OPT_ID_TCP = 1u << 16;
inline constexpr uint32_t OPT_RX_FILTER = 1u << 17;
inline constexpr uint32_t TX_COMPLETION = 1u << 18;
inline constexpr uint32_t MASK = (TX_COMPLETION << 1) - 1;  // SOF_TIMESTAMPING_MASK
// What weir records: software transmit timestamps at the three TCP points,
// with the key and payload options. The rest is accepted (as Linux does)
// and has no effect.
inline constexpr uint32_t TX_RECORD_MASK = TX_HARDWARE | TX_SOFTWARE | TX_SCHED | TX_ACK;
inline constexpr uint32_t SUPPORTED = TX_SOFTWARE | SOFTWARE | OPT_ID | TX_SCHED | TX_ACK | OPT_TSONLY | OPT_ID_TCP;
}  // namespace sof

// ee_info of a timestamp entry: where it was taken (SCM_TSTAMP_*).
inline constexpr uint32_t SCM_TSTAMP_SND = 0;
inline constexpr uint32_t SCM_TSTAMP_SCHED = 1;
inline constexpr uint32_t SCM_TSTAMP_ACK = 2;

// One entry taken off the queue. `tstamp`: the software timestamp the
// SCM_TIMESTAMPING control message carries (scm_timestamping.ts[0]), set
// only when SOF_TIMESTAMPING_SOFTWARE reporting is on at the time of the
// read (Linux __sock_recv_timestamp). Timestamps are the engine's time (the
// driver's clock), not CLOCK_REALTIME. `payload`: what the read copies into
// the iovec; a timestamp without OPT_TSONLY carries the segment's payload
// (Linux: the skb), so a short read is MSG_TRUNC.
struct ErrQueueEntry {
  SockExtendedErr ee;
  std::optional<Time> tstamp;
  std::vector<uint8_t> payload;
  // SOF_TIMESTAMPING_OPT_STATS (with OPT_TSONLY): `payload` is the
  // connection's statistics as netlink attributes (TCP_NLA_*), also handed
  // out as an SCM_TIMESTAMPING_OPT_STATS control message.
  bool opt_stats = false;
};

}  // namespace weir
