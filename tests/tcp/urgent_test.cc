// TCP urgent data as Linux implements it (RFC 9293 §3.8.5, RFC 6093;
// tcp_check_urg, tcp_urg, tcp_recvmsg, tcp_recv_urg, tcp_read_sock,
// tcp_mark_urg, __tcp_transmit_skb): the urgent byte taken out of the
// stream, recv(MSG_OOB), SO_OOBINLINE, SIOCATMARK, POLLPRI, FIONREAD, the
// URG bit on what we send, splice() at the mark, and IP_FREEBIND's bind().
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include "tcp/harness_helper.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

constexpr unsigned long kFionread = 0x541B;
constexpr unsigned long kSiocatmark = 0x8905;

// The peer's segment [seq, seq + len) (relative) with URG and SEG.UP = up.
// Payload bytes are their relative sequence numbers' low byte, as inject().
void inject_urg(Harness& t, uint32_t seq, uint32_t len, uint16_t up) {
  wire::TcpHeader h;
  h.src_port = t.remote_port;
  h.dst_port = t.local_port;
  h.seq = t.peer_isn_ + seq;
  h.ack = t.iss_ + 1;
  h.flags = ACK | URG;
  h.window = 65535;
  h.urgent = up;
  h.options.ts = wire::TcpTimestamps{t.peer_tsval + static_cast<uint32_t>(t.now().ms()), t.last_tsval};
  std::vector<uint8_t> p(len);
  for (uint32_t i = 0; i < len; ++i) p[i] = static_cast<uint8_t>(seq + i);
  t.inject_raw(h, p);
}

int ioctl_of(Harness& t, SocketId s, unsigned long req) {
  int v = -1;
  EXPECT_EQ(t.stack().ioctl(s, req, &v), Errc::kOk);
  return v;
}

Expected<size_t, Errc> recv_into(Harness& t, SocketId s, std::vector<uint8_t>& buf, int flags = 0) {
  return t.stack().recv(t.now(), s, buf, flags);
}

TEST(Urgent, ReadStopsAtTheMarkAndStepsOverTheUrgentByte) {
  Harness t;
  SocketId s = t.passive_open();
  inject_urg(t, 1, 100, 100);  // RFC 6093 §4: the urgent byte is seq 100, the last
  std::vector<uint8_t> buf(1000);
  auto r = recv_into(t, s, buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 99u);  // never across the mark in one call
  t.inject(ACK, 101, 1, 100);
  r = recv_into(t, s, buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 100u);  // the urgent byte is skipped: 101..200
  EXPECT_EQ(buf[0], 101);
}

TEST(Urgent, MsgOobReturnsTheByteOnceThenEinval) {
  Harness t;
  SocketId s = t.passive_open();
  std::vector<uint8_t> one(1);
  auto none = recv_into(t, s, one, MSG_OOB);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), Errc::kInval);  // tcp_recv_urg: no urgent data
  inject_urg(t, 1, 100, 100);
  auto b = recv_into(t, s, one, MSG_OOB | MSG_PEEK);
  ASSERT_TRUE(b);
  EXPECT_EQ(*b, 1u);
  b = recv_into(t, s, one, MSG_OOB);
  ASSERT_TRUE(b);
  EXPECT_EQ(*b, 1u);
  EXPECT_EQ(one[0], 100);
  auto again = recv_into(t, s, one, MSG_OOB);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error(), Errc::kInval);  // TCP_URG_READ
}

TEST(Urgent, PointerAheadOfTheDataIsEagainUntilTheByteArrives) {
  Harness t;
  SocketId s = t.passive_open();
  inject_urg(t, 1, 0, 50);  // a pure ACK announcing urgent byte 50
  std::vector<uint8_t> one(1);
  auto r = recv_into(t, s, one, MSG_OOB);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), Errc::kAgain);  // TCP_URG_NOTYET
  EXPECT_EQ(t.stack().poll(s) & ev::PRI, 0u);
  t.inject(ACK, 1, 1, 100);  // no URG: tcp_urg takes the byte all the same
  EXPECT_NE(t.stack().poll(s) & ev::PRI, 0u);
  r = recv_into(t, s, one, MSG_OOB);
  ASSERT_TRUE(r);
  EXPECT_EQ(one[0], 50);
}

