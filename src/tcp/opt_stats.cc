// tcp_get_timestamping_opt_stats (net/ipv4/tcp.c) as weir fills it.
#include "tcp/opt_stats.h"

#include <cstring>

namespace weir::tcp {
namespace {

// nla_put: a 4-byte header (nla_len, nla_type) and the value, padded to 4.
template <class T>
void put(std::vector<uint8_t>& out, uint16_t type, T v) {
  const uint16_t len = static_cast<uint16_t>(4 + sizeof(T));
  const size_t at = out.size();
  out.resize(at + ((len + 3u) & ~3u), 0);
  std::memcpy(out.data() + at, &len, 2);
  std::memcpy(out.data() + at + 2, &type, 2);
  std::memcpy(out.data() + at + 4, &v, sizeof(T));
}

}  // namespace

std::vector<uint8_t> opt_stats(const TcpInfo& i, const OptStatsExtra& x) {
  std::vector<uint8_t> out;
  out.reserve(256);
  put<uint64_t>(out, nla::kBusy, i.tcpi_busy_time);
  put<uint64_t>(out, nla::kRwndLimited, i.tcpi_rwnd_limited);
  put<uint64_t>(out, nla::kSndbufLimited, i.tcpi_sndbuf_limited);
  put<uint64_t>(out, nla::kDataSegsOut, i.tcpi_data_segs_out);
  put<uint64_t>(out, nla::kTotalRetrans, i.tcpi_total_retrans);
  put<uint64_t>(out, nla::kPacingRate, i.tcpi_pacing_rate);  // ~0 when unlimited, as tcp_info
  put<uint64_t>(out, nla::kDeliveryRate, i.tcpi_delivery_rate);
  put<uint32_t>(out, nla::kSndCwnd, i.tcpi_snd_cwnd);
  put<uint32_t>(out, nla::kReordering, i.tcpi_reordering);
  put<uint32_t>(out, nla::kMinRtt, i.tcpi_min_rtt);
  put<uint8_t>(out, nla::kRecurRetrans, i.tcpi_retransmits);
  put<uint8_t>(out, nla::kDeliveryRateAppLmt, i.tcpi_delivery_rate_app_limited);
  put<uint32_t>(out, nla::kSndSsthresh, i.tcpi_snd_ssthresh);
  put<uint32_t>(out, nla::kDelivered, i.tcpi_delivered);
  put<uint32_t>(out, nla::kDeliveredCe, i.tcpi_delivered_ce);
  put<uint32_t>(out, nla::kSndqSize, x.sndq_size);
  put<uint8_t>(out, nla::kCaState, i.tcpi_ca_state);
  put<uint64_t>(out, nla::kBytesSent, i.tcpi_bytes_sent);
  put<uint64_t>(out, nla::kBytesRetrans, i.tcpi_bytes_retrans);
  put<uint32_t>(out, nla::kDsackDups, i.tcpi_dsack_dups);
  put<uint32_t>(out, nla::kReordSeen, i.tcpi_reord_seen);
  put<uint32_t>(out, nla::kSrtt, i.tcpi_rtt);
  put<uint16_t>(out, nla::kTimeoutRehash, x.timeout_rehash);
  put<uint32_t>(out, nla::kBytesNotsent, i.tcpi_notsent_bytes);
  put<uint64_t>(out, nla::kEdt, static_cast<uint64_t>(x.edt_ns));
  // "if (ack_skb) nla_put_u8(stats, TCP_NLA_TTL, ...)": SCHED and SND
  // timestamps have no acknowledging segment.
  if (x.ack_ttl) put<uint8_t>(out, nla::kTtl, *x.ack_ttl);
  put<uint32_t>(out, nla::kRehash, i.tcpi_rehash);
  return out;
}

}  // namespace weir::tcp
