// RFC 2385 TCP MD5 signatures with Linux's API and behaviour: TCP_MD5SIG /
// TCP_MD5SIG_EXT keys, signed SYN-ACKs, data and RSTs, the option layout
// and MSS arithmetic, and the three inbound drops (tcp_inbound_md5_hash).
#include <gtest/gtest.h>

#include <linux/tcp.h>
#include <netinet/in.h>

#include <cstring>

#include "tcp/harness_helper.h"
#include "tcp/md5_sig.h"
#include "tcp/md5_keys.h"

namespace weir::test {
namespace {

using namespace wire::tcp_flag;

const std::vector<uint8_t> kKey = {'b', 'g', 'p', '-', 's', 'e', 'c', 'r', 'e', 't'};

Errc set_key(Harness& h, SocketId s, std::span<const uint8_t> key, int name = TCP_MD5SIG, int prefix = -1) {
  return h.stack().setsockopt(h.now(), s, IPPROTO_TCP, name, md5sig(h.remote, key, prefix));
}

SocketId keyed_listener(Harness& h) {
  h.listener = *h.stack().socket();
  EXPECT_EQ(h.stack().bind(h.listener, Endpoint{h.local, h.local_port}), Errc::kOk);
  EXPECT_EQ(set_key(h, h.listener, kKey), Errc::kOk);
  EXPECT_EQ(h.stack().listen(h.now(), h.listener, 16), Errc::kOk);
  return h.listener;
}

uint64_t counter(Harness& h, Counter c) { return h.stack().counters().get(c); }

// The digest the stack put on `t` is the one the key gives (checked the way
// the peer checks it).
bool signed_with(const Tx& t, std::span<const uint8_t> key) {
  tcp::md5::KeyList keys;
  keys.add(t.ip.src, 32, key);
  const wire::TcpPacket p{t.ip, t.h, t.payload};
  return t.h.options.md5 && tcp::md5::check(&keys, p) == tcp::md5::Verdict::kOk;
}

void peer_syn(Harness& h, PeerOpts o = {}) {
  wire::TcpHeader syn = h.peer_syn(h.remote_port, h.peer_isn_, o);
  h.inject_raw(syn);
}

TEST(Md5, SignedSynGetsASignedSynAckWithMd5FirstAndNoTimestampsNextToSack) {
  Harness h;
  keyed_listener(h);
  h.peer_md5_key = kKey;
  peer_syn(h);
  Tx sa = h.expect_tx();
  ASSERT_TRUE(sa.has(SYN) && sa.has(ACK));
  EXPECT_TRUE(signed_with(sa, kKey));
  // Linux tcp_options_write: NOP NOP MD5 first; tcp_synack_options drops TS
  // when SACK is on (20 + 12 + 4 + 4 + 4 > 40 with SACK blocks later).
  ASSERT_GE(sa.h.options.item_count, 3);
  EXPECT_EQ(sa.h.options.items[0].kind, wire::tcp_opt::NOP);
  EXPECT_EQ(sa.h.options.items[1].kind, wire::tcp_opt::NOP);
  EXPECT_EQ(sa.h.options.items[2].kind, wire::tcp_opt::MD5);
  EXPECT_FALSE(sa.h.options.ts.has_value());
  EXPECT_TRUE(sa.h.options.sack_permitted);
}

TEST(Md5, UnsignedSynToAKeyedListenerIsDroppedAsNotFound) {
  Harness h;
  keyed_listener(h);
  peer_syn(h);
  EXPECT_EQ(h.pending(), 0u);
  EXPECT_EQ(counter(h, Counter::TcpExtTCPMD5NotFound), 1u);
}

TEST(Md5, SignedSynWithoutAKeyIsDroppedAsUnexpected) {
  Harness h;
  h.listener = *h.stack().socket();
  h.stack().bind(h.listener, Endpoint{h.local, h.local_port});
  h.stack().listen(h.now(), h.listener, 16);
  h.peer_md5_key = kKey;
  peer_syn(h);
  EXPECT_EQ(h.pending(), 0u);
  EXPECT_EQ(counter(h, Counter::TcpExtTCPMD5Unexpected), 1u);
}

TEST(Md5, WrongKeyIsAFailureAndDrawsNoReply) {
  Harness h;
  keyed_listener(h);
  h.peer_md5_key = {'w', 'r', 'o', 'n', 'g'};
  peer_syn(h);
  EXPECT_EQ(h.pending(), 0u);
  EXPECT_EQ(counter(h, Counter::TcpExtTCPMD5Failure), 1u);
}

// The accepted child inherits the listener's key (tcp_v4_syn_recv_sock):
// its data is signed, its MSS leaves 20 bytes for the option.
TEST(Md5, ChildInheritsTheKeyAndSignsDataWithTheMssReduced) {
  Harness h;
  keyed_listener(h);
  h.peer_md5_key = kKey;
  SocketId s = h.passive_open();
  ASSERT_NE(s, kNoSocket);
  auto info = h.stack().tcp_info(s);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->tcpi_snd_mss, 1460u - 20u);  // tcp_current_mss: TCPOLEN_MD5SIG_ALIGNED, no TS
  h.clear_tx();
  std::vector<uint8_t> data(3000, 'x');
  ASSERT_TRUE(h.stack().send(h.now(), s, data, 0).has_value());
  Tx d = h.expect_tx();
  EXPECT_EQ(d.payload.size(), 1440u);
  EXPECT_TRUE(signed_with(d, kKey));
}

// A key set on an established connection signs the next segment at once
// (tcp_md5_do_lookup per segment) and, as Linux tcp_current_mss compares
// the options with those mss_cache was sized for, the next data carries 20
// bytes less, so the packet keeps to the MSS (RFC 9293 §3.7.1); tcpi_snd_mss
// (mss_cache) does not move. Deleting the key gives the 20 bytes back.
TEST(Md5, KeySetMidConnectionShortensTheNextDataAtOnce) {
  Harness h;
  h.listener = *h.stack().socket();
  ASSERT_EQ(h.stack().bind(h.listener, Endpoint{h.local, h.local_port}), Errc::kOk);
  ASSERT_EQ(h.stack().listen(h.now(), h.listener, 16), Errc::kOk);
  SocketId s = h.passive_open();
  ASSERT_NE(s, kNoSocket);
  const uint32_t mss = h.stack().tcp_info(s)->tcpi_snd_mss;
  ASSERT_EQ(set_key(h, s, kKey), Errc::kOk);
  h.clear_tx();
  std::vector<uint8_t> data(3000, 'x');
  ASSERT_TRUE(h.stack().send(h.now(), s, data, 0).has_value());
  Tx d = h.expect_tx();
  EXPECT_TRUE(signed_with(d, kKey));
  EXPECT_EQ(d.payload.size(), mss - 20u);
  EXPECT_EQ(h.stack().tcp_info(s)->tcpi_snd_mss, mss);
  ASSERT_EQ(set_key(h, s, {}), Errc::kOk);  // keylen 0: delete
  while (h.pending() > 0) h.clear_tx();
  h.peer_md5_key.clear();
  h.inject(ACK, 1, 3000);  // everything acknowledged (unsigned: no key now)
  while (h.pending() > 0) h.clear_tx();
  ASSERT_TRUE(h.stack().send(h.now(), s, data, 0).has_value());
  Tx e = h.expect_tx();
  EXPECT_FALSE(e.h.options.md5.has_value());
  EXPECT_EQ(e.payload.size(), mss);
}

TEST(Md5, ForgedRstOnAKeyedConnectionChangesNothing) {
  Harness h;
  keyed_listener(h);
  h.peer_md5_key = kKey;
  SocketId s = h.passive_open();
  h.peer_md5_key.clear();
  h.inject(RST, 1, 1);  // unsigned: TcpExtTCPMD5NotFound, before any state change
  EXPECT_EQ(counter(h, Counter::TcpExtTCPMD5NotFound), 1u);
  EXPECT_EQ(h.pending(), 0u);  // no RST, no challenge ACK
  auto info = h.stack().tcp_info(s);
  EXPECT_EQ(info->tcpi_state, 1);  // still ESTABLISHED
}

TEST(Md5, ActiveOpenSynCarriesMd5AndNoTimestamps) {
  Harness h;
  SocketId s = *h.stack().socket();
  ASSERT_EQ(set_key(h, s, kKey), Errc::kOk);
  h.stack().connect(h.now(), s, Endpoint{h.remote, h.remote_port});
  Tx syn = h.expect_tx();
  EXPECT_TRUE(signed_with(syn, kKey));
  EXPECT_FALSE(syn.h.options.ts.has_value());  // Linux tcp_syn_options
  EXPECT_EQ(syn.h.options.mss, 1460);          // the advertised MSS ignores options
}

TEST(Md5, DeletingTheKeyStopsSigningAndASecondDeleteIsENOENT) {
  Harness h;
  SocketId s = *h.stack().socket();
  ASSERT_EQ(set_key(h, s, kKey), Errc::kOk);
  EXPECT_EQ(set_key(h, s, {}), Errc::kOk);  // keylen 0 deletes
  EXPECT_EQ(set_key(h, s, {}), Errc::kNoEnt);
  h.stack().connect(h.now(), s, Endpoint{h.remote, h.remote_port});
  Tx syn = h.expect_tx();
  EXPECT_FALSE(syn.h.options.md5.has_value());
  EXPECT_TRUE(syn.h.options.ts.has_value());
}

TEST(Md5, SockoptErrorsAreLinuxs) {
  Harness h;
  SocketId s = *h.stack().socket();
  std::vector<uint8_t> v = md5sig(h.remote, kKey);
  EXPECT_EQ(h.stack().setsockopt(h.now(), s, IPPROTO_TCP, TCP_MD5SIG, std::span(v.data(), v.size() - 1)),
            Errc::kInval);  // optlen < sizeof(struct tcp_md5sig)
  std::vector<uint8_t> long_key(81, 'k');
  EXPECT_EQ(set_key(h, s, long_key), Errc::kInval);  // over TCP_MD5SIG_MAXKEYLEN
  EXPECT_EQ(set_key(h, s, kKey, TCP_MD5SIG_EXT, 33), Errc::kInval);  // prefix over 32
  v[0] = AF_INET6;  // the family is not the socket's
  v[1] = 0;
  EXPECT_EQ(h.stack().setsockopt(h.now(), s, IPPROTO_TCP, TCP_MD5SIG, v), Errc::kInval);
}

TEST(Md5, KeysPerSocketAreBounded) {
  Harness h;
  SocketId s = *h.stack().socket();
  for (uint32_t i = 0; i < tcp::md5::kMaxKeys; ++i) {
    std::vector<uint8_t> v = md5sig(IpAddr::v4(0x0a000000u + i), kKey);
    ASSERT_EQ(h.stack().setsockopt(h.now(), s, IPPROTO_TCP, TCP_MD5SIG, v), Errc::kOk);
  }
  std::vector<uint8_t> v = md5sig(IpAddr::v4(0x0b000000u), kKey);
  EXPECT_EQ(h.stack().setsockopt(h.now(), s, IPPROTO_TCP, TCP_MD5SIG, v), Errc::kNoMem);
  v = md5sig(IpAddr::v4(0x0a000000u), kKey);  // replacing an existing key still works
  EXPECT_EQ(h.stack().setsockopt(h.now(), s, IPPROTO_TCP, TCP_MD5SIG, v), Errc::kOk);
}

TEST(Md5, PrefixKeyCoversThePeerAndTheLongestPrefixWins) {
  tcp::md5::KeyList keys;
  const std::vector<uint8_t> a = {'a'}, b = {'b'};
  ASSERT_EQ(keys.add(IpAddr::v4(192, 0, 2, 0), 24, a), Errc::kOk);
  ASSERT_EQ(keys.add(IpAddr::v4(192, 0, 2, 0), 28, b), Errc::kOk);
  ASSERT_NE(keys.lookup(IpAddr::v4(192, 0, 2, 1)), nullptr);
  EXPECT_EQ(keys.lookup(IpAddr::v4(192, 0, 2, 1))->key[0], 'b');
  EXPECT_EQ(keys.lookup(IpAddr::v4(192, 0, 2, 200))->key[0], 'a');
  EXPECT_EQ(keys.lookup(IpAddr::v4(192, 0, 3, 1)), nullptr);
  EXPECT_EQ(keys.del(IpAddr::v4(192, 0, 2, 0), 25), Errc::kNoEnt);  // exact prefix only
}

TEST(Md5, ExtPrefixKeySignsTheSynAck) {
  Harness h;
  h.listener = *h.stack().socket();
  h.stack().bind(h.listener, Endpoint{h.local, h.local_port});
  ASSERT_EQ(set_key(h, h.listener, kKey, TCP_MD5SIG_EXT, 16), Errc::kOk);
  h.stack().listen(h.now(), h.listener, 16);
  h.peer_md5_key = kKey;
  peer_syn(h);
  Tx sa = h.expect_tx();
  EXPECT_TRUE(signed_with(sa, kKey));
}

// Without SACK the SYN-ACK keeps timestamps next to MD5, and an
// established segment's options are 20 + 12: the MSS drops by 32.
TEST(Md5, TimestampsWithoutSackLeaveThirtyTwoBytesOfOptions) {
  Harness h;
  keyed_listener(h);
  h.peer_md5_key = kKey;
  PeerOpts o;
  o.sack = false;
  SocketId s = h.passive_open(o);
  auto info = h.stack().tcp_info(s);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->tcpi_snd_mss, 1460u - 32u);
}

// Linux tcp_v4_send_reset with no socket: a signed segment draws a reset
// only when a listener (looked up by the segment's source port) has a key
// that verifies it; an unsigned one draws the usual reset.
TEST(Md5, SignedSegmentToAClosedPortDrawsNoRst) {
  Harness h;
  h.peer_md5_key = kKey;
  peer_syn(h);
  EXPECT_EQ(h.pending(), 0u);
  h.peer_md5_key.clear();
  peer_syn(h);
  Tx rst = h.expect_tx();
  EXPECT_TRUE(rst.has(RST));
}

}  // namespace
}  // namespace weir::test
