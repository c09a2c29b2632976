#include "link/pcap.h"

#include <pcap/pcap.h>

#include <algorithm>

namespace weir::link {
namespace {

// LINKTYPE_RAW: each record is an IPv4 or IPv6 datagram, no link header.
constexpr int kSnapLen = 65535;

}  // namespace

Expected<std::unique_ptr<PcapWriter>, std::string> PcapWriter::open(const std::string& path) {
  pcap_t* p = pcap_open_dead_with_tstamp_precision(DLT_RAW, kSnapLen, PCAP_TSTAMP_PRECISION_NANO);
  if (!p) return Unexpected{std::string("pcap_open_dead failed")};
  pcap_dumper_t* d = pcap_dump_open(p, path.c_str());
  if (!d) {
    std::string err = pcap_geterr(p);
    pcap_close(p);
    return Unexpected{err};
  }
  return std::unique_ptr<PcapWriter>(new PcapWriter(p, d));
}

PcapWriter::~PcapWriter() {
  pcap_dump_close(dumper_);
  pcap_close(pcap_);
}

void PcapWriter::write(Time t, std::span<const uint8_t> ip_packet) {
  int64_t ns = std::max<int64_t>(t.ns(), 0);
  pcap_pkthdr h{};
  h.ts.tv_sec = static_cast<time_t>(ns / 1000000000);
  // With nanosecond precision libpcap stores tv_usec as nanoseconds.
  h.ts.tv_usec = static_cast<suseconds_t>(ns % 1000000000);
  h.len = static_cast<bpf_u_int32>(ip_packet.size());
  h.caplen = static_cast<bpf_u_int32>(std::min<size_t>(ip_packet.size(), kSnapLen));
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, ip_packet.data());
  ++packets_;
}

void PcapWriter::flush() { pcap_dump_flush(dumper_); }

Expected<std::unique_ptr<PcapReader>, std::string> PcapReader::open(const std::string& path) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO,
                                                       errbuf);
  if (!p) return Unexpected{std::string(errbuf)};
  return std::unique_ptr<PcapReader>(new PcapReader(p));
}

PcapReader::~PcapReader() { pcap_close(pcap_); }

int PcapReader::datalink() const { return pcap_datalink(pcap_); }

std::optional<PcapReader::Record> PcapReader::next() {
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  int rc = pcap_next_ex(pcap_, &h, &data);
  if (rc == PCAP_ERROR) error_ = pcap_geterr(pcap_);
  if (rc != 1) return std::nullopt;
  Record r;
  r.t = Time::from_ns(int64_t{h->ts.tv_sec} * 1000000000 + h->ts.tv_usec);
  r.bytes.assign(data, data + h->caplen);
  r.orig_len = h->len;
  return r;
}

}  // namespace weir::link
