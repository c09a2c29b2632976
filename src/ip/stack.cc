// weir::Stack: the public face; everything happens in StackImpl.
#include "weir/stack.h"

#include "ip/stack_impl.h"

namespace weir {

Stack::Stack(const StackConfig& cfg, Netif& netif) : impl_(std::make_unique<StackImpl>(cfg, netif)) {}
Stack::~Stack() = default;

void Stack::input(Time now, std::span<const uint8_t> d) { impl_->input(impl_->mono(now), d); }
void Stack::input_aggregate(Time now, std::span<const uint8_t> d, uint16_t gso_size) {
  impl_->input(impl_->mono(now), d, gso_size);
}
void Stack::input_checksum_valid(Time now, std::span<const uint8_t> d) {
  impl_->input(impl_->mono(now), d, 0, /*tcp_checksum_valid=*/true);
}
void Stack::advance(Time now) { impl_->advance(impl_->mono(now)); }
Time Stack::next_deadline() const { return impl_->next_deadline(); }
void Stack::add_address(const IpAddr& a) { impl_->add_address(a); }
StackConfig& Stack::config() { return impl_->mutable_cfg(); }
const Counters& Stack::counters() const { return impl_->counters_view(); }
void Stack::set_trace(TraceSink* sink) { impl_->set_trace(sink); }

Expected<SocketId, Errc> Stack::socket(bool v6) { return impl_->socket(v6); }
Errc Stack::bind(SocketId s, const Endpoint& l) { return impl_->bind(s, l); }
Errc Stack::listen(Time now, SocketId s, int backlog) { return impl_->listen(impl_->mono(now), s, backlog); }
Expected<SocketId, Errc> Stack::accept(Time now, SocketId l, Endpoint* peer) {
  return impl_->accept(impl_->mono(now), l, peer);
}
Errc Stack::connect(Time now, SocketId s, const Endpoint& r) { return impl_->connect(impl_->mono(now), s, r); }
Expected<size_t, Errc> Stack::send(Time now, SocketId s, std::span<const uint8_t> d, int flags) {
  return impl_->send(impl_->mono(now), s, d, flags);
}
Expected<size_t, Errc> Stack::sendmsg(Time now, SocketId s, std::span<const uint8_t> d,
                                      std::span<const uint32_t> iov, int flags) {
  return impl_->send(impl_->mono(now), s, d, flags, iov);
}
Expected<ErrQueueEntry, Errc> Stack::recv_error(Time now, SocketId s) {
  return impl_->recv_error(impl_->mono(now), s);
}
uint64_t Stack::error_reports(SocketId s) const { return impl_->error_reports(s); }
FastOpenSend Stack::sendto_fastopen(Time now, SocketId s, std::span<const uint8_t> d, const Endpoint* to,
                                    Duration wait, int flags) {
  return impl_->sendto_fastopen(impl_->mono(now), s, d, to, wait, flags);
}
bool Stack::fastopen_deferred(SocketId s) const { return impl_->fastopen_deferred(s); }
void Stack::flush_tcp_metrics() { impl_->flush_tcp_metrics(); }
Errc Stack::set_route(const Route& r) { return impl_->set_route(r); }
Expected<size_t, Errc> Stack::recv(Time now, SocketId s, std::span<uint8_t> out, int flags) {
  return impl_->recv(impl_->mono(now), s, out, flags);
}
Expected<size_t, Errc> Stack::splice_read(Time now, SocketId s, std::span<uint8_t> out, bool nonblock) {
  return impl_->splice_read(impl_->mono(now), s, out, nonblock);
}
Errc Stack::shutdown(Time now, SocketId s, int how) { return impl_->shutdown(impl_->mono(now), s, how); }
Errc Stack::close(Time now, SocketId s) { return impl_->close(impl_->mono(now), s); }
Errc Stack::setsockopt(Time now, SocketId s, int level, int name, std::span<const uint8_t> v) {
  return impl_->setsockopt(impl_->mono(now), s, level, name, v);
}
Errc Stack::getsockopt(SocketId s, int level, int name, std::span<uint8_t> v, size_t* len) const {
  return impl_->getsockopt(s, level, name, v, len);
}
Errc Stack::ioctl(SocketId s, unsigned long req, int* out) const { return impl_->ioctl(s, req, out); }
uint32_t Stack::poll(SocketId s) const { return impl_->poll(s); }
Duration Stack::rcvtimeo(SocketId s) const { return impl_->sock_timeout(s, false); }
Duration Stack::sndtimeo(SocketId s) const { return impl_->sock_timeout(s, true); }
Expected<Endpoint, Errc> Stack::local_endpoint(SocketId s) const { return impl_->local_endpoint(s); }
Expected<Endpoint, Errc> Stack::remote_endpoint(SocketId s) const { return impl_->remote_endpoint(s); }
Expected<TcpInfo, Errc> Stack::tcp_info(SocketId s) const { return impl_->tcp_info(s, impl_->last_now()); }
std::string Stack::proc_net_tcp(bool v6) const { return impl_->proc_net_tcp(v6); }
std::vector<TimewaitSock> Stack::timewait_socks() const { return impl_->timewait_socks(); }
void Stack::set_ready_callback(ReadyFn fn, void* ctx) { impl_->set_ready(fn, ctx); }

}  // namespace weir
