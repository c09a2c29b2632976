#include "tcp/harness_helper.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace weir::test {

using namespace wire::tcp_flag;

Harness::Harness(StackConfig cfg, uint32_t mtu) {
  nif_.mtu_ = mtu;
  stack_ = std::make_unique<Stack>(cfg, nif_);
  stack_->add_address(local);
}

void Harness::advance_to(Time t) {
  while (stack_->next_deadline() <= t) {
    now_ = max(now_, stack_->next_deadline());
    stack_->advance(now_);
  }
  now_ = max(now_, t);
}

Time Harness::run_next_timer() {
  const Time d = stack_->next_deadline();
  if (d.is_never()) return d;
  now_ = max(now_, d);
  stack_->advance(now_);
  return d;
}

void Harness::inject_raw(const wire::TcpHeader& h, std::span<const uint8_t> payload) {
  wire::IpInfo ip;
  ip.src = remote;
  ip.dst = local;
  ip.version = remote.is_v4() ? 4 : 6;
  ip.flow_label = peer_flow_label;
  ip.ttl = peer_ttl;
  wire::TcpHeader signed_h = h;
  if (!peer_md5_key.empty() && h.md5_key.empty()) {
    signed_h.options.md5 = std::array<uint8_t, 16>{};
    signed_h.md5_key = peer_md5_key;
  }
  auto bytes = wire::build_tcp_packet(ip, signed_h, payload);
  stack_->input(now_, bytes);
}

void Harness::inject_payload(uint8_t flags, uint32_t seq, uint32_t ack,
                             std::span<const uint8_t> payload, uint16_t win) {
  wire::TcpHeader h;
  h.src_port = remote_port;
  h.dst_port = local_port;
  h.seq = peer_isn_ + seq;
  h.ack = (flags & ACK) ? iss_ + ack : Seq32(0);
  h.flags = flags;
  h.window = win;
  if (peer_ts) h.options.ts = wire::TcpTimestamps{peer_tsval + static_cast<uint32_t>(now_.ms()), last_tsval};
  inject_raw(h, payload);
}

void Harness::inject(uint8_t flags, uint32_t seq, uint32_t ack, uint32_t payload_len, uint16_t win) {
  std::vector<uint8_t> p(payload_len);
  for (uint32_t i = 0; i < payload_len; ++i) p[i] = static_cast<uint8_t>(seq + i);
  inject_payload(flags, seq, ack, p, win);
}

Tx Harness::expect_tx() {
  Tx t;
  if (nif_.out.empty()) {
    ADD_FAILURE() << "expected a segment, none was sent";
    return t;
  }
  std::vector<uint8_t> bytes = std::move(nif_.out.front());
  nif_.out.pop_front();
  auto p = wire::parse_tcp_packet(bytes);
  if (!p) {
    ADD_FAILURE() << "stack sent an unparsable packet: " << wire::to_string(p.error());
    return t;
  }
  t.ip = p->ip;
  t.h = p->tcp;
  t.payload.assign(p->payload.begin(), p->payload.end());
  if (t.h.options.ts) last_tsval = t.h.options.ts->val;
  return t;
}

void Harness::build_syn_options(wire::TcpOptions& opts, const PeerOpts& o) {
  opts.mss = o.mss;
  opts.wscale = o.wscale;
  opts.sack_permitted = o.sack;
  peer_ts = o.ts;
  if (o.ts) opts.ts = wire::TcpTimestamps{peer_tsval + static_cast<uint32_t>(now_.ms()), last_tsval};
}

wire::TcpHeader Harness::peer_syn(uint16_t port, Seq32 isn, const PeerOpts& o) {
  wire::TcpHeader h;
  h.src_port = port;
  h.dst_port = 8080;
  h.seq = isn;
  h.flags = SYN;
  h.window = 65535;
  build_syn_options(h.options, o);
  return h;
}

SocketId Harness::passive_open(const PeerOpts& o, uint16_t syn_win) {
  if (listener == kNoSocket) {
    listener = *stack_->socket();
    EXPECT_EQ(stack_->bind(listener, Endpoint{local, local_port}), Errc::kOk);
    EXPECT_EQ(stack_->listen(now_, listener, 128), Errc::kOk);
  }
  wire::TcpHeader h;
  h.src_port = remote_port;
  h.dst_port = local_port;
  h.seq = peer_isn_;
  h.flags = SYN;
  h.window = syn_win;
  last_tsval = 0;
  build_syn_options(h.options, o);
  inject_raw(h);
  Tx synack = expect_tx();
  EXPECT_TRUE(synack.has(SYN) && synack.has(ACK)) << describe(synack);
  iss_ = synack.h.seq;
  inject(ACK, 1, 1, 0, syn_win);
  auto s = stack_->accept(now_, listener, nullptr);
  EXPECT_TRUE(s.has_value());
  return s ? *s : kNoSocket;
}

SocketId Harness::active_open(const PeerOpts& o, uint16_t synack_win) {
  SocketId s = *stack_->socket();
  EXPECT_EQ(stack_->connect(now_, s, Endpoint{remote, remote_port}), Errc::kInProgress);
  Tx syn = expect_tx();
  EXPECT_TRUE(syn.has(SYN) && !syn.has(ACK)) << describe(syn);
  answer_syn(syn, o, synack_win);
  Tx ack = expect_tx();
  EXPECT_TRUE(ack.has(ACK) && !ack.has(SYN)) << describe(ack);
  return s;
}

void Harness::answer_syn(const Tx& syn, const PeerOpts& o, uint16_t win) {
  iss_ = syn.h.seq;
  local_port = syn.h.src_port;
  wire::TcpHeader h;
  h.src_port = remote_port;
  h.dst_port = local_port;
  h.seq = peer_isn_;
  h.ack = iss_ + 1;
  h.flags = SYN | ACK;
  h.window = win;
  build_syn_options(h.options, o);
  inject_raw(h);
}

std::string describe(const Tx& t) {
  return fmt::format("{} seq {} ack {} win {} len {} <{}>", wire::format_flags(t.h.flags), t.h.seq.raw(),
                     t.h.ack.raw(), t.h.window, t.payload.size(), wire::format_options(t.h.options));
}

}  // namespace weir::test
