#include "adversarial/adv_helper.h"

#include <gtest/gtest.h>

#include <cstdio>

#include <fmt/format.h>

namespace weir::test {

void measured(const std::string& name, double value) {
  std::printf("[measured] %s = %g\n", name.c_str(), value);
  ::testing::Test::RecordProperty(name, fmt::format("{}", value));
}

ConnSnapshot snapshot(const Stack& st, SocketId s) {
  ConnSnapshot c;
  auto ti = st.tcp_info(s);
  if (!ti) return c;
  c.state = ti->tcpi_state;
  c.snd_cwnd = ti->tcpi_snd_cwnd;
  c.snd_ssthresh = ti->tcpi_snd_ssthresh;
  c.unacked = ti->tcpi_unacked;
  c.sacked = ti->tcpi_sacked;
  c.lost = ti->tcpi_lost;
  c.retrans = ti->tcpi_retrans;
  c.snd_wnd = ti->tcpi_snd_wnd;
  c.bytes_acked = ti->tcpi_bytes_acked;
  c.bytes_received = ti->tcpi_bytes_received;
  c.snd_wscale = ti->tcpi_snd_wscale;
  c.options = ti->tcpi_options;
  c.snd_mss = ti->tcpi_snd_mss;
  return c;
}

std::string describe(const ConnSnapshot& c) {
  return fmt::format("state {} cwnd {} ssthresh {} unacked {} sacked {} lost {} retrans {} snd_wnd {} "
                     "acked {} received {} wscale {} options {} mss {}",
                     c.state, c.snd_cwnd, c.snd_ssthresh, c.unacked, c.sacked, c.lost, c.retrans, c.snd_wnd,
                     c.bytes_acked, c.bytes_received, c.snd_wscale, c.options, c.snd_mss);
}

void drain(Stack& st, Time now, SocketId s, std::vector<uint8_t>& out) {
  std::vector<uint8_t> buf(65536);
  for (;;) {
    auto n = st.recv(now, s, buf);
    if (!n || *n == 0) return;
    out.insert(out.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(*n));
  }
}

uint64_t counter(const Stack& st, Counter c) { return st.counters().get(c); }

}  // namespace weir::test
