#include "link_flags.h"

namespace weir::cli {

namespace {

// The ring's layout and sizes (link/packet_ring.h). A TPACKET_V3 block
// reaches weir when full or when its retire timer fires, which counts in
// jiffies (4 ms at HZ=250), so smaller blocks mean less waiting on a
// lightly loaded ring; a TPACKET_V2 slot reaches weir as it is filled.
// Each size is range-checked here (CLI::Range names the range) and the
// ring as a whole when it is opened (packet_set_ring's rules, 1 GiB).
void add_ring_flags(CLI::App& app, const std::shared_ptr<driver::StackSetup>& s) {
  app.add_option_function<std::string>(
      "--ring-rx",
      [s](const std::string& v) {
        if (v != "v2" && v != "v3" && v != "copy")
          throw CLI::ValidationError("--ring-rx", "expected v2 (TPACKET_V2 slots), v3 (TPACKET_V3 blocks) or copy "
                                                  "(recvmmsg, no ring), got '" + v + "'");
        s->ring.rx_ring = v == "v2" ? link::RxRing::kV2 : v == "v3" ? link::RxRing::kV3 : link::RxRing::kCopy;
      },
      "--packet: the RX ring, v2 (a slot per frame, handed over at once; the default), v3 (blocks, handed "
      "over when full or after the retire timer) or copy (no ring: recvmmsg copies on weir's CPU, not the "
      "sender's)");
  app.add_option("--ring-rx-frames", s->ring.rx_frame_count,
                 "--packet --ring-rx v2: RX ring slots; copy: frames the socket queues (default 4096)")
      ->check(CLI::Range(1u, link::kMaxRingFrames));
  app.add_option_function<uint32_t>(
         "--ring-block-kb", [s](const uint32_t& kb) { s->ring.rx_block_size = kb * 1024; },
         "--packet --ring-rx v3: RX block size in KiB, a multiple of the page size (default 128)")
      ->check(CLI::Range(4u, 1u << 20));
  app.add_option("--ring-blocks", s->ring.rx_block_count, "--packet --ring-rx v3: RX blocks (default 64)")
      ->check(CLI::Range(1u, 1u << 18));
  app.add_option_function<std::string>(
      "--packet-tx",
      [s](const std::string& v) {
        if (v != "ring" && v != "copy")
          throw CLI::ValidationError("--packet-tx", "expected ring (TPACKET_V3 TX ring) or copy (sendmmsg), got '" +
                                                        v + "'");
        s->ring.tx_mode = v == "ring" ? link::TxMode::kRing : link::TxMode::kCopy;
      },
      "--packet: how frames are sent, copy (sendmmsg from user memory: one linear skb per frame, which veth "
      "forwards without copying it again; the default) or ring (the TPACKET_V3 TX ring)");
  app.add_option("--ring-tx-frames", s->ring.tx_frame_count, "--packet: TX ring (or --packet-tx copy) slots (default 1024)")
      ->check(CLI::Range(1u, link::kMaxRingFrames));
}

}  // namespace

void add_link_flags(CLI::App& app, const std::shared_ptr<driver::StackSetup>& s) {
  app.add_option("--tun", s->tun, "TUN device to attach to (created if missing)");
  app.add_option("--packet", s->packet,
                 "existing Ethernet interface (a veth end, a NIC) to run on through AF_PACKET rings (--ring-rx)");
  app.add_option("--tap", s->tap, "TAP device to attach to (created if missing): Ethernet frames");
  // A TUN or TAP batch holds a 64 KB buffer per packet: bounded at 1024
  // (64 MiB). On --packet the app reads between batches of a wake-up.
  app.add_option("--batch", s->driver.batch, "packets read per batch (default 64; the app reads between batches)")
      ->check(CLI::Range(size_t{1}, size_t{1024}));
  app.add_option("--addr", s->addrs, "weir's address(es), CIDR, e.g. 192.0.2.1/24 fd00::1/64")->required();
  app.add_option("--peer", s->peers,
                 "give the kernel side this address (CIDR) and set it up: the TUN or TAP device itself, or the "
                 "other end of the --packet veth");
  app.add_option("--netns", s->netns, "network namespace to run in (ip netns name)");
  app.add_option("--mac", s->mac,
                 "weir's MAC on --packet/--tap, e.g. 02:00:00:00:00:01 (default: derived from the interface's, "
                 "locally administered)");
  app.add_option("--gateway", s->gateways, "next hop for off-link destinations, one per IP version (--packet/--tap)");
  app.add_flag("--no-dad", [s](int64_t n) { s->dad = n == 0; },
               "--packet/--tap: use the IPv6 addresses at once, without duplicate address detection (RFC 4862 "
               "§5.4; by default weir probes for about 1 s before starting and refuses an address in use)");
  add_ring_flags(app, s);
  app.add_flag("--no-qdisc-bypass", [s](int64_t n) { s->ring.qdisc_bypass = n == 0; },
               "--packet: frames go through the interface's qdisc (PACKET_QDISC_BYPASS off)");
  app.add_option("--sysctl", s->sysctls, "stack setting, e.g. net.ipv4.tcp_sack=0 (repeatable)");
  app.add_flag("--no-offload", [s](int64_t n) { s->offload = s->ring.tx_gso = n == 0; },
               "plain TUN: no IFF_VNET_HDR, no TSO super-packets; --packet (copy TX): no PACKET_VNET_HDR, no "
               "GSO super-packets, one frame per message");
  app.add_flag("--io-uring", s->io_uring,
               "TUN reads and writes through an io_uring: one system call per burst, not per packet");
}

}  // namespace weir::cli
