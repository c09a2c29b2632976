// setsockopt() / getsockopt(): a script's option values become the bytes
// the kernel would copy in (an int, a string, a linger or timeval struct),
// and what the engine writes back is compared with the script's (an int, a timeval, or a byte string such as
// TCP_SAVED_SYN's headers). Options the engine keeps no state for at all
// make the script skip.
#include <array>
#include <cctype>
#include <cstring>

#include <fmt/format.h>

#include "pkt/runner_impl.h"
#include "pkt/syscall_ctx.h"
#include "pkt/symbols.h"

namespace weir::pkt {
namespace {

// Options the engine has no notion of, or whose value a script cannot
// spell (TCP_REPAIR_OPTIONS' array of struct tcp_repair_opt, TCP_REPAIR_WINDOW's
// struct; the int-valued TCP_REPAIR family runs): the script is skipped, not failed.
bool unsupported_sockopt(std::string_view name) {
  static const char* kNames[] = {"TCP_ZEROCOPY_RECEIVE", "TCP_REPAIR_OPTIONS", "TCP_REPAIR_WINDOW", "TCP_ULP",
                                 "SO_BINDTODEVICE"};
  for (const char* n : kNames)
    if (name == n) return true;
  return false;
}

}  // namespace

Status SyscallCtx::option_calls() {
  const std::string& n = s_.name;
  if (n == "fcntl") return fcntl_call();
  if (n == "ioctl") return ioctl_call();
  auto f = fd(0);
  if (!f) return stopped(f);
  auto name = arg(2);
  if (!name) return stopped(name);
  if ((*name)->kind == Expr::Kind::kWord && unsupported_sockopt((*name)->text))
    return skip(fmt::format("socket option {} is not supported", (*name)->text));
  Value level = eval_arg(1);
  if (!level) return stopped(level);
  Value opt = eval(**name);
  if (!opt) return stopped(opt);
  auto val = arg(3);
  if (!val) return stopped(val);
  const int lv = static_cast<int>(*level), op = static_cast<int>(*opt);
  if (n == "setsockopt") return setsockopt_call(**f, lv, op, **name, **val);
  return getsockopt_call(**f, lv, op, **name, **val);
}

namespace {

// A C string literal's bytes, as packetdrill's lexer decodes them: \xHH,
// \n, \t, \0 and an escaped character as itself.
std::vector<uint8_t> unescape(const std::string& t) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '\\' || i + 1 == t.size()) {
      out.push_back(static_cast<uint8_t>(t[i]));
      continue;
    }
    const char c = t[++i];
    if (c == 'x' && i + 2 < t.size() && std::isxdigit(static_cast<unsigned char>(t[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(t[i + 2]))) {
      out.push_back(static_cast<uint8_t>(std::stoul(t.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(static_cast<uint8_t>(c == 'n' ? '\n' : c == 't' ? '\t' : c == '0' ? '\0' : c));
    }
  }
  return out;
}

// {tv_sec=S, tv_usec=U} as the 64-bit ABI's struct timeval (16 bytes):
// SO_RCVTIMEO / SO_SNDTIMEO.
Expected<std::vector<uint8_t>, Stop> timeval_bytes(const SyscallCtx& c, const Expr& val) {
  int64_t tv[2] = {0, 0};
  const char* names[] = {"tv_sec", "tv_usec"};
  for (int i = 0; i < 2; ++i) {
    const Expr* f = val.field(names[i]);
    if (!f || f->items.empty()) continue;
    Value v = c.eval(f->items[0]);
    if (!v) return stopped(v);
    tv[i] = *v;
  }
  std::vector<uint8_t> bytes(sizeof tv);
  std::memcpy(bytes.data(), tv, sizeof tv);
  return bytes;
}

// A setsockopt() value as the kernel would copy it in: a string, a linger
// or timeval struct, or a 32-bit integer.
Expected<std::vector<uint8_t>, Stop> option_bytes(const SyscallCtx& c, const Expr& val) {
  std::vector<uint8_t> bytes;
  if (val.kind == Expr::Kind::kString) {
    bytes = unescape(val.text);
    return bytes;
  }
  if (val.kind == Expr::Kind::kStruct && val.field("tv_sec")) return timeval_bytes(c, val);
  if (val.kind == Expr::Kind::kStruct && val.field("onoff")) {
    Value on = c.eval(val.field("onoff")->items[0]);
    if (!on) return stopped(on);
    Value secs = c.eval(val.field("linger")->items[0]);
    if (!secs) return stopped(secs);
    int32_t v[2] = {static_cast<int32_t>(*on), static_cast<int32_t>(*secs)};
    bytes.resize(8);
    std::memcpy(bytes.data(), v, 8);
    return bytes;
  }
  Value v = c.eval(val);
  if (!v) return stopped(v);
  int32_t v32 = static_cast<int32_t>(*v);
  bytes.resize(4);
  std::memcpy(bytes.data(), &v32, 4);
  return bytes;
}

std::string hex(const std::vector<uint8_t>& b) {
  std::string out;
  for (uint8_t c : b) out += fmt::format("{:02x}", c);
  return out;
}

int32_t int_of(const std::vector<uint8_t>& bytes) {
  int32_t v = 0;
  std::memcpy(&v, bytes.data(), std::min<size_t>(bytes.size(), 4));
  return v;
}

// IP-level options the engine has no use for, kept by the runner so that
// the calls behave as on Linux (ip_setsockopt, also for IPv6 TCP sockets):
// IP_MTU_DISCOVER takes IP_PMTUDISC_DONT..OMIT (0..5). What it changes on
// the wire (DF) is not modelled. IP_TOS, IP_TTL, IPV6_TCLASS and
// IPV6_UNICAST_HOPS are the engine's (tcp/ip_fields.h).
Errc keep_ip_option(FdEntry& f, int opt, int32_t v) {
  if (opt == sym::IP_MTU_DISCOVER) {
    if (v < 0 || v > 5) return Errc::kInval;
    f.pmtudisc = v;
    return Errc::kOk;
  }
  return Errc::kNoProtoOpt;
}

bool is_ip_header_field(int level, int opt) {
  return (level == sym::SOL_IP && (opt == sym::IP_TOS || opt == sym::IP_TTL)) ||
         (level == sym::SOL_IPV6 && (opt == sym::IPV6_TCLASS || opt == sym::IPV6_UNICAST_HOPS));
}

}  // namespace

Status SyscallCtx::setsockopt_call(FdEntry& f, int level, int opt, const Expr& name, const Expr& val) {
  auto bytes = option_bytes(*this, val);
  if (!bytes) return stopped(bytes);
  // A timeval passed with a shorter optlen: the kernel sees only that many
  // bytes (sock_copy_user_timeval then fails with EINVAL).
  if (val.kind == Expr::Kind::kStruct && val.field("tv_sec") && s_.args.size() > 4 && !is_ellipsis(s_.args[4])) {
    Value l = eval(s_.args[4]);
    if (!l) return stopped(l);
    if (*l >= 0 && static_cast<size_t>(*l) < bytes->size()) bytes->resize(static_cast<size_t>(*l));
  }
  // For the IP header fields the length decides too (tcp/ip_fields.h):
  // do_ip_setsockopt reads one byte from a shorter value, do_ipv6_setsockopt
  // refuses it. (The runner's own IP_MTU_DISCOVER takes any length.)
  if (is_ip_header_field(level, opt) && val.kind != Expr::Kind::kStruct && s_.args.size() > 4 &&
      !is_ellipsis(s_.args[4])) {
    Value l = eval(s_.args[4]);
    if (!l) return stopped(l);
    if (*l >= 0 && static_cast<size_t>(*l) < bytes->size()) bytes->resize(static_cast<size_t>(*l));
  }
  // SO_TIMESTAMPING: the engine records software transmit timestamps; a
  // script asking for more (hardware, receive, OPT_STATS/PKTINFO/CMSG ...)
  // would see Linux do what weir does not.
  if (level == sym::SOL_SOCKET && opt == sym::SO_TIMESTAMPING) {
    const uint32_t v = static_cast<uint32_t>(int_of(*bytes));
    if (v & sof::MASK & ~sof::SUPPORTED)
      return skip(fmt::format("SO_TIMESTAMPING flags 0x{:x} are not modelled (weir records software "
                              "TX timestamps: TX_SCHED, TX_SOFTWARE, TX_ACK, SOFTWARE, OPT_ID, OPT_TSONLY)",
                              v & sof::MASK & ~sof::SUPPORTED));
  }
  // TCP_TX_DELAY is a departure time (EDT) that only fq honours: with fq
  // below the socket the packets would leave later, which the engine does
  // not model (it keeps the value and its RTT bookkeeping).
  if (level == sym::SOL_TCP && opt == sym::TCP_TX_DELAY && int_of(*bytes) > 0 &&
      r_.stack_->config().default_qdisc == "fq")
    return skip("TCP_TX_DELAY under the fq qdisc (a delayed departure time) is not modelled");
  Errc e = r_.stack_->setsockopt(r_.now_, f.sock, level, opt, *bytes);
  if (e == Errc::kNoProtoOpt && level == sym::SOL_TCP && opt == sym::TCP_INQ) {
    // TCP_INQ only changes what recvmsg() reports: the runner keeps it.
    f.inq = int_of(*bytes) != 0;
    e = Errc::kOk;
  }
  if (e == Errc::kNoProtoOpt && level == sym::SOL_IP) e = keep_ip_option(f, opt, int_of(*bytes));
  if (e == Errc::kNoProtoOpt && !is_ellipsis(s_.result)) {
    Value want = eval(s_.result);
    if (!want) return stopped(want);
    if (*want == 0) return skip(fmt::format("the engine does not support setsockopt {}", name.text));
  }
  return run_now(from(e));
}

// getsockopt(fd, level, name, [value], [len])
Status SyscallCtx::getsockopt_call(FdEntry& f, int level, int opt, const Expr& name, const Expr& val) {
  const bool tv = val.kind == Expr::Kind::kStruct && val.field("tv_sec");
  const bool str = val.kind == Expr::Kind::kString;
  if (val.kind == Expr::Kind::kStruct && !tv)
    return skip(fmt::format("getsockopt {} with a struct value is not supported", name.text));
  std::array<uint8_t, 256> buf{};
  size_t len = tv ? 16 : str ? buf.size() : 4;
  if (s_.args.size() > 4 && !is_ellipsis(s_.args[4])) {
    Value l = eval(s_.args[4]);
    if (!l) return stopped(l);
    len = static_cast<size_t>(*l);
  }
  len = std::min(len, buf.size());
  Errc e = r_.stack_->getsockopt(f.sock, level, opt, {buf.data(), len}, &len);
  // Options the runner keeps itself (TCP_INQ, IP_MTU_DISCOVER).
  const bool inq = level == sym::SOL_TCP && opt == sym::TCP_INQ;
  const bool pmtu = level == sym::SOL_IP && opt == sym::IP_MTU_DISCOVER;
  if (e == Errc::kNoProtoOpt && (inq || pmtu)) {
    const int32_t v = pmtu ? f.pmtudisc : f.inq ? 1 : 0;
    std::memcpy(buf.data(), &v, 4);
    len = 4;
    e = Errc::kOk;
  }
  if (e == Errc::kNoProtoOpt && !is_ellipsis(s_.result)) {
    Value want = eval(s_.result);
    if (!want) return stopped(want);
    if (*want == 0) return skip(fmt::format("the engine does not support getsockopt {}", name.text));
  }
  if (e == Errc::kOk && (tv || str)) {
    // The bytes the kernel wrote, exactly: a timeval, or a byte string
    // (TCP_SAVED_SYN's headers; "" when nothing is saved).
    auto want = tv ? timeval_bytes(*this, val) : Expected<std::vector<uint8_t>, Stop>(unescape(val.text));
    if (!want) return stopped(want);
    const std::vector<uint8_t> got(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(len));
    if (got != *want)
      return fail(fmt::format("getsockopt({}) expected {} bytes [{}] but got {} bytes [{}]", name.text, want->size(),
                              hex(*want), got.size(), hex(got)));
  } else if (e == Errc::kOk && !is_ellipsis(val)) {
    uint32_t v32 = 0;
    std::memcpy(&v32, buf.data(), 4);
    Value want = eval(val);
    if (!want) return stopped(want);
    if (static_cast<uint32_t>(*want) != v32)
      return fail(fmt::format("getsockopt({}) expected [{}] but got [{}]", name.text, *want, int64_t{v32}));
  }
  return run_now(from(e));
}

}  // namespace weir::pkt