TEST(Urgent, OobInlineKeepsTheByteInTheStream) {
  Harness t;
  SocketId s = t.passive_open();
  int on = 1;
  ASSERT_EQ(t.stack().setsockopt(t.now(), s, SOL_SOCKET, SO_OOBINLINE, int_opt(on)), Errc::kOk);
  inject_urg(t, 1, 100, 100);
  std::vector<uint8_t> buf(1000);
  auto r = recv_into(t, s, buf, MSG_OOB);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), Errc::kInval);
  EXPECT_EQ(t.stack().poll(s) & ev::PRI, ev::PRI);  // tcp_poll tests TCP_URG_VALID only
  r = recv_into(t, s, buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 99u);  // still stops at the mark
  EXPECT_EQ(ioctl_of(t, s, kSiocatmark), 1);
  EXPECT_EQ(ioctl_of(t, s, kFionread), 1);  // tcp_inq: inline counts everything
  r = recv_into(t, s, buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 1u);
  EXPECT_EQ(buf[0], 100);
}

TEST(Urgent, SiocatmarkFionreadAndPollAroundTheMark) {
  Harness t;
  SocketId s = t.passive_open();
  inject_urg(t, 1, 100, 100);
  EXPECT_EQ(ioctl_of(t, s, kSiocatmark), 0);
  EXPECT_EQ(ioctl_of(t, s, kFionread), 99);  // tcp_inq: up to the mark
  EXPECT_EQ(t.stack().poll(s) & (ev::IN | ev::PRI), ev::IN | ev::PRI);
  std::vector<uint8_t> buf(1000);
  ASSERT_EQ(*recv_into(t, s, buf), 99u);
  EXPECT_EQ(ioctl_of(t, s, kSiocatmark), 1);
  EXPECT_EQ(ioctl_of(t, s, kFionread), 0);
  // Only the byte a read would skip is left: not readable (target + 1).
  EXPECT_EQ(t.stack().poll(s) & (ev::IN | ev::PRI), ev::PRI);
  std::vector<uint8_t> one(1);
  ASSERT_EQ(*recv_into(t, s, one, MSG_OOB), 1u);
  EXPECT_EQ(t.stack().poll(s) & (ev::IN | ev::PRI), 0u);
  auto r = recv_into(t, s, buf);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), Errc::kAgain);  // stepped over the byte, nothing behind it
  EXPECT_EQ(ioctl_of(t, s, kSiocatmark), 0);
}

TEST(Urgent, ANewerPointerReplacesTheOldMark) {
  Harness t;
  SocketId s = t.passive_open();
  inject_urg(t, 1, 100, 10);   // urgent byte 10
  inject_urg(t, 101, 100, 50);  // urgent byte 150 replaces it
  std::vector<uint8_t> one(1);
  ASSERT_EQ(*recv_into(t, s, one, MSG_OOB), 1u);
  EXPECT_EQ(one[0], 150);
  std::vector<uint8_t> buf(1000);
  ASSERT_EQ(*recv_into(t, s, buf), 149u);  // byte 10 is ordinary data now
  EXPECT_EQ(buf[9], 10);
}

TEST(Urgent, ANewMarkStepsOverTheUnreadUrgentByteTheReaderSitsAt) {
  Harness t;
  SocketId s = t.passive_open();
  inject_urg(t, 1, 100, 100);
  std::vector<uint8_t> buf(1000);
  ASSERT_EQ(*recv_into(t, s, buf), 99u);
  inject_urg(t, 101, 100, 50);  // Linux tcp_check_urg: copied_seq++ over byte 100
  EXPECT_EQ(ioctl_of(t, s, kSiocatmark), 0);
  ASSERT_EQ(*recv_into(t, s, buf), 49u);
  EXPECT_EQ(buf[0], 101);
}

TEST(Urgent, ARetransmittedPointerIsNotReplayed) {
  Harness t;
  SocketId s = t.passive_open();
  t.inject(ACK, 1, 1, 100);
  inject_urg(t, 1, 100, 100);  // a retransmission: its pointer lies below RCV.NXT
  std::vector<uint8_t> buf(1000);
  auto r = recv_into(t, s, buf, MSG_OOB);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), Errc::kInval);
  ASSERT_EQ(*recv_into(t, s, buf), 100u);  // no mark in the stream
  inject_urg(t, 1, 100, 100);  // and once read: "already seen and read"
  r = recv_into(t, s, buf, MSG_OOB);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), Errc::kInval);
}

