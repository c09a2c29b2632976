// The POSIX-shaped layer: descriptors, sockaddr conversion, -1/errno.
#include "weir/posix.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace weir::posix {
namespace {

thread_local Api* g_current = nullptr;

// sockaddr -> Endpoint; IPv4 becomes IPv4-mapped.
bool from_sockaddr(const sockaddr* a, socklen_t len, Endpoint& ep, int& family) {
  if (!a || len < static_cast<socklen_t>(sizeof(sa_family_t))) return false;
  family = a->sa_family;
  if (a->sa_family == AF_INET) {
    if (len < static_cast<socklen_t>(sizeof(sockaddr_in))) return false;
    sockaddr_in in;
    std::memcpy(&in, a, sizeof in);
    ep.addr = IpAddr::v4(ntohl(in.sin_addr.s_addr));
    ep.port = ntohs(in.sin_port);
    return true;
  }
  if (a->sa_family == AF_INET6) {
    if (len < static_cast<socklen_t>(sizeof(sockaddr_in6))) return false;
    sockaddr_in6 in6;
    std::memcpy(&in6, a, sizeof in6);
    std::array<uint8_t, 16> b;
    std::memcpy(b.data(), &in6.sin6_addr, 16);
    ep.addr = IpAddr::v6(b);
    ep.port = ntohs(in6.sin6_port);
    return true;
  }
  return false;
}

}  // namespace

int Api::fail(Errc e) { return fail(static_cast<int>(e)); }
int Api::fail(int e) {
  errno_ = e;
  errno = e;
  return -1;
}

SocketId Api::socket_id(int fd) const {
  auto it = fds_.find(fd);
  return it == fds_.end() ? kNoSocket : it->second.id;
}

Api::Fd* Api::fd_entry(int fd) {
  auto it = fds_.find(fd);
  return it == fds_.end() ? nullptr : &it->second;
}

int Api::alloc_fd() {
  int fd = first_fd_;
  for (const auto& [k, v] : fds_) {
    if (k != fd) break;
    ++fd;
  }
  return fd;
}

// Linux sock_rcvtimeo / sock_sndtimeo: a blocking call waits at most this
// long in all (sk_wait_data, sk_stream_wait_memory, inet_csk_wait_for_connect
// and inet_wait_for_connect count the time left down across wake-ups).
Time Api::deadline(const Fd& f, bool send) const {
  return now_ + (send ? stack_.sndtimeo(f.id) : stack_.rcvtimeo(f.id));
}

// False when the call must not wait (any more): O_NONBLOCK, no hook, or
// its timeout reached.
bool Api::wait(int fd, const Fd& f, short events, Time deadline) {
  if (f.nonblock || !block_ || now_ >= deadline) return false;
  return block_(fd, events, deadline);
}

int Api::to_sockaddr(const Fd& f, const Endpoint& ep, sockaddr* addr, socklen_t* len) {
  if (!addr || !len) return 0;
  if (!f.v6) {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(ep.port);
    in.sin_addr.s_addr = htonl(ep.addr.v4_host_order());
    std::memcpy(addr, &in, std::min<size_t>(*len, sizeof in));
    *len = sizeof in;
  } else {
    sockaddr_in6 in6{};
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(ep.port);
    std::memcpy(&in6.sin6_addr, ep.addr.bytes().data(), 16);
    std::memcpy(addr, &in6, std::min<size_t>(*len, sizeof in6));
    *len = sizeof in6;
  }
  return 0;
}

int Api::socket(int domain, int type, int protocol) {
  if (domain != AF_INET && domain != AF_INET6) return fail(EAFNOSUPPORT);
  const int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (base != SOCK_STREAM) return fail(EPROTONOSUPPORT);
  if (protocol != 0 && protocol != IPPROTO_TCP) return fail(EPROTONOSUPPORT);
  auto id = stack_.socket(domain == AF_INET6);
  if (!id) return fail(id.error());
  const int fd = alloc_fd();
  fds_[fd] = Fd{*id, (type & SOCK_NONBLOCK) != 0, domain == AF_INET6};
  return fd;
}

