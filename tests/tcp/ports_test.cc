// Local port choice: connect() takes the range's low-end parity first,
// bind(0) the other (Linux __inet_hash_connect, inet_csk_find_open_port),
// and the bind table frees a port when its socket goes.
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <set>

#include "ip/port_scan.h"
#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

StackConfig range(uint32_t low, uint32_t high) {
  StackConfig c;
  c.ip_local_port_range = {low, high};
  return c;
}

uint16_t port_of(Harness& t, SocketId s) { return t.stack().local_endpoint(s)->port; }

// connect() to the harness's peer; the SYN names the port.
Expected<uint16_t, Errc> connect_once(Harness& t) {
  SocketId s = *t.stack().socket();
  Errc e = t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port});
  if (e != Errc::kInProgress) return Unexpected(e);
  return t.expect_tx().h.src_port;
}

Expected<uint16_t, Errc> bind_any(Harness& t, bool reuse = false) {
  SocketId s = *t.stack().socket();
  const int on = 1;
  if (reuse) {
    EXPECT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_REUSEADDR, int_opt(on)), Errc::kOk);
  }
  Errc e = t.stack().bind(s, Endpoint{t.local, 0});
  if (e != Errc::kOk) return Unexpected(e);
  return port_of(t, s);
}

TEST(Ports, ConnectTakesTheLowEndsParityFirstThenTheOther) {
  for (uint32_t low : {40000u, 40001u}) {
    Harness t(range(low, low + 9));
    std::set<uint16_t> seen;
    for (int i = 0; i < 10; ++i) {
      auto p = connect_once(t);
      ASSERT_TRUE(p) << "connect " << i;
      EXPECT_EQ(*p % 2 == low % 2, i < 5) << "connect " << i << " took " << *p;
      seen.insert(*p);
    }
    EXPECT_EQ(seen.size(), 10u);
    EXPECT_EQ(connect_once(t).error(), Errc::kAddrNotAvail);
  }
}

TEST(Ports, BindAnyTakesTheOtherParityFirst) {
  Harness t(range(40000, 40009));
  for (int i = 0; i < 10; ++i) {
    auto p = bind_any(t);
    ASSERT_TRUE(p) << "bind " << i;
    EXPECT_EQ(*p % 2 == 1, i < 5) << "bind " << i << " took " << *p;
  }
  EXPECT_EQ(bind_any(t).error(), Errc::kAddrNotAvail);
}

// inet_csk_find_open_port's attempt_half: [40000, 40099] splits at 40050.
TEST(Ports, BindAnyWithReuseAddrKeepsToTheLowerHalfFirst) {
  Harness t(range(40000, 40099));
  for (int i = 0; i < 50; ++i) {
    auto p = bind_any(t, true);
    ASSERT_TRUE(p);
    EXPECT_LT(*p, 40050) << "bind " << i;
  }
  auto p = bind_any(t, true);
  ASSERT_TRUE(p);
  EXPECT_GE(*p, 40050);
}

TEST(Ports, ConnectAndBindAnyMeetOnlyWhenOneParityRunsOut) {
  Harness t(range(40000, 40009));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(connect_once(t));
  std::set<uint16_t> bound;
  for (int i = 0; i < 5; ++i) bound.insert(*bind_any(t));
  for (uint16_t p : bound) EXPECT_EQ(p % 2, 1) << p;  // connect()'s even ports left alone
}

TEST(Ports, AClosedSocketsPortIsFreeAgain) {
  Harness t(range(40000, 40000));
  SocketId s = *t.stack().socket();
  ASSERT_EQ(t.stack().bind(s, Endpoint{t.local, 0}), Errc::kOk);
  EXPECT_EQ(bind_any(t).error(), Errc::kAddrNotAvail);
  ASSERT_EQ(t.stack().close(t.now(), s), Errc::kOk);
  auto p = bind_any(t);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, 40000);
}

// The peer refuses the SYN of connect() on `s`.
void refused(Harness& t, SocketId s) {
  ASSERT_EQ(t.stack().connect(t.now(), s, Endpoint{t.remote, t.remote_port}), Errc::kInProgress);
  Tx syn = t.expect_tx();
  t.iss_ = syn.h.seq;
  t.local_port = syn.h.src_port;
  t.inject(wire::tcp_flag::RST | wire::tcp_flag::ACK, 0, 1, 0, 0);
}