TEST(Urgent, SpliceStopsAtTheMarkWithoutSteppingOverIt) {
  Harness t;
  SocketId s = t.passive_open();
  inject_urg(t, 1, 100, 100);
  std::vector<uint8_t> buf(1000);
  auto r = t.stack().splice_read(t.now(), s, buf, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 99u);
  r = t.stack().splice_read(t.now(), s, buf, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 0u);  // tcp_splice_read: data queued, none readable: no wait
  r = t.stack().splice_read(t.now(), s, buf, true);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), Errc::kAgain);  // O_NONBLOCK: -EAGAIN comes first
  std::vector<uint8_t> one(1);
  ASSERT_EQ(*recv_into(t, s, one, MSG_OOB), 1u);
  EXPECT_EQ(*t.stack().splice_read(t.now(), s, buf, false), 0u);  // still at the mark
  t.inject(ACK, 101, 1, 10);
  ASSERT_EQ(*recv_into(t, s, buf), 10u);  // recv steps over it
  EXPECT_EQ(buf[0], 101);
}

TEST(Urgent, SendOobMarksTheEndOfTheWriteAndBypassesNagle) {
  Harness t;
  SocketId s = t.passive_open();
  std::vector<uint8_t> d(100, 0x61);
  t.stack().send(t.now(), s, d);
  Tx first = t.expect_tx();
  EXPECT_FALSE(first.has(URG));
  EXPECT_EQ(first.h.urgent, 0);
  std::vector<uint8_t> five(5, 0x62);
  t.stack().send(t.now(), s, five, MSG_OOB);
  // Linux tcp_nagle_test: urgent data is not held behind the small segment.
  Tx urg = t.expect_tx();
  EXPECT_TRUE(urg.has(URG));
  EXPECT_EQ(t.rel_seq(urg), 101u);
  EXPECT_EQ(urg.h.urgent, 5);  // SND.UP (106) - SEG.SEQ
  t.inject(ACK, 1, 106);
  t.stack().send(t.now(), s, five);
  Tx after = t.expect_tx();
  EXPECT_FALSE(after.has(URG));  // SND.UNA reached SND.UP
  EXPECT_EQ(after.h.urgent, 0);
}

TEST(Urgent, AcksCarryThePointerWhileUrgentDataWaitsForWindow) {
  Harness t;
  SocketId s = t.passive_open({}, 0);
  std::vector<uint8_t> five(5, 0x62);
  ASSERT_EQ(*t.stack().send(t.now(), s, five, MSG_OOB), 5u);
  t.clear_tx();
  t.inject(ACK, 1, 1, 10, 0);  // data from the peer, still a zero window
  Tx ack = t.expect_tx();
  EXPECT_EQ(ack.payload.size(), 0u);
  EXPECT_TRUE(ack.has(URG));
  EXPECT_EQ(ack.h.urgent, 5);  // __tcp_transmit_skb: snd_up - seq on every segment
}

TEST(Urgent, FreebindAllowsBindingAnAddressNotOurs) {
  Harness t;
  auto s = t.stack().socket();
  ASSERT_TRUE(s);
  const Endpoint foreign{IpAddr::v4(203, 0, 113, 7), 9000};
  EXPECT_EQ(t.stack().bind(*s, foreign), Errc::kAddrNotAvail);
  int on = 1;
  ASSERT_EQ(t.stack().setsockopt(t.now(), *s, IPPROTO_IP, IP_FREEBIND, int_opt(on)), Errc::kOk);
  int got = 0;
  size_t len = sizeof got;
  ASSERT_EQ(t.stack().getsockopt(*s, IPPROTO_IP, IP_FREEBIND,
                                 std::span(reinterpret_cast<uint8_t*>(&got), sizeof got), &len),
            Errc::kOk);
  EXPECT_EQ(got, 1);
  EXPECT_EQ(t.stack().bind(*s, foreign), Errc::kOk);
}

}  // namespace
}  // namespace weir::test