int Api::bind(int fd, const sockaddr* addr, socklen_t len) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  Endpoint ep;
  int family = 0;
  if (!from_sockaddr(addr, len, ep, family)) return fail(EINVAL);
  if (family == AF_INET6 && !f->v6) return fail(EINVAL);
  Errc e = stack_.bind(f->id, ep);
  return e == Errc::kOk ? 0 : fail(e);
}

int Api::listen(int fd, int backlog) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  Errc e = stack_.listen(now_, f->id, backlog);
  return e == Errc::kOk ? 0 : fail(e);
}

int Api::accept(int fd, sockaddr* addr, socklen_t* len) { return accept4(fd, addr, len, 0); }

int Api::accept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  const Time until = deadline(*f, false);  // inet_csk_accept: sock_rcvtimeo
  for (;;) {
    Endpoint peer;
    auto c = stack_.accept(now_, f->id, &peer);
    if (c) {
      const int nfd = alloc_fd();
      Fd child{*c, (flags & SOCK_NONBLOCK) != 0, f->v6};
      fds_[nfd] = child;
      to_sockaddr(child, peer, addr, len);
      return nfd;
    }
    if (c.error() != Errc::kAgain || !wait(fd, *f, POLLIN, until)) return fail(c.error());
    f = fd_entry(fd);
    if (!f) return fail(EBADF);
  }
}

int Api::connect(int fd, const sockaddr* addr, socklen_t len) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  Endpoint ep;
  int family = 0;
  if (!from_sockaddr(addr, len, ep, family)) return fail(EINVAL);
  if (family == AF_INET && f->v6) return fail(EAFNOSUPPORT);
  const Errc e = stack_.connect(now_, f->id, ep);
  if (e == Errc::kOk) return 0;
  if (e != Errc::kInProgress && e != Errc::kAlready) return fail(e);
  // A blocking connect waits while the handshake goes on (Linux
  // inet_wait_for_connect), at most SO_SNDTIMEO: then EINPROGRESS (or
  // EALREADY), the handshake going on. Calling again is the call's common
  // tail: 0 and SS_CONNECTED, or the error the connection closed with.
  const Time until = deadline(*f, true);
  for (;;) {
    if (!wait(fd, *f, POLLOUT, until)) return fail(e);
    f = fd_entry(fd);
    if (!f) return fail(EBADF);
    const Errc again = stack_.connect(now_, f->id, ep);
    if (again == Errc::kOk) return 0;
    if (again != Errc::kAlready) return fail(again);
  }
}

ssize_t Api::send(int fd, const void* buf, size_t n, int flags) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  const bool dontwait = (flags & MSG_DONTWAIT) != 0;
  const Time until = deadline(*f, true);  // tcp_sendmsg_locked: sock_sndtimeo
  size_t done = 0;
  const auto* p = static_cast<const uint8_t*>(buf);
  for (;;) {
    auto r = stack_.send(now_, f->id, std::span(p + done, n - done), flags & (MSG_MORE | MSG_ZEROCOPY | MSG_OOB));
    if (r) done += *r;
    if (done == n) return static_cast<ssize_t>(done);
    if (!r && r.error() != Errc::kAgain) return done ? static_cast<ssize_t>(done) : fail(r.error());
    // A blocking send waits until everything is queued (Linux
    // sk_stream_wait_memory); timed out, it returns what it queued, else EAGAIN.
    if (dontwait || !wait(fd, *f, POLLOUT, until)) return done ? static_cast<ssize_t>(done) : fail(EAGAIN);
    f = fd_entry(fd);
    if (!f) return fail(EBADF);
  }
}

ssize_t Api::recv(int fd, void* buf, size_t n, int flags) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  const Time until = deadline(*f, false);  // tcp_recvmsg_locked: sock_rcvtimeo
  for (;;) {
    auto r = stack_.recv(now_, f->id, std::span(static_cast<uint8_t*>(buf), n), flags & (MSG_PEEK | MSG_OOB));
    if (r) return static_cast<ssize_t>(*r);
    // MSG_OOB never waits (Linux tcp_recv_urg: EAGAIN whatever the socket's mode).
    if (r.error() != Errc::kAgain || (flags & (MSG_DONTWAIT | MSG_OOB)) || !wait(fd, *f, POLLIN, until))
      return fail(r.error());
    f = fd_entry(fd);
    if (!f) return fail(EBADF);
  }
}