// tcp_set_state(TCP_CLOSE) puts a port the stack chose; the application
// still holding the dead socket does not keep it. getsockname still names
// it (__inet_put_port clears inet_num, not inet_sport).
TEST(Ports, AChosenPortGoesBackWhenTheConnectionFails) {
  Harness t(range(40000, 40000));
  SocketId s = *t.stack().socket();
  refused(t, s);
  EXPECT_EQ(t.stack().local_endpoint(s)->port, 40000);
  auto p = bind_any(t);
  ASSERT_TRUE(p) << "the refused socket still holds the port";
  EXPECT_EQ(*p, 40000);
}

// SOCK_BINDPORT_LOCK: a port bind() named stays with the socket.
TEST(Ports, ANamedPortStaysWithTheSocketPastClosed) {
  Harness t(range(40000, 40000));
  SocketId s = *t.stack().socket();
  ASSERT_EQ(t.stack().bind(s, Endpoint{t.local, 40000}), Errc::kOk);
  refused(t, s);
  SocketId o = *t.stack().socket();
  EXPECT_EQ(t.stack().bind(o, Endpoint{t.local, 40000}), Errc::kAddrInUse);
  EXPECT_EQ(bind_any(t).error(), Errc::kAddrNotAvail);
}

// Linux ip_local_reserved_ports: neither walk takes them; bind() may.
TEST(Ports, ReservedPortsAreSkippedByBothWalksButNotByBind) {
  StackConfig c = range(40000, 40009);
  ASSERT_EQ(c.set("net.ipv4.ip_local_reserved_ports", "40000-40003, 40005,40007-40008\n"), "");
  ASSERT_EQ(c.ip_local_reserved_ports.size(), 3u);
  Harness t(c);
  EXPECT_EQ(*connect_once(t), 40004);  // the only even port left
  std::set<uint16_t> got;
  for (int i = 0; i < 2; ++i) got.insert(*bind_any(t));
  EXPECT_EQ(got, (std::set<uint16_t>{40006, 40009}));
  EXPECT_EQ(bind_any(t).error(), Errc::kAddrNotAvail);
  SocketId s = *t.stack().socket();
  EXPECT_EQ(t.stack().bind(s, Endpoint{t.local, 40000}), Errc::kOk);
}

TEST(Ports, ReservedPortsSyntax) {
  StackConfig c;
  EXPECT_EQ(c.set("ip_local_reserved_ports", "8080,9148-9150"), "");
  EXPECT_EQ(c.ip_local_reserved_ports, (std::vector<std::array<uint16_t, 2>>{{8080, 8080}, {9148, 9150}}));
  for (const char* bad : {"70000", "9150-9148", "80,x", "-5", "1-"})
    EXPECT_NE(c.set("ip_local_reserved_ports", bad), "") << bad;
  EXPECT_EQ(c.ip_local_reserved_ports.size(), 2u);  // a refused value changes nothing
  EXPECT_EQ(c.set("ip_local_reserved_ports", ""), "");
  EXPECT_TRUE(c.ip_local_reserved_ports.empty());
}

// The walk itself: every port of the range once, parities in order.
TEST(PortScan, VisitsEachPortOnceLowParityFirst) {
  for (uint32_t start : {0u, 1u, 7u, 12345u}) {
    std::vector<uint16_t> order;
    auto none = scan_ports(100, 109, start, ParityFirst::kLow, [&](uint16_t p) {
      order.push_back(p);
      return false;
    });
    EXPECT_FALSE(none);
    ASSERT_EQ(order.size(), 10u);
    EXPECT_EQ(std::set<uint16_t>(order.begin(), order.end()).size(), 10u);
    for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i] % 2 == 0, i < 5) << start;
  }
}

TEST(PortScan, SinglePortRange) {
  auto p = scan_ports(5000, 5000, 77, ParityFirst::kOther, [](uint16_t) { return true; });
  ASSERT_TRUE(p);
  EXPECT_EQ(p->port, 5000);
}

}  // namespace
}  // namespace weir::test
