#include "link/pcap.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "link/memory_pipe.h"
#include "wire/packet.h"

namespace weir::link {
namespace {

// A file path in the temp directory, removed when the test ends.
struct TempFile {
  explicit TempFile(const std::string& name)
      : path((std::filesystem::temp_directory_path() /
              ("weir_pcap_test_" + std::to_string(::getpid()) + "_" + name))
                 .string()) {}
  ~TempFile() { std::filesystem::remove(path); }
  std::string path;
};

std::vector<uint8_t> syn_packet(bool v6) {
  wire::IpInfo ip;
  ip.src = v6 ? *IpAddr::parse("2001:db8::1") : IpAddr::v4(192, 0, 2, 1);
  ip.dst = v6 ? *IpAddr::parse("2001:db8::2") : IpAddr::v4(192, 0, 2, 2);
  wire::TcpHeader h;
  h.src_port = 40000;
  h.dst_port = 8080;
  h.seq = Seq32(1000);
  h.flags = wire::tcp_flag::SYN;
  h.window = 65535;
  h.options.mss = 1460;
  h.options.sack_permitted = true;
  h.options.ts = wire::TcpTimestamps{100, 0};
  h.options.wscale = 7;
  return wire::build_tcp_packet(ip, h, {});
}

std::vector<uint8_t> data_packet() {
  wire::IpInfo ip;
  ip.src = IpAddr::v4(192, 0, 2, 2);
  ip.dst = IpAddr::v4(192, 0, 2, 1);
  wire::TcpHeader h;
  h.src_port = 8080;
  h.dst_port = 40000;
  h.seq = Seq32(5000);
  h.ack = Seq32(1001);
  h.flags = wire::tcp_flag::PSH | wire::tcp_flag::ACK;
  h.window = 512;
  h.options.ts = wire::TcpTimestamps{7, 100};
  std::vector<uint8_t> payload(10, 'x');
  return wire::build_tcp_packet(ip, h, payload);
}

TEST(Pcap, WritesAndReadsBackWithNanosecondTimestamps) {
  TempFile tmp("rw.pcap");
  const std::string& path = tmp.path;
  std::vector<std::pair<Time, std::vector<uint8_t>>> sent = {
      {Time::from_ns(1), syn_packet(false)},
      {Time::from_ns(1'500'000'123), data_packet()},
      {Time::from_ns(3'000'000'000'007), syn_packet(true)},
  };
  {
    auto w = PcapWriter::open(path);
    ASSERT_TRUE(w) << w.error();
    for (auto& [t, b] : sent) (*w)->write(t, b);
    EXPECT_EQ((*w)->packets(), 3u);
  }
  auto r = PcapReader::open(path);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ((*r)->datalink(), DLT_RAW);
  for (auto& [t, b] : sent) {
    auto rec = (*r)->next();
    ASSERT_TRUE(rec);
    EXPECT_EQ(rec->t, t);
    EXPECT_EQ(rec->bytes, b);
    EXPECT_EQ(rec->orig_len, b.size());
    EXPECT_TRUE(wire::parse_tcp_packet(rec->bytes));
  }
  EXPECT_FALSE((*r)->next());
  EXPECT_TRUE((*r)->error().empty());
}

TEST(Pcap, OpenFailuresAreReported) {
  auto w = PcapWriter::open("/nonexistent-dir/x.pcap");
  ASSERT_FALSE(w);
  EXPECT_FALSE(w.error().empty());
  auto r = PcapReader::open("/nonexistent-dir/x.pcap");
  ASSERT_FALSE(r);
  EXPECT_FALSE(r.error().empty());
}

TEST(Pcap, TapRecordsTransmitsAndPassesThemOn) {
  TempFile tmp("tap.pcap");
  const std::string& path = tmp.path;
  MemoryPipe pipe;
  Time now = Time::from_ns(42);
  {
    auto w = PcapWriter::open(path);
    ASSERT_TRUE(w);
    PcapTap tap(pipe.a(), **w, [&] { return now; });
    EXPECT_EQ(tap.mtu(), pipe.a().mtu());
    tap.transmit(syn_packet(false));
    now = Time::from_ns(43);
    tap.record_input(now, data_packet());
  }
  EXPECT_EQ(pipe.queued(Side::A), 1u);
  auto r = PcapReader::open(path);
  ASSERT_TRUE(r);
  auto a = (*r)->next();
  auto b = (*r)->next();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->t, Time::from_ns(42));
  EXPECT_EQ(a->bytes, syn_packet(false));
  EXPECT_EQ(b->t, Time::from_ns(43));
  EXPECT_EQ(b->bytes, data_packet());
}

bool have_tshark() { return std::system("command -v tshark >/dev/null 2>&1") == 0; }

std::vector<std::string> run_lines(const std::string& cmd) {
  std::vector<std::string> lines;
  std::unique_ptr<FILE, int (*)(FILE*)> f(popen(cmd.c_str(), "r"), pclose);
  if (!f) return lines;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), f.get())) {
    std::string s(buf.data());
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    lines.push_back(s);
  }
  return lines;
}

