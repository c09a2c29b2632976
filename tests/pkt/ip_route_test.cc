// `ip route` lines in packetdrill scripts (pkt/ip_route.h): the metrics TCP
// reads, and bad lines rejected with the word at fault named.
#include <gtest/gtest.h>

#include <sstream>

#include "ip/route_table.h"
#include "pkt/ip_route.h"

namespace weir::pkt {
namespace {

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

std::string error_of(const std::string& line) {
  auto r = parse_ip_route(words(line));
  EXPECT_FALSE(r.has_value()) << line;
  return r ? "" : r.error().what;
}

TEST(IpRoute, Ipv4ChangeWithAllMetrics) {
  auto r = parse_ip_route(words("ip route change 192.0.2.1 via 192.168.0.2 dev tun0 advmss 600 mtu lock 640 initcwnd 11"));
  ASSERT_TRUE(r.has_value()) << r.error().what;
  EXPECT_EQ(r->dst, *IpAddr::parse("192.0.2.1"));
  EXPECT_EQ(r->prefix_len, 32);
  EXPECT_EQ(r->metrics.advmss, 600u);
  EXPECT_EQ(r->metrics.mtu, 640u);
  EXPECT_TRUE(r->metrics.mtu_locked);
  EXPECT_EQ(r->metrics.initcwnd, 11u);
  EXPECT_FALSE(r->metrics.fastopen_no_cookie);
}

TEST(IpRoute, FastOpenNoCookieIsABoolean) {
  auto r = parse_ip_route(words("ip route add 192.0.2.0/24 dev tun0 fastopen_no_cookie 1"));
  ASSERT_TRUE(r.has_value()) << r.error().what;
  EXPECT_TRUE(r->metrics.fastopen_no_cookie);
  EXPECT_NE(error_of("ip route add 192.0.2.0/24 fastopen_no_cookie 2").find("needs 0 or 1"), std::string::npos);
  EXPECT_NE(error_of("ip route add 192.0.2.0/24 fastopen_no_cookie").find("needs 0 or 1"), std::string::npos);
}

TEST(IpRoute, Ipv6PrefixAndUnlockedMtu) {
  auto r = parse_ip_route(words("ip -6 route replace 2001:DB8::/32 via fd3d:fa7b:d17d:8888::0 dev tun0 mtu 1400"));
  ASSERT_TRUE(r.has_value()) << r.error().what;
  EXPECT_EQ(r->dst, *IpAddr::parse("2001:db8::"));
  EXPECT_EQ(r->prefix_len, 32);
  EXPECT_EQ(r->metrics.mtu, 1400u);
  EXPECT_FALSE(r->metrics.mtu_locked);
  EXPECT_EQ(r->metrics.advmss, 0u);
}

TEST(IpRoute, DefaultRoute) {
  auto r = parse_ip_route(words("ip route add default via 192.168.0.2 initcwnd 20"));
  ASSERT_TRUE(r.has_value()) << r.error().what;
  EXPECT_EQ(r->prefix_len, 0);
  EXPECT_TRUE(r->dst.is_v4());
}

TEST(IpRoute, BadLinesNameTheFault) {
  EXPECT_NE(error_of("ip route change 192.0.2.300 dev tun0").find("'192.0.2.300'"), std::string::npos);
  EXPECT_NE(error_of("ip route change 192.0.2.1/33").find("'33'"), std::string::npos);
  EXPECT_NE(error_of("ip -6 route change 192.0.2.1 mtu 1400").find("IPv6"), std::string::npos);
  EXPECT_NE(error_of("ip route change 192.0.2.1 advmss").find("'advmss' needs a value"), std::string::npos);
  EXPECT_NE(error_of("ip route change 192.0.2.1 mtu lock").find("'mtu' needs a value"), std::string::npos);
  EXPECT_NE(error_of("ip route change 192.0.2.1 mtu 6x0").find("'6x0'"), std::string::npos);
  EXPECT_NE(error_of("ip route change 192.0.2.1 initcwnd 0").find("'0'"), std::string::npos);
  EXPECT_NE(error_of("ip route change 192.0.2.1 mtu 40").find("below the minimum 68"), std::string::npos);
  EXPECT_NE(error_of("ip -6 route change 2001:db8::1 mtu 67").find("below the minimum 68"), std::string::npos);
  EXPECT_NE(error_of("ip route change 192.0.2.1 advmms 600").find("unknown word 'advmms'"), std::string::npos);
  EXPECT_NE(error_of("ip route").find("missing the action"), std::string::npos);
  EXPECT_NE(error_of("ip route add").find("missing the destination"), std::string::npos);
}

TEST(IpRoute, ValidButUnmodelledIsMarkedUnsupported) {
  auto r = parse_ip_route(words("ip route change 192.0.2.1 rtt 100ms"));
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(r.error().unsupported);
  auto d = parse_ip_route(words("ip route del 192.0.2.1"));
  ASSERT_FALSE(d.has_value());
  EXPECT_TRUE(d.error().unsupported);
  auto bad = parse_ip_route(words("ip route change 192.0.2.1 bogus 1"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_FALSE(bad.error().unsupported);
}

TEST(RouteTable, LongestPrefixWinsAndFamiliesStayApart) {
  RouteTable t;
  Route wide{*IpAddr::parse("192.0.2.0"), 24, {}};
  wide.metrics.initcwnd = 20;
  Route host{*IpAddr::parse("192.0.2.1"), 32, {}};
  host.metrics.mtu = 640;
  ASSERT_EQ(t.set(wide), Errc::kOk);
  ASSERT_EQ(t.set(host), Errc::kOk);
  EXPECT_EQ(t.lookup(*IpAddr::parse("192.0.2.1")).mtu, 640u);
  EXPECT_EQ(t.lookup(*IpAddr::parse("192.0.2.7")).initcwnd, 20u);
  EXPECT_EQ(t.lookup(*IpAddr::parse("198.51.100.1")).initcwnd, 0u);
  EXPECT_EQ(t.lookup(*IpAddr::parse("::c000:201")).mtu, 0u);  // not the IPv4 route
  const uint64_t gen = t.generation();
  host.metrics.mtu = 1500;
  ASSERT_EQ(t.set(host), Errc::kOk);  // replaces, does not add
  EXPECT_EQ(t.size(), 2u);
  EXPECT_GT(t.generation(), gen);
  EXPECT_EQ(t.set(Route{*IpAddr::parse("192.0.2.1"), 33, {}}), Errc::kInval);
}

TEST(RouteTable, Bounded) {
  RouteTable t(4);
  for (uint8_t i = 0; i < 4; ++i) ASSERT_EQ(t.set(Route{IpAddr::v4(10, 0, 0, i), 32, {}}), Errc::kOk);
  EXPECT_EQ(t.set(Route{IpAddr::v4(10, 0, 0, 9), 32, {}}), Errc::kNoBufs);
  EXPECT_EQ(t.set(Route{IpAddr::v4(10, 0, 0, 1), 32, {}}), Errc::kOk);  // a replacement still fits
  EXPECT_EQ(t.size(), 4u);
}

}  // namespace
}  // namespace weir::pkt
