// EtherLink's MLD host half (RFC 3810): reports for the solicited-node
// groups of our addresses (link/mld_host.h keeps their timers), queries
// read, other listeners' reports counted. Linux net/ipv6/mcast.c.
#include <algorithm>
#include <vector>

#include "link/ether_link.h"
#include "link/mld.h"

namespace weir::link {
namespace {

const MacAddr kAllMldv2RoutersMac{{0x33, 0x33, 0, 0, 0, 0x16}};  // RFC 2464 §7 of ff02::16

bool is_link_local(const IpAddr& a) {
  const auto& b = a.bytes();
  return !a.is_v4() && b[0] == 0xfe && (b[1] & 0xc0) == 0x80;
}

}  // namespace

// RFC 3810 §5.2.13: a link-local source, or :: while the link has no
// valid one (Linux mld_newpack: ipv6_get_lladdr without tentative ones).
IpAddr EtherLink::mld_source() const {
  for (const Dad& d : dad_) {
    if (d.state == AddrState::kPreferred && is_link_local(d.addr)) return d.addr;
  }
  return IpAddr::v6({});
}

bool EtherLink::mld_input(std::span<const uint8_t> ip6) {
  const auto m = parse_mld(ip6);
  if (!m) {
    if (m.error() == MldError::kNotMld) return false;
    ++stats_.mld_rx_invalid;  // §6.2: dropped, nothing changes
    return true;
  }
  switch (m->type) {
    case kIcmp6MldQuery:
      ++stats_.mld_queries_rx;
      if (cfg_.mld) mld_.query(now_, *m);
      break;
    // A host keeps no state from other listeners (§6: no suppression in
    // MLDv2, and weir has no MLDv1 mode); counted as Linux does.
    case kIcmp6MldReport: ++stats_.mld_v1_reports_rx; break;
    case kIcmp6MldDone: ++stats_.mld_dones_rx; break;
    default: ++stats_.mld_v2_reports_rx; break;
  }
  return true;
}

// Whatever MldHost has due goes out as Version 2 Reports to ff02::16,
// as many records in each as the MTU holds (§5.2.15).
void EtherLink::mld_advance() {
  if (!cfg_.mld) return;
  const std::vector<MldRecord> due = mld_.take_due(now_);
  if (due.empty()) return;
  const size_t fit = cfg_.mtu > kMld2ReportFixedLen ? (cfg_.mtu - kMld2ReportFixedLen) / kMld2RecordLen : 1;
  const size_t per = std::max<size_t>(fit, 1);
  const IpAddr src = mld_source();
  std::vector<uint8_t> pkt(mld2_report_len(std::min(per, due.size())));
  for (size_t i = 0; i < due.size(); i += per) {
    const auto part = std::span<const MldRecord>(due).subspan(i, std::min(per, due.size() - i));
    const size_t len = emit_mld2_report(src, part, pkt.data());
    ++stats_.mld_v2_reports_tx;
    (void)send_frame(kAllMldv2RoutersMac, kEthPIpv6, std::span<const uint8_t>(pkt).first(len));
  }
}

}  // namespace weir::link
