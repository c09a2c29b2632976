#include "sim/host.h"

namespace weir::sim {

Host::Host(EventLoop& loop, PacketPool& pool, std::string name, const IpAddr& addr,
           const StackConfig& cfg, uint32_t mtu, Monitor* monitor, bool keep_trace)
    : loop_(loop), pool_(pool), name_(std::move(name)), addr_(addr), mtu_(mtu), monitor_(monitor),
      trace_(200000, keep_trace) {
  stack_ = std::make_unique<Stack>(cfg, *this);
  stack_->add_address(addr);
  stack_->set_trace(&trace_);
  stack_->set_ready_callback(&Host::ready_thunk, this);
}

Host::~Host() = default;

void Host::ready_thunk(void* ctx, SocketId s, uint32_t /*events*/) {
  static_cast<Host*>(ctx)->on_ready(s);
}

void Host::on_ready(SocketId s) {
  auto it = watchers_.find(s);
  if (it == watchers_.end() || it->second->queued) return;
  it->second->queued = true;
  ready_.push_back(it->second);
  if (!dispatch_pending_) {
    dispatch_pending_ = true;
    loop_.at(loop_.now(), this, kDispatch);
  }
}

void Host::dispatch(Time now) {
  dispatch_pending_ = false;
  std::vector<App*> run;
  run.swap(ready_);
  for (App* a : run) {
    a->queued = false;
    a->on_ready(now);
  }
  kick();
}

void Host::kick() {
  Time d = stack_->next_deadline();
  if (d.is_never() || d >= timer_at_) return;
  timer_at_ = d;
  ++timer_gen_;
  // Tags: 1 is the dispatcher; timers carry their generation above bit 1.
  loop_.at(d, this, (timer_gen_ << 1));
}

void Host::on_event(Time now, uint64_t tag) {
  if (tag == kDispatch) {
    dispatch(now);
    return;
  }
  if ((tag >> 1) != timer_gen_) return;  // superseded by an earlier deadline
  timer_at_ = Time::never();
  // A stack whose deadline stays at or before `now` after advance() would
  // spin the loop at one instant forever: stop the run instead.
  spins_ = now == last_advance_ ? spins_ + 1 : 0;
  last_advance_ = now;
  if (spins_ > kMaxSpins) {
    stalled_ = true;
    loop_.stop();
    return;
  }
  stack_->advance(now);
  kick();
}

void Host::receive(Time now, Packet* p) {
  ++packets_in_;
  if (monitor_) monitor_->on_rx(now, *p);
  stack_->input(now, p->view());
  pool_.put(p);
  kick();
}

void Host::transmit(std::span<const uint8_t> ip_packet) {
  ++packets_out_;
  Packet* p = pool_.make(ip_packet);
  Time now = loop_.now();
  if (monitor_) monitor_->on_tx(now, *p);
  if (out_) out_->send(now, p);
  else pool_.put(p);
}

}  // namespace weir::sim
