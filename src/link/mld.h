// Multicast Listener Discovery messages (RFC 3810 MLDv2, with RFC 2710
// MLDv1 queries understood): the whole IPv6 packet with its Hop-by-Hop
// Router Alert option (RFC 2711), parsed after the receipt checks of RFC
// 3810 §6.2, and the host's Version 2 Report (§5.2) emitted exactly.
// weir is a host, never a querier: it sends reports and reads queries.
#pragma once

#include <cstdint>
#include <span>

#include "weir/addr.h"
#include "weir/expected.h"
#include "weir/time.h"

namespace weir::link {

inline constexpr uint8_t kIcmp6MldQuery = 130;     // ICMPV6_MGM_QUERY
inline constexpr uint8_t kIcmp6MldReport = 131;    // ICMPV6_MGM_REPORT (MLDv1)
inline constexpr uint8_t kIcmp6MldDone = 132;      // ICMPV6_MGM_REDUCTION
inline constexpr uint8_t kIcmp6Mld2Report = 143;   // ICMPV6_MLD2_REPORT
// RFC 3810 §5.2.12 record types weir sends: a group joined with no
// sources is in EXCLUDE mode with an empty source list.
inline constexpr uint8_t kMld2ModeIsExclude = 2;   // answer to a query (Current State Record)
inline constexpr uint8_t kMld2ChangeToExclude = 4; // join (Filter Mode Change Record)
// IPv6 header, the 8-byte Hop-by-Hop header, the 8-byte report header.
inline constexpr size_t kMld2ReportFixedLen = 40 + 8 + 8;
inline constexpr size_t kMld2RecordLen = 20;        // a record without sources

struct MldRecord {
  uint8_t type = kMld2ModeIsExclude;
  IpAddr group;
};

struct MldMessage {
  uint8_t type = 0;          // one of the four kIcmp6Mld* types
  IpAddr src;                // the IPv6 source
  IpAddr group;              // Multicast Address: :: in a General Query
  Duration max_delay;        // queries: Maximum Response Delay (§5.1.3)
  uint16_t sources = 0;      // MLDv2 queries: Number of Sources (§5.1.10)
  bool v1 = false;           // a 24-byte MLDv1 query (RFC 3810 §8.1)
};

enum class MldError : uint8_t {
  kNotMld,          // not an ICMPv6 MLD message after an optional Hop-by-Hop header
  kTruncated,       // shorter than its headers, its payload length or its sources
  kChecksum,        // ICMPv6 checksum (RFC 4443 §2.3)
  kHopLimit,        // query: RFC 3810 §6.2, Hop Limit is not 1
  kSource,          // query: RFC 3810 §5.1.14, source not link-local
  kNoRouterAlert,   // query: RFC 3810 §6.2, no Router Alert in Hop-by-Hop options
};
const char* to_string(MldError e);

// Checks and parses an IPv6 datagram. kNotMld for anything else, which
// goes on to the stack.
Expected<MldMessage, MldError> parse_mld(std::span<const uint8_t> ip6);
// RFC 3810 §5.1.3: the Maximum Response Code as a delay, linear below
// 32768 ms, floating-point above.
Duration mld_max_delay(uint16_t code);
// The packet length of a report with `records` records.
inline size_t mld2_report_len(size_t records) { return kMld2ReportFixedLen + records * kMld2RecordLen; }
// Writes a Version 2 Report from `src` to ff02::16 (mld2_report_len bytes)
// at `out`; returns its length.
size_t emit_mld2_report(const IpAddr& src, std::span<const MldRecord> records, uint8_t* out);

}  // namespace weir::link
