// TunUring (`--io-uring`) on a socketpair instead of a TUN device: an
// AF_UNIX SOCK_SEQPACKET socket keeps datagram boundaries (one read, one
// datagram, as a TUN fd) and its io_uring reads and writes wait and
// complete as a device's do. Completions of waiting requests run as task
// work when this thread returns from its next system call, so every step
// below is deterministic: no sleeps, no threads.
#include "link/tun_uring.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <tuple>
#include <vector>

#include "link/gso_recorder.h"
#include "link/tun.h"
#include "wire/checksum.h"
#include "wire/packet.h"

namespace weir::link {
namespace {

using Bytes = std::vector<uint8_t>;

// weir's end is adopted as the device; the test plays the kernel at `peer`.
struct Pair {
  int peer = -1;
  TunDevice dev;
  static Pair make(bool vnet, bool nonblock = false) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0, fds), 0);
    ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
    return Pair{fds[1], TunDevice::adopt(fds[0], "sp", 1500, vnet)};
  }
  Pair(int p, TunDevice d) : peer(p), dev(std::move(d)) {}
  Pair(Pair&& o) noexcept : peer(o.peer), dev(std::move(o.dev)) { o.peer = -1; }
  ~Pair() {
    if (peer >= 0) ::close(peer);
  }
  // What the kernel side received, datagram by datagram.
  std::vector<Bytes> received() {
    std::vector<Bytes> got;
    Bytes b(70000);
    for (ssize_t n; (n = ::recv(peer, b.data(), b.size(), MSG_DONTWAIT)) >= 0;) got.emplace_back(b.begin(), b.begin() + n);
    return got;
  }
  void send(const Bytes& frame) { ASSERT_EQ(::send(peer, frame.data(), frame.size(), 0), static_cast<ssize_t>(frame.size())); }
  // Fills weir's send direction until a write would wait.
  size_t fill() {
    Bytes junk(1000, 0xee);
    size_t n = 0;
    while (::send(dev.fd(), junk.data(), junk.size(), MSG_DONTWAIT) > 0) ++n;
    EXPECT_EQ(errno, EAGAIN);
    return n;
  }
};

std::unique_ptr<TunUring> ring_on(TunDevice& dev, size_t rx, size_t tx, bool multishot = true) {
  auto r = TunUring::open(dev, {.rx_slots = rx, .tx_slots = tx, .multishot = multishot});
  EXPECT_TRUE(r) << (r ? "" : r.error());
  return r ? std::move(*r) : nullptr;
}

Bytes numbered(uint8_t i, size_t len = 100) {
  Bytes b(len, i);
  b[0] = 0x45;  // looks like IPv4 to a reader; TunUring itself does not parse
  return b;
}

Bytes segment(uint32_t seq, size_t len, uint8_t flags = wire::tcp_flag::ACK) {
  return test::tcp_segment(*IpAddr::parse("192.0.2.2"), *IpAddr::parse("192.0.2.1"), 40000, 80, seq, len, flags);
}

// The 10-byte virtio_net_hdr (little-endian) the kernel puts first.
Bytes with_vnet(const VnetHdr& h, const Bytes& pkt) {
  Bytes f = {h.flags, h.gso_type};
  for (uint16_t v : {h.hdr_len, h.gso_size, h.csum_start, h.csum_offset})
    f.push_back(static_cast<uint8_t>(v)), f.push_back(static_cast<uint8_t>(v >> 8));
  f.insert(f.end(), pkt.begin(), pkt.end());
  return f;
}

TEST(TunUringTx, QueuedPacketsLeaveInOrderOnOneSubmit) {
  Pair p = Pair::make(false);
  auto ring = ring_on(p.dev, 4, 16);
  ring->flush();  // the posted reads go in
  const uint64_t submits = ring->stats().submits;
  uint64_t bytes = 0;
  for (uint8_t i = 0; i < 10; ++i) {
    ASSERT_EQ(ring->queue(VnetHdr{}, numbered(i, 100 + i)), TunDevice::Xmit::kSent);
    bytes += 100 + i;
  }
  EXPECT_TRUE(p.received().empty()) << "nothing is written before the burst ends";
  EXPECT_EQ(ring->tx_free(), 6u);
  ring->flush();
  EXPECT_EQ(ring->stats().submits, submits + 1) << "one io_uring_enter for the burst";
  const auto got = p.received();
  ASSERT_EQ(got.size(), 10u);
  for (uint8_t i = 0; i < 10; ++i) EXPECT_EQ(got[i], numbered(i, 100 + i)) << "in queue order";
  EXPECT_EQ(ring->tx_free(), 16u) << "slots come back with their completions";
  EXPECT_EQ(p.dev.stats().tx_packets, 10u);
  EXPECT_EQ(p.dev.stats().tx_bytes, bytes);
  EXPECT_EQ(p.dev.stats().tx_dropped, 0u);
}

