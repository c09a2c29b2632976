// System calls: each script call becomes a call on weir::Stack with Linux
// errno semantics. Calls that would block on a blocking socket (or a
// poll/epoll_wait with a timeout) become a Pending operation that the
// timeline retries after every engine step, so their return time is checked.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "pkt/runner_impl.h"
#include "pkt/symbols.h"

namespace weir::pkt {
namespace {

struct Ret {
  int64_t value = 0;
  int err = 0;  // errno when value == -1
};

Ret from(Errc e) { return e == Errc::kOk ? Ret{0, 0} : Ret{-1, static_cast<int>(e)}; }

bool is_ellipsis(const Expr& e) { return e.kind == Expr::Kind::kEllipsis; }

// A blocking read returns once min(SO_RCVLOWAT, len) bytes are queued, or at
// EOF or an error (Linux tcp_recvmsg: target = sock_rcvlowat()).
// Linux tcp_inq_hint: bytes left to read, or 1 once a FIN has arrived with
// nothing left, so the reader knows to read again (and see EOF).
int inq_hint(const Stack& st, SocketId s) {
  int inq = 0;
  st.ioctl(s, 0x541B /* SIOCINQ */, &inq);
  if (inq == 0 && (st.poll(s) & ev::RDHUP)) inq = 1;
  return inq;
}

// recvmsg() with TCP_INQ on reports TCP_CM_INQ = the hint after the read.
void check_cm_inq(Runner& r, SocketId s, int64_t want, bool inq_on) {
  if (!inq_on)
    r.stop(Outcome::kFail, "recvmsg() expected a TCP_CM_INQ control message, but TCP_INQ is off");
  const int got = inq_hint(*r.stack_, s);
  if (got != want)
    r.stop(Outcome::kFail, fmt::format("recvmsg() TCP_CM_INQ: expected {} but got {}", want, got));
}

bool read_target_met(const Stack& st, SocketId s, size_t want) {
  int inq = 0;
  if (st.ioctl(s, 0x541B /* SIOCINQ */, &inq) != Errc::kOk) return true;  // recv reports it
  if (st.poll(s) & (ev::ERR | ev::HUP | ev::RDHUP)) return true;
  int lowat = 1;
  size_t optlen = sizeof lowat;
  std::span<uint8_t> val(reinterpret_cast<uint8_t*>(&lowat), sizeof lowat);
  if (st.getsockopt(s, sym::SOL_SOCKET, sym::SO_RCVLOWAT, val, &optlen) != Errc::kOk) lowat = 1;
  const size_t target = std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(lowat, 1)), want));
  return static_cast<size_t>(std::max(inq, 0)) >= target;
}

// Options the engine has no notion of: the script is skipped, not failed.
bool unsupported_sockopt(std::string_view name) {
  static const char* kNames[] = {"TCP_FASTOPEN", "TCP_FASTOPEN_CONNECT", "TCP_FASTOPEN_KEY",
                                 "TCP_FASTOPEN_NO_COOKIE", "SO_ZEROCOPY", "SO_TIMESTAMPING",
                                 "TCP_MD5SIG", "TCP_ZEROCOPY_RECEIVE", "TCP_REPAIR", "TCP_SAVE_SYN",
                                 "TCP_SAVED_SYN", "TCP_ULP", "SO_RCVTIMEO", "SO_SNDTIMEO",
                                 "SO_BINDTODEVICE", "TCP_TX_DELAY", "SO_MARK", "IP_FREEBIND"};
  for (const char* n : kNames)
    if (name == n) return true;
  return false;
}

}  // namespace

class SyscallCtx {
 public:
  SyscallCtx(Runner& r, const Event& e, const SyscallSpec& s) : r_(r), e_(e), s_(s) {}

  [[noreturn]] void skip(std::string why) { r_.stop(Outcome::kSkip, std::move(why)); }
  [[noreturn]] void fail(std::string why) { r_.stop(Outcome::kFail, std::move(why)); }

  const Expr& arg(size_t i) {
    if (i >= s_.args.size()) fail(fmt::format("{}() needs at least {} arguments", s_.name, i + 1));
    return s_.args[i];
  }

