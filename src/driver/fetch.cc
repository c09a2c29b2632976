#include "driver/fetch.h"

#include <array>
#include <cstdio>

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
    req_ = fmt::format("GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: weir-fetch\r\nAccept: */*\r\n"
                       "Connection: close\r\n\r\n", o_.url.target, o_.url.host);
    return {};
  }

  bool service(Time now) override {
    if (done_) return false;
    if (now - start_ > o_.timeout) return finish(now, "timed out");
    uint32_t events = st_->poll(s_);
    if (!sent_all_ && (events & ev::OUT)) send_request(now);
    for (int i = 0; i < kBudget && !done_; ++i) {
      auto n = st_->recv(now, s_, buf_);
      if (!n) {
        if (n.error() != Errc::kAgain) return finish(now, std::string("recv: ") + errc_name(n.error()));
        break;
      }
      if (*n == 0) return on_eof(now);
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
    if (auto te = h->field("Transfer-Encoding"); te && *te != "identity")
      return finish(Time::zero(), "chunked transfer coding is not supported"), false;
    if (auto cl = h->field("Content-Length")) length_ = std::strtoull(std::string(*cl).c_str(), nullptr, 10);
    return true;
  }

  void body(Time now, std::span<const uint8_t> data) {
    if (length_ && got_ + data.size() > *length_) data = data.first(static_cast<size_t>(*length_ - got_));
    sha_.update(data);
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
    std::string hex = sha_.hex();
    fmt::print("{}  {}\n", hex, o_.output.empty() ? "-" : o_.output);
    fmt::print(stderr, "weir fetch: {} bytes in {:.3f} s ({:.1f} Mbit/s)\n", got_, secs,
               static_cast<double>(got_) * 8 / secs / 1e6);
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
  Sha256 sha_;
};

}  // namespace

std::unique_ptr<App> make_fetch(FetchOptions opt) { return std::make_unique<Fetch>(std::move(opt)); }

}  // namespace weir::driver
