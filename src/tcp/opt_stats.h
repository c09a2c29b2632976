// SO_TIMESTAMPING's OPT_STATS: the connection's statistics attached to each
// transmit timestamp as netlink attributes (Linux
// tcp_get_timestamping_opt_stats), read from the error queue both as the
// entry's data and as an SCM_TIMESTAMPING_OPT_STATS control message.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "weir/tcp_info.h"

namespace weir::tcp {

// The attribute types (include/uapi/linux/tcp.h, TCP_NLA_*).
namespace nla {
inline constexpr uint16_t kBusy = 1;  // us busy sending (tcpi_busy_time)
inline constexpr uint16_t kRwndLimited = 2;
inline constexpr uint16_t kSndbufLimited = 3;
inline constexpr uint16_t kDataSegsOut = 4;
inline constexpr uint16_t kTotalRetrans = 5;
inline constexpr uint16_t kPacingRate = 6;
inline constexpr uint16_t kDeliveryRate = 7;
inline constexpr uint16_t kSndCwnd = 8;
inline constexpr uint16_t kReordering = 9;
inline constexpr uint16_t kMinRtt = 10;
inline constexpr uint16_t kRecurRetrans = 11;  // icsk_retransmits
inline constexpr uint16_t kDeliveryRateAppLmt = 12;
inline constexpr uint16_t kSndqSize = 13;  // write_seq - snd_una
inline constexpr uint16_t kCaState = 14;
inline constexpr uint16_t kSndSsthresh = 15;
inline constexpr uint16_t kDelivered = 16;
inline constexpr uint16_t kDeliveredCe = 17;
inline constexpr uint16_t kBytesSent = 18;
inline constexpr uint16_t kBytesRetrans = 19;
inline constexpr uint16_t kDsackDups = 20;
inline constexpr uint16_t kReordSeen = 21;
inline constexpr uint16_t kSrtt = 22;  // us
inline constexpr uint16_t kTimeoutRehash = 23;
inline constexpr uint16_t kBytesNotsent = 24;
inline constexpr uint16_t kEdt = 25;  // ns: the skb's departure time
inline constexpr uint16_t kTtl = 26;  // the acknowledging segment's TTL or hop limit
inline constexpr uint16_t kRehash = 27;
}  // namespace nla

// What tcp_info does not carry.
struct OptStatsExtra {
  uint32_t sndq_size = 0;       // write_seq - snd_una
  uint16_t timeout_rehash = 0;  // tp->timeout_rehash
  int64_t edt_ns = 0;           // the timestamped skb's last transmission
  std::optional<uint8_t> ack_ttl;  // ACK timestamps only (the ack_skb)
};

// The attributes in Linux's order (checked against Linux 6.18: 27
// attributes, 256 bytes with a TTL), each padded to 4 bytes; no
// TCP_NLA_PAD, as on x86-64 (nla_need_padding_for_64bit is false where
// unaligned access is cheap).
std::vector<uint8_t> opt_stats(const TcpInfo& info, const OptStatsExtra& extra);

}  // namespace weir::tcp
