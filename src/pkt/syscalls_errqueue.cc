// recvmsg(fd, {..., msg_control=[...]}, MSG_ERRQUEUE): the socket's error
// queue read through the POSIX layer's encoding (weir::posix::put_error_msg,
// Linux ip_recv_error), then checked as packetdrill's syscall_recvmsg
// checks it: the result, msg_flags, then each control message's level,
// type, length and fields (sock_extended_err field by field; the
// scm_timestamping times against the script's, within the tolerance).
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include <array>
#include <cstring>

#include <fmt/format.h>

#include "pkt/syscall_ctx.h"
#include "weir/posix.h"

namespace weir::pkt {
namespace {

// Linux values; the system headers' macros stand for the rest (this file
// does not use pkt/symbols.h's sym:: names, which the macros would shadow).
constexpr int kScmTimestamping = 37;  // SCM_TIMESTAMPING (SO_TIMESTAMPING_OLD on 64-bit)

// One control message the script expects.
struct WantCmsg {
  enum class Kind { kInt, kErr, kTs } kind = Kind::kInt;
  int level = 0;
  int type = 0;
  int32_t num = 0;
  SockExtendedErr ee;
  std::array<std::pair<int64_t, int64_t>, 3> ts{};  // scm_sec, scm_nsec
  size_t len = 0;  // the data's length, as packetdrill's cmsg_new sizes it
};

constexpr const char* kEeNames[] = {"ee_errno", "ee_origin", "ee_type", "ee_code", "ee_info", "ee_data"};

uint32_t ee_field(const SockExtendedErr& ee, int i) {
  switch (i) {
    case 0: return ee.ee_errno;
    case 1: return ee.ee_origin;
    case 2: return ee.ee_type;
    case 3: return ee.ee_code;
    case 4: return ee.ee_info;
    default: return ee.ee_data;
  }
}

void set_ee_field(SockExtendedErr& ee, int i, int64_t v) {
  switch (i) {
    case 0: ee.ee_errno = static_cast<uint32_t>(v); break;
    case 1: ee.ee_origin = static_cast<uint8_t>(v); break;
    case 2: ee.ee_type = static_cast<uint8_t>(v); break;
    case 3: ee.ee_code = static_cast<uint8_t>(v); break;
    case 4: ee.ee_info = static_cast<uint32_t>(v); break;
    default: ee.ee_data = static_cast<uint32_t>(v); break;
  }
}

std::string cmsg_name(int level, int type) {
  if (level == SOL_IP && type == IP_RECVERR) return "IP_RECVERR";
  if (level == SOL_IPV6 && type == IPV6_RECVERR) return "IPV6_RECVERR";
  if (level == SOL_SOCKET && type == kScmTimestamping) return "SCM_TIMESTAMPING";
  return fmt::format("level {} type {}", level, type);
}

// The field `name` of a struct expression, evaluated (0 when absent).
Expected<int64_t, Stop> struct_field(const SyscallCtx& c, const Expr& st, const char* name) {
  const Expr* f = st.field(name);
  if (!f || f->items.empty()) return int64_t{0};
  return c.eval(f->items[0]);
}

Expected<WantCmsg, Stop> want_cmsg(const SyscallCtx& c, const Expr& cm) {
  const Expr* lvl = cm.field("cmsg_level");
  const Expr* type = cm.field("cmsg_type");
  const Expr* data = cm.field("cmsg_data");
  if (!lvl || !type || !data || data->items.empty())
    return c.fail("recvmsg(): a control message needs cmsg_level, cmsg_type and cmsg_data");
  WantCmsg w;
  Value l = c.eval(lvl->items[0]);
  if (!l) return stopped(l);
  Value t = c.eval(type->items[0]);
  if (!t) return stopped(t);
  w.level = static_cast<int>(*l);
  w.type = static_cast<int>(*t);
  const Expr& d = data->items[0];
  if (d.kind == Expr::Kind::kStruct && d.field("ee_errno")) {
    w.kind = WantCmsg::Kind::kErr;
    for (int i = 0; i < 6; ++i) {
      auto v = struct_field(c, d, kEeNames[i]);
      if (!v) return stopped(v);
      set_ee_field(w.ee, i, *v);
    }
    // ip(v6)_recv_error's struct appends the offender's sockaddr.
    w.len = sizeof(SockExtendedErr) + (w.level == SOL_IP ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    return w;
  }
  if (d.kind == Expr::Kind::kStruct && d.field("scm_sec")) {
    w.kind = WantCmsg::Kind::kTs;
    auto s = struct_field(c, d, "scm_sec");
    if (!s) return stopped(s);
    auto ns = struct_field(c, d, "scm_nsec");
    if (!ns) return stopped(ns);
    w.ts[0] = {*s, *ns};
    w.len = 3 * sizeof(timespec);
    return w;
  }
  if (d.kind == Expr::Kind::kInt || d.kind == Expr::Kind::kWord || d.kind == Expr::Kind::kOr) {
    Value v = c.eval(d);
    if (!v) return stopped(v);
    w.num = static_cast<int32_t>(*v);
    w.len = sizeof(int32_t);
    return w;
  }
  return c.skip("recvmsg(MSG_ERRQUEUE): this control message data (SCM_TIMESTAMPING_OPT_STATS?) is not supported");
}

// packetdrill cmsg_expect_eq, with a reason naming the field that differs.
std::optional<std::string> compare_cmsgs(const std::vector<WantCmsg>& want, msghdr& m, Duration tol) {
  size_t i = 0;
  cmsghdr* a = CMSG_FIRSTHDR(&m);
  for (; a && i < want.size(); a = CMSG_NXTHDR(&m, a), ++i) {
    const WantCmsg& w = want[i];
    if (a->cmsg_level != w.level)
      return fmt::format("cmsg {}: cmsg_level expected {} but got {}", i, w.level, a->cmsg_level);
    if (a->cmsg_type != w.type)
      return fmt::format("cmsg {}: cmsg_type expected {} but got {}", i, w.type, a->cmsg_type);
    if (a->cmsg_len != CMSG_LEN(w.len))
      return fmt::format("cmsg {} ({}): cmsg_len expected {} but got {}", i, cmsg_name(w.level, w.type),
                         CMSG_LEN(w.len), a->cmsg_len);
    const std::string name = cmsg_name(a->cmsg_level, a->cmsg_type);
    if ((a->cmsg_level == SOL_IP && a->cmsg_type == IP_RECVERR) ||
        (a->cmsg_level == SOL_IPV6 && a->cmsg_type == IPV6_RECVERR)) {
      SockExtendedErr got;
      std::memcpy(&got, CMSG_DATA(a), sizeof got);
      for (int k = 0; k < 6; ++k)
        if (ee_field(got, k) != ee_field(w.ee, k))
          return fmt::format("cmsg {} ({}): {} expected {} but got {}", i, name, kEeNames[k], ee_field(w.ee, k),
                             ee_field(got, k));
    } else if (a->cmsg_level == SOL_SOCKET && a->cmsg_type == kScmTimestamping) {
      std::array<timespec, 3> got{};
      std::memcpy(got.data(), CMSG_DATA(a), sizeof got);
      for (size_t k = 0; k < 3; ++k) {
        const auto [sec, nsec] = w.ts[k];
        if (sec == 0 && nsec == 0) continue;  // packetdrill: a zero time is not checked
        const Time exp = kEpoch + Duration::ns(sec * 1'000'000'000 + nsec);
        const Time act = Time::from_ns(int64_t{got[k].tv_sec} * 1'000'000'000 + got[k].tv_nsec);
        const Duration diff = exp > act ? exp - act : act - exp;
        if (diff > tol)
          return fmt::format("cmsg {} ({}): ts[{}] expected {:.6f} s but got {:.6f} s (tolerance {:.6f} s)", i,
                             name, k, (exp - kEpoch).secs(), (act - kEpoch).secs(), tol.secs());
      }
    } else if (std::memcmp(CMSG_DATA(a), &w.num, sizeof w.num) != 0) {
      int32_t got = 0;
      std::memcpy(&got, CMSG_DATA(a), sizeof got);
      return fmt::format("cmsg {} ({}): data expected {} but got {}", i, name, w.num, got);
    }
  }
  if (a) return fmt::format("received more than {} control messages", want.size());
  if (i < want.size()) return fmt::format("received only {} control messages, expected {}", i, want.size());
  return std::nullopt;
}

}  // namespace

Status SyscallCtx::errqueue_call(FdEntry& f) {
  const Expr& msg = **arg(1);
  Value iov_bytes = msg_len(msg);
  if (!iov_bytes) return stopped(iov_bytes);
  int64_t want_flags = 0;
  if (const Expr* fl = msg.field("msg_flags"); fl && !fl->items.empty()) {
    Value v = eval(fl->items[0]);
    if (!v) return stopped(v);
    want_flags = *v;
  }
  std::vector<WantCmsg> want;
  size_t controllen = 0;
  if (const Expr* ctl = msg.field("msg_control"); ctl && !ctl->items.empty()) {
    for (const Expr& cm : ctl->items[0].items) {
      auto w = want_cmsg(*this, cm);
      if (!w) return stopped(w);
      controllen += CMSG_SPACE(w->len);  // packetdrill sizes msg_control so
      want.push_back(*w);
    }
  }
  const SocketId s = f.sock;
  const bool v6 = r_.cfg_.ip_version != IpVersion::kIpv4;
  const size_t iov_len = static_cast<size_t>(*iov_bytes);
  const Duration tol = r_.cfg_.tolerance;
  Runner* r = &r_;
  const SyscallCtx self = *this;
  return run(false, [r, s, v6, iov_len, controllen, want, want_flags, tol, self](Time now) -> Attempt {
    auto e = r->stack_->recv_error(now, s);
    // On an error the kernel writes nothing back: only the result counts.
    if (!e) return done(from(e.error()));
    std::vector<uint8_t> data(iov_len);
    iovec iov{data.data(), data.size()};
    std::vector<uint64_t> control((controllen + 7) / 8);
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = controllen ? control.data() : nullptr;
    m.msg_controllen = controllen;
    const Ret ret{static_cast<int64_t>(posix::put_error_msg(*e, v6, &m)), 0};
    if (!self.check(ret)) return done(ret);  // run() reports the result first
    if (m.msg_flags != want_flags)
      return self.fail(fmt::format("recvmsg() msg_flags: expected 0x{:x} but got 0x{:x}", want_flags, m.msg_flags));
    if (auto why = compare_cmsgs(want, m, tol)) return self.fail("recvmsg() " + *why);
    return done(ret);
  });
}

}  // namespace weir::pkt
