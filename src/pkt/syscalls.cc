// System calls: each script call becomes a call on weir::Stack with Linux
// errno semantics. Calls that would block on a blocking socket (or a
// poll/epoll_wait with a timeout) become a Pending operation that the
// timeline retries after every engine step, so their return time is checked.
#include <algorithm>

#include <fmt/format.h>

#include "pkt/runner_impl.h"
#include "pkt/syscall_ctx.h"
#include "pkt/symbols.h"

namespace weir::pkt {
namespace {

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
Status check_cm_inq(Runner& r, SocketId s, int64_t want, bool inq_on) {
  if (!inq_on)
    return r.stop(Outcome::kFail, "recvmsg() expected a TCP_CM_INQ control message, but TCP_INQ is off");
  const int got = inq_hint(*r.stack_, s);
  if (got != want)
    return r.stop(Outcome::kFail, fmt::format("recvmsg() TCP_CM_INQ: expected {} but got {}", want, got));
  return ok();
}

// At an urgent mark SIOCINQ says 0 (Linux tcp_inq) although a read would
// step over the urgent byte and return what follows: count that by peeking.
bool read_target_met(Stack& st, Time now, SocketId s, size_t want) {
  int inq = 0;
  if (st.ioctl(s, 0x541B /* SIOCINQ */, &inq) != Errc::kOk) return true;  // recv reports it
  if (st.poll(s) & (ev::ERR | ev::HUP | ev::RDHUP)) return true;
  int mark = 0;
  if (st.ioctl(s, 0x8905 /* SIOCATMARK */, &mark) == Errc::kOk && mark) {
    std::vector<uint8_t> peek(std::max<size_t>(want, 1));
    auto got = st.recv(now, s, peek, sym::MSG_PEEK);
    inq = got ? static_cast<int>(*got) : 0;
  }
  int lowat = 1;
  size_t optlen = sizeof lowat;
  std::span<uint8_t> val(reinterpret_cast<uint8_t*>(&lowat), sizeof lowat);
  if (st.getsockopt(s, sym::SOL_SOCKET, sym::SO_RCVLOWAT, val, &optlen) != Errc::kOk) lowat = 1;
  const size_t target = std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(lowat, 1)), want));
  return static_cast<size_t>(std::max(inq, 0)) >= target;
}

}  // namespace

Expected<const Expr*, Stop> SyscallCtx::arg(size_t i) const {
  if (i >= s_.args.size()) return fail(fmt::format("{}() needs at least {} arguments", s_.name, i + 1));
  return &s_.args[i];
}