TEST(Pcap, TsharkDecodesOurPacketsAsTcp) {
  if (!have_tshark()) GTEST_SKIP() << "tshark not on PATH";
  TempFile tmp("tshark.pcap");
  const std::string& path = tmp.path;
  {
    auto w = PcapWriter::open(path);
    ASSERT_TRUE(w);
    (*w)->write(Time::from_ns(1000), syn_packet(false));
    (*w)->write(Time::from_ns(2000), data_packet());
    (*w)->write(Time::from_ns(3000), syn_packet(true));
  }
  // tshark does not validate checksums by default; turn it on so it checks ours
  // (status 1 = good). Fields are separated by commas; absent fields are empty.
  std::string cmd =
      "tshark -n -o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE"
      " -o tcp.relative_sequence_numbers:FALSE -r " + path +
      " -T fields -E separator=, -e tcp.flags -e tcp.options.mss_val"
      " -e tcp.options.wscale.shift -e tcp.options.sack_perm -e tcp.options.timestamp.tsval"
      " -e tcp.seq -e tcp.len -e tcp.checksum.status -e ip.checksum.status 2>/dev/null";
  auto lines = run_lines(cmd);
  ASSERT_EQ(lines.size(), 3u) << cmd;
  auto fields = [](const std::string& line) {
    std::vector<std::string> f;
    size_t start = 0;
    for (size_t pos; (pos = line.find(',', start)) != std::string::npos; start = pos + 1)
      f.push_back(line.substr(start, pos - start));
    f.push_back(line.substr(start));
    return f;
  };
  // SYN over IPv4: MSS 1460, wscale 7, SACK permitted, TSval 100, both checksums good.
  auto f = fields(lines[0]);
  ASSERT_EQ(f.size(), 9u) << lines[0];
  EXPECT_EQ(f[0], "0x0002");
  EXPECT_EQ(f[1], "1460");
  EXPECT_EQ(f[2], "7");
  EXPECT_FALSE(f[3].empty());
  EXPECT_EQ(f[4], "100");
  EXPECT_EQ(f[5], "1000");
  EXPECT_EQ(f[6], "0");
  EXPECT_EQ(f[7], "1");
  EXPECT_EQ(f[8], "1");
  // PSH+ACK with 10 bytes of data and only timestamps.
  f = fields(lines[1]);
  ASSERT_EQ(f.size(), 9u) << lines[1];
  EXPECT_EQ(f[0], "0x0018");
  EXPECT_EQ(f[1], "");
  EXPECT_EQ(f[3], "");
  EXPECT_EQ(f[4], "7");
  EXPECT_EQ(f[5], "5000");
  EXPECT_EQ(f[6], "10");
  EXPECT_EQ(f[7], "1");
  // The IPv6 SYN decodes the same; IPv6 has no header checksum.
  f = fields(lines[2]);
  ASSERT_EQ(f.size(), 9u) << lines[2];
  EXPECT_EQ(f[0], "0x0002");
  EXPECT_EQ(f[1], "1460");
  EXPECT_EQ(f[7], "1");
  EXPECT_EQ(f[8], "");
}

}  // namespace
}  // namespace weir::link