ssize_t Api::read(int fd, void* buf, size_t n) { return recv(fd, buf, n, 0); }
ssize_t Api::write(int fd, const void* buf, size_t n) { return send(fd, buf, n, 0); }

ssize_t Api::writev(int fd, const iovec* iov, int iovcnt) {
  if (iovcnt < 0 || iovcnt > IOV_MAX) return fail(EINVAL);
  std::vector<uint8_t> all;
  for (int i = 0; i < iovcnt; ++i) {
    const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
    all.insert(all.end(), p, p + iov[i].iov_len);
  }
  return send(fd, all.data(), all.size(), 0);  // one sendmsg: one push, as Linux
}

ssize_t Api::readv(int fd, const iovec* iov, int iovcnt) {
  if (iovcnt < 0 || iovcnt > IOV_MAX) return fail(EINVAL);
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  std::vector<uint8_t> tmp(total);
  ssize_t r = recv(fd, tmp.data(), total, 0);
  if (r <= 0) return r;
  size_t off = 0;
  for (int i = 0; i < iovcnt && off < static_cast<size_t>(r); ++i) {
    const size_t k = std::min(iov[i].iov_len, static_cast<size_t>(r) - off);
    std::memcpy(iov[i].iov_base, tmp.data() + off, k);
    off += k;
  }
  return r;
}

int Api::close(int fd) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  const SocketId id = f->id;
  fds_.erase(fd);
  Errc e = stack_.close(now_, id);
  return e == Errc::kOk ? 0 : fail(e);
}

int Api::shutdown(int fd, int how) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  Errc e = stack_.shutdown(now_, f->id, how);
  return e == Errc::kOk ? 0 : fail(e);
}

int Api::setsockopt(int fd, int level, int name, const void* val, socklen_t len) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  if (!val && len) return fail(EFAULT);
  Errc e = stack_.setsockopt(now_, f->id, level, name, std::span(static_cast<const uint8_t*>(val), len));
  return e == Errc::kOk ? 0 : fail(e);
}

int Api::getsockopt(int fd, int level, int name, void* val, socklen_t* len) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  if (!len || !val) return fail(EFAULT);
  size_t out = 0;
  Errc e = stack_.getsockopt(f->id, level, name, std::span(static_cast<uint8_t*>(val), *len), &out);
  // TCP_SAVED_SYN into a short buffer: EINVAL, and optlen says how much the
  // saved headers need (Linux do_tcp_getsockopt writes it back first).
  if (e == Errc::kInval && level == IPPROTO_TCP && name == TCP_SAVED_SYN && out) *len = static_cast<socklen_t>(out);
  if (e != Errc::kOk) return fail(e);
  *len = static_cast<socklen_t>(out);
  return 0;
}

int Api::getsockname(int fd, sockaddr* addr, socklen_t* len) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  auto ep = stack_.local_endpoint(f->id);
  if (!ep) return fail(ep.error());
  return to_sockaddr(*f, *ep, addr, len);
}

int Api::getpeername(int fd, sockaddr* addr, socklen_t* len) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  auto ep = stack_.remote_endpoint(f->id);
  if (!ep) return fail(ep.error());
  return to_sockaddr(*f, *ep, addr, len);
}

int Api::fcntl(int fd, int cmd, int arg) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  switch (cmd) {
    case F_GETFL: return O_RDWR | (f->nonblock ? O_NONBLOCK : 0);
    case F_SETFL: f->nonblock = (arg & O_NONBLOCK) != 0; return 0;
    case F_GETFD: return 0;
    case F_SETFD: return 0;
    default: return fail(EINVAL);
  }
}

