#include "driver/fetch.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "driver/sha256.h"

namespace weir::driver {

namespace {

constexpr int kBudget = 32;
constexpr size_t kMaxHead = 65536;

class Fetch final : public App {
 public:
  explicit Fetch(FetchOptions o) : o_(std::move(o)) {}
  ~Fetch() override {
    if (out_) std::fclose(out_);
  }

  std::string start(Time now, Stack& st) override {
    st_ = &st;
    start_ = now;
    if (!o_.output.empty() && o_.output != "-") {
      out_ = std::fopen(o_.output.c_str(), "wb");
      if (!out_) return fmt::format("cannot write {}", o_.output);
      std::setvbuf(out_, nullptr, _IOFBF, 1 << 20);
    }
    auto s = st.socket(!o_.url.addr.is_v4());
    if (!s) return std::string("socket: ") + errc_name(s.error());
    s_ = *s;
    Errc e = st.connect(now, s_, Endpoint{o_.url.addr, o_.url.port});
    if (e != Errc::kOk && e != Errc::kInProgress) return std::string("connect: ") + errc_name(e);
    if (o_.url.raw) {
      // Nothing to ask and no head to wait for: every byte is the body.
      sent_all_ = have_head_ = true;
      return {};
    }
    req_ = fmt::format("GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: weir-fetch\r\nAccept: */*\r\n"
                       "Connection: close\r\n\r\n", o_.url.target, o_.url.host);
    return {};
  }

  bool service(Time now) override {
    if (done_) return false;
    if (now - start_ > o_.timeout) return finish(now, "timed out");
    uint32_t events = st_->poll(s_);
    // A reset answering the SYN (or an ICMP error) is a failed connect, not
    // an empty response: report it as connect(2) would.
    if (!connected_ && (events & ev::ERR)) return finish(now, connect_error());
    if (events & ev::OUT) connected_ = true;
    if (!sent_all_ && (events & ev::OUT)) send_request(now);
    for (int i = 0; i < kBudget && !done_; ++i) {
      auto n = st_->recv(now, s_, buf_);
      if (!n) {
        if (n.error() != Errc::kAgain) {
          if (!connected_) return finish(now, connect_error());
          return finish(now, std::string("recv: ") + errc_name(n.error()));
        }
        break;
      }
      if (*n == 0) return connected_ ? on_eof(now) : finish(now, connect_error());
      consume(now, std::span(buf_.data(), *n));
    }
    if (o_.progress && now - last_bar_ > Duration::ms(200)) draw_bar(now);
    return false;
  }

  void shutdown(Time now) override { finish(now, "interrupted"); }
  bool finished() const override { return done_; }
  std::vector<SocketId> sockets() const override { return done_ ? std::vector<SocketId>{} : std::vector{s_}; }
  int exit_status() const override { return status_; }

 private:
  // SO_ERROR of a connect that failed, as `connect: <strerror> (<ERRNO>)`.
  std::string connect_error() const {
    int err = 0;
    size_t len = sizeof err;
    st_->getsockopt(s_, SOL_SOCKET, SO_ERROR, {reinterpret_cast<uint8_t*>(&err), sizeof err}, &len);
    if (err == 0) return "connect: connection closed during the handshake";
    return fmt::format("connect: {} ({})", std::strerror(err), errc_name(static_cast<Errc>(err)));
  }

  void send_request(Time now) {
    auto n = st_->send(now, s_, std::span(reinterpret_cast<const uint8_t*>(req_.data()) + req_off_, req_.size() - req_off_));
    if (n) req_off_ += *n;
    sent_all_ = req_off_ == req_.size();
  }

  void consume(Time now, std::span<const uint8_t> data) {
    if (!have_head_) {
      head_.append(reinterpret_cast<const char*>(data.data()), data.size());
      size_t end = head_.find("\r\n\r\n");
      if (end == std::string::npos) {
        if (head_.size() > kMaxHead) finish(now, "response head too large");
        return;
      }
      if (!parse_response(head_.substr(0, end))) return;
      std::string rest = head_.substr(end + 4);
      have_head_ = true;
      body(now, std::span(reinterpret_cast<const uint8_t*>(rest.data()), rest.size()));
      return;
    }
    body(now, data);
  }