TEST(TunUringTx, OversizeIsLostNotQueued) {
  Pair p = Pair::make(false);
  auto ring = ring_on(p.dev, 1, 4);
  EXPECT_EQ(ring->queue(VnetHdr{}, numbered(1, 1501)), TunDevice::Xmit::kLost);
  EXPECT_EQ(p.dev.stats().tx_oversize, 1u);
  EXPECT_EQ(ring->tx_free(), 4u);
}

// All slots in flight (the writes wait for room) and a submit and reap
// frees none: the packet is refused, told to the engine as a local drop
// (XmitResult::kDropped, as tun_write_verdict(ENOBUFS)); once the other
// side reads, the writes complete and the slots serve again.
TEST(TunUringTx, NoFreeSlotRefusesThePacketUntilWritesComplete) {
  Pair p = Pair::make(false);
  auto ring = ring_on(p.dev, 2, 4);
  TunNetif netif(p.dev, ring.get());
  const size_t filled = p.fill();
  for (uint8_t i = 0; i < 4; ++i) EXPECT_EQ(netif.try_transmit(numbered(i)), XmitResult::kSent);
  netif.flush();
  EXPECT_EQ(ring->tx_free(), 0u) << "the four writes wait for room";
  EXPECT_EQ(netif.try_transmit(numbered(9)), XmitResult::kDropped);
  EXPECT_EQ(netif.try_transmit(numbered(9)), XmitResult::kDropped);
  EXPECT_EQ(p.dev.stats().tx_dropped, 2u);
  EXPECT_EQ(p.dev.stats().tx_refused, 2u);
  EXPECT_EQ(ring->stats().tx_no_slot, 2u);
  // The kernel side drains: the waiting writes complete, in order, after the junk.
  // Those of the four that completed while it drained come after the junk.
  // Writes that waited are retried as the socket's wait queue wakes them,
  // last first: a TUN write never waits (tun_get_user allocates against an
  // INT_MAX sndbuf), so there the order is the queue's (the test above).
  auto got = p.received();
  ASSERT_GE(got.size(), filled);
  got.erase(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(filled));
  netif.flush();
  for (auto& b : p.received()) got.push_back(b);
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got, (std::vector<Bytes>{numbered(0), numbered(1), numbered(2), numbered(3)}));
  EXPECT_EQ(ring->tx_free(), 4u);
  EXPECT_EQ(netif.try_transmit(numbered(5)), XmitResult::kSent);
  netif.flush();
  ASSERT_EQ(p.received(), std::vector<Bytes>{numbered(5)});
  EXPECT_EQ(p.dev.stats().tx_packets, 5u);
  EXPECT_EQ(p.dev.stats().tx_dropped, 2u) << "no new drops";
}

// A super-packet from the coalescer is one write, counted as one when it
// completes.
TEST(TunUringTx, VnetSuperPacketIsOneWriteCountedAtCompletion) {
  Pair p = Pair::make(true);
  auto ring = ring_on(p.dev, 2, 4);
  TunNetif netif(p.dev, ring.get());
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(netif.try_transmit(segment(1000 + i * 1000, 1000)), XmitResult::kSent);
  EXPECT_EQ(p.dev.stats().tx_gso, 0u);
  netif.flush();
  const auto got = p.received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0][1], 1) << "VIRTIO_NET_HDR_GSO_TCPV4";
  EXPECT_EQ(got[0].size(), kVnetLen + segment(1000, 3000).size());
  EXPECT_EQ(p.dev.stats().tx_gso, 1u);
  EXPECT_EQ(p.dev.stats().tx_gso_segs, 3u);
  EXPECT_EQ(p.dev.stats().tx_packets, 1u);
}

