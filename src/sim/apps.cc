#include "sim/apps.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

namespace weir::sim {
namespace {

constexpr uint64_t kPatternPeriod = 65521;  // prime: no alignment with segment sizes
constexpr uint64_t kOpen = 1;
constexpr uint64_t kStopWriting = 2;
constexpr uint64_t kTick = 3;
constexpr size_t kMaxProgressPoints = 100000;

const std::array<uint8_t, 2 * kPatternPeriod>& pattern() {
  static const auto table = [] {
    std::array<uint8_t, 2 * kPatternPeriod> t{};
    for (uint64_t i = 0; i < t.size(); ++i) {
      uint64_t k = i % kPatternPeriod;
      t[i] = static_cast<uint8_t>((k * 2654435761u) >> 13);
    }
    return t;
  }();
  return table;
}

Errc set_int(Stack& st, Time now, SocketId s, int level, int name, int v) {
  std::array<uint8_t, sizeof(int)> b{};
  std::memcpy(b.data(), &v, sizeof v);
  return st.setsockopt(now, s, level, name, b);
}

}  // namespace

const uint8_t* pattern_at(uint64_t offset, size_t* contiguous) {
  uint64_t i = offset % kPatternPeriod;
  *contiguous = static_cast<size_t>(2 * kPatternPeriod - i);
  return pattern().data() + i;
}

// ---- sender ----

SenderApp::SenderApp(Host& host, const FlowSpec& spec, const Endpoint& server, FlowStats& st)
    : host_(host), spec_(spec), server_(server), st_(st) {
  st_.start = spec.start;
  host_.loop().at(spec.start, this, kOpen);
}

void SenderApp::fail(const char* what, Errc e) {
  if (st_.error.empty()) st_.error = fmt::format("sender {}: {}", what, errc_name(e));
}

void SenderApp::open(Time now) {
  Stack& st = host_.stack();
  // An AF_INET6 socket for an IPv6 server (a scenario's family = "ipv6"):
  // an AF_INET one cannot reach it (Linux inet_stream_connect: EAFNOSUPPORT).
  auto s = st.socket(!server_.addr.is_v4());
  if (!s) return fail("socket", s.error());
  s_ = *s;
  st_.sender_socket = s_;
  if (spec_.sndbuf) set_int(st, now, s_, SOL_SOCKET, SO_SNDBUF, static_cast<int>(spec_.sndbuf));
  if (spec_.rcvbuf) set_int(st, now, s_, SOL_SOCKET, SO_RCVBUF, static_cast<int>(spec_.rcvbuf));
  if (!spec_.cc.empty()) {
    std::span<const uint8_t> name(reinterpret_cast<const uint8_t*>(spec_.cc.data()), spec_.cc.size());
    if (Errc e = st.setsockopt(now, s_, IPPROTO_TCP, TCP_CONGESTION, name); e != Errc::kOk)
      fail("TCP_CONGESTION", e);
  }
  host_.watch(s_, this);
  Endpoint local{host_.addr(), static_cast<uint16_t>(kClientPortBase + spec_.id)};
  if (Errc e = st.bind(s_, local); e != Errc::kOk) return fail("bind", e);
  Errc e = st.connect(now, s_, server_);
  if (e != Errc::kOk && e != Errc::kInProgress) return fail("connect", e);
  if (spec_.kind == AppKind::kBulk && spec_.bytes == 0)
    host_.loop().at(spec_.start + spec_.send_for, this, kStopWriting);
  host_.kick();
}

void SenderApp::on_event(Time now, uint64_t tag) {
  if (tag == kOpen) open(now);
  if (tag == kStopWriting) pump(now);
}

void SenderApp::on_ready(Time now) {
  if (s_ == kNoSocket) return;
  uint32_t ev = host_.stack().poll(s_);
  if (!st_.connected) {
    if (ev & ev::ERR) return fail("connect", Errc::kConnRefused);
    if (!(ev & ev::OUT)) return;
    st_.connected = true;
    st_.connected_at = now;
    rr_t0_ = now;
  }
  if (spec_.kind == AppKind::kRequestResponse) rr_step(now);
  else pump(now);
  host_.kick();
}

bool SenderApp::more_to_write(Time now) const {
  if (spec_.bytes) return st_.bytes_written < spec_.bytes;
  return now < spec_.start + spec_.send_for;
}

void SenderApp::pump(Time now) {
  if (!st_.connected || shut_) return;
  Stack& st = host_.stack();
  while (more_to_write(now)) {
    if (record_left_ == 0) {
      record_left_ = spec_.write_sizes[record_index_++ % spec_.write_sizes.size()];
    }
    uint64_t want = record_left_;
    if (spec_.bytes) want = std::min(want, spec_.bytes - st_.bytes_written);
    size_t contig = 0;
    const uint8_t* p = pattern_at(st_.bytes_written, &contig);
    size_t n = static_cast<size_t>(std::min<uint64_t>(want, contig));
    auto r = st.send(now, s_, {p, n});
    if (!r) {
      if (r.error() != Errc::kAgain) fail("send", r.error());
      break;
    }
    st_.bytes_written += *r;
    record_left_ -= std::min<uint64_t>(record_left_, *r);
    if (*r < n) break;
  }
  if (!more_to_write(now)) {
    // SHUT_WR sends our FIN once the data is out (RFC 9293 §3.10.4).
    Errc e = st.shutdown(now, s_, SHUT_WR);
    if (e != Errc::kOk) fail("shutdown", e);
    shut_ = true;
    st_.writer_done = true;
  }
  host_.kick();
}

void SenderApp::rr_step(Time now) {
  Stack& st = host_.stack();
  std::array<uint8_t, 65536> buf;
  while (rr_done_ < spec_.transactions) {
    while (rr_sent_ < spec_.request) {
      size_t contig = 0;
      const uint8_t* p = pattern_at(st_.bytes_written, &contig);
      size_t n = static_cast<size_t>(std::min<uint64_t>(spec_.request - rr_sent_, contig));
      auto r = st.send(now, s_, {p, n});
      if (!r) {
        if (r.error() != Errc::kAgain) fail("send", r.error());
        return;
      }
      rr_sent_ += *r;
      st_.bytes_written += *r;
    }
    auto r = st.recv(now, s_, buf);
    if (!r) {
      if (r.error() != Errc::kAgain) fail("recv", r.error());
      return;
    }
    if (*r == 0) return fail("recv", Errc::kConnReset);  // peer closed early
    rr_got_ += *r;
    if (rr_got_ < spec_.response) continue;
    st_.rr_latency.push_back(now - rr_t0_);
    ++rr_done_;
    rr_sent_ = 0;
    rr_got_ -= spec_.response;
    rr_t0_ = now;
  }
  if (!shut_) {
    st_.completed = true;
    st_.completed_at = now;
    st.shutdown(now, s_, SHUT_WR);
    shut_ = true;
    st_.writer_done = true;
  }
}

void SenderApp::snapshot(Time /*now*/) {
  if (s_ == kNoSocket) return;
  auto info = host_.stack().tcp_info(s_);
  if (info) st_.sender_info = *info;
}

// ---- receiver ----

ReceiverApp::ReceiverApp(Host& host, const FlowSpec& spec, const Endpoint& listen_on, FlowStats& st)
    : host_(host), spec_(spec), st_(st), buf_(65536) {
  Stack& stk = host_.stack();
  Time now = host_.loop().now();
  auto s = stk.socket(!listen_on.addr.is_v4());  // the listener's family is its address's
  if (!s) {
    st_.error = fmt::format("receiver socket: {}", errc_name(s.error()));
    return;
  }
  listener_ = *s;
  // Options set on the listener are inherited by the accepted socket (Linux).
  if (spec.rcvbuf) set_int(stk, now, listener_, SOL_SOCKET, SO_RCVBUF, static_cast<int>(spec.rcvbuf));
  if (spec.sndbuf) set_int(stk, now, listener_, SOL_SOCKET, SO_SNDBUF, static_cast<int>(spec.sndbuf));
  host_.watch(listener_, this);
  Errc e = stk.bind(listener_, listen_on);
  if (e == Errc::kOk) e = stk.listen(now, listener_, 16);
  if (e != Errc::kOk) st_.error = fmt::format("receiver listen: {}", errc_name(e));
  host_.kick();
}

void ReceiverApp::on_ready(Time now) {
  Stack& stk = host_.stack();
  if (s_ == kNoSocket && listener_ != kNoSocket) {
    auto a = stk.accept(now, listener_);
    if (!a) return;
    s_ = *a;
    st_.receiver_socket = s_;
    host_.watch(s_, this);
  }
  if (s_ == kNoSocket || eof_) return;
  if (spec_.kind == AppKind::kRequestResponse) rr_serve(now);
  else if (spec_.reader_rate_bps > 0) schedule_tick(now);
  else read_some(now, UINT64_MAX);
  host_.kick();
}

void ReceiverApp::schedule_tick(Time now) {
  if (tick_pending_) return;
  tick_pending_ = true;
  // A slow reader wakes every chunk / rate and reads at most one chunk.
  double secs = static_cast<double>(spec_.reader_chunk) * 8 / spec_.reader_rate_bps;
  host_.loop().at(now + Duration::ns(static_cast<int64_t>(secs * 1e9)), this, kTick);
}

void ReceiverApp::on_event(Time now, uint64_t tag) {
  if (tag != kTick) return;
  tick_pending_ = false;
  read_some(now, spec_.reader_chunk);
  if (!eof_) schedule_tick(now);
  host_.kick();
}

void ReceiverApp::read_some(Time now, uint64_t budget) {
  Stack& stk = host_.stack();
  while (budget > 0 && !eof_) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(budget, buf_.size()));
    auto r = stk.recv(now, s_, {buf_.data(), n});
    if (!r) {
      if (r.error() != Errc::kAgain && st_.error.empty())
        st_.error = fmt::format("receiver recv: {}", errc_name(r.error()));
      return;
    }
    if (*r == 0) {
      eof_ = true;
      if (!spec_.bytes || st_.bytes_read >= spec_.bytes || spec_.send_for > Duration::zero()) {
        st_.completed = true;
        st_.completed_at = now;
      }
      snapshot(now);
      stk.close(now, s_);
      return;
    }
    consume(now, buf_.data(), *r);
    budget -= *r;
  }
}

