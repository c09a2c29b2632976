// Readiness calls: poll() and epoll_create/epoll_ctl/epoll_wait on the
// stack's poll() bits. A wait with a timeout is a Pending operation, so it
// returns at the virtual time the readiness (or the timeout) arrives.
#include <fmt/format.h>

#include "pkt/syscall_ctx.h"
#include "pkt/symbols.h"

namespace weir::pkt {

namespace {

struct PollItem {
  SocketId s;
  uint32_t events;
  std::optional<uint32_t> revents;
};

}  // namespace

// poll([{fd=, events=, revents=}...], nfds, timeout)
Status SyscallCtx::poll_calls() {
  auto list = arg(0);
  if (!list) return stopped(list);
  Value timeout = eval_arg(2);
  if (!timeout) return stopped(timeout);
  std::vector<PollItem> items;
  for (const Expr& st : (*list)->items) {
    const Expr* f = st.field("fd");
    const Expr* ev = st.field("events");
    if (!f || !ev) return fail("poll(): each entry needs fd= and events=");
    Value fdn = eval(f->items[0]);
    if (!fdn) return stopped(fdn);
    auto it = r_.fds_.find(static_cast<int>(*fdn));
    if (it == r_.fds_.end()) return fail("poll(): fd is not open in the script");
    if (it->second.is_pipe()) return skip("poll() on a pipe is not supported");
    Value events = eval(ev->items[0]);
    if (!events) return stopped(events);
    PollItem item{it->second.sock, static_cast<uint32_t>(*events), std::nullopt};
    if (const Expr* rv = st.field("revents")) {
      Value revents = eval(rv->items[0]);
      if (!revents) return stopped(revents);
      item.revents = static_cast<uint32_t>(*revents);
    }
    items.push_back(item);
  }
  Runner* r = &r_;
  Time deadline = *timeout < 0 ? Time::never() : r_.now_ + Duration::ms(*timeout);
  auto op = [r, items, deadline](Time now) -> Attempt {
    int ready = 0;
    std::string mismatch;
    for (const PollItem& i : items) {
      uint32_t got = r->stack_->poll(i.s) & (i.events | ev::ERR | ev::HUP);
      if (got) ++ready;
      if (i.revents && got != *i.revents)
        mismatch = fmt::format("poll() revents: expected 0x{:x} but got 0x{:x}", *i.revents, got);
    }
    if (ready == 0 && now < deadline) return blocked();
    if (!mismatch.empty()) return r->stop(Outcome::kFail, mismatch);
    return done(Ret{ready, 0});
  };
  return run(*timeout != 0, op, deadline);
}

// epoll_ctl(epfd, op, fd, {events=, fd=|u64=})
Status SyscallCtx::epoll_ctl_call(FdEntry& ep) {
  Value op = eval_arg(1);
  if (!op) return stopped(op);
  Value target = eval_arg(2);
  if (!target) return stopped(target);
  FdEntry::Watch w;
  if (s_.args.size() > 3 && s_.args[3].kind == Expr::Kind::kStruct) {
    const Expr& spec = s_.args[3];
    if (const Expr* e = spec.field("events")) {
      Value events = eval(e->items[0]);
      if (!events) return stopped(events);
      w.events = static_cast<uint32_t>(*events);
    }
    const Expr* d = spec.field("fd") ? spec.field("fd") : spec.field("u64");
    if (d) {
      Value data = eval(d->items[0]);
      if (!data) return stopped(data);
      w.data = *data;
    }
  }
  const int fdn = static_cast<int>(*target);
  if (*op == sym::EPOLL_CTL_DEL) {
    ep.watches.erase(fdn);
  } else {
    // ADD and MOD report a ready socket once, as ep_insert/ep_modify do.
    auto t = r_.fds_.find(fdn);
    if (t != r_.fds_.end()) {
      w.last_bits = r_.stack_->poll(t->second.sock);
      w.last_reports = r_.stack_->error_reports(t->second.sock);
      r_.stack_->ioctl(t->second.sock, 0x541B, &w.last_inq);
    }
    ep.watches[fdn] = w;
  }
  return run_now(Ret{});
}

Status SyscallCtx::epoll_calls() {
  const std::string& n = s_.name;
  if (n == "epoll_create" || n == "epoll_create1") {
    FdEntry f;
    f.kind = FdEntry::Kind::kEpoll;
    Value want = eval(s_.result);
    if (!want) return stopped(want);
    r_.fds_[static_cast<int>(*want)] = f;
    return run_now(Ret{*want, 0});
  }
  auto ep = fd(0);
  if (!ep) return stopped(ep);
  if ((*ep)->kind != FdEntry::Kind::kEpoll) return fail(fmt::format("{}(): fd is not an epoll fd", n));
  if (n == "epoll_ctl") return epoll_ctl_call(**ep);
  return epoll_wait_call(**ep);
}

namespace {

// The ready watches of an epoll fd, as epoll_wait() reports them: level-
// triggered ones while ready, EPOLLET ones once per edge, EPOLLONESHOT ones
// once until re-armed.
std::vector<std::pair<int64_t, uint32_t>> ready_events(Runner& r, FdEntry& ep, int64_t maxevents) {
  std::vector<std::pair<int64_t, uint32_t>> events;
  for (auto& [fdn, w] : ep.watches) {
    auto it = r.fds_.find(fdn);
    if (it == r.fds_.end() || !w.armed) continue;
    uint32_t got = r.stack_->poll(it->second.sock) & (w.events | ev::ERR | ev::HUP);
    if (!got || ((w.events & sym::EPOLLET) && !w.edge_pending)) continue;
    if (static_cast<int64_t>(events.size()) >= maxevents) break;
    events.emplace_back(w.data, got);
    w.edge_pending = false;
    if (w.events & sym::EPOLLONESHOT) w.armed = false;
  }
  return events;
}

}  // namespace

// epoll_wait(epfd, {events=, fd=}, maxevents, timeout)
Status SyscallCtx::epoll_wait_call(FdEntry& ep) {
  Value timeout = eval_arg(3);
  if (!timeout) return stopped(timeout);
  Value maxevents = eval_arg(2);
  if (!maxevents) return stopped(maxevents);
  auto want = arg(1);
  if (!want) return stopped(want);
  Runner* r = &r_;
  FdEntry* epp = &ep;
  const Event* evp = &e_;
  const SyscallSpec* sp = &s_;
  const Expr* wp = *want;
  Time deadline = *timeout < 0 ? Time::never() : r_.now_ + Duration::ms(*timeout);
  auto op = [r, epp, evp, sp, deadline, maxev = *maxevents, wp](Time now) -> Attempt {
    auto events = ready_events(*r, *epp, maxev);
    if (events.empty() && now < deadline) return blocked();
    if (!events.empty() && wp->kind == Expr::Kind::kStruct) {
      SyscallCtx c(*r, *evp, *sp);
      if (const Expr* we = wp->field("events")) {
        Value v = c.eval(we->items[0]);
        if (!v) return stopped(v);
        if (static_cast<uint32_t>(*v) != events[0].second)
          return c.fail(fmt::format("epoll_wait() events: expected 0x{:x} but got 0x{:x}", *v, events[0].second));
      }
      if (const Expr* wf = wp->field("fd")) {
        Value v = c.eval(wf->items[0]);
        if (!v) return stopped(v);
        if (*v != events[0].first)
          return c.fail(fmt::format("epoll_wait() fd: expected {} but got {}", *v, events[0].first));
      }
    }
    return done(Ret{static_cast<int64_t>(events.size()), 0});
  };
  return run(*timeout != 0, op, deadline);
}

}  // namespace weir::pkt
