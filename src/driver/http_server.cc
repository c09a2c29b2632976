#include "driver/http_server.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>

#include <fmt/format.h>

#include "driver/http.h"

namespace weir::driver {

namespace {

constexpr size_t kMaxHead = 16384;  // larger request heads get 431
constexpr int kBudget = 16;

class HttpSession final : public Session {
 public:
  explicit HttpSession(const std::string& root) : root_(root) {}
  ~HttpSession() override { close_file(); }

  bool step(Time now, Stack& st, SocketId s, uint32_t events, bool* more) override {
    if (events & ev::ERR) return false;
    for (int i = 0; i < kBudget; ++i) {
      if (responding_) {
        int r = send_some(now, st, s);
        if (r < 0) return false;
        if (r == 0) return true;  // send buffer full: wait for OUT
        continue;
      }
      if (!close_after_ && try_request()) continue;
      if (close_after_) return false;  // response done, connection not persistent
      if (eof_) return false;
      auto n = st.recv(now, s, std::span(rbuf_));
      if (!n) return n.error() == Errc::kAgain;
      if (*n == 0) {
        eof_ = true;
        continue;
      }
      in_.append(reinterpret_cast<const char*>(rbuf_.data()), *n);
    }
    *more = true;
    return true;
  }

 private:
  // Takes one complete request head off the input, if there is one, and
  // prepares its response. Returns true when it did.
  bool try_request() {
    size_t end = in_.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (in_.size() > kMaxHead) error(431);
      return in_.size() > kMaxHead;
    }
    std::string head = in_.substr(0, end);
    in_.erase(0, end + 4);
    auto h = http::parse_head(head);
    if (!h || h->c.substr(0, 5) != "HTTP/") {
      error(400);
      return true;
    }
    keep_ = http::keep_alive(*h, h->c);
    if (h->a != "GET" && h->a != "HEAD") {
      error(405);
      return true;
    }
    respond_file(*h, h->a == "HEAD");
    return true;
  }

  void respond_file(const http::Head& req, bool head_only) {
    auto path = http::target_to_path(root_, req.b);
    if (!path) return error(403);
    int fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC);
    struct stat sb {};
    if (fd < 0 || ::fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
      if (fd >= 0) ::close(fd);
      return error(404);
    }
    uint64_t size = static_cast<uint64_t>(sb.st_size);
    http::ByteRange r{0, size ? size - 1 : 0};
    int status = 200;
    std::string extra;
    if (auto rv = req.field("Range")) {
      auto res = http::parse_range(*rv, size, &r);
      if (res == http::RangeResult::kUnsatisfiable) {
        ::close(fd);
        // RFC 9110 §15.5.17: say how big the representation is.
        return error(416, fmt::format("Content-Range: bytes */{}\r\n", size));
      }
      if (res == http::RangeResult::kOk) {
        status = 206;
        extra = fmt::format("Content-Range: bytes {}-{}/{}\r\n", r.first, r.last, size);
      }
    }
    uint64_t len = size ? r.last - r.first + 1 : 0;
    out_ = fmt::format("HTTP/1.1 {} {}\r\nServer: weir\r\nContent-Type: application/octet-stream\r\n"
                       "Accept-Ranges: bytes\r\nContent-Length: {}\r\n{}{}\r\n",
                       status, http::reason_phrase(status), len, extra, keep_ ? "" : "Connection: close\r\n");
    fd_ = fd;
    file_off_ = r.first;
    file_left_ = head_only ? 0 : len;
    begin_response();
  }

  void error(int status, std::string extra = {}) {
    std::string body = fmt::format("{} {}\n", status, http::reason_phrase(status));
    // Malformed requests end the connection: the framing can't be trusted.
    if (status == 400 || status == 431) keep_ = false;
    out_ = fmt::format("HTTP/1.1 {} {}\r\nServer: weir\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{}{}\r\n{}",
                       status, http::reason_phrase(status), body.size(), extra,
                       keep_ ? "" : "Connection: close\r\n", body);
    file_left_ = 0;
    begin_response();
  }

  void begin_response() {
    responding_ = true;
    out_off_ = 0;
  }

  void close_file() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Moves bytes to the socket. Returns 1 on progress, 0 when the socket is
  // full, -1 on a connection error.
  int send_some(Time now, Stack& st, SocketId s) {
    if (out_off_ == out_.size() && file_left_ > 0) {
      // Refill the staging buffer from the file.
      size_t want = static_cast<size_t>(std::min<uint64_t>(file_left_, kChunk));
      out_.resize(want);
      ssize_t n = ::pread(fd_, out_.data(), want, static_cast<off_t>(file_off_));
      if (n <= 0) return -1;  // the file shrank under us
      out_.resize(static_cast<size_t>(n));
      out_off_ = 0;
      file_off_ += static_cast<uint64_t>(n);
      file_left_ -= static_cast<uint64_t>(n);
    }
    if (out_off_ == out_.size()) {
      responding_ = false;
      close_file();
      out_.clear();
      if (!keep_) close_after_ = true;
      return 1;
    }
    auto n = st.send(now, s, std::span(reinterpret_cast<const uint8_t*>(out_.data()) + out_off_, out_.size() - out_off_));
    if (!n) return n.error() == Errc::kAgain ? 0 : -1;
    if (*n == 0) return 0;
    out_off_ += *n;
    return 1;
  }

  static constexpr size_t kChunk = 256 * 1024;
  const std::string& root_;
  std::string in_;
  std::array<uint8_t, 16384> rbuf_{};
  std::string out_;
  size_t out_off_ = 0;
  int fd_ = -1;
  uint64_t file_off_ = 0, file_left_ = 0;
  bool responding_ = false, keep_ = true, close_after_ = false, eof_ = false;
};

class HttpServer final : public ServerApp {
 public:
  HttpServer(std::vector<IpAddr> a, uint16_t p, std::string root) : ServerApp(std::move(a), p), root_(std::move(root)) {}

 protected:
  std::unique_ptr<Session> make_session() override { return std::make_unique<HttpSession>(root_); }

 private:
  std::string root_;
};

}  // namespace

std::unique_ptr<App> make_http_server(std::vector<IpAddr> addrs, uint16_t port, std::string root) {
  return std::make_unique<HttpServer>(std::move(addrs), port, std::move(root));
}

}  // namespace weir::driver
