#include "driver/app.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace weir::driver {

namespace {
// Each service() call does at most this many recv/send rounds per socket, so
// one busy connection cannot hold the driver away from its timers.
constexpr int kBudget = 16;
constexpr uint64_t kLine = 74;       // RFC 864: 72 characters + CR LF
constexpr uint64_t kPrintable = 95;  // ' ' .. '~'
constexpr size_t kPeriod = kLine * kPrintable;
}  // namespace

std::string ServerApp::start(Time now, Stack& st) {
  st_ = &st;
  for (const auto& a : addrs_) {
    auto s = st.socket(!a.is_v4());
    if (!s) return std::string("socket: ") + errc_name(s.error());
    if (Errc e = st.bind(*s, Endpoint{a, port_}); e != Errc::kOk)
      return "bind " + Endpoint{a, port_}.to_string() + ": " + errc_name(e);
    if (Errc e = st.listen(now, *s, 128); e != Errc::kOk) return std::string("listen: ") + errc_name(e);
    listeners_.push_back(*s);
  }
  return {};
}

void ServerApp::accept_all(Time now, SocketId l) {
  for (int i = 0; i < kBudget; ++i) {
    auto c = st_->accept(now, l);
    if (!c) return;
    sessions_.emplace(*c, make_session());
  }
}

bool ServerApp::service(Time now) {
  bool more = false;
  if (!closing_)
    for (SocketId l : listeners_)
      if (st_->poll(l) & ev::IN) accept_all(now, l);
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    uint32_t events = st_->poll(it->first);
    bool m = false;
    if (!it->second->step(now, *st_, it->first, events, &m)) {
      st_->close(now, it->first);
      it = sessions_.erase(it);
      continue;
    }
    more |= m;
    ++it;
  }
  return more;
}

void ServerApp::shutdown(Time now) {
  closing_ = true;
  for (SocketId l : listeners_) st_->close(now, l);
  listeners_.clear();
  // close(2) on a connection with data still to send queues a FIN behind it
  // (RFC 9293 §3.10.4); the stack finishes the handshake on its own.
  for (auto& [s, sess] : sessions_) st_->close(now, s);
  sessions_.clear();
}

std::vector<SocketId> ServerApp::sockets() const {
  std::vector<SocketId> v = listeners_;
  for (auto& [s, sess] : sessions_) v.push_back(s);
  return v;
}

namespace {

// Shared by echo and discard: read until EOF; echo also writes back.
class EchoSession final : public Session {
 public:
  explicit EchoSession(bool echo) : echo_(echo) {}
  bool step(Time now, Stack& st, SocketId s, uint32_t events, bool* more) override {
    if (events & ev::ERR) return false;
    for (int i = 0; i < kBudget; ++i) {
      bool progress = false;
      if (len_ > 0 && echo_) {
        auto n = st.send(now, s, std::span(buf_).subspan(off_, len_ - off_));
        if (n && *n > 0) {
          off_ += *n;
          progress = true;
          if (off_ == len_) off_ = len_ = 0;
        } else if (!n && n.error() != Errc::kAgain) {
          return false;
        }
      }
      if (len_ == 0 && !eof_) {
        auto n = st.recv(now, s, buf_);
        if (n && *n == 0) {
          eof_ = true;
        } else if (n) {
          len_ = echo_ ? *n : 0;
          progress = true;
        } else if (n.error() != Errc::kAgain) {
          return false;
        }
      }
      if (eof_ && len_ == 0) {
        // The peer finished and everything went back: finish our side too.
        return false;
      }
      if (!progress) return true;
    }
    *more = true;
    return true;
  }

 private:
  bool echo_;
  std::array<uint8_t, 65536> buf_{};
  size_t off_ = 0, len_ = 0;
  bool eof_ = false;
};

class ChargenSession final : public Session {
 public:
  bool step(Time now, Stack& st, SocketId s, uint32_t events, bool* more) override {
    if (events & (ev::ERR | ev::HUP)) return false;
    std::array<uint8_t, 2048> sink;
    for (int i = 0; i < kBudget; ++i) {
      auto r = st.recv(now, s, sink);  // input is ignored (RFC 864)
      if (r && *r == 0) return false;
      if (!r) break;
    }
    for (int i = 0; i < kBudget; ++i) {
      // The stream repeats every kPeriod bytes, so the next bytes are the
      // buffer's from offset_ mod kPeriod: filled once, never again.
      auto n = st.send(now, s, std::span<const uint8_t>(buf_).subspan(offset_ % kPeriod, kWrite));
      if (!n) return n.error() == Errc::kAgain;
      offset_ += *n;
    }
    *more = true;
    return true;
  }

 private:
  // Writes of 128 KB, as iperf3's: the end of each write is a PSH, which
  // ends a GSO super-packet (link/vnet.h), and a Linux sender's skb too.
  static constexpr size_t kWrite = 128 * 1024;
  uint64_t offset_ = 0;
  std::vector<uint8_t> buf_ = [] {
    std::vector<uint8_t> b(kWrite + kPeriod);
    chargen_fill(0, b);
    return b;
  }();
};

template <typename F>
class FnServer final : public ServerApp {
 public:
  FnServer(std::vector<IpAddr> a, uint16_t p, F f) : ServerApp(std::move(a), p), f_(f) {}

 protected:
  std::unique_ptr<Session> make_session() override { return f_(); }

 private:
  F f_;
};

template <typename F>
std::unique_ptr<App> make_server(std::vector<IpAddr> a, uint16_t p, F f) {
  return std::make_unique<FnServer<F>>(std::move(a), p, f);
}

}  // namespace

// RFC 864's lines are 72 printable characters and CR LF, line L starting
// at character L mod 95: the stream repeats every 95 lines (kPeriod bytes),
// so one period is built once and copied (two divisions per byte made the
// generator, not the stack, the bottleneck of a bulk send).
namespace {

const std::array<uint8_t, kPeriod>& chargen_period() {
  static const std::array<uint8_t, kPeriod> period = [] {
    std::array<uint8_t, kPeriod> p{};
    for (size_t pos = 0; pos < kPeriod; ++pos) {
      const uint64_t line = pos / kLine, col = pos % kLine;
      if (col == 72) p[pos] = '\r';
      else if (col == 73) p[pos] = '\n';
      else p[pos] = static_cast<uint8_t>(' ' + (line + col) % kPrintable);
    }
    return p;
  }();
  return period;
}
}  // namespace

void chargen_fill(uint64_t offset, std::span<uint8_t> out) {
  const auto& period = chargen_period();
  size_t pos = offset % kPeriod;
  for (size_t i = 0; i < out.size();) {
    const size_t n = std::min(out.size() - i, kPeriod - pos);
    std::memcpy(out.data() + i, period.data() + pos, n);
    i += n;
    pos = 0;
  }
}

std::unique_ptr<App> make_echo(std::vector<IpAddr> addrs, uint16_t port) {
  return make_server(std::move(addrs), port, [] { return std::make_unique<EchoSession>(true); });
}
std::unique_ptr<App> make_discard(std::vector<IpAddr> addrs, uint16_t port) {
  return make_server(std::move(addrs), port, [] { return std::make_unique<EchoSession>(false); });
}
std::unique_ptr<App> make_chargen(std::vector<IpAddr> addrs, uint16_t port) {
  return make_server(std::move(addrs), port, [] { return std::make_unique<ChargenSession>(); });
}

}  // namespace weir::driver
