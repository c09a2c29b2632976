// sendmsg() and recvmsg() of the POSIX-shaped layer, and the error queue's
// control messages (Linux ip_recv_error / ipv6_recv_error, put_cmsg).
#include <netinet/in.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "weir/posix.h"

namespace weir::posix {
namespace {

constexpr int kScmTimestamping = 37;  // SCM_TIMESTAMPING (SO_TIMESTAMPING_OLD on 64-bit)
constexpr int kScmTimestampingOptStats = 54;  // SCM_TIMESTAMPING_OPT_STATS

// struct scm_timestamping: ts[0] software, ts[1] deprecated, ts[2] hardware.
struct ScmTimestamping {
  timespec ts[3];
};

// Linux put_cmsg: a message that does not fit is cut (cmsg_len = the room
// left) and MSG_CTRUNC set; none at all once there is no room for a header.
void put_cmsg(msghdr* msg, size_t& used, int level, int type, const void* data, size_t len) {
  const size_t room = msg->msg_control ? msg->msg_controllen - used : 0;
  if (room < sizeof(cmsghdr)) {
    msg->msg_flags |= MSG_CTRUNC;
    return;
  }
  size_t cmlen = CMSG_LEN(len);
  if (room < cmlen) {
    msg->msg_flags |= MSG_CTRUNC;
    cmlen = room;
  }
  auto* base = static_cast<uint8_t*>(msg->msg_control) + used;
  cmsghdr h{};
  h.cmsg_len = cmlen;
  h.cmsg_level = level;
  h.cmsg_type = type;
  std::memcpy(base, &h, sizeof h);
  std::memcpy(base + CMSG_LEN(0), data, cmlen - CMSG_LEN(0));
  used += std::min(CMSG_SPACE(len), room);
}

}  // namespace

size_t put_error_msg(const ErrQueueEntry& e, bool v6, msghdr* msg) {
  // skb_copy_datagram_msg: the payload into the iovec, MSG_TRUNC if longer.
  size_t copied = 0;
  for (size_t i = 0; i < msg->msg_iovlen && copied < e.payload.size(); ++i) {
    const size_t k = std::min(msg->msg_iov[i].iov_len, e.payload.size() - copied);
    std::memcpy(msg->msg_iov[i].iov_base, e.payload.data() + copied, k);
    copied += k;
  }
  if (copied < e.payload.size()) msg->msg_flags |= MSG_TRUNC;
  size_t used = 0;
  if (e.tstamp) {  // sock_recv_timestamp comes first
    ScmTimestamping ts{};
    const int64_t ns = e.tstamp->ns();
    ts.ts[0].tv_sec = static_cast<time_t>(ns / 1000000000);
    ts.ts[0].tv_nsec = static_cast<long>(ns % 1000000000);
    put_cmsg(msg, used, SOL_SOCKET, kScmTimestamping, &ts, sizeof ts);
    // __sock_recv_timestamp: right after it, "if (skb_is_err_queue(skb) &&
    // skb->len && SKB_EXT_ERR(skb)->opt_stats)", the statistics.
    if (e.opt_stats && !e.payload.empty())
      put_cmsg(msg, used, SOL_SOCKET, kScmTimestampingOptStats, e.payload.data(), e.payload.size());
  }
  // The offender is zeroed for timestamp and zerocopy entries
  // (ipv4_datagram_support_cmsg / ipv6_datagram_support_cmsg).
  if (v6) {
    struct {
      SockExtendedErr ee;
      sockaddr_in6 offender;
    } err{};
    std::memcpy(&err.ee, &e.ee, sizeof err.ee);
    put_cmsg(msg, used, SOL_IPV6, IPV6_RECVERR, &err, sizeof err);
  } else {
    struct {
      SockExtendedErr ee;
      sockaddr_in offender;
    } err{};
    std::memcpy(&err.ee, &e.ee, sizeof err.ee);
    put_cmsg(msg, used, SOL_IP, IP_RECVERR, &err, sizeof err);
  }
  msg->msg_controllen = used;
  msg->msg_flags |= MSG_ERRQUEUE;
  return copied;
}

ssize_t Api::sendmsg(int fd, const msghdr* msg, int flags) {
  if (!msg || msg->msg_iovlen > IOV_MAX) return fail(EINVAL);
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  std::vector<uint8_t> all;
  std::vector<uint32_t> lens;
  for (size_t i = 0; i < msg->msg_iovlen; ++i) {
    const auto* p = static_cast<const uint8_t*>(msg->msg_iov[i].iov_base);
    all.insert(all.end(), p, p + msg->msg_iov[i].iov_len);
    lens.push_back(static_cast<uint32_t>(msg->msg_iov[i].iov_len));
  }
  const int pass = flags & (MSG_MORE | MSG_ZEROCOPY | MSG_EOR | MSG_OOB);
  const Time until = deadline(*f, true);  // SO_SNDTIMEO
  size_t done = 0;
  for (;;) {
    // The iovec elements not yet (wholly) queued.
    std::vector<uint32_t> rest;
    for (size_t i = 0, off = 0; i < lens.size(); off += lens[i++])
      if (off + lens[i] > done) rest.push_back(static_cast<uint32_t>(std::min<size_t>(lens[i], off + lens[i] - done)));
    auto r = stack_.sendmsg(now_, f->id, std::span(all).subspan(done), rest, pass);
    if (r) done += *r;
    if (done == all.size()) return static_cast<ssize_t>(done);
    if (!r && r.error() != Errc::kAgain) return done ? static_cast<ssize_t>(done) : fail(r.error());
    if ((flags & MSG_DONTWAIT) || f->nonblock || !wait(fd, *f, POLLOUT, until))
      return done ? static_cast<ssize_t>(done) : fail(EAGAIN);
    f = fd_entry(fd);
    if (!f) return fail(EBADF);
  }
}

ssize_t Api::recvmsg(int fd, msghdr* msg, int flags) {
  if (!msg) return fail(EFAULT);
  Fd* f = fd_entry(fd);
  if (!f) return fail(EBADF);
  msg->msg_flags = 0;
  if (flags & MSG_ERRQUEUE) {
    // inet_recv_error: never blocks; EAGAIN when the queue is empty.
    auto e = stack_.recv_error(now_, f->id);
    if (!e) return fail(e.error());
    return static_cast<ssize_t>(put_error_msg(*e, f->v6, msg));
  }
  msg->msg_controllen = 0;
  return readv(fd, msg->msg_iov, static_cast<int>(msg->msg_iovlen));
}

}  // namespace weir::posix