  int64_t eval(const Expr& x) {
    switch (x.kind) {
      case Expr::Kind::kInt: return x.num;
      case Expr::Kind::kWord: {
        if (auto v = symbol_value(x.text)) return *v;
        // An errno name as a value (getsockopt SO_ERROR) is its number.
        if (auto e = errno_value(x.text)) return *e;
        skip(fmt::format("unknown symbol '{}'", x.text));
        return 0;
      }
      case Expr::Kind::kOr: {
        int64_t v = 0;
        for (const Expr& i : x.items) v |= eval(i);
        return v;
      }
      case Expr::Kind::kList:
        if (x.items.size() == 1) return eval(x.items[0]);
        break;
      case Expr::Kind::kCall:
        if (x.text == "htons" && x.args.size() == 1) return eval(x.args[0]);
        break;
      default: break;
    }
    fail(fmt::format("expected a number in {}(), got '{}'", s_.name, x.text));
  }

  FdEntry& fd(size_t i) {
    int64_t f = eval(arg(i));
    auto it = r_.fds_.find(static_cast<int>(f));
    if (it == r_.fds_.end()) fail(fmt::format("{}(): fd {} is not open in the script", s_.name, f));
    return it->second;
  }

  // Total bytes of an iovec list [{..., 100}, {..., 200}].
  int64_t iov_len(const Expr& list) {
    int64_t n = 0;
    for (const Expr& v : list.items)
      if (v.kind == Expr::Kind::kStruct && v.items.size() >= 2) n += eval(v.items[1]);
    return n;
  }

  int64_t msg_len(const Expr& msg) {
    const Expr* iov = msg.field("msg_iov");
    if (!iov || iov->items.empty()) fail(fmt::format("{}(): msghdr without msg_iov", s_.name));
    return iov_len(iov->items[0]);
  }

  // The TCP_CM_INQ value a recvmsg() msghdr expects in msg_control, if any.
  std::optional<int64_t> expected_cm_inq(const Expr& msg) {
    const Expr* ctl = msg.field("msg_control");
    if (!ctl || ctl->items.empty() || ctl->items[0].kind != Expr::Kind::kList) return std::nullopt;
    for (const Expr& c : ctl->items[0].items) {
      const Expr* lvl = c.field("cmsg_level");
      const Expr* type = c.field("cmsg_type");
      const Expr* data = c.field("cmsg_data");
      if (!lvl || !type || !data) continue;
      if (eval(lvl->items[0]) == sym::SOL_TCP && eval(type->items[0]) == sym::TCP_INQ) return eval(data->items[0]);
      skip(fmt::format("recvmsg() control message {} is not supported", type->items[0].text));
    }
    return std::nullopt;
  }

  int flags_checked(int64_t flags) {
    if (flags & sym::MSG_FASTOPEN) skip("MSG_FASTOPEN (TCP Fast Open) is not supported");
    if (flags & sym::MSG_ZEROCOPY) skip("MSG_ZEROCOPY is not supported");
    if (flags & sym::MSG_ERRQUEUE) skip("MSG_ERRQUEUE (error queue) is not supported");
    return static_cast<int>(flags);
  }

  // The expected result, compared after the call returns.
  void check(const Ret& got) {
    const Expr& want = s_.result;
    if (is_ellipsis(want)) return;
    int64_t w = eval(want);
    if (w == -1 && !s_.errno_name.empty()) {
      auto e = errno_value(s_.errno_name);
      if (!e) skip(fmt::format("unknown errno '{}'", s_.errno_name));
      if (got.value != -1 || got.err != *e)
        fail(fmt::format("{}() expected -1 {} but returned {}", s_.name, s_.errno_name, describe(got)));
      return;
    }
    if (got.value != w)
      fail(fmt::format("{}() expected result {} but returned {}", s_.name, w, describe(got)));
  }

  std::string describe(const Ret& r) {
    if (r.value != -1 || r.err == 0) return std::to_string(r.value);
    return fmt::format("-1 {} ({})", errc_name(static_cast<Errc>(r.err)), errno_text(r.err));
  }