Value SyscallCtx::eval(const Expr& x) const {
  switch (x.kind) {
    case Expr::Kind::kInt: return x.num;
    case Expr::Kind::kWord: {
      if (auto v = symbol_value(x.text)) return *v;
      // An errno name as a value (getsockopt SO_ERROR) is its number.
      if (auto e = errno_value(x.text)) return *e;
      return skip(fmt::format("unknown symbol '{}'", x.text));
    }
    case Expr::Kind::kOr: {
      int64_t v = 0;
      for (const Expr& i : x.items) {
        Value iv = eval(i);
        if (!iv) return iv;
        v |= *iv;
      }
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
  return fail(fmt::format("expected a number in {}(), got '{}'", s_.name, x.text));
}

Value SyscallCtx::eval_arg(size_t i) const {
  auto a = arg(i);
  if (!a) return stopped(a);
  return eval(**a);
}

Expected<FdEntry*, Stop> SyscallCtx::fd(size_t i) const {
  Value f = eval_arg(i);
  if (!f) return stopped(f);
  auto it = r_.fds_.find(static_cast<int>(*f));
  if (it == r_.fds_.end()) return fail(fmt::format("{}(): fd {} is not open in the script", s_.name, *f));
  return &it->second;
}

Value SyscallCtx::iov_len(const Expr& list) const {
  int64_t n = 0;
  for (const Expr& v : list.items) {
    if (v.kind != Expr::Kind::kStruct || v.items.size() < 2) continue;
    Value len = eval(v.items[1]);
    if (!len) return len;
    n += *len;
  }
  return n;
}

Expected<std::vector<uint32_t>, Stop> SyscallCtx::iov_lens(const Expr& list) const {
  std::vector<uint32_t> out;
  for (const Expr& v : list.items) {
    if (v.kind != Expr::Kind::kStruct || v.items.size() < 2) continue;
    Value len = eval(v.items[1]);
    if (!len) return stopped(len);
    out.push_back(static_cast<uint32_t>(*len));
  }
  return out;
}

Value SyscallCtx::msg_len(const Expr& msg) const {
  const Expr* iov = msg.field("msg_iov");
  if (!iov || iov->items.empty()) return fail(fmt::format("{}(): msghdr without msg_iov", s_.name));
  return iov_len(iov->items[0]);
}

// The TCP_CM_INQ value a recvmsg() msghdr expects in msg_control, if any.
Expected<std::optional<int64_t>, Stop> SyscallCtx::expected_cm_inq(const Expr& msg) const {
  const Expr* ctl = msg.field("msg_control");
  if (!ctl || ctl->items.empty() || ctl->items[0].kind != Expr::Kind::kList) return std::optional<int64_t>();
  for (const Expr& c : ctl->items[0].items) {
    const Expr* lvl = c.field("cmsg_level");
    const Expr* type = c.field("cmsg_type");
    const Expr* data = c.field("cmsg_data");
    if (!lvl || !type || !data) continue;
    Value l = eval(lvl->items[0]);
    if (!l) return stopped(l);
    Value t = *l == sym::SOL_TCP ? eval(type->items[0]) : Value(0);
    if (!t) return stopped(t);
    if (*l == sym::SOL_TCP && *t == sym::TCP_INQ) {
      Value d = eval(data->items[0]);
      if (!d) return stopped(d);
      return std::optional<int64_t>(*d);
    }
    return skip(fmt::format("recvmsg() control message {} is not supported", type->items[0].text));
  }
  return std::optional<int64_t>();
}

Expected<int, Stop> SyscallCtx::flags_checked(int64_t flags) const {
  if ((flags & sym::MSG_ERRQUEUE) && s_.name != "recvmsg")
    return skip(fmt::format("MSG_ERRQUEUE with {}() is not supported (only recvmsg)", s_.name));
  return static_cast<int>(flags);
}

Status SyscallCtx::check(const Ret& got) const {
  const Expr& want = s_.result;
  if (is_ellipsis(want)) return ok();
  Value w = eval(want);
  if (!w) return stopped(w);
  if (*w == -1 && !s_.errno_name.empty()) {
    auto e = errno_value(s_.errno_name);
    if (!e) return skip(fmt::format("unknown errno '{}'", s_.errno_name));
    if (got.value != -1 || got.err != *e)
      return fail(fmt::format("{}() expected -1 {} but returned {}", s_.name, s_.errno_name, describe(got)));
    return ok();
  }
  if (got.value != *w) return fail(fmt::format("{}() expected result {} but returned {}", s_.name, *w, describe(got)));
  return ok();
}

std::string SyscallCtx::describe(const Ret& r) const {
  if (r.value != -1 || r.err == 0) return std::to_string(r.value);
  return fmt::format("-1 {} ({})", errc_name(static_cast<Errc>(r.err)), errno_text(r.err));
}

Status SyscallCtx::run(bool blocking, std::function<Attempt(Time)> op, Time wake,
                       std::shared_ptr<const Time> moving_wake) {
  Attempt r = op(r_.now_);
  if (!r) return stopped(r);
  bool ranged = e_.time.block_end.has_value();
  if (*r && !ranged) {
    if (auto c = check(**r); !c) return c;
    r_.log(fmt::format("{} {}() = {}", r_.fmt_time(r_.now_), s_.name, describe(**r)));
    return ok();
  }
  if (!*r && !blocking) return fail(fmt::format("{}() would block on a non-blocking call", s_.name));
  // A blocking call (or one the script marks start...end): complete later.
  auto shared = std::make_shared<std::optional<Ret>>(*r);
  Pending p;
  p.event = &e_;
  p.started = r_.now_;
  p.wake = wake;
  p.moving_wake = std::move(moving_wake);
  const SyscallSpec* spec = &s_;
  Runner* runner = &r_;
  const Event* ev = &e_;
  p.step = [shared, op, spec, runner, ev](Time now, int* err) -> Expected<std::optional<int64_t>, Stop> {
    if (!*shared) {
      Attempt a = op(now);
      if (!a) return stopped(a);
      *shared = *a;
    }
    if (!*shared) return std::optional<int64_t>();
    SyscallCtx c(*runner, *ev, *spec);
    if (auto s = c.check(**shared); !s) return stopped(s);
    *err = (*shared)->err;
    return std::optional<int64_t>((*shared)->value);
  };
  r_.pending_ = std::move(p);
  return ok();
}

// accept(): blocks on a blocking listener until a child is ready; the
// script's fd names the child.
Status SyscallCtx::accept_call() {
  auto f = fd(0);
  if (!f) return stopped(f);
  SocketId ls = (*f)->sock;
  Value want = is_ellipsis(s_.result) ? Value(-1) : eval(s_.result);
  if (!want) return stopped(want);
  int64_t want_fd = *want;
  Runner* r = &r_;
  bool blocking = !(*f)->nonblock;
  // The child is a clone of the listener (Linux sk_clone_lock): the options
  // the runner keeps itself carry over.
  const bool inq = (*f)->inq;
  // SO_RCVTIMEO (inet_csk_accept: timeo = sock_rcvtimeo): EAGAIN past it.
  const Time until = r_.now_ + r_.stack_->rcvtimeo(ls);
  if (until == r_.now_) blocking = false;
  return run(blocking, [r, ls, want_fd, blocking, inq, until](Time now) -> Attempt {
    auto a = r->stack_->accept(now, ls);
    if (!a && a.error() == Errc::kAgain && blocking && now < until) return blocked();
    if (!a) return done(from(a.error()));
    FdEntry nf;
    nf.sock = *a;
    nf.inq = inq;
    r->fds_[static_cast<int>(want_fd)] = nf;
    r->sut_fd_ = static_cast<int>(want_fd);
    r->sut_port_ = 0;  // a passive connection: no filtering by port
    r->conn_.accepted = true;
    return done(Ret{want_fd, 0});
  }, until);
}

// connect(): a blocking one returns when the handshake completes or fails.
Status SyscallCtx::connect_call() {
  auto f = fd(0);
  if (!f) return stopped(f);
  r_.sut_fd_ = static_cast<int>(*eval_arg(0));  // fd(0) evaluated it
  (*f)->active = true;
  r_.sut_port_ = 0;  // learnt from the new connection
  SocketId s = (*f)->sock;
  Errc e = r_.stack_->connect(r_.now_, s, {r_.cfg_.remote_ip, r_.cfg_.connect_port});
  // SO_SNDTIMEO (__inet_stream_connect: timeo = sock_sndtimeo): past it,
  // or at once with 0 jiffies, EINPROGRESS while the handshake goes on.
  // A blocking call waits while the handshake goes on (inet_wait_for_connect),
  // from its first connect() (EINPROGRESS) or a later one (EALREADY).
  const Time until = r_.now_ + r_.stack_->sndtimeo(s);
  const bool handshake = e == Errc::kInProgress || e == Errc::kAlready;
  if (!handshake || (*f)->nonblock || until == r_.now_) return run_now(from(e));
  Runner* r = &r_;
  const Endpoint to{r_.cfg_.remote_ip, r_.cfg_.connect_port};
  return run(true, [r, s, until, e, to](Time now) -> Attempt {
    // The call's common tail: SS_CONNECTED and 0 once established, the
    // socket's error (or ECONNABORTED) if it closed (StackImpl::connect_again).
    const Errc again = r->stack_->connect(now, s, to);
    if (again != Errc::kAlready) return done(from(again));
    return now < until ? blocked() : done(from(e));
  }, until);
}

Status SyscallCtx::close_call() {
  Value n = eval_arg(0);
  if (!n) return stopped(n);
  auto e = fd(0);
  if (!e) return stopped(e);
  const int f = static_cast<int>(*n);
  if ((*e)->is_pipe()) return pipe_close(f, **e);
  const bool local = (*e)->kind == FdEntry::Kind::kEpoll || (*e)->kind == FdEntry::Kind::kFile;
  Ret ret = local ? Ret{} : from(r_.stack_->close(r_.now_, (*e)->sock));
  r_.fds_.erase(f);
  if (f == r_.sut_fd_) r_.conn_.closed = true;
  return run_now(ret);
}

Status SyscallCtx::socket_calls() {
  const std::string& n = s_.name;
  if (n == "accept" || n == "accept4") return accept_call();
  if (n == "connect") return connect_call();
  if (n == "close") return close_call();
  if (n == "socket") {
    Value type = eval_arg(1);
    if (!type) return stopped(type);
    if ((*type & 0xf) != sym::SOCK_STREAM) return skip("only SOCK_STREAM sockets are supported");
    auto s = r_.stack_->socket(r_.cfg_.ip_version != IpVersion::kIpv4);
    Value want = s ? eval(s_.result) : Value(0);
    if (!want) return stopped(want);
    Ret ret = s ? Ret{*want, 0} : from(s.error());
    if (s) {
      FdEntry f;
      f.sock = *s;
      f.nonblock = (*type & sym::SOCK_NONBLOCK) != 0;
      r_.fds_[static_cast<int>(ret.value)] = f;
    }
    return run_now(ret);
  }
  auto f = fd(0);
  if (!f) return stopped(f);
  if (n == "bind") return run_now(from(r_.stack_->bind((*f)->sock, {r_.cfg_.local_ip, r_.cfg_.bind_port})));
  if (n == "listen" || n == "shutdown") {
    Value how = eval_arg(1);
    if (!how) return stopped(how);
    const int v = static_cast<int>(*how);
    Ret ret = from(n == "listen" ? r_.stack_->listen(r_.now_, (*f)->sock, v)
                                 : r_.stack_->shutdown(r_.now_, (*f)->sock, v));
    if (n == "listen" && ret.value == 0 && !(*f)->listener) {
      (*f)->listener = true;
      // packetdrill: a new listening socket is the socket under test, so
      // the next SYN opens a new connection even if the last one is open.
      if (r_.conn_.known) r_.conn_.closed = true;
      r_.sut_port_ = 0;
    }
    return run_now(ret);
  }
  if (n == "getsockname" || n == "getpeername") {
    auto ep = n == "getsockname" ? r_.stack_->local_endpoint((*f)->sock) : r_.stack_->remote_endpoint((*f)->sock);
    return run_now(ep ? Ret{} : from(ep.error()));
  }
  return fail("internal: unrouted call " + n);
}

// read/write, recv/send, recvfrom/sendto, readv/writev, recvmsg/sendmsg:
// the length and flags by the call's signature.
Status SyscallCtx::data_calls() {
  const std::string& n = s_.name;
  bool is_read = n == "read" || n == "recv" || n == "recvfrom" || n == "readv" || n == "recvmsg";
  auto fp = fd(0);
  if (!fp) return stopped(fp);
  FdEntry& f = **fp;
  const bool plain = n == "read" || n == "write";
  if (f.is_pipe() && !plain) return skip(fmt::format("{}() on a pipe is not supported", n));
  if (f.kind == FdEntry::Kind::kFile) return skip(fmt::format("{}() on a file is not supported", n));
  const bool vec = n == "readv" || n == "writev";
  const bool msg = n == "recvmsg" || n == "sendmsg";
  // The length argument first, then the buffer, as the calls' arity demands.
  Value len = (plain || (!vec && !msg)) ? eval_arg(2) : Value(0);
  if (!len) return stopped(len);
  auto buf = arg(1);
  if (!buf) return stopped(buf);
  if (vec) len = iov_len(**buf);
  if (msg) len = msg_len(**buf);
  if (!len) return stopped(len);
  Value fl = plain || vec ? Value(0) : eval_arg(msg ? 2 : 3);
  if (!fl) return stopped(fl);
  auto flags = flags_checked(*fl);
  if (!flags) return stopped(flags);
  if (*len < 0 || *len > (64 << 20)) return fail(fmt::format("{}(): length {} out of range", n, *len));
  // A NULL buffer: the kernel's copy to or from user memory fails (EFAULT)
  // when there is something to copy.
  if (f.is_pipe()) return pipe_io_call(f, is_read, static_cast<size_t>(*len), !f.nonblock);
  const Expr& b = **buf;
  const bool null_buf = is_null(b);
  if (null_buf && !vec && !msg) {
    int inq = 0;
    r_.stack_->ioctl(f.sock, 0x541B /* SIOCINQ */, &inq);
    if (!is_read || inq > 0) return run_now(Ret{-1, EFAULT});
  }
  bool blocking = !f.nonblock && !(*flags & sym::MSG_DONTWAIT);
  const size_t want = static_cast<size_t>(*len);
  if (is_read && (*flags & sym::MSG_ERRQUEUE)) return errqueue_call(f);
  if (is_read) return read_call(f, want, *flags, blocking);
  // The iovec's element lengths: a MSG_ZEROCOPY send pins each as page
  // fragments, MAX_SKB_FRAGS per skb (the engine segments as Linux does).
  std::vector<uint32_t> elems;
  const Expr* iov = msg ? b.field("msg_iov") : vec ? &b : nullptr;
  if (iov && msg && !iov->items.empty()) iov = &iov->items[0];
  if (iov) {
    auto l = iov_lens(*iov);
    if (!l) return stopped(l);
    elems = std::move(*l);
  }
  // RFC 7413 client: MSG_FASTOPEN, or the first write after a
  // TCP_FASTOPEN_CONNECT connect() that held the SYN back.
  if ((*flags & sym::MSG_FASTOPEN) || r_.stack_->fastopen_deferred(f.sock)) {
    const Expr* to = n == "sendto" && s_.args.size() > 4 ? &s_.args[4] : nullptr;
    const bool unspec = to && to->kind == Expr::Kind::kWord && to->text == "AF_UNSPEC";
    return fastopen_write_call(f, want, *flags, blocking, unspec);
  }
  return write_call(f, want, *flags, blocking, std::move(elems));
}

namespace {

// The iovec elements left once `done` bytes of them are queued.
std::vector<uint32_t> iov_rest(const std::vector<uint32_t>& lens, size_t done) {
  std::vector<uint32_t> rest;
  size_t off = 0;
  for (uint32_t l : lens) {
    if (off + l > done) rest.push_back(static_cast<uint32_t>(std::min<size_t>(l, off + l - done)));
    off += l;
  }
  return rest;
}

}  // namespace

Status SyscallCtx::read_call(FdEntry& f, size_t want, int flags, bool blocking) {
  auto cm = s_.name == "recvmsg" ? expected_cm_inq(**arg(1)) : std::optional<int64_t>();
  if (!cm) return stopped(cm);
  const std::optional<int64_t> want_inq = *cm;
  const bool inq_on = f.inq;
  const int engine_flags = flags & ~(sym::MSG_DONTWAIT | 0x4000 /* MSG_NOSIGNAL */ | sym::MSG_ZEROCOPY);
  SocketId s = f.sock;
  Runner* r = &r_;
  // SO_RCVTIMEO (tcp_recvmsg_locked: timeo = sock_rcvtimeo): past it the
  // read takes what is there, or fails with EAGAIN; 0 jiffies never waits.
  const Time until = r_.now_ + r_.stack_->rcvtimeo(s);
  if (until == r_.now_) blocking = false;
  return run(blocking, [r, s, want, engine_flags, blocking, want_inq, inq_on, until](Time now) -> Attempt {
    // MSG_OOB never waits (Linux tcp_recv_urg: EAGAIN "independent of the
    // blocking state of the socket").
    const bool waits = blocking && !(engine_flags & sym::MSG_OOB) && now < until;
    if (waits && !read_target_met(*r->stack_, now, s, want)) return blocked();
    std::vector<uint8_t> buf(want);
    auto got = r->stack_->recv(now, s, buf, engine_flags);
    if (!got && got.error() == Errc::kAgain && waits) return blocked();
    if (got && want_inq)
      if (auto c = check_cm_inq(*r, s, *want_inq, inq_on); !c) return stopped(c);
    return done(got ? Ret{static_cast<int64_t>(*got), 0} : from(got.error()));
  }, until);
}

// Writes: a blocking write returns when all of it is queued (or on error).
// MSG_ZEROCOPY goes to the engine, which keeps SO_ZEROCOPY and the
// notifications (weir copies the bytes, and says so: ZEROCOPY_COPIED).
Status SyscallCtx::write_call(FdEntry& f, size_t want, int flags, bool blocking, std::vector<uint32_t> iov,
                              std::function<void(size_t)> on_sent) {
  const int engine_flags = flags & ~(sym::MSG_DONTWAIT | 0x4000 /* MSG_NOSIGNAL */);
  SocketId s = f.sock;
  Runner* r = &r_;
  auto sent = std::make_shared<size_t>(0);
  auto waited = std::make_shared<bool>(false);
  // SO_SNDTIMEO (tcp_sendmsg_locked: timeo = sock_sndtimeo): a writer still
  // waiting for memory then returns what it queued, or EAGAIN
  // (sk_stream_wait_memory: do_eagain); 0 jiffies never waits.
  const Time until = r_.now_ + r_.stack_->sndtimeo(s);
  if (until == r_.now_) blocking = false;
  auto core = [r, s, want, engine_flags, blocking, sent, waited, iov, until](Time now) -> Attempt {
    // A blocked writer sleeps in sk_stream_wait_memory until
    // sk_stream_write_space wakes it, i.e. until poll() reports POLLOUT
    // (or an error/hang-up), not as soon as one byte would fit.
    if (*waited && !(r->stack_->poll(s) & (ev::OUT | ev::ERR | ev::HUP))) {
      if (now < until) return blocked();
      return done(*sent > 0 ? Ret{static_cast<int64_t>(*sent), 0} : Ret{-1, EAGAIN});
    }
    std::vector<uint8_t> buf(want - *sent, 0);
    auto got = r->stack_->sendmsg(now, s, buf, iov_rest(iov, *sent), engine_flags);
    if (got) *sent += *got;
    if (!got && got.error() != Errc::kAgain) {
      if (*sent > 0) return done(Ret{static_cast<int64_t>(*sent), 0});
      return done(from(got.error()));
    }
    if (!blocking) return done(got ? Ret{static_cast<int64_t>(*got), 0} : from(got.error()));
    if (*sent < want) {
      *waited = true;
      if (now >= until) return done(*sent > 0 ? Ret{static_cast<int64_t>(*sent), 0} : Ret{-1, EAGAIN});
      return blocked();
    }
    return done(Ret{static_cast<int64_t>(*sent), 0});
  };
  if (!on_sent) return run(blocking, std::move(core), until);
  // The caller learns what was really written (sendfile moves the file
  // offset by it), whether the call ends at once or after blocking.
  return run(blocking, [core = std::move(core), on_sent = std::move(on_sent)](Time now) -> Attempt {
    Attempt a = core(now);
    if (a && *a && (*a)->value > 0) on_sent(static_cast<size_t>((*a)->value));
    return a;
  }, until);
}

// Linux tcp_sendmsg_fastopen: the connection starts with as much data on
// the SYN as it takes. A call that may not wait returns those bytes, or
// EINPROGRESS when none went (__inet_stream_connect); a blocking one waits
// for the handshake as connect() does, then writes the rest as write() does.
// SO_SNDTIMEO bounds both waits, each with its own timeo (sock_sndtimeo in
// __inet_stream_connect, then again in tcp_sendmsg_locked): past the first,
// the SYN's bytes or EINPROGRESS ("if (err == -EINPROGRESS && copied_syn >
// 0) goto out"); past the second, what was queued.
Status SyscallCtx::fastopen_write_call(FdEntry& f, size_t want, int flags, bool blocking, bool unspec) {
  // An AF_UNSPEC address is a disconnect request, not a Fast Open target.
  if (unspec) return run_now(Ret{-1, EOPNOTSUPP});
  const int fd_num = static_cast<int>(*eval_arg(0));
  const SocketId s = f.sock;
  const Endpoint to{r_.cfg_.remote_ip, r_.cfg_.connect_port};
  std::vector<uint8_t> buf(want, 0);
  const Duration wait = blocking ? r_.stack_->sndtimeo(s) : Duration::zero();
  const FastOpenSend fo = r_.stack_->sendto_fastopen(r_.now_, s, buf, &to, wait, flags & sym::MSG_ZEROCOPY);
  if (!fo.connecting) return run_now(fo.err == Errc::kOk ? Ret{static_cast<int64_t>(fo.queued), 0} : from(fo.err));
  r_.sut_fd_ = fd_num;  // as connect(): this socket's SYN opens the connection under test
  f.active = true;
  r_.sut_port_ = 0;
  auto deadline = std::make_shared<Time>(r_.now_ + wait);
  const Ret syn_only = fo.queued > 0 ? Ret{static_cast<int64_t>(fo.queued), 0} : Ret{-1, EINPROGRESS};
  if (*deadline == r_.now_) return run_now(syn_only);
  const int engine_flags = flags & ~(sym::MSG_DONTWAIT | 0x4000 /* MSG_NOSIGNAL */ | sym::MSG_FASTOPEN);
  Runner* r = &r_;
  auto sent = std::make_shared<size_t>(fo.queued);
  auto connected = std::make_shared<bool>(false);
  auto op = [r, s, want, engine_flags, sent, connected, deadline, syn_only, to](Time now) -> Attempt {
    if (!*connected) {
      // __inet_stream_connect's wait and common tail, as connect() (above).
      const Errc again = r->stack_->connect(now, s, to);
      if (again == Errc::kAlready) return now < *deadline ? blocked() : done(syn_only);
      if (again != Errc::kOk) return done(from(again));  // tcp_sendmsg_locked: out_err, the SYN's bytes are not reported
      *connected = true;
      *deadline = now + r->stack_->sndtimeo(s);
    }
    if (*sent >= want) return done(Ret{static_cast<int64_t>(*sent), 0});
    std::vector<uint8_t> rest(want - *sent, 0);
    auto got = r->stack_->send(now, s, rest, engine_flags);
    if (got) *sent += *got;
    if (!got && got.error() != Errc::kAgain)
      return done(*sent > 0 ? Ret{static_cast<int64_t>(*sent), 0} : from(got.error()));
    if (*sent >= want) return done(Ret{static_cast<int64_t>(*sent), 0});
    if (now < *deadline) return blocked();
    return done(*sent > 0 ? Ret{static_cast<int64_t>(*sent), 0} : Ret{-1, EAGAIN});  // sk_stream_wait_memory
  };
  return run(true, std::move(op), Time::never(), deadline);
}

// fcntl(fd, F_GETFL|F_SETFL[, flags]): only O_NONBLOCK matters.
Status SyscallCtx::fcntl_call() {
  auto f = fd(0);
  if (!f) return stopped(f);
  Value cmd = eval_arg(1);
  if (!cmd) return stopped(cmd);
  Ret ret;
  if (*cmd == sym::F_GETFL) {
    ret.value = sym::O_RDWR | ((*f)->nonblock ? sym::O_NONBLOCK : 0);
  } else if (*cmd == sym::F_SETFL) {
    Value fl = eval_arg(2);
    if (!fl) return stopped(fl);
    (*f)->nonblock = (*fl & sym::O_NONBLOCK) != 0;
  } else {
    return skip(fmt::format("fcntl command {} is not supported", (*arg(1))->text));
  }
  return run_now(ret);
}

// ioctl(fd, request, [value]): FIONREAD/SIOCINQ, SIOCOUTQ, SIOCOUTQNSD.
Status SyscallCtx::ioctl_call() {
  auto f = fd(0);
  if (!f) return stopped(f);
  Value req = eval_arg(1);
  if (!req) return stopped(req);
  int out = 0;
  Ret ret;
  if ((*f)->is_pipe()) {
    // Linux pipe_ioctl: FIONREAD is the bytes in the pipe; nothing else.
    if (*req != 0x541B /* FIONREAD */) return skip(fmt::format("ioctl({}) on a pipe is not supported", s_.args[1].text));
    out = static_cast<int>((*f)->pipe->bytes.size());
  } else {
    ret = from(r_.stack_->ioctl((*f)->sock, static_cast<unsigned long>(*req), &out));
  }
  if (ret.value == 0 && s_.args.size() > 2 && !is_ellipsis(s_.args[2])) {
    Value want = eval(s_.args[2]);
    if (!want) return stopped(want);
    if (*want != out) return fail(fmt::format("ioctl({}) expected [{}] but got [{}]", s_.args[1].text, *want, out));
  }
  return run_now(ret);
}

Status SyscallCtx::dispatch() {
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
  if (n == "pipe") return pipe_call();
  if (n == "splice") return splice_call();
  if (n == "open") return open_call();
  if (n == "sendfile") return sendfile_call();
  return skip(fmt::format("unsupported system call {}()", n));
}

Status Runner::syscall(const Event& e, const SyscallSpec& s) {
  SyscallCtx c(*this, e, s);
  Status st = c.dispatch();
  if (st) st = engine_status();
  sample_epoll();
  return st;
}

}  // namespace weir::pkt
