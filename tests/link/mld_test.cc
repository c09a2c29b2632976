// MLDv2 (RFC 3810) on an EtherLink: the report's bytes, the unsolicited
// reports' timing on a manual clock, answering queries, and dropping
// queries that fail §6.2's checks.
#include <gtest/gtest.h>

#include "link/ether_harness.h"
#include "link/ether_link.h"
#include "link/mld.h"
#include "wire/checksum.h"

namespace weir::link {
namespace {

using namespace weir::link::test;

const IpAddr kA = ip6("2001:db8::1");
const IpAddr kSnA = ip6("ff02::1:ff00:1");  // RFC 4291 §2.7.1 of kA
const IpAddr kRouter = ip6("fe80::99");
const MacAddr kRouterMac = mac(9);

EtherLinkConfig mld_config() {
  EtherLinkConfig c;
  c.mac = mac(1);
  c.addrs = {{ip4(10, 0, 0, 1), 24}, {kA, 64}};
  c.dad_transmits = 0;
  c.mld_params.seed = 7;
  return c;
}

bool is_report(const std::vector<uint8_t>& f) {
  return frame_dst(f) == MacAddr{{0x33, 0x33, 0, 0, 0, 0x16}} && frame_type(f) == kEthPIpv6 && f.size() > 62 &&
         f[14 + 48] == kIcmp6Mld2Report;
}

// The records of one report frame: (type, group).
std::vector<std::pair<uint8_t, IpAddr>> records(const std::vector<uint8_t>& f) {
  const auto p = frame_payload(f);
  std::vector<std::pair<uint8_t, IpAddr>> out;
  const size_t n = wire::load_be16(p.data() + 48 + 6);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* r = p.data() + 56 + i * 20;
    std::array<uint8_t, 16> g;
    std::copy(r + 4, r + 20, g.begin());
    out.emplace_back(r[0], IpAddr::v6(g));
  }
  return out;
}

// A query frame as a router sends it: Hop-by-Hop Router Alert, hop
// limit 1, link-local source; `mutate` spoils one thing before the checksum.
struct QuerySpec {
  IpAddr src = kRouter;
  IpAddr dst = ip6("ff02::1");
  IpAddr group = ip6("::");
  uint16_t max_code = 1000;
  uint8_t hop_limit = 1;
  bool router_alert = true;
  bool v1 = false;
  bool bad_checksum = false;
};

std::vector<uint8_t> query_frame(const QuerySpec& q) {
  const size_t icmp_len = q.v1 ? 24 : 28;
  std::vector<uint8_t> f(14 + 40 + 8 + icmp_len, 0);
  write_ether_header(f.data(), {ipv6_multicast_mac(q.dst), kRouterMac, kEthPIpv6});
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x60;
  wire::store_be16(ip + 4, static_cast<uint16_t>(8 + icmp_len));
  ip[6] = 0;  // Hop-by-Hop
  ip[7] = q.hop_limit;
  std::copy(q.src.bytes().begin(), q.src.bytes().end(), ip + 8);
  std::copy(q.dst.bytes().begin(), q.dst.bytes().end(), ip + 24);
  uint8_t* hbh = ip + 40;
  hbh[0] = 58;
  hbh[2] = q.router_alert ? 5 : 1;  // Router Alert, or a PadN of the same size
  hbh[3] = 2;
  hbh[6] = 1;
  uint8_t* icmp = hbh + 8;
  icmp[0] = kIcmp6MldQuery;
  wire::store_be16(icmp + 4, q.max_code);
  std::copy(q.group.bytes().begin(), q.group.bytes().end(), icmp + 8);
  if (!q.v1) icmp[24] = 2;  // QRV 2
  const uint32_t sum = wire::csum_partial(std::span<const uint8_t>(icmp, icmp_len),
                                          wire::pseudo_header_sum(q.src, q.dst, 58, static_cast<uint32_t>(icmp_len)));
  wire::store_be16(icmp + 2, static_cast<uint16_t>(wire::csum_fold(sum) ^ (q.bad_checksum ? 1 : 0)));
  return f;
}

TEST(Mld, ReportBytesExact) {
  // RFC 3810 §5.2 from ::, one CHANGE_TO_EXCLUDE record for kSnA; the
  // checksum was computed by hand over the RFC 8200 §8.1 pseudo-header.
  const std::vector<uint8_t> want = {
      0x60, 0, 0, 0, 0, 0x24, 0, 1,                                     // IPv6: HBH next, hop limit 1
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,                   // ::
      0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x16,             // ff02::16
      58, 0, 5, 2, 0, 0, 1, 0,                                          // Router Alert (MLD), PadN
      143, 0, 0x6f, 0x89, 0, 0, 0, 1,                                   // report, checksum, 1 record
      4, 0, 0, 0,                                                       // CHANGE_TO_EXCLUDE, no sources
      0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 1};            // ff02::1:ff00:1
  const MldRecord r{kMld2ChangeToExclude, kSnA};
  std::vector<uint8_t> got(mld2_report_len(1));
  ASSERT_EQ(emit_mld2_report(ip6("::"), std::span<const MldRecord>(&r, 1), got.data()), want.size());
  EXPECT_EQ(got, want);
}

TEST(Mld, MaxResponseCodeFloatingPoint) {
  EXPECT_EQ(mld_max_delay(10000), Duration::ms(10000));
  // §5.1.3: 0x8000 = exp 0, mant 0 -> 0x1000 << 3 ms.
  EXPECT_EQ(mld_max_delay(0x8000), Duration::ms(0x1000 << 3));
  EXPECT_EQ(mld_max_delay(0x9123), Duration::ms(int64_t{0x1123} << 4));
}

TEST(Mld, JoinReportsAtOnceThenOnceMoreWithinTheInterval) {
  RecordingSink sink;
  EtherLink a(mld_config(), sink);
  EXPECT_EQ(a.next_deadline(), Time::zero());  // the link wants to start
  a.advance(at_ms(0));
  auto out = sink.take();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(is_report(out[0]));
  // §5.2.13: no link-local address of ours yet: from ::. All-nodes is not
  // reported (§6), only the solicited-node group.
  const auto p = frame_payload(out[0]);
  EXPECT_TRUE(std::all_of(p.begin() + 8, p.begin() + 24, [](uint8_t b) { return b == 0; }));
  EXPECT_EQ(records(out[0]), (std::vector<std::pair<uint8_t, IpAddr>>{{kMld2ChangeToExclude, kSnA}}));
  // Robustness 2: one more, at a random time inside the 1 s interval.
  const Time second = a.next_deadline();
  ASSERT_GT(second, at_ms(0));
  ASSERT_LT(second, at_ms(1000));
  a.advance(second - Duration::ns(1));
  EXPECT_TRUE(sink.take().empty());
  a.advance(second);
  out = sink.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(is_report(out[0]));
  EXPECT_EQ(a.next_deadline(), Time::never());
  a.advance(at_ms(60000));
  EXPECT_TRUE(sink.take().empty());
  EXPECT_EQ(a.stats().mld_v2_reports_tx, 2u);
}

TEST(Mld, ReportFromOurLinkLocalAddress) {
  RecordingSink sink;
  auto c = mld_config();
  c.addrs.push_back({ip6("fe80::1"), 64});
  EtherLink a(c, sink);
  a.advance(at_ms(0));
  auto out = sink.take();
  ASSERT_EQ(out.size(), 1u);
  const auto p = frame_payload(out[0]);
  EXPECT_EQ(IpAddr::v6([&] { std::array<uint8_t, 16> s; std::copy(p.begin() + 8, p.begin() + 24, s.begin()); return s; }()),
            ip6("fe80::1"));
  // Two addresses with the same low 24 bits share one group.
  EXPECT_EQ(records(out[0]), (std::vector<std::pair<uint8_t, IpAddr>>{{kMld2ChangeToExclude, kSnA}}));
}

// Past the unsolicited reports, so only answers to queries go out.
void settle(EtherLink& a, RecordingSink& sink) {
  a.advance(at_ms(0));
  a.advance(at_ms(1000));
  sink.take();
}

TEST(Mld, GeneralQueryAnsweredWithinMaxResponseDelay) {
  RecordingSink sink;
  EtherLink a(mld_config(), sink);
  settle(a, sink);
  EXPECT_TRUE(a.input(at_ms(2000), query_frame({})).empty());
  EXPECT_EQ(a.stats().mld_queries_rx, 1u);
  EXPECT_TRUE(sink.take().empty());
  const Time due = a.next_deadline();
  ASSERT_GE(due, at_ms(2000));
  ASSERT_LT(due, at_ms(3000));  // Max Response Code 1000 ms
  a.advance(due);
  auto out = sink.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(records(out[0]), (std::vector<std::pair<uint8_t, IpAddr>>{{kMld2ModeIsExclude, kSnA}}));
  EXPECT_EQ(a.next_deadline(), Time::never());
}

TEST(Mld, AddressSpecificQueryForOurGroupOnly) {
  RecordingSink sink;
  EtherLink a(mld_config(), sink);
  settle(a, sink);
  QuerySpec other;
  other.group = ip6("ff02::1:ff00:77");  // to all-nodes, so the MAC filter passes it
  a.input(at_ms(2000), query_frame(other));
  EXPECT_EQ(a.next_deadline(), Time::never());  // not our group
  QuerySpec ours;
  ours.group = ours.dst = kSnA;
  ours.max_code = 0;  // answer at once
  a.input(at_ms(2000), query_frame(ours));
  EXPECT_EQ(a.next_deadline(), at_ms(2000));
  a.advance(at_ms(2000));
  auto out = sink.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(records(out[0]), (std::vector<std::pair<uint8_t, IpAddr>>{{kMld2ModeIsExclude, kSnA}}));
}

TEST(Mld, V1QueryAnsweredToo) {
  RecordingSink sink;
  EtherLink a(mld_config(), sink);
  settle(a, sink);
  QuerySpec q;
  q.v1 = true;
  q.max_code = 0;
  a.input(at_ms(2000), query_frame(q));
  a.advance(at_ms(2000));
  EXPECT_EQ(sink.take().size(), 1u);
}

TEST(Mld, InvalidQueriesDroppedAndCounted) {
  RecordingSink sink;
  EtherLink a(mld_config(), sink);
  settle(a, sink);
  QuerySpec hop, src, ra, sum;
  hop.hop_limit = 255;             // §6.2
  src.src = ip6("2001:db8::99");   // §5.1.14: not link-local
  ra.router_alert = false;         // §6.2
  sum.bad_checksum = true;
  for (const QuerySpec& q : {hop, src, ra, sum}) EXPECT_TRUE(a.input(at_ms(2000), query_frame(q)).empty());
  EXPECT_EQ(a.stats().mld_rx_invalid, 4u);
  EXPECT_EQ(a.stats().mld_queries_rx, 0u);
  EXPECT_EQ(a.stats().rx_ip, 0u);
  EXPECT_EQ(a.next_deadline(), Time::never());
  EXPECT_EQ(parse_mld(frame_payload(query_frame(hop))).error(), MldError::kHopLimit);
  EXPECT_EQ(parse_mld(frame_payload(query_frame(src))).error(), MldError::kSource);
  EXPECT_EQ(parse_mld(frame_payload(query_frame(ra))).error(), MldError::kNoRouterAlert);
  EXPECT_EQ(parse_mld(frame_payload(query_frame(sum))).error(), MldError::kChecksum);
}

TEST(Mld, OthersReportsConsumedAndCounted) {
  RecordingSink sink;
  EtherLink a(mld_config(), sink);
  settle(a, sink);
  // Another host's report, as weir would send it, delivered to us (a
  // device without a multicast filter; ff02::16's MAC is not joined,
  // so it arrives addressed to all-nodes here).
  const MldRecord r{kMld2ChangeToExclude, ip6("ff02::1:ff00:5")};
  std::vector<uint8_t> f(14 + mld2_report_len(1));
  write_ether_header(f.data(), {MacAddr{{0x33, 0x33, 0, 0, 0, 1}}, mac(5), kEthPIpv6});
  emit_mld2_report(ip6("fe80::5"), std::span<const MldRecord>(&r, 1), f.data() + 14);
  EXPECT_TRUE(a.input(at_ms(2000), f).empty());
  EXPECT_EQ(a.stats().mld_v2_reports_rx, 1u);
  EXPECT_TRUE(sink.take().empty());
}

}  // namespace
}  // namespace weir::link