int Api::ioctl(int fd, unsigned long req, int* arg) {
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  if (!arg) return fail(EFAULT);
  if (req == FIONBIO) {
    f->nonblock = *arg != 0;
    return 0;
  }
  Errc e = stack_.ioctl(f->id, req, arg);
  return e == Errc::kOk ? 0 : fail(e);
}

int Api::poll(pollfd* fds, nfds_t n, int timeout_ms) {
  auto scan = [&] {
    int ready = 0;
    for (nfds_t i = 0; i < n; ++i) {
      fds[i].revents = 0;
      if (fds[i].fd < 0) continue;
      const Fd* f = fd_entry(fds[i].fd);
      if (!f) {
        fds[i].revents = POLLNVAL;
      } else {
        const uint32_t bits = stack_.poll(f->id);
        short want = static_cast<short>(fds[i].events | POLLERR | POLLHUP);
        if (fds[i].events & POLLIN) want |= POLLRDNORM;
        if (fds[i].events & POLLOUT) want |= POLLWRNORM;
        short got = static_cast<short>(bits & 0xffff);
        if (bits & ev::IN) got |= POLLRDNORM;
        if (bits & ev::OUT) got |= POLLWRNORM;
        fds[i].revents = static_cast<short>(got & want);
      }
      if (fds[i].revents) ++ready;
    }
    return ready;
  };
  int ready = scan();
  const Time until = timeout_ms < 0 ? Time::never() : now_ + Duration::ms(timeout_ms);
  while (ready == 0 && timeout_ms != 0 && block_ && n > 0 && now_ < until && block_(fds[0].fd, fds[0].events, until))
    ready = scan();
  return ready;
}

void use(Api* api) { g_current = api; }
Api* current() { return g_current; }

#define WEIR_POSIX_FORWARD(ret, name, params, args) \
  ret name params {                                 \
    if (!g_current) {                               \
      errno = EBADF;                                \
      return -1;                                    \
    }                                               \
    return g_current->name args;                    \
  }

WEIR_POSIX_FORWARD(int, socket, (int d, int t, int p), (d, t, p))
WEIR_POSIX_FORWARD(int, bind, (int fd, const sockaddr* a, socklen_t l), (fd, a, l))
WEIR_POSIX_FORWARD(int, listen, (int fd, int b), (fd, b))
WEIR_POSIX_FORWARD(int, accept, (int fd, sockaddr* a, socklen_t* l), (fd, a, l))
WEIR_POSIX_FORWARD(int, connect, (int fd, const sockaddr* a, socklen_t l), (fd, a, l))
WEIR_POSIX_FORWARD(ssize_t, read, (int fd, void* b, size_t n), (fd, b, n))
WEIR_POSIX_FORWARD(ssize_t, write, (int fd, const void* b, size_t n), (fd, b, n))
WEIR_POSIX_FORWARD(ssize_t, readv, (int fd, const iovec* v, int c), (fd, v, c))
WEIR_POSIX_FORWARD(ssize_t, writev, (int fd, const iovec* v, int c), (fd, v, c))
WEIR_POSIX_FORWARD(ssize_t, send, (int fd, const void* b, size_t n, int f), (fd, b, n, f))
WEIR_POSIX_FORWARD(ssize_t, recv, (int fd, void* b, size_t n, int f), (fd, b, n, f))
WEIR_POSIX_FORWARD(int, close, (int fd), (fd))
WEIR_POSIX_FORWARD(int, shutdown, (int fd, int h), (fd, h))
WEIR_POSIX_FORWARD(int, setsockopt, (int fd, int lv, int nm, const void* v, socklen_t l), (fd, lv, nm, v, l))
WEIR_POSIX_FORWARD(int, getsockopt, (int fd, int lv, int nm, void* v, socklen_t* l), (fd, lv, nm, v, l))
WEIR_POSIX_FORWARD(int, fcntl, (int fd, int c, int a), (fd, c, a))
WEIR_POSIX_FORWARD(int, ioctl, (int fd, unsigned long r, int* a), (fd, r, a))
WEIR_POSIX_FORWARD(int, poll, (pollfd * f, nfds_t n, int t), (f, n, t))

#undef WEIR_POSIX_FORWARD

}  // namespace weir::posix
