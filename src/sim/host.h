// A simulated host: one weir::Stack, its network interface onto an outgoing
// link, and the applications using its sockets. The host drives the stack
// from the event loop: packets go in through input(), and after every
// interaction the stack's next_deadline() is (re)scheduled for advance().
// Readiness callbacks never call back into the stack: they queue the
// application, which runs from its own event at the same virtual time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/event_loop.h"
#include "sim/link.h"
#include "sim/monitor.h"
#include "sim/packet.h"
#include "sim/trace_store.h"
#include "weir/stack.h"

namespace weir::sim {

class App : public EventTarget {
 public:
  // Readiness of one of the app's sockets may have changed.
  virtual void on_ready(Time now) = 0;
  bool queued = false;  // owned by the host's dispatcher

 protected:
  ~App() = default;
};

class Host final : public Node, public Netif, public EventTarget {
 public:
  Host(EventLoop& loop, PacketPool& pool, std::string name, const IpAddr& addr,
       const StackConfig& cfg, uint32_t mtu, Monitor* monitor, bool keep_trace);
  ~Host();

  void attach(Link* out) { out_ = out; }
  Stack& stack() { return *stack_; }
  EventLoop& loop() { return loop_; }
  const std::string& name() const { return name_; }
  const IpAddr& addr() const { return addr_; }
  const TraceStore& trace() const { return trace_; }
  // Readiness of socket `s` goes to `app`.
  void watch(SocketId s, App* app) { watchers_[s] = app; }
  // Re-arms the stack's timer; call after every socket call an app makes.
  void kick();

  void receive(Time now, Packet* p) override;
  void transmit(std::span<const uint8_t> ip_packet) override;
  uint32_t mtu() const override { return mtu_; }
  void on_event(Time now, uint64_t tag) override;

  uint64_t packets_out() const { return packets_out_; }
  uint64_t packets_in() const { return packets_in_; }
  // The stack kept asking for advance() at one instant: the run was stopped.
  bool stalled() const { return stalled_; }

 private:
  static void ready_thunk(void* ctx, SocketId s, uint32_t events);
  void on_ready(SocketId s);
  void dispatch(Time now);

  static constexpr uint64_t kDispatch = 1;
  EventLoop& loop_;
  PacketPool& pool_;
  std::string name_;
  IpAddr addr_;
  uint32_t mtu_;
  Monitor* monitor_;
  TraceStore trace_;
  std::unique_ptr<Stack> stack_;
  Link* out_ = nullptr;
  std::unordered_map<SocketId, App*> watchers_;
  std::vector<App*> ready_;
  bool dispatch_pending_ = false;
  Time timer_at_ = Time::never();
  uint64_t timer_gen_ = 0;
  uint64_t packets_out_ = 0;
  uint64_t packets_in_ = 0;
  static constexpr uint32_t kMaxSpins = 100000;
  Time last_advance_ = Time::never();
  uint32_t spins_ = 0;
  bool stalled_ = false;
};

}  // namespace weir::sim