  // Runs `op` now; when it says "would block" on a blocking call, it becomes
  // the pending operation, retried after each engine step.
  void run(bool blocking, std::function<std::optional<Ret>(Time)> op, Time wake = Time::never()) {
    std::optional<Ret> r = op(r_.now_);
    bool ranged = e_.time.block_end.has_value();
    if (r && !ranged) {
      check(*r);
      r_.log(fmt::format("{} {}() = {}", r_.fmt_time(r_.now_), s_.name, describe(*r)));
      return;
    }
    if (!r && !blocking) fail(fmt::format("{}() would block on a non-blocking call", s_.name));
    // A blocking call (or one the script marks start...end): complete later.
    auto shared = std::make_shared<std::optional<Ret>>(r);
    Pending p;
    p.event = &e_;
    p.started = r_.now_;
    p.wake = wake;
    const SyscallSpec* spec = &s_;
    Runner* runner = &r_;
    const Event* ev = &e_;
    p.step = [shared, op, spec, runner, ev](Time now, int* err) -> std::optional<int64_t> {
      if (!*shared) *shared = op(now);
      if (!*shared) return std::nullopt;
      SyscallCtx c(*runner, *ev, *spec);
      c.check(**shared);
      *err = (*shared)->err;
      return (*shared)->value;
    };
    r_.pending_ = std::move(p);
  }

  void dispatch();

 private:
  void socket_calls();
  void accept_call();
  void connect_call();
  void data_calls();
  void option_calls();
  void fcntl_call();
  void ioctl_call();
  void poll_calls();
  void epoll_calls();
  void epoll_ctl_call(FdEntry& ep);

  Runner& r_;
  const Event& e_;
  const SyscallSpec& s_;
};

// accept(): blocks on a blocking listener until a child is ready; the
// script's fd names the child.
void SyscallCtx::accept_call() {
  FdEntry& f = fd(0);
  SocketId ls = f.sock;
  int64_t want_fd = is_ellipsis(s_.result) ? -1 : eval(s_.result);
  Runner* r = &r_;
  bool blocking = !f.nonblock;
  return run(blocking, [r, ls, want_fd, blocking](Time now) -> std::optional<Ret> {
    auto a = r->stack_->accept(now, ls);
    if (!a && a.error() == Errc::kAgain && blocking) return std::nullopt;
    if (!a) return from(a.error());
    FdEntry nf;
    nf.sock = *a;
    r->fds_[static_cast<int>(want_fd)] = nf;
    r->sut_fd_ = static_cast<int>(want_fd);
    r->conn_.accepted = true;
    return Ret{want_fd, 0};
  });
}

// connect(): a blocking one returns when the handshake completes or fails.
void SyscallCtx::connect_call() {
  FdEntry& f = fd(0);
  r_.sut_fd_ = static_cast<int>(eval(arg(0)));
  SocketId s = f.sock;
  Errc e = r_.stack_->connect(r_.now_, s, {r_.cfg_.remote_ip, r_.cfg_.connect_port});
  if (e != Errc::kInProgress || f.nonblock) return run(false, [e](Time) { return from(e); });
  Runner* r = &r_;
  return run(true, [r, s](Time) -> std::optional<Ret> {
    uint32_t ev = r->stack_->poll(s);
    if (!(ev & (ev::OUT | ev::ERR | ev::HUP))) return std::nullopt;
    int err = 0;
    size_t len = sizeof(err);
    r->stack_->getsockopt(s, sym::SOL_SOCKET, sym::SO_ERROR, {reinterpret_cast<uint8_t*>(&err), len}, &len);
    return err ? Ret{-1, err} : Ret{0, 0};
  });
}

