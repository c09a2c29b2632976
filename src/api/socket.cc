#include "weir/socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstring>
#include <utility>

namespace weir {

namespace {
std::span<const uint8_t> int_bytes(const int& v) {
  return std::span(reinterpret_cast<const uint8_t*>(&v), sizeof v);
}
}  // namespace

TcpSocket& TcpSocket::operator=(TcpSocket&& o) noexcept {
  if (this != &o) {
    if (valid()) close(last_);
    stack_ = std::exchange(o.stack_, nullptr);
    id_ = std::exchange(o.id_, kNoSocket);
    last_ = o.last_;
  }
  return *this;
}

TcpSocket::~TcpSocket() {
  if (valid()) close(last_);
}

Expected<TcpSocket, Errc> TcpSocket::connect(Stack& stack, Time now, const Endpoint& remote,
                                             const Endpoint* local, bool ipv6) {
  auto id = stack.socket(ipv6);
  if (!id) return Unexpected(id.error());
  TcpSocket s(stack, *id, now);
  if (local) {
    Errc e = stack.bind(*id, *local);
    if (e != Errc::kOk) return Unexpected(e);
  }
  Errc e = stack.connect(now, *id, remote);
  if (e != Errc::kOk && e != Errc::kInProgress) return Unexpected(e);
  return s;
}

Expected<size_t, Errc> TcpSocket::send(Time now, std::span<const uint8_t> data, int flags) {
  if (!valid()) return Unexpected(Errc::kBadf);
  last_ = now;
  return stack_->send(now, id_, data, flags);
}

Expected<size_t, Errc> TcpSocket::recv(Time now, std::span<uint8_t> out, int flags) {
  if (!valid()) return Unexpected(Errc::kBadf);
  last_ = now;
  return stack_->recv(now, id_, out, flags);
}

Errc TcpSocket::shutdown(Time now, int how) {
  if (!valid()) return Errc::kBadf;
  last_ = now;
  return stack_->shutdown(now, id_, how);
}

Errc TcpSocket::close(Time now) {
  if (!valid()) return Errc::kBadf;
  Errc e = stack_->close(now, id_);
  id_ = kNoSocket;
  stack_ = nullptr;
  return e;
}

SocketId TcpSocket::release() {
  stack_ = nullptr;
  return std::exchange(id_, kNoSocket);
}

uint32_t TcpSocket::poll() const { return valid() ? stack_->poll(id_) : (ev::ERR | ev::HUP); }

bool TcpSocket::connected() const {
  if (!valid()) return false;
  auto i = stack_->tcp_info(id_);
  return i && (i->tcpi_state == 1 || i->tcpi_state == 8);  // ESTABLISHED, CLOSE-WAIT
}

Errc TcpSocket::error() const {
  auto v = option(SOL_SOCKET, SO_ERROR);
  return v ? static_cast<Errc>(*v) : v.error();
}

Errc TcpSocket::set_option(Time now, int level, int name, int value) {
  if (!valid()) return Errc::kBadf;
  last_ = now;
  return stack_->setsockopt(now, id_, level, name, int_bytes(value));
}

Expected<int, Errc> TcpSocket::option(int level, int name) const {
  if (!valid()) return Unexpected(Errc::kBadf);
  int v = 0;
  size_t len = sizeof v;
  Errc e = stack_->getsockopt(id_, level, name, std::span(reinterpret_cast<uint8_t*>(&v), sizeof v), &len);
  if (e != Errc::kOk) return Unexpected(e);
  return v;
}

Errc TcpSocket::set_nodelay(Time now, bool on) { return set_option(now, IPPROTO_TCP, TCP_NODELAY, on); }

Expected<TcpInfo, Errc> TcpSocket::info() const {
  if (!valid()) return Unexpected(Errc::kBadf);
  return stack_->tcp_info(id_);
}

Expected<Endpoint, Errc> TcpSocket::local() const {
  if (!valid()) return Unexpected(Errc::kBadf);
  return stack_->local_endpoint(id_);
}

Expected<Endpoint, Errc> TcpSocket::peer() const {
  if (!valid()) return Unexpected(Errc::kBadf);
  return stack_->remote_endpoint(id_);
}

TcpListener& TcpListener::operator=(TcpListener&& o) noexcept {
  if (this != &o) {
    if (stack_) close(last_);
    stack_ = std::exchange(o.stack_, nullptr);
    id_ = std::exchange(o.id_, kNoSocket);
    last_ = o.last_;
  }
  return *this;
}

TcpListener::~TcpListener() {
  if (stack_) close(last_);
}

Expected<TcpListener, Errc> TcpListener::listen(Stack& stack, Time now, const Endpoint& local,
                                                int backlog, bool reuseaddr) {
  auto id = stack.socket(!local.addr.is_v4());
  if (!id) return Unexpected(id.error());
  TcpListener l;
  l.stack_ = &stack;
  l.id_ = *id;
  l.last_ = now;
  if (reuseaddr) {
    int one = 1;
    stack.setsockopt(now, *id, SOL_SOCKET, SO_REUSEADDR, int_bytes(one));
  }
  Errc e = stack.bind(*id, local);
  if (e == Errc::kOk) e = stack.listen(now, *id, backlog);
  if (e != Errc::kOk) return Unexpected(e);
  return l;
}

Expected<TcpSocket, Errc> TcpListener::accept(Time now, Endpoint* peer) {
  if (!stack_) return Unexpected(Errc::kBadf);
  last_ = now;
  auto c = stack_->accept(now, id_, peer);
  if (!c) return Unexpected(c.error());
  return TcpSocket(*stack_, *c, now);
}

Errc TcpListener::close(Time now) {
  if (!stack_) return Errc::kBadf;
  Errc e = stack_->close(now, id_);
  stack_ = nullptr;
  id_ = kNoSocket;
  return e;
}

Expected<Endpoint, Errc> TcpListener::local() const {
  if (!stack_) return Unexpected(Errc::kBadf);
  return stack_->local_endpoint(id_);
}

}  // namespace weir