void ReceiverApp::consume(Time now, const uint8_t* data, size_t n) {
  size_t done = 0;
  while (done < n) {
    size_t contig = 0;
    const uint8_t* want = pattern_at(st_.bytes_read + done, &contig);
    size_t k = std::min(n - done, contig);
    if (std::memcmp(want, data + done, k) != 0)
      for (size_t i = 0; i < k; ++i) st_.payload_errors += want[i] != data[done + i];
    done += k;
  }
  st_.bytes_read += n;
  if (spec_.delivered_at > Duration::zero() && now <= st_.start + spec_.delivered_at)
    st_.delivered_at_mark = st_.bytes_read;
  if (now < spec_.window_start) st_.bytes_before_window = st_.bytes_read;
  auto& pr = st_.read_progress;
  if (pr.size() < kMaxProgressPoints && (pr.empty() || now - pr.back().first >= Duration::ms(1)))
    pr.emplace_back(now, st_.bytes_read);
  else if (!pr.empty() && pr.back().first == now)
    pr.back().second = st_.bytes_read;
}

void ReceiverApp::rr_serve(Time now) {
  Stack& stk = host_.stack();
  for (;;) {
    while (rr_out_ > 0) {
      size_t contig = 0;
      const uint8_t* p = pattern_at(rr_written_, &contig);
      size_t n = static_cast<size_t>(std::min<uint64_t>(rr_out_, contig));
      auto r = stk.send(now, s_, {p, n});
      if (!r) return;
      rr_out_ -= *r;
      rr_written_ += *r;
    }
    auto r = stk.recv(now, s_, buf_);
    if (!r) return;
    if (*r == 0) {
      eof_ = true;
      snapshot(now);
      stk.close(now, s_);
      return;
    }
    consume(now, buf_.data(), *r);
    rr_in_ += *r;
    while (rr_in_ >= spec_.request) {
      rr_in_ -= spec_.request;
      rr_out_ += spec_.response;
    }
  }
}

void ReceiverApp::snapshot(Time /*now*/) {
  if (s_ == kNoSocket) return;
  auto info = host_.stack().tcp_info(s_);
  if (info) st_.receiver_info = *info;
}

}  // namespace weir::sim