// Receive, both ways: a multishot read into a provided-buffer ring
// (Linux 6.7+), and one read posted per buffer.
class TunUringRx : public ::testing::TestWithParam<bool> {
 protected:
  std::unique_ptr<TunUring> make_ring(TunDevice& dev, size_t rx, size_t tx) {
    auto r = ring_on(dev, rx, tx, GetParam());
    if (r && GetParam() && !r->multishot()) return nullptr;
    return r;
  }
};
#define RING_OR_SKIP(var, dev, rx, tx) \
  auto var = make_ring(dev, rx, tx);   \
  if (!var) GTEST_SKIP() << "no IORING_OP_READ_MULTISHOT in this kernel"

class TunUringRxVnet : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

// The same frames through TunBatch (read(2) on the device) and through the
// ring: the same datagrams, checksum verdicts and counters.
TEST_P(TunUringRxVnet, ReadsGiveWhatTunBatchGives) {
  const auto [vnet, multishot] = GetParam();
  std::vector<Bytes> frames;
  Bytes pkt = segment(1, 300);
  if (vnet) {
    VnetHdr partial;  // NEEDS_CSUM: Linux's own packet, checksum left partial
    partial.flags = 1, partial.csum_start = 20, partial.csum_offset = 16;
    frames.push_back(with_vnet(partial, pkt));
    VnetHdr checked;  // DATA_VALID
    checked.flags = 2;
    frames.push_back(with_vnet(checked, segment(301, 200)));
    VnetHdr gso;  // a super-packet
    gso.gso_type = 1, gso.hdr_len = 40, gso.gso_size = 1000, gso.flags = 1, gso.csum_start = 20, gso.csum_offset = 16;
    frames.push_back(with_vnet(gso, segment(501, 3000)));
    frames.push_back(with_vnet(VnetHdr{}, segment(3501, 0)));
  } else {
    for (uint32_t i = 0; i < 4; ++i) frames.push_back(segment(1 + i * 100, 100 + i));
  }
  Pair a = Pair::make(vnet, true);
  Pair b = Pair::make(vnet);
  for (const auto& f : frames) a.send(f), b.send(f);
  TunBatch batch(8);
  ASSERT_EQ(batch.read(a.dev), frames.size());
  auto ring = ring_on(b.dev, 8, 2, multishot);
  ring->flush();  // the reads go in and find the frames waiting
  ASSERT_EQ(ring->read(), frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(Bytes(ring->packet(i).begin(), ring->packet(i).end()), Bytes(batch.packet(i).begin(), batch.packet(i).end()))
        << i;
    EXPECT_EQ(ring->checksum_valid(i), batch.checksum_valid(i)) << i;
  }
  const TunStats& x = a.dev.stats();
  const TunStats& y = b.dev.stats();
  EXPECT_EQ(y.rx_packets, x.rx_packets);
  EXPECT_EQ(y.rx_bytes, x.rx_bytes);
  EXPECT_EQ(y.rx_batches, x.rx_batches);
  EXPECT_EQ(y.rx_gso, x.rx_gso);
  EXPECT_EQ(y.rx_csum_valid, x.rx_csum_valid);
  EXPECT_EQ(y.rx_csum_fixed, x.rx_csum_fixed);
  if (vnet) {
    EXPECT_EQ(y.rx_csum_valid, 3u);
  }
}

INSTANTIATE_TEST_SUITE_P(PlainVnet, TunUringRxVnet, ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const auto& i) {
                           return std::string(std::get<0>(i.param) ? "vnet" : "plain") +
                                  (std::get<1>(i.param) ? "_multishot" : "_single");
                         });

// Reads posted before anything arrives complete as the packets come; the
// batch's buffers go back to the kernel on release().
TEST_P(TunUringRx, PostedReadsCompleteAsPacketsArriveAndAreReposted) {
  Pair p = Pair::make(false);
  RING_OR_SKIP(ring, p.dev, 4, 2);
  ring->flush();
  EXPECT_EQ(ring->read(), 0u);
  EXPECT_EQ(ring->rx_posted(), 4u);
  p.send(numbered(1));
  p.send(numbered(2));
  ASSERT_EQ(ring->read(), 2u);
  EXPECT_EQ(Bytes(ring->packet(0).begin(), ring->packet(0).end()), numbered(1));
  EXPECT_EQ(Bytes(ring->packet(1).begin(), ring->packet(1).end()), numbered(2));
  EXPECT_EQ(ring->rx_posted(), 2u);
  ring->release();
  ring->flush();
  EXPECT_EQ(ring->rx_posted(), 4u);
  EXPECT_EQ(p.dev.stats().rx_batches, 1u);
}