void SyscallCtx::socket_calls() {
  const std::string& n = s_.name;
  if (n == "socket") {
    int64_t type = eval(arg(1));
    if ((type & 0xf) != sym::SOCK_STREAM) skip("only SOCK_STREAM sockets are supported");
    auto s = r_.stack_->socket(r_.cfg_.ip_version != IpVersion::kIpv4);
    Ret ret = s ? Ret{eval(s_.result), 0} : from(s.error());
    if (s) {
      FdEntry f;
      f.sock = *s;
      f.nonblock = (type & sym::SOCK_NONBLOCK) != 0;
      r_.fds_[static_cast<int>(ret.value)] = f;
    }
    return run(false, [ret](Time) { return ret; });
  }
  if (n == "bind") {
    FdEntry& f = fd(0);
    Ret ret = from(r_.stack_->bind(f.sock, {r_.cfg_.local_ip, r_.cfg_.bind_port}));
    return run(false, [ret](Time) { return ret; });
  }
  if (n == "listen") {
    FdEntry& f = fd(0);
    Ret ret = from(r_.stack_->listen(r_.now_, f.sock, static_cast<int>(eval(arg(1)))));
    if (ret.value == 0) f.listener = true;
    return run(false, [ret](Time) { return ret; });
  }
  if (n == "accept" || n == "accept4") return accept_call();
  if (n == "connect") return connect_call();
  if (n == "close") {
    int f = static_cast<int>(eval(arg(0)));
    FdEntry& e = fd(0);
    Ret ret = e.kind == FdEntry::Kind::kEpoll ? Ret{} : from(r_.stack_->close(r_.now_, e.sock));
    r_.fds_.erase(f);
    if (f == r_.sut_fd_) r_.conn_.closed = true;
    return run(false, [ret](Time) { return ret; });
  }
  if (n == "shutdown") {
    FdEntry& f = fd(0);
    Ret ret = from(r_.stack_->shutdown(r_.now_, f.sock, static_cast<int>(eval(arg(1)))));
    return run(false, [ret](Time) { return ret; });
  }
  if (n == "getsockname" || n == "getpeername") {
    FdEntry& f = fd(0);
    auto ep = n == "getsockname" ? r_.stack_->local_endpoint(f.sock) : r_.stack_->remote_endpoint(f.sock);
    Ret ret = ep ? Ret{} : from(ep.error());
    return run(false, [ret](Time) { return ret; });
  }
  fail("internal: unrouted call " + n);
}

void SyscallCtx::data_calls() {
  const std::string& n = s_.name;
  bool is_read = n == "read" || n == "recv" || n == "recvfrom" || n == "readv" || n == "recvmsg";
  FdEntry& f = fd(0);
  int64_t len = 0;
  int flags = 0;
  if (n == "read" || n == "write") {
    len = eval(arg(2));
  } else if (n == "recv" || n == "send" || n == "recvfrom" || n == "sendto") {
    len = eval(arg(2));
    flags = flags_checked(eval(arg(3)));
  } else if (n == "readv" || n == "writev") {
    len = iov_len(arg(1));
  } else {  // sendmsg / recvmsg
    len = msg_len(arg(1));
    flags = flags_checked(eval(arg(2)));
  }
  if (len < 0 || len > (64 << 20)) fail(fmt::format("{}(): length {} out of range", n, len));
  // A NULL buffer: the kernel's copy to or from user memory fails (EFAULT)
  // when there is something to copy.
  const Expr& buf = arg(1);
  bool null_buf = (buf.kind == Expr::Kind::kWord && buf.text == "NULL") || (buf.kind == Expr::Kind::kInt && buf.num == 0);
  if (null_buf && (n == "read" || n == "write" || n == "recv" || n == "send" || n == "recvfrom" || n == "sendto")) {
    int inq = 0;
    r_.stack_->ioctl(f.sock, 0x541B /* SIOCINQ */, &inq);
    if (!is_read || inq > 0) return run(false, [](Time) { return Ret{-1, EFAULT}; });
  }
  bool blocking = !f.nonblock && !(flags & sym::MSG_DONTWAIT);
  int engine_flags = flags & ~(sym::MSG_DONTWAIT | 0x4000 /* MSG_NOSIGNAL */);
  SocketId s = f.sock;
  Runner* r = &r_;
  size_t want = static_cast<size_t>(len);
  if (is_read) {
    const std::optional<int64_t> want_inq = n == "recvmsg" ? expected_cm_inq(arg(1)) : std::nullopt;
    const bool inq_on = f.inq;
    return run(blocking, [r, s, want, engine_flags, blocking, want_inq, inq_on](Time now) -> std::optional<Ret> {
      if (blocking && !read_target_met(*r->stack_, s, want)) return std::nullopt;
      std::vector<uint8_t> buf(want);
      auto got = r->stack_->recv(now, s, buf, engine_flags);
      if (!got && got.error() == Errc::kAgain && blocking) return std::nullopt;
      if (got && want_inq) check_cm_inq(*r, s, *want_inq, inq_on);
      return got ? Ret{static_cast<int64_t>(*got), 0} : from(got.error());
    });
  }
  // Writes: a blocking write returns when all of it is queued (or on error).
  auto sent = std::make_shared<size_t>(0);
  return run(blocking, [r, s, want, engine_flags, blocking, sent](Time now) -> std::optional<Ret> {
    std::vector<uint8_t> buf(want - *sent, 0);
    auto got = r->stack_->send(now, s, buf, engine_flags);
    if (got) *sent += *got;
    if (!got && got.error() != Errc::kAgain) {
      if (*sent > 0) return Ret{static_cast<int64_t>(*sent), 0};
      return from(got.error());
    }
    if (!blocking) return got ? Ret{static_cast<int64_t>(*got), 0} : from(got.error());
    if (*sent < want) return std::nullopt;
    return Ret{static_cast<int64_t>(*sent), 0};
  });
}

