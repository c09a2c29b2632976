// pcap files of raw IP datagrams (LINKTYPE_RAW), nanosecond timestamps, via
// libpcap; and PcapTap, a Netif wrapper that records everything a Stack sends
// (and, when the driver tells it, everything it receives).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "weir/expected.h"
#include "weir/netif.h"
#include "weir/time.h"

// libpcap's handles, kept out of this header.
struct pcap;
struct pcap_dumper;

namespace weir::link {

class PcapWriter {
 public:
  // Creates (truncates) `path`. The error is libpcap's message.
  static Expected<std::unique_ptr<PcapWriter>, std::string> open(const std::string& path);
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // Records one datagram at time `t` (nanoseconds since the driver's epoch;
  // negative times are written as 0). Packets beyond the 65535-byte snap
  // length are truncated in the file, with their original length kept.
  void write(Time t, std::span<const uint8_t> ip_packet);
  void flush();
  uint64_t packets() const { return packets_; }

 private:
  PcapWriter(pcap* p, pcap_dumper* d) : pcap_(p), dumper_(d) {}
  pcap* pcap_;
  pcap_dumper* dumper_;
  uint64_t packets_ = 0;
};

class PcapReader {
 public:
  struct Record {
    Time t;
    std::vector<uint8_t> bytes;  // as captured (caplen)
    uint32_t orig_len = 0;
  };
  // Opens any pcap file; timestamps are converted to nanoseconds.
  static Expected<std::unique_ptr<PcapReader>, std::string> open(const std::string& path);
  ~PcapReader();
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;

  // libpcap's DLT_ value (DLT_RAW for files PcapWriter made).
  int datalink() const;
  // The next record, or nothing at end of file (or on a read error, see error()).
  std::optional<Record> next();
  const std::string& error() const { return error_; }

 private:
  explicit PcapReader(pcap* p) : pcap_(p) {}
  pcap* pcap_;
  std::string error_;
};

// A Netif that writes every transmitted datagram to a pcap, then passes it on.
class PcapTap : public Netif {
 public:
  using Clock = std::function<Time()>;
  PcapTap(Netif& inner, PcapWriter& out, Clock clock)
      : inner_(inner), out_(out), clock_(std::move(clock)) {}

  void transmit(std::span<const uint8_t> ip_packet) override { (void)try_transmit(ip_packet); }
  // Recorded as handed to the device, as tcpdump sees it at dev_queue_xmit,
  // even if the device then refuses it; the inner device's verdict is passed up.
  XmitResult try_transmit(std::span<const uint8_t> ip_packet) override {
    out_.write(clock_(), ip_packet);
    return inner_.try_transmit(ip_packet);
  }
  uint32_t mtu() const override { return inner_.mtu(); }
  bool gso() const override { return inner_.gso(); }
  void confirm_neighbor(const IpAddr& dst) override { inner_.confirm_neighbor(dst); }
  // For drivers: records a datagram about to be handed to Stack::input.
  void record_input(Time now, std::span<const uint8_t> ip_packet) { out_.write(now, ip_packet); }

 private:
  Netif& inner_;
  PcapWriter& out_;
  Clock clock_;
};

}  // namespace weir::link
