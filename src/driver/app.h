// Applications that run on a Stack inside a real-time driver: the `serve`
// apps (echo, discard, chargen, http) and `fetch`'s HTTP client. They are
// level-triggered: after every batch of packets or timers the driver calls
// service(), and each app polls its own sockets (poll(2) semantics) and does
// whatever is ready, a bounded amount per call.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "weir/addr.h"
#include "weir/stack.h"

namespace weir::driver {

class App {
 public:
  virtual ~App() = default;
  // Opens listeners or starts connecting. Returns an error text, empty if fine.
  virtual std::string start(Time now, Stack& st) = 0;
  // Serves whatever is ready. Returns true when it stopped with work left
  // (its per-call budget ran out), so the driver calls again at once.
  virtual bool service(Time now) = 0;
  // Graceful stop (SIGINT/SIGTERM): stop listening, close every connection.
  virtual void shutdown(Time now) = 0;
  // Nothing left open: the driver may exit once the stack settles.
  virtual bool finished() const = 0;
  // The sockets worth listing in `weir ss`.
  virtual std::vector<SocketId> sockets() const = 0;
  // Exit status once finished (fetch reports failure through it).
  virtual int exit_status() const { return 0; }
};

// One accepted connection of a server app.
class Session {
 public:
  virtual ~Session() = default;
  // Does the ready work on `s`. Returns false when the connection is over
  // and should be closed; sets *more when it stopped on its budget.
  virtual bool step(Time now, Stack& st, SocketId s, uint32_t events, bool* more) = 0;
};

// Listens on each of `addrs` at `port`, accepts, and runs one Session per
// connection.
class ServerApp : public App {
 public:
  ServerApp(std::vector<IpAddr> addrs, uint16_t port) : addrs_(std::move(addrs)), port_(port) {}
  std::string start(Time now, Stack& st) override;
  bool service(Time now) override;
  void shutdown(Time now) override;
  bool finished() const override { return listeners_.empty() && sessions_.empty(); }
  std::vector<SocketId> sockets() const override;

 protected:
  virtual std::unique_ptr<Session> make_session() = 0;

 private:
  void accept_all(Time now, SocketId l);
  Stack* st_ = nullptr;
  std::vector<IpAddr> addrs_;
  uint16_t port_;
  std::vector<SocketId> listeners_;
  std::map<SocketId, std::unique_ptr<Session>> sessions_;
  bool closing_ = false;
};

// RFC 862 echo, RFC 863 discard, RFC 864 character generator.
std::unique_ptr<App> make_echo(std::vector<IpAddr> addrs, uint16_t port);
std::unique_ptr<App> make_discard(std::vector<IpAddr> addrs, uint16_t port);
std::unique_ptr<App> make_chargen(std::vector<IpAddr> addrs, uint16_t port);

// The RFC 864 pattern: 72 printable characters per line, each line starting
// one character later, CR LF after each; `offset` into the endless stream.
void chargen_fill(uint64_t offset, std::span<uint8_t> out);

}  // namespace weir::driver
