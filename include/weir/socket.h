// C++ handles over a Stack: TcpListener and TcpSocket. Non-blocking, typed
// errors per operation (weir::Errc, Linux errno values), readiness by poll()
// or by the Stack's ready callback. A handle closes its socket when
// destroyed (at the time of its last call) unless closed or released first.
#pragma once

#include <cstdint>
#include <span>

#include "weir/stack.h"

namespace weir {

class TcpSocket {
 public:
  TcpSocket() = default;
  TcpSocket(Stack& stack, SocketId id, Time now) : stack_(&stack), id_(id), last_(now) {}
  TcpSocket(TcpSocket&& o) noexcept { *this = std::move(o); }
  TcpSocket& operator=(TcpSocket&& o) noexcept;
  TcpSocket(const TcpSocket&) = delete;
  TcpSocket& operator=(const TcpSocket&) = delete;
  ~TcpSocket();

  // A new socket connecting to `remote` (Errc::kInProgress is success here:
  // the handshake runs as the driver feeds the Stack). `local` binds first.
  static Expected<TcpSocket, Errc> connect(Stack& stack, Time now, const Endpoint& remote,
                                           const Endpoint* local = nullptr, bool ipv6 = false);

  Expected<size_t, Errc> send(Time now, std::span<const uint8_t> data, int flags = 0);
  Expected<size_t, Errc> recv(Time now, std::span<uint8_t> out, int flags = 0);
  Errc shutdown(Time now, int how);
  Errc close(Time now);
  // Gives up ownership without closing.
  SocketId release();

  // ev:: bits; connected() once the handshake completed.
  uint32_t poll() const;
  bool readable() const { return (poll() & ev::IN) != 0; }
  bool writable() const { return (poll() & ev::OUT) != 0; }
  bool connected() const;
  Errc error() const;  // SO_ERROR (reads and clears)

  Errc set_option(Time now, int level, int name, int value);
  Expected<int, Errc> option(int level, int name) const;
  Errc set_nodelay(Time now, bool on);
  Expected<TcpInfo, Errc> info() const;
  Expected<Endpoint, Errc> local() const;
  Expected<Endpoint, Errc> peer() const;

  SocketId id() const { return id_; }
  bool valid() const { return stack_ != nullptr && id_ != kNoSocket; }

 private:
  Stack* stack_ = nullptr;
  SocketId id_ = kNoSocket;
  Time last_;
};

class TcpListener {
 public:
  TcpListener() = default;
  TcpListener(TcpListener&& o) noexcept { *this = std::move(o); }
  TcpListener& operator=(TcpListener&& o) noexcept;
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;
  ~TcpListener();

  // socket + SO_REUSEADDR (if asked) + bind + listen.
  static Expected<TcpListener, Errc> listen(Stack& stack, Time now, const Endpoint& local,
                                            int backlog = 128, bool reuseaddr = false);
  // The next completed connection, or Errc::kAgain.
  Expected<TcpSocket, Errc> accept(Time now, Endpoint* peer = nullptr);
  Errc close(Time now);
  bool pending() const { return stack_ && (stack_->poll(id_) & ev::IN) != 0; }
  Expected<Endpoint, Errc> local() const;
  SocketId id() const { return id_; }

 private:
  Stack* stack_ = nullptr;
  SocketId id_ = kNoSocket;
  Time last_;
};

}  // namespace weir
