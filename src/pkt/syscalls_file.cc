// open() and sendfile() for scripts that send a file (gtests sendfile/):
// the file is one the script's shell lines made in the runner's FileSystem
// (`dd if=/dev/zero of=PATH ...`), never a host file. sendfile() queues the
// file's bytes on the socket as a write() of that length does (Linux
// do_sendfile -> splice_direct_to_actor -> tcp_sendmsg); packetdrill
// compares no payload bytes, so only the length matters.
#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "pkt/syscall_ctx.h"
#include "pkt/symbols.h"

namespace weir::pkt {

namespace {

constexpr int64_t kAccMode = 3;  // O_ACCMODE
constexpr int64_t kRdOnly = 0;   // O_RDONLY

}  // namespace

// open(path, flags) = fd: the script's fd names the file from now on;
// ENOENT when no shell line made it. Only reading is modelled.
Status SyscallCtx::open_call() {
  auto p = arg(0);
  if (!p) return stopped(p);
  if ((*p)->kind != Expr::Kind::kString) return fail("open() takes a path in double quotes");
  Value flags = eval_arg(1);
  if (!flags) return stopped(flags);
  if ((*flags & kAccMode) != kRdOnly) return skip("open() for writing is not supported");
  const std::string& path = (*p)->text;
  auto it = r_.files_.sizes.find(path);
  if (it == r_.files_.sizes.end()) return run_now(Ret{-1, ENOENT});
  Value want = eval(s_.result);
  if (!want) return stopped(want);
  int fdn = static_cast<int>(*want);
  if (fdn < 0) {  // the script expects a failure: the call still succeeds, on the lowest free fd
    fdn = 3;
    while (r_.fds_.count(fdn)) ++fdn;
  } else if (r_.fds_.count(fdn)) {
    return fail(fmt::format("open(): fd {} is already open in the script", fdn));
  }
  FdEntry f;
  f.kind = FdEntry::Kind::kFile;
  f.path = path;
  f.file_size = it->second;
  f.nonblock = (*flags & sym::O_NONBLOCK) != 0;
  r_.fds_[fdn] = f;
  return run_now(Ret{fdn, 0});
}

// sendfile(out_fd, in_fd, offset, count): out a socket, in a file opened
// above. With an offset ([N]) the transfer starts there and the file's own
// offset is left alone; with NULL it starts at, and advances, the file
// offset (Linux do_sendfile). At the end of the file it returns 0.
Status SyscallCtx::sendfile_call() {
  auto out = fd(0);
  if (!out) return stopped(out);
  auto in = fd(1);
  if (!in) return stopped(in);
  FdEntry& o = **out;
  FdEntry& i = **in;
  if (i.kind != FdEntry::Kind::kFile) return skip("sendfile() reads only a file the script opened");
  if (o.kind != FdEntry::Kind::kSocket) return skip("sendfile() writes only to a socket");
  auto off = arg(2);
  if (!off) return stopped(off);
  Value count = eval_arg(3);
  if (!count) return stopped(count);
  if (*count < 0) return run_now(Ret{-1, EINVAL});
  uint64_t start = i.file_pos;
  const bool use_pos = is_null(**off);
  if (!use_pos) {
    if ((*off)->kind != Expr::Kind::kList || (*off)->items.size() != 1)
      return fail("sendfile()'s offset is NULL or [N]");
    Value v = eval((*off)->items[0]);
    if (!v) return stopped(v);
    if (*v < 0) return run_now(Ret{-1, EINVAL});
    start = static_cast<uint64_t>(*v);
  }
  const uint64_t avail = start < i.file_size ? i.file_size - start : 0;
  const size_t want = static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(*count), avail));
  if (want == 0) return run_now(Ret{0, 0});
  if (!use_pos) return write_call(o, want, 0, !o.nonblock, {});
  // The file offset moves by what the socket took, which a non-blocking
  // socket may make less than asked (do_sendfile: pos += retval).
  Runner* r = &r_;
  const int in_fd = static_cast<int>(*eval_arg(1));
  return write_call(o, want, 0, !o.nonblock, {}, [r, in_fd](size_t n) {
    auto it = r->fds_.find(in_fd);
    if (it != r->fds_.end() && it->second.kind == FdEntry::Kind::kFile) it->second.file_pos += n;
  });
}

}  // namespace weir::pkt