// fcntl(fd, F_GETFL|F_SETFL[, flags]): only O_NONBLOCK matters.
void SyscallCtx::fcntl_call() {
  FdEntry& f = fd(0);
  int64_t cmd = eval(arg(1));
  Ret ret;
  if (cmd == sym::F_GETFL) ret.value = sym::O_RDWR | (f.nonblock ? sym::O_NONBLOCK : 0);
  else if (cmd == sym::F_SETFL) f.nonblock = (eval(arg(2)) & sym::O_NONBLOCK) != 0;
  else skip(fmt::format("fcntl command {} is not supported", arg(1).text));
  return run(false, [ret](Time) { return ret; });
}

// ioctl(fd, request, [value]): FIONREAD/SIOCINQ, SIOCOUTQ, SIOCOUTQNSD.
void SyscallCtx::ioctl_call() {
  FdEntry& f = fd(0);
  int out = 0;
  Ret ret = from(r_.stack_->ioctl(f.sock, static_cast<unsigned long>(eval(arg(1))), &out));
  if (ret.value == 0 && s_.args.size() > 2 && !is_ellipsis(arg(2)) && eval(arg(2)) != out)
    fail(fmt::format("ioctl({}) expected [{}] but got [{}]", arg(1).text, eval(arg(2)), out));
  return run(false, [ret](Time) { return ret; });
}

void SyscallCtx::option_calls() {
  const std::string& n = s_.name;
  if (n == "fcntl") return fcntl_call();
  if (n == "ioctl") return ioctl_call();
  FdEntry& f = fd(0);
  const Expr& name = arg(2);
  if (name.kind == Expr::Kind::kWord && unsupported_sockopt(name.text))
    skip(fmt::format("socket option {} is not supported", name.text));
  int level = static_cast<int>(eval(arg(1)));
  int opt = static_cast<int>(eval(name));
  const Expr& val = arg(3);
  if (n == "setsockopt") {
    std::vector<uint8_t> bytes;
    if (val.kind == Expr::Kind::kString) {
      bytes.assign(val.text.begin(), val.text.end());
    } else if (val.kind == Expr::Kind::kStruct && val.field("onoff")) {
      int32_t v[2] = {static_cast<int32_t>(eval(val.field("onoff")->items[0])),
                      static_cast<int32_t>(eval(val.field("linger")->items[0]))};
      bytes.resize(8);
      std::memcpy(bytes.data(), v, 8);
    } else {
      int32_t v = static_cast<int32_t>(eval(val));
      bytes.resize(4);
      std::memcpy(bytes.data(), &v, 4);
    }
    Errc e = r_.stack_->setsockopt(r_.now_, f.sock, level, opt, bytes);
    if (e == Errc::kNoProtoOpt && level == sym::SOL_TCP && opt == sym::TCP_INQ) {
      // TCP_INQ only changes what recvmsg() reports: the runner keeps it.
      int32_t v = 0;
      std::memcpy(&v, bytes.data(), std::min<size_t>(bytes.size(), 4));
      f.inq = v != 0;
      e = Errc::kOk;
    }
    if (e == Errc::kNoProtoOpt && !is_ellipsis(s_.result) && eval(s_.result) == 0)
      skip(fmt::format("the engine does not support setsockopt {}", name.text));
    Ret ret = from(e);
    return run(false, [ret](Time) { return ret; });
  }
  // getsockopt(fd, level, name, [value], [len])
  if (val.kind == Expr::Kind::kStruct) skip(fmt::format("getsockopt {} with a struct value is not supported", name.text));
  std::array<uint8_t, 256> buf{};
  size_t len = 4;
  if (s_.args.size() > 4 && !is_ellipsis(arg(4))) len = static_cast<size_t>(eval(arg(4)));
  len = std::min(len, buf.size());
  Errc e = r_.stack_->getsockopt(f.sock, level, opt, {buf.data(), len}, &len);
  if (e == Errc::kNoProtoOpt && level == sym::SOL_TCP && opt == sym::TCP_INQ) {
    const int32_t v = f.inq ? 1 : 0;
    std::memcpy(buf.data(), &v, 4);
    len = 4;
    e = Errc::kOk;
  }
  if (e == Errc::kNoProtoOpt && !is_ellipsis(s_.result) && eval(s_.result) == 0)
    skip(fmt::format("the engine does not support getsockopt {}", name.text));
  if (e == Errc::kOk && !is_ellipsis(val)) {
    int64_t got = 0;
    uint32_t v32 = 0;
    std::memcpy(&v32, buf.data(), 4);
    got = v32;
    int64_t want = eval(val);
    if (static_cast<uint32_t>(want) != v32)
      fail(fmt::format("getsockopt({}) expected [{}] but got [{}]", name.text, want, got));
  }
  Ret ret = from(e);
  return run(false, [ret](Time) { return ret; });
}