  bool parse_response(const std::string& text) {
    auto h = http::parse_head(text);
    if (!h || h->a.substr(0, 5) != "HTTP/") return finish(Time::zero(), "malformed response"), false;
    status_code_ = std::atoi(h->b.c_str());
    if (status_code_ != 200) return finish(Time::zero(), fmt::format("HTTP {} {}", h->b, h->c)), false;
    // RFC 9112 §6.3: chunked as the final coding delimits the body (and
    // overrides Content-Length); any other coding is not one we decode.
    if (auto te = h->field("Transfer-Encoding"); te && *te != "identity") {
      if (!equals_nocase(*te, "chunked")) return finish(Time::zero(), fmt::format("unsupported transfer coding '{}'", *te)), false;
      chunked_ = true;
      return true;
    }
    if (auto cl = h->field("Content-Length")) length_ = std::strtoull(std::string(*cl).c_str(), nullptr, 10);
    return true;
  }

  static bool equals_nocase(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  }

  void body(Time now, std::span<const uint8_t> data) {
    if (chunked_) return body_chunked(now, data);
    body_bytes(now, data);
  }

  void body_chunked(Time now, std::span<const uint8_t> data) {
    decoded_.clear();
    auto used = dechunk_.feed({reinterpret_cast<const char*>(data.data()), data.size()}, decoded_);
    if (!used) return (void)finish(now, "chunked body: " + used.error());
    body_bytes(now, {reinterpret_cast<const uint8_t*>(decoded_.data()), decoded_.size()});
    if (!done_ && dechunk_.done()) finish(now, "");
  }

  void body_bytes(Time now, std::span<const uint8_t> data) {
    if (length_ && got_ + data.size() > *length_) data = data.first(static_cast<size_t>(*length_ - got_));
    if (o_.sha256) sha_.update(data);
    if (out_ && std::fwrite(data.data(), 1, data.size(), out_) != data.size()) {
      finish(now, "write failed");
      return;
    }
    got_ += data.size();
    if (length_ && got_ == *length_) finish(now, "");
  }

  bool on_eof(Time now) {
    // Without a Content-Length the body ends at the connection's end.
    if (!have_head_) return finish(now, "connection closed before a response");
    if (chunked_ && !dechunk_.done()) return finish(now, "connection closed inside the chunked body");
    if (length_ && got_ < *length_) return finish(now, fmt::format("short body: {} of {} bytes", got_, *length_));
    return finish(now, "");
  }

  void draw_bar(Time now) {
    last_bar_ = now;
    double secs = std::max((now - start_).secs(), 1e-3);
    double rate = static_cast<double>(got_) * 8 / secs / 1e6;
    if (length_ && *length_) {
      double f = static_cast<double>(got_) / static_cast<double>(*length_);
      int w = static_cast<int>(f * 30);
      fmt::print(stderr, "\r[{}{}] {:5.1f}% {:.1f}/{:.1f} MB {:.1f} Mbit/s ", std::string(w, '#'),
                 std::string(30 - w, ' '), 100 * f, got_ / 1e6, *length_ / 1e6, rate);
    } else {
      fmt::print(stderr, "\r{:.1f} MB {:.1f} Mbit/s ", got_ / 1e6, rate);
    }
  }

  bool finish(Time now, const std::string& error) {
    if (done_) return false;
    done_ = true;
    if (o_.progress) fmt::print(stderr, "\n");
    if (out_) std::fclose(out_);
    out_ = nullptr;
    st_->close(now, s_);
    if (!error.empty()) {
      fmt::print(stderr, "weir fetch: {}\n", error);
      status_ = 1;
      return false;
    }
    double secs = std::max((now - start_).secs(), 1e-6);
    fmt::print(stderr, "weir fetch: {} bytes in {:.3f} s ({:.1f} Mbit/s)\n", got_, secs,
               static_cast<double>(got_) * 8 / secs / 1e6);
    if (!o_.sha256) return false;
    std::string hex = sha_.hex();
    fmt::print("{}  {}\n", hex, o_.output.empty() ? "-" : o_.output);
    if (!o_.expect_sha256.empty() && hex != o_.expect_sha256) {
      fmt::print(stderr, "weir fetch: sha256 mismatch (expected {})\n", o_.expect_sha256);
      status_ = 3;
    }
    return false;
  }

  FetchOptions o_;
  Stack* st_ = nullptr;
  SocketId s_ = kNoSocket;
  std::FILE* out_ = nullptr;
  Time start_, last_bar_;
  std::string req_;
  size_t req_off_ = 0;
  bool sent_all_ = false, have_head_ = false, done_ = false;
  std::string head_;
  std::array<uint8_t, 65536> buf_{};
  int status_code_ = 0, status_ = 0;
  std::optional<uint64_t> length_;
  uint64_t got_ = 0;
  bool connected_ = false, chunked_ = false;
  http::ChunkedDecoder dechunk_;
  std::string decoded_;
  Sha256 sha_;
};

}  // namespace

std::unique_ptr<App> make_fetch(FetchOptions opt) { return std::make_unique<Fetch>(std::move(opt)); }

}  // namespace weir::driver