// More packets than posted reads: at most rx_slots per batch, the rest
// wait in the socket (the device's queue) for the re-posted reads.
TEST_P(TunUringRx, NoMoreThanTheSlotsAreInFlightOrHandedOut) {
  Pair p = Pair::make(false);
  RING_OR_SKIP(ring, p.dev, 3, 2);
  for (uint8_t i = 0; i < 7; ++i) p.send(numbered(i));
  ring->flush();
  std::vector<Bytes> got;
  for (int round = 0; round < 5 && got.size() < 7; ++round) {
    const size_t n = ring->read();
    EXPECT_LE(n, 3u);
    EXPECT_LE(ring->rx_posted(), 3u);
    for (size_t i = 0; i < n; ++i) got.emplace_back(ring->packet(i).begin(), ring->packet(i).end());
    ring->release();
    ring->flush();
  }
  ASSERT_EQ(got.size(), 7u);
  for (uint8_t i = 0; i < 7; ++i) EXPECT_EQ(got[i], numbered(i));
  // The multishot read ended when the three buffers were out, and was
  // armed again when they came back.
  if (GetParam()) {
    EXPECT_GE(ring->stats().rx_rearms, 2u);
  }
}

// A completed read a flush reaped (while transmitting) is kept, not lost,
// and rx_pending() tells the driver to come back for it.
TEST_P(TunUringRx, ReadsReapedByAFlushWaitForTheNextRead) {
  Pair p = Pair::make(false);
  RING_OR_SKIP(ring, p.dev, 2, 2);
  ring->flush();
  p.send(numbered(7));
  ASSERT_EQ(ring->queue(VnetHdr{}, numbered(8)), TunDevice::Xmit::kSent);
  ring->flush();
  EXPECT_TRUE(ring->rx_pending());
  ASSERT_EQ(ring->read(), 1u);
  EXPECT_FALSE(ring->rx_pending());
  EXPECT_EQ(Bytes(ring->packet(0).begin(), ring->packet(0).end()), numbered(7));
}

// Every buffer out (the engine holds the batch) when a packet arrives: the
// multishot read ends (ENOBUFS). Once the buffers are back it must be
// armed and submitted by the next flush, whoever reaps its end; else the
// packet waits until some later event, which an idle receiver never has.
TEST_P(TunUringRx, AReadThatRanOutOfBuffersResumesAtTheNextFlush) {
  Pair p = Pair::make(false);
  RING_OR_SKIP(ring, p.dev, 2, 2);
  ring->flush();
  p.send(numbered(1));
  p.send(numbered(2));
  ASSERT_EQ(ring->read(), 2u);  // both buffers with the engine
  p.send(numbered(3));          // nothing to read it into
  ring->release();
  ring->flush();
  ASSERT_EQ(ring->read(), 1u) << "read after one flush, with no further event";
  EXPECT_EQ(Bytes(ring->packet(0).begin(), ring->packet(0).end()), numbered(3));
}

INSTANTIATE_TEST_SUITE_P(Reads, TunUringRx, ::testing::Bool(),
                         [](const auto& i) { return i.param ? "multishot" : "single"; });

// Teardown with writes waiting for room and reads posted: cancelled, and
// the ring goes away without waiting for the peer.
TEST(TunUring, TeardownCancelsWhatIsInFlight) {
  Pair p = Pair::make(false);
  auto ring = ring_on(p.dev, 4, 4);
  p.fill();
  for (uint8_t i = 0; i < 4; ++i) ASSERT_EQ(ring->queue(VnetHdr{}, numbered(i)), TunDevice::Xmit::kSent);
  ring->flush();
  ASSERT_EQ(ring->tx_free(), 0u);
  ring.reset();
  EXPECT_EQ(p.dev.stats().tx_packets, 0u);
  EXPECT_EQ(p.dev.stats().tx_dropped, 4u) << "cancelled writes are counted as dropped";
}

}  // namespace
}  // namespace weir::link