void SyscallCtx::poll_calls() {
  // poll([{fd=, events=, revents=}...], nfds, timeout)
  const Expr& list = arg(0);
  int64_t timeout = eval(arg(2));
  struct Item {
    SocketId s;
    uint32_t events;
    std::optional<uint32_t> revents;
  };
  std::vector<Item> items;
  for (const Expr& st : list.items) {
    const Expr* f = st.field("fd");
    const Expr* ev = st.field("events");
    if (!f || !ev) fail("poll(): each entry needs fd= and events=");
    auto it = r_.fds_.find(static_cast<int>(eval(f->items[0])));
    if (it == r_.fds_.end()) fail("poll(): fd is not open in the script");
    Item item{it->second.sock, static_cast<uint32_t>(eval(ev->items[0])), std::nullopt};
    if (const Expr* rv = st.field("revents")) item.revents = static_cast<uint32_t>(eval(rv->items[0]));
    items.push_back(item);
  }
  Runner* r = &r_;
  Time deadline = timeout < 0 ? Time::never() : r_.now_ + Duration::ms(timeout);
  const SyscallSpec* spec = &s_;
  auto op = [r, items, deadline, spec](Time now) -> std::optional<Ret> {
    int ready = 0;
    std::string mismatch;
    for (const Item& i : items) {
      uint32_t got = r->stack_->poll(i.s) & (i.events | ev::ERR | ev::HUP);
      if (got) ++ready;
      if (i.revents && got != *i.revents)
        mismatch = fmt::format("poll() revents: expected 0x{:x} but got 0x{:x}", *i.revents, got);
    }
    if (ready == 0 && now < deadline) return std::nullopt;
    if (!mismatch.empty()) r->stop(Outcome::kFail, mismatch);
    (void)spec;
    return Ret{ready, 0};
  };
  run(timeout != 0, op, deadline);
}

// epoll_ctl(epfd, op, fd, {events=, fd=|u64=})
void SyscallCtx::epoll_ctl_call(FdEntry& ep) {
  int64_t op = eval(arg(1));
  int target = static_cast<int>(eval(arg(2)));
  FdEntry::Watch w;
  if (s_.args.size() > 3 && arg(3).kind == Expr::Kind::kStruct) {
    if (const Expr* e = arg(3).field("events")) w.events = static_cast<uint32_t>(eval(e->items[0]));
    if (const Expr* d = arg(3).field("fd")) w.data = eval(d->items[0]);
    else if (const Expr* d2 = arg(3).field("u64")) w.data = eval(d2->items[0]);
  }
  if (op == sym::EPOLL_CTL_DEL) {
    ep.watches.erase(target);
  } else {
    // ADD and MOD report a ready socket once, as ep_insert/ep_modify do.
    auto t = r_.fds_.find(target);
    if (t != r_.fds_.end()) {
      w.last_bits = r_.stack_->poll(t->second.sock);
      r_.stack_->ioctl(t->second.sock, 0x541B, &w.last_inq);
    }
    ep.watches[target] = w;
  }
  return run(false, [](Time) { return Ret{}; });
}

