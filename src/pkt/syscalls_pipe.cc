// Pipes and splice() for scripts that move socket data into a pipe (gtests
// splice/): pipe([rfd, wfd]) makes a bounded in-memory pipe (runner_impl.h
// Pipe), splice(sock, NULL, wfd, NULL, len, flags) moves stream bytes into it
// as Linux do_splice -> splice_file_to_pipe -> tcp_splice_read does, and
// read()/write()/close()/FIONREAD on the two ends behave as Linux's pipe_read,
// pipe_write and pipe_release, so that a script can check what arrived.
#include <algorithm>

#include <fmt/format.h>

#include "pkt/syscall_ctx.h"
#include "pkt/symbols.h"

namespace weir::pkt {

// pipe([rfd, wfd]) = 0: the script names both descriptors.
Status SyscallCtx::pipe_call() {
  auto a = arg(0);
  if (!a) return stopped(a);
  const Expr& list = **a;
  if (list.kind != Expr::Kind::kList || list.items.size() != 2)
    return fail("pipe() takes [read_fd, write_fd]");
  Value rfd = eval(list.items[0]);
  if (!rfd) return stopped(rfd);
  Value wfd = eval(list.items[1]);
  if (!wfd) return stopped(wfd);
  const int rd = static_cast<int>(*rfd), wr = static_cast<int>(*wfd);
  if (rd == wr || r_.fds_.count(rd) || r_.fds_.count(wr))
    return fail(fmt::format("pipe(): fd {} or {} is already open in the script", rd, wr));
  auto p = std::make_shared<Pipe>();
  FdEntry r;
  r.kind = FdEntry::Kind::kPipeRead;
  r.pipe = p;
  FdEntry w;
  w.kind = FdEntry::Kind::kPipeWrite;
  w.pipe = p;
  r_.fds_[rd] = r;
  r_.fds_[wr] = w;
  return run_now(Ret{0, 0});
}

// splice(fd_in, off_in, fd_out, off_out, len, flags), socket into pipe.
// Linux do_splice: the output must be a pipe's write end (EBADF on a read
// end, EINVAL when neither side is a pipe); SPLICE_F_NONBLOCK, or the
// socket's O_NONBLOCK (do_splice adds it), makes a full pipe EAGAIN
// (wait_for_space), and a pipe without readers is EPIPE. The length is
// capped at the pipe's room (do_splice_read); the socket side is
// tcp_splice_read, whose waits follow the socket's O_NONBLOCK only.
Status SyscallCtx::splice_call() {
  auto in = fd(0);
  if (!in) return stopped(in);
  auto out = fd(2);
  if (!out) return stopped(out);
  auto off_in = arg(1);
  if (!off_in) return stopped(off_in);
  auto off_out = arg(3);
  if (!off_out) return stopped(off_out);
  if (!is_null(**off_in) || !is_null(**off_out)) return skip("splice() with offsets is not supported");
  if ((*in)->kind != FdEntry::Kind::kSocket) return skip("splice() out of a pipe is not supported");
  if ((*out)->kind == FdEntry::Kind::kPipeRead) return run_now(Ret{-1, EBADF});
  if ((*out)->kind != FdEntry::Kind::kPipeWrite) return run_now(Ret{-1, EINVAL});
  Value len = eval_arg(4);
  if (!len) return stopped(len);
  Value flags = eval_arg(5);
  if (!flags) return stopped(flags);
  if (*len < 0) return fail("splice(): negative length");
  if (*len == 0) return run_now(Ret{0, 0});  // sys_splice: "if (unlikely(!len)) return 0"
  constexpr int64_t kSpliceNonblock = 0x02;  // SPLICE_F_NONBLOCK
  const bool sock_nonblock = (*in)->nonblock;
  const bool pipe_nonblock = sock_nonblock || (*flags & kSpliceNonblock) != 0;
  const SocketId s = (*in)->sock;
  const std::shared_ptr<Pipe> pipe = (*out)->pipe;
  const size_t want = static_cast<size_t>(*len);
  Runner* r = &r_;
  return run(!sock_nonblock || !pipe_nonblock, [r, s, pipe, want, sock_nonblock, pipe_nonblock](Time now) -> Attempt {
    if (!pipe->reader_open) return done(Ret{-1, EPIPE});
    if (pipe->room() == 0) return pipe_nonblock ? done(Ret{-1, EAGAIN}) : blocked();
    std::vector<uint8_t> buf(std::min(want, pipe->room()));
    auto got = r->stack_->splice_read(now, s, buf, sock_nonblock);
    if (!got && got.error() == Errc::kAgain && !sock_nonblock) return blocked();
    if (!got) return done(from(got.error()));
    pipe->bytes.insert(pipe->bytes.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(*got));
    return done(Ret{static_cast<int64_t>(*got), 0});
  });
}

// read()/write() on a pipe end (Linux pipe_read / pipe_write): a read takes
// what is there, 0 once no writer is left, EAGAIN or a wait when empty; a
// write to a pipe without readers is EPIPE, one of up to PIPE_BUF bytes is
// all or nothing, and a blocking write returns when all of it is in.
Status SyscallCtx::pipe_io_call(FdEntry& f, bool is_read, size_t want, bool blocking) {
  if (is_read != (f.kind == FdEntry::Kind::kPipeRead)) return run_now(Ret{-1, EBADF});
  const std::shared_ptr<Pipe> pipe = f.pipe;
  if (want == 0) return run_now(Ret{0, 0});
  if (is_read) {
    return run(blocking, [pipe, want, blocking](Time) -> Attempt {
      if (pipe->bytes.empty()) {
        if (!pipe->writer_open) return done(Ret{0, 0});
        return blocking ? blocked() : done(Ret{-1, EAGAIN});
      }
      const size_t n = std::min(want, pipe->bytes.size());
      pipe->bytes.erase(pipe->bytes.begin(), pipe->bytes.begin() + static_cast<std::ptrdiff_t>(n));
      return done(Ret{static_cast<int64_t>(n), 0});
    });
  }
  auto sent = std::make_shared<size_t>(0);
  return run(blocking, [pipe, want, blocking, sent](Time) -> Attempt {
    if (!pipe->reader_open) return done(*sent ? Ret{static_cast<int64_t>(*sent), 0} : Ret{-1, EPIPE});
    const size_t left = want - *sent;
    const bool atomic = want <= Pipe::kPipeBuf;
    size_t n = std::min(left, pipe->room());
    if (atomic && n < left) n = 0;
    pipe->bytes.insert(pipe->bytes.end(), n, 0);
    *sent += n;
    if (*sent == want) return done(Ret{static_cast<int64_t>(want), 0});
    if (blocking) return blocked();
    return done(*sent ? Ret{static_cast<int64_t>(*sent), 0} : Ret{-1, EAGAIN});
  });
}

Status SyscallCtx::pipe_close(int fd, FdEntry& f) {
  if (f.kind == FdEntry::Kind::kPipeRead) f.pipe->reader_open = false;
  else f.pipe->writer_open = false;
  r_.fds_.erase(fd);
  return run_now(Ret{0, 0});
}

}  // namespace weir::pkt
