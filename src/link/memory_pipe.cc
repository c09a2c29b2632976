#include "link/memory_pipe.h"

namespace weir::link {

MemoryPipe::MemoryPipe(Config cfg) : cfg_(cfg) {}

void MemoryPipe::set_now(Time now) { now_ = max(now_, now); }

XmitResult MemoryPipe::enqueue(Side from, std::span<const uint8_t> packet) {
  PipeStats& st = stats_[idx(from)];
  if (refuse_[idx(from)]) {
    ++st.dropped_refused;
    return XmitResult::kDropped;
  }
  if (packet.size() > cfg_.mtu) {
    ++st.dropped_oversize;
    return XmitResult::kSent;
  }
  if (filter_ && !filter_(from, packet)) {
    ++st.dropped_filter;
    return XmitResult::kSent;
  }
  auto& q = q_[idx(from)];
  if (q.size() >= cfg_.queue_limit) {
    // The FIFO holds packets in flight over the delay, i.e. the path, not
    // the sender's qdisc: a tail drop here is loss the sender cannot see.
    ++st.dropped_full;
    return XmitResult::kSent;
  }
  ++st.sent;
  std::vector<uint8_t> bytes;
  if (!pool_.empty()) {
    bytes = std::move(pool_.back());
    pool_.pop_back();
  }
  bytes.assign(packet.begin(), packet.end());
  // A fixed delay keeps each direction FIFO: due times never decrease.
  q.push_back(Packet{now_ + cfg_.delay, next_order_++, std::move(bytes)});
  return XmitResult::kSent;
}

void MemoryPipe::Fifo::push_back(Packet&& p) {
  if (n_ == slots_.size()) {
    std::vector<Packet> bigger(slots_.empty() ? 64 : slots_.size() * 2);
    for (size_t i = 0; i < n_; ++i) bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    slots_.swap(bigger);
    head_ = 0;
  }
  slots_[(head_ + n_) & (slots_.size() - 1)] = std::move(p);
  ++n_;
}

std::optional<Side> MemoryPipe::due_side(Time now) const {
  std::optional<Side> best;
  for (Side s : {Side::A, Side::B}) {
    const auto& q = q_[idx(s)];
    if (q.empty() || q.front().due > now) continue;
    if (!best) {
      best = s;
      continue;
    }
    const Packet& b = q_[idx(*best)].front();
    const Packet& c = q.front();
    if (c.due < b.due || (c.due == b.due && c.order < b.order)) best = s;
  }
  return best;
}

Time MemoryPipe::next_delivery() const {
  Time t = Time::never();
  for (const auto& q : q_)
    if (!q.empty()) t = min(t, q.front().due);
  return t;
}

}  // namespace weir::link
