#include "sim/monitor.h"

#include <algorithm>

#include "wire/packet.h"

namespace weir::sim {

struct AckView {
  Seq32 ack;
  uint32_t window;  // raw field
  bool syn;
  const wire::TcpOptions* opts;
};

namespace {

// Flow index from the ports, or -1. Returns whether the packet travels in
// the data direction (client -> server).
int flow_of(uint16_t src, uint16_t dst, size_t n, bool* to_server) {
  auto idx = [n](uint16_t c, uint16_t s) -> int {
    if (c <= kClientPortBase || s <= kServerPortBase) return -1;
    size_t i = static_cast<size_t>(c - kClientPortBase - 1);
    if (i >= n || static_cast<size_t>(s - kServerPortBase - 1) != i) return -1;
    return static_cast<int>(i);
  };
  int i = idx(src, dst);
  if (i >= 0) {
    *to_server = true;
    return i;
  }
  *to_server = false;
  return idx(dst, src);
}

}  // namespace

void Monitor::on_tx(Time now, Packet& p) {
  auto parsed = wire::parse_tcp_packet(p.bytes, /*verify_checksum=*/false);
  if (!parsed) {
    ++unknown_;
    return;
  }
  const auto& h = parsed->tcp;
  bool to_server = false;
  int fi = flow_of(h.src_port, h.dst_port, flows_.size(), &to_server);
  if (fi < 0) {
    ++unknown_;
    return;
  }
  FlowWatch& f = flows_[static_cast<size_t>(fi)];
  p.meta.flow = fi;
  p.meta.sent = now;
  bool syn = h.has(wire::tcp_flag::SYN);
  if (to_server) {
    sender_tx(now, f, p, h.seq, static_cast<uint32_t>(parsed->payload.size()), syn);
    if (syn) {
      f.syn_seen = true;
      f.isn = h.seq;
      f.client_wscale = h.options.wscale ? *h.options.wscale : -1;
    }
  } else if (syn) {
    f.synack_seen = true;
    f.peer_isn = h.seq;
    f.server_wscale = h.options.wscale ? *h.options.wscale : -1;
  }
}

void Monitor::sender_tx(Time now, FlowWatch& f, Packet& p, Seq32 seq, uint32_t len, bool syn) {
  if (len == 0 || syn) return;
  Seq32 end = seq + len;
  p.meta.data_to_receiver = true;
  p.meta.seq = seq.raw();
  p.meta.len = len;
  ++f.data_segs;
  bool retrans = f.sent_any && seq < f.high_sent;
  p.meta.retransmission = retrans;
  if (retrans) {
    ++f.retrans_segs;
    f.retrans_bytes += len;
    // Karn: an ACK covering retransmitted bytes is ambiguous; drop those samples.
    auto it = std::lower_bound(f.rtt_pending.begin() + static_cast<long>(f.rtt_head), f.rtt_pending.end(), seq,
                               [](const FlowWatch::Pending& p, Seq32 s) { return p.end <= s; });
    for (; it != f.rtt_pending.end() && it->begin < end; ++it) it->valid = false;
  } else {
    f.rtt_pending.push_back({seq, end, now, true});
  }
  if (!f.sent_any || f.high_sent < end) f.high_sent = end;
  f.sent_any = true;
  // RFC 9293 §3.8.6.2.1: the sender must not send past the offered edge.
  if (f.edge_known && f.max_edge < end) {
    Seq32 from = seq_max(seq, f.max_edge);
    f.bytes_beyond_wnd += seq_len(from, end);
    ++f.segs_beyond_wnd;
  }
  if (room(f, f.sent.size())) {
    Seq32 base = f.isn + 1;
    f.sent.push_back({now, static_cast<uint32_t>(seq - base), static_cast<uint32_t>(end - base), retrans});
  } else {
    f.tsg_truncated = true;
  }
}

void Monitor::on_rx(Time now, const Packet& p) {
  if (p.meta.flow < 0 || p.meta.corrupted) return;  // the stack drops corrupted packets
  FlowWatch& f = flows_[static_cast<size_t>(p.meta.flow)];
  if (p.meta.data_to_receiver) {
    receiver_rx(f, p);
    return;
  }
  auto parsed = wire::parse_tcp_packet(p.bytes, /*verify_checksum=*/true);
  if (!parsed) return;
  const auto& h = parsed->tcp;
  if (h.src_port <= kServerPortBase || h.src_port > kServerPortBase + flows_.size()) return;  // data direction
  if (!h.has(wire::tcp_flag::ACK)) return;
  sender_rx_ack(now, f, AckView{h.ack, h.window, h.has(wire::tcp_flag::SYN), &h.options});
}

void Monitor::sender_rx_ack(Time now, FlowWatch& f, const AckView& a) {
  // RFC 7323 §2.3: the window in a SYN is never scaled; later windows are
  // scaled only when both ends sent the option.
  int shift = (!a.syn && f.client_wscale >= 0 && f.server_wscale >= 0) ? std::min(f.server_wscale, 14) : 0;
  uint64_t wnd = static_cast<uint64_t>(a.window) << shift;
  f.max_adv_wnd = std::max(f.max_adv_wnd, wnd);
  Seq32 edge = a.ack + static_cast<uint32_t>(wnd);
  if (!f.edge_known || f.max_edge < edge) f.max_edge = edge;
  f.edge_known = true;
  // RTT samples for new data now covered.
  while (f.rtt_head < f.rtt_pending.size() && f.rtt_pending[f.rtt_head].end <= a.ack) {
    if (!f.rtt_pending[f.rtt_head].valid) {
      ++f.rtt_head;
      continue;
    }
    Duration rtt = now - f.rtt_pending[f.rtt_head].sent;
    ++f.rtt_samples;
    f.rtt_min = std::min(f.rtt_min, rtt);
    f.rtt_max = std::max(f.rtt_max, rtt);
    f.rtt_sum_ns += static_cast<double>(rtt.ns());
    if (f.rtts.size() < cap_) f.rtts.emplace_back(now, rtt);
    ++f.rtt_head;
  }
  if (f.rtt_head > 4096 && f.rtt_head * 2 > f.rtt_pending.size()) {
    f.rtt_pending.erase(f.rtt_pending.begin(), f.rtt_pending.begin() + static_cast<long>(f.rtt_head));
    f.rtt_head = 0;
  }
  if (a.syn || !f.syn_seen) return;
  Seq32 base = f.isn + 1;
  if (f.acks.size() < cap_) f.acks.emplace_back(now, static_cast<uint32_t>(a.ack - base));
  for (uint8_t i = 0; i < a.opts->sack_count && f.sacks.size() < cap_; ++i) {
    const SeqRange& r = a.opts->sack[i];
    f.sacks.push_back({now, static_cast<uint32_t>(r.begin - base), static_cast<uint32_t>(r.end - base), false});
  }
}

// Marks the payload's bytes as arrived; a retransmission whose bytes had all
// arrived already was spurious.
void Monitor::receiver_rx(FlowWatch& f, const Packet& p) {
  uint32_t b = p.meta.seq - (f.isn.raw() + 1);
  uint32_t e = b + p.meta.len;
  bool covered = e <= f.rcv_contig;
  if (!covered) {
    auto it = f.rcv_ooo.upper_bound(b);
    if (it != f.rcv_ooo.begin()) {
      auto prev = std::prev(it);
      covered = prev->first <= b && e <= prev->second;
    }
  }
  if (covered) {
    ++f.dup_arrivals;
    if (p.meta.retransmission && !p.meta.duplicate) {
      ++f.spurious_segs;
      f.spurious_sent.push_back(p.meta.sent);
    }
    return;
  }
  if (b <= f.rcv_contig) {
    f.rcv_contig = e;
  } else {
    // Insert and merge with neighbours.
    uint32_t nb = b, ne = e;
    auto it = f.rcv_ooo.lower_bound(nb);
    if (it != f.rcv_ooo.begin()) {
      auto prev = std::prev(it);
      if (prev->second >= nb) {
        nb = prev->first;
        ne = std::max(ne, prev->second);
        it = f.rcv_ooo.erase(prev);
      }
    }
    while (it != f.rcv_ooo.end() && it->first <= ne) {
      ne = std::max(ne, it->second);
      it = f.rcv_ooo.erase(it);
    }
    f.rcv_ooo.emplace(nb, ne);
  }
  // Absorb out-of-order ranges that now touch the contiguous prefix.
  while (!f.rcv_ooo.empty() && f.rcv_ooo.begin()->first <= f.rcv_contig) {
    f.rcv_contig = std::max(f.rcv_contig, f.rcv_ooo.begin()->second);
    f.rcv_ooo.erase(f.rcv_ooo.begin());
  }
}

}  // namespace weir::sim