void SyscallCtx::epoll_calls() {
  const std::string& n = s_.name;
  if (n == "epoll_create" || n == "epoll_create1") {
    FdEntry f;
    f.kind = FdEntry::Kind::kEpoll;
    int64_t want = eval(s_.result);
    r_.fds_[static_cast<int>(want)] = f;
    return run(false, [want](Time) { return Ret{want, 0}; });
  }
  FdEntry& ep = fd(0);
  if (ep.kind != FdEntry::Kind::kEpoll) fail(fmt::format("{}(): fd is not an epoll fd", n));
  if (n == "epoll_ctl") return epoll_ctl_call(ep);
  // epoll_wait(epfd, {events=, fd=}, maxevents, timeout)
  int64_t timeout = eval(arg(3));
  int64_t maxevents = eval(arg(2));
  const Expr& want = arg(1);
  Runner* r = &r_;
  FdEntry* epp = &ep;
  const Event* evp = &e_;
  const SyscallSpec* sp = &s_;
  Time deadline = timeout < 0 ? Time::never() : r_.now_ + Duration::ms(timeout);
  auto op = [r, epp, evp, sp, deadline, maxevents, want](Time now) -> std::optional<Ret> {
    std::vector<std::pair<int64_t, uint32_t>> events;
    for (auto& [fdn, w] : epp->watches) {
      auto it = r->fds_.find(fdn);
      if (it == r->fds_.end() || !w.armed) continue;
      uint32_t got = r->stack_->poll(it->second.sock) & (w.events | ev::ERR | ev::HUP);
      if (!got || ((w.events & sym::EPOLLET) && !w.edge_pending)) continue;
      if (static_cast<int64_t>(events.size()) >= maxevents) break;
      events.emplace_back(w.data, got);
      w.edge_pending = false;
      if (w.events & sym::EPOLLONESHOT) w.armed = false;
    }
    if (events.empty() && now < deadline) return std::nullopt;
    if (!events.empty() && want.kind == Expr::Kind::kStruct) {
      SyscallCtx c(*r, *evp, *sp);
      const Expr* we = want.field("events");
      const Expr* wf = want.field("fd");
      if (we && static_cast<uint32_t>(c.eval(we->items[0])) != events[0].second)
        r->stop(Outcome::kFail, fmt::format("epoll_wait() events: expected 0x{:x} but got 0x{:x}",
                                            c.eval(we->items[0]), events[0].second));
      if (wf && c.eval(wf->items[0]) != events[0].first)
        r->stop(Outcome::kFail, fmt::format("epoll_wait() fd: expected {} but got {}", c.eval(wf->items[0]),
                                            events[0].first));
    }
    return Ret{static_cast<int64_t>(events.size()), 0};
  };
  run(timeout != 0, op, deadline);
}

void SyscallCtx::dispatch() {
  const std::string& n = s_.name;
  static const char* kSocket[] = {"socket", "bind", "listen", "accept", "accept4", "connect",
                                  "close", "shutdown", "getsockname", "getpeername"};
  static const char* kData[] = {"read", "write", "recv", "send", "recvfrom", "sendto",
                                "readv", "writev", "recvmsg", "sendmsg"};
  for (const char* k : kSocket)
    if (n == k) return socket_calls();
  for (const char* k : kData)
    if (n == k) return data_calls();
  if (n == "setsockopt" || n == "getsockopt" || n == "fcntl" || n == "ioctl") return option_calls();
  if (n == "poll") return poll_calls();
  if (n.rfind("epoll_", 0) == 0) return epoll_calls();
  skip(fmt::format("unsupported system call {}()", n));
}

void Runner::syscall(const Event& e, const SyscallSpec& s) {
  SyscallCtx c(*this, e, s);
  c.dispatch();
  sample_epoll();
}

}  // namespace weir::pkt
