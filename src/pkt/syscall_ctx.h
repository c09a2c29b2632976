// One script system call being run: argument evaluation, the call on
// weir::Stack, and the check of its result. Shared by syscalls.cc (sockets,
// data, options) and syscalls_wait.cc (poll, epoll).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "pkt/runner_impl.h"

namespace weir::pkt {

struct Ret {
  int64_t value = 0;
  int err = 0;  // errno when value == -1
};

inline Ret from(Errc e) { return e == Errc::kOk ? Ret{0, 0} : Ret{-1, static_cast<int>(e)}; }

// One attempt at a call: its result, nothing while it would block (retried
// after the next engine step), or the Stop that ends the script.
using Attempt = Expected<std::optional<Ret>, Stop>;
inline Attempt done(Ret r) { return std::optional<Ret>(r); }
inline Attempt blocked() { return std::optional<Ret>(); }
// A NULL pointer argument, written `NULL` or 0.
inline bool is_null(const Expr& e) {
  return (e.kind == Expr::Kind::kWord && e.text == "NULL") || (e.kind == Expr::Kind::kInt && e.num == 0);
}

using Value = Expected<int64_t, Stop>;

inline bool is_ellipsis(const Expr& e) { return e.kind == Expr::Kind::kEllipsis; }

class SyscallCtx {
 public:
  SyscallCtx(Runner& r, const Event& e, const SyscallSpec& s) : r_(r), e_(e), s_(s) {}

  Unexpected<Stop> skip(std::string why) const { return r_.stop(Outcome::kSkip, std::move(why)); }
  Unexpected<Stop> fail(std::string why) const { return r_.stop(Outcome::kFail, std::move(why)); }

  Expected<const Expr*, Stop> arg(size_t i) const;
  Value eval(const Expr& x) const;
  Value eval_arg(size_t i) const;  // arg(i), evaluated
  Expected<FdEntry*, Stop> fd(size_t i) const;

  Value iov_len(const Expr& list) const;  // total bytes of [{..., 100}, {..., 200}]
  // The element lengths of [{..., 100}, {..., 200}].
  Expected<std::vector<uint32_t>, Stop> iov_lens(const Expr& list) const;
  Value msg_len(const Expr& msg) const;
  Expected<std::optional<int64_t>, Stop> expected_cm_inq(const Expr& msg) const;
  Expected<int, Stop> flags_checked(int64_t flags) const;

  Status check(const Ret& got) const;  // the expected result, after the call returned
  std::string describe(const Ret& r) const;

  // Runs `op` now; when it says "would block" on a blocking call, it becomes
  // the pending operation, retried after each engine step.
  Status run(bool blocking, std::function<Attempt(Time)> op, Time wake = Time::never(),
             std::shared_ptr<const Time> moving_wake = nullptr);
  Status run_now(Ret ret) {
    return run(false, [ret](Time) { return done(ret); });
  }

  Status dispatch();

 private:
  Status socket_calls();
  Status close_call();
  Status accept_call();
  Status connect_call();
  Status data_calls();
  Status read_call(FdEntry& f, size_t want, int flags, bool blocking);
  Status errqueue_call(FdEntry& f);  // syscalls_errqueue.cc: recvmsg(MSG_ERRQUEUE)
  Status write_call(FdEntry& f, size_t want, int flags, bool blocking, std::vector<uint32_t> iov,
                    std::function<void(size_t)> on_sent = {});
  Status fastopen_write_call(FdEntry& f, size_t want, int flags, bool blocking, bool unspec);
  Status option_calls();
  Status setsockopt_call(FdEntry& f, int level, int opt, const Expr& name, const Expr& val);
  Status getsockopt_call(FdEntry& f, int level, int opt, const Expr& name, const Expr& val);
  Status fcntl_call();
  Status ioctl_call();
  Status pipe_call();            // syscalls_pipe.cc: pipe([rfd, wfd])
  Status open_call();            // syscalls_file.cc: open(path, flags) of a runner file
  Status sendfile_call();        // syscalls_file.cc: sendfile(sock, file, [off], count)
  Status splice_call();          // syscalls_pipe.cc: socket -> pipe
  Status pipe_io_call(FdEntry& f, bool is_read, size_t want, bool blocking);  // syscalls_pipe.cc
  Status pipe_close(int fd, FdEntry& f);                                    // syscalls_pipe.cc
  Status poll_calls();           // syscalls_wait.cc
  Status epoll_calls();          // syscalls_wait.cc
  Status epoll_wait_call(FdEntry& ep);  // syscalls_wait.cc
  Status epoll_ctl_call(FdEntry& ep);   // syscalls_wait.cc

  Runner& r_;
  const Event& e_;
  const SyscallSpec& s_;
};

}  // namespace weir::pkt
