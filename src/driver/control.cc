#include "driver/control.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace weir::driver {

namespace {

bool fill_addr(const std::string& path, sockaddr_un& a) {
  a = {};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) return false;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return true;
}

void set_timeouts(int fd) {
  // A stuck client must not hold the driver thread for long.
  timeval tv{0, 500000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

}  // namespace

std::string default_control_path(const std::string& tun) { return fmt::format("/tmp/weir-{}.sock", tun); }

Expected<std::unique_ptr<ControlServer>, std::string> ControlServer::open(const std::string& path, Reactor& rx,
                                                                          Render render) {
  sockaddr_un a;
  if (!fill_addr(path, a)) return Unexpected(fmt::format("path too long: {}", path));
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unexpected(fmt::format("socket: {}", std::strerror(errno)));
  ::unlink(path.c_str());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 || ::listen(fd, 8) < 0) {
    int e = errno;
    ::close(fd);
    return Unexpected(fmt::format("{}: {}", path, std::strerror(e)));
  }
  std::unique_ptr<ControlServer> s(new ControlServer(path, fd, rx, std::move(render)));
  auto w = rx.watch(fd, EPOLLIN, [p = s.get()](uint32_t) { p->on_accept(); });
  if (!w) return Unexpected(w.error());
  return s;
}

ControlServer::~ControlServer() {
  rx_.unwatch(fd_);
  ::close(fd_);
  ::unlink(path_.c_str());
}

void ControlServer::on_accept() {
  for (;;) {
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    set_timeouts(c);
    char buf[256];
    ssize_t n = ::read(c, buf, sizeof buf - 1);
    std::string cmd = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
    while (!cmd.empty() && (cmd.back() == '\n' || cmd.back() == '\r' || cmd.back() == ' ')) cmd.pop_back();
    std::string out = render_(cmd);
    size_t off = 0;
    while (off < out.size()) {
      ssize_t w = ::write(c, out.data() + off, out.size() - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    ::close(c);
  }
}

Expected<std::string, std::string> control_query(const std::string& path, const std::string& command) {
  sockaddr_un a;
  if (!fill_addr(path, a)) return Unexpected(fmt::format("path too long: {}", path));
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unexpected(fmt::format("socket: {}", std::strerror(errno)));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0) {
    int e = errno;
    ::close(fd);
    return Unexpected(fmt::format("{}: {} (is `weir serve` running?)", path, std::strerror(e)));
  }
  std::string line = command + "\n";
  if (::write(fd, line.data(), line.size()) < 0) {
    ::close(fd);
    return Unexpected(fmt::format("write: {}", std::strerror(errno)));
  }
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

}  // namespace weir::driver
