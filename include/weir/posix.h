// A POSIX-shaped layer over a Stack: file descriptors, sockaddr, -1 and
// errno (Linux values), so ported applications and the packetdrill runner
// map one to one. weir never blocks: a call on a blocking descriptor that
// would wait asks the block hook (installed by the driver, which can run
// virtual time forward until the socket is ready); without a hook it fails
// with EAGAIN (or EINPROGRESS for connect) as a non-blocking one would.
//
// Calls take the time from set_now(). The free functions weir::posix::socket()
// etc. act on the Api made current with use().
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <functional>
#include <map>

#include "weir/errqueue.h"
#include "weir/stack.h"

namespace weir::posix {

// recvmsg(MSG_ERRQUEUE) as Linux's ip_recv_error / ipv6_recv_error writes
// an entry into `msg`: its payload into msg_iov (MSG_TRUNC when longer), an
// SCM_TIMESTAMPING control message when it has a timestamp, then
// IP_RECVERR at SOL_IP (`v6`: IPV6_RECVERR at SOL_IPV6, for every AF_INET6
// socket, v4-mapped ones included) holding sock_extended_err and a zeroed
// offender address. A control message that does not fit is cut to what
// does and MSG_CTRUNC set (put_cmsg); msg_controllen becomes the bytes
// written; msg_flags gets MSG_ERRQUEUE. Returns the bytes copied.
size_t put_error_msg(const ErrQueueEntry& e, bool v6, msghdr* msg);

class Api {
 public:
  explicit Api(Stack& stack, int first_fd = 3) : stack_(stack), first_fd_(first_fd) {}

  void set_now(Time now) { now_ = now; }
  Time now() const { return now_; }
  // Called when a blocking call must wait for `events` on `fd`, at most
  // until `deadline` (the socket's SO_RCVTIMEO / SO_SNDTIMEO from the call's
  // start; Time::never() without one). The hook runs time forward (and
  // set_now()s it) until the events may be ready or the deadline is reached
  // and returns true (the call is retried, or times out as Linux's does:
  // EAGAIN, EINPROGRESS for connect, or the bytes a send queued), false to
  // give up at once.
  using BlockHook = std::function<bool(int fd, short events, Time deadline)>;
  void set_block_hook(BlockHook h) { block_ = std::move(h); }
  Stack& stack() { return stack_; }
  // The Stack socket behind a descriptor (kNoSocket if none).
  SocketId socket_id(int fd) const;
  int last_errno() const { return errno_; }

  int socket(int domain, int type, int protocol);
  int bind(int fd, const sockaddr* addr, socklen_t len);
  int listen(int fd, int backlog);
  int accept(int fd, sockaddr* addr, socklen_t* len);
  int accept4(int fd, sockaddr* addr, socklen_t* len, int flags);
  int connect(int fd, const sockaddr* addr, socklen_t len);
  ssize_t read(int fd, void* buf, size_t n);
  ssize_t write(int fd, const void* buf, size_t n);
  ssize_t readv(int fd, const iovec* iov, int iovcnt);
  ssize_t writev(int fd, const iovec* iov, int iovcnt);
  ssize_t send(int fd, const void* buf, size_t n, int flags);
  ssize_t recv(int fd, void* buf, size_t n, int flags);
  // sendmsg()/recvmsg() (posix_msg.cc): msg_name and the control messages
  // of a send are ignored; recvmsg(MSG_ERRQUEUE) reads the error queue.
  ssize_t sendmsg(int fd, const msghdr* msg, int flags);
  ssize_t recvmsg(int fd, msghdr* msg, int flags);
  int close(int fd);
  int shutdown(int fd, int how);
  int setsockopt(int fd, int level, int name, const void* val, socklen_t len);
  int getsockopt(int fd, int level, int name, void* val, socklen_t* len);
  int getsockname(int fd, sockaddr* addr, socklen_t* len);
  int getpeername(int fd, sockaddr* addr, socklen_t* len);
  int fcntl(int fd, int cmd, int arg = 0);
  int ioctl(int fd, unsigned long req, int* arg);
  // Non-blocking poll: fills revents now; `timeout_ms` != 0 uses the block hook.
  int poll(pollfd* fds, nfds_t n, int timeout_ms = 0);

 private:
  struct Fd {
    SocketId id = kNoSocket;
    bool nonblock = false;
    bool v6 = false;
  };
  Fd* fd_entry(int fd);
  int fail(Errc e);
  int fail(int e);
  bool wait(int fd, const Fd& f, short events, Time deadline);
  Time deadline(const Fd& f, bool send) const;
  int alloc_fd();
  int to_sockaddr(const Fd& f, const Endpoint& ep, sockaddr* addr, socklen_t* len);

  Stack& stack_;
  int first_fd_;
  Time now_;
  int errno_ = 0;
  BlockHook block_;
  std::map<int, Fd> fds_;
};

// Makes `api` the target of the free functions below (per thread).
void use(Api* api);
Api* current();

int socket(int domain, int type, int protocol);
int bind(int fd, const sockaddr* addr, socklen_t len);
int listen(int fd, int backlog);
int accept(int fd, sockaddr* addr, socklen_t* len);
int connect(int fd, const sockaddr* addr, socklen_t len);
ssize_t read(int fd, void* buf, size_t n);
ssize_t write(int fd, const void* buf, size_t n);
ssize_t readv(int fd, const iovec* iov, int iovcnt);
ssize_t writev(int fd, const iovec* iov, int iovcnt);
ssize_t send(int fd, const void* buf, size_t n, int flags);
ssize_t recv(int fd, void* buf, size_t n, int flags);
int close(int fd);
int shutdown(int fd, int how);
int setsockopt(int fd, int level, int name, const void* val, socklen_t len);
int getsockopt(int fd, int level, int name, void* val, socklen_t* len);
int fcntl(int fd, int cmd, int arg = 0);
int ioctl(int fd, unsigned long req, int* arg);
int poll(pollfd* fds, nfds_t n, int timeout_ms = 0);

}  // namespace weir::posix
