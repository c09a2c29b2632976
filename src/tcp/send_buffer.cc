#include "tcp/send_buffer.h"

#include <algorithm>
#include <cstring>

namespace weir::tcp {

void SendBuffer::grow(size_t need) {
  size_t cap = ring_.empty() ? 4096 : ring_.size();
  while (cap < need) cap *= 2;
  if (cap == ring_.size()) return;
  std::vector<uint8_t> bigger(cap);
  copy_out(0, std::span<uint8_t>(bigger.data(), size_));
  ring_.swap(bigger);
  head_ = 0;
}

size_t SendBuffer::append(std::span<const uint8_t> data, size_t limit) {
  const size_t room = limit > size_ ? limit - size_ : 0;
  const size_t n = std::min(room, data.size());
  if (n == 0) return 0;
  if (size_ + n > ring_.size()) grow(size_ + n);
  const size_t mask = ring_.size() - 1;
  size_t tail = (head_ + size_) & mask;
  const size_t first = std::min(n, ring_.size() - tail);
  std::memcpy(ring_.data() + tail, data.data(), first);
  std::memcpy(ring_.data(), data.data() + first, n - first);
  size_ += n;
  return n;
}

void SendBuffer::copy_out(size_t offset, std::span<uint8_t> out) const {
  if (out.empty()) return;
  const size_t mask = ring_.size() - 1;
  const size_t start = (head_ + offset) & mask;
  const size_t first = std::min(out.size(), ring_.size() - start);
  std::memcpy(out.data(), ring_.data() + start, first);
  std::memcpy(out.data() + first, ring_.data(), out.size() - first);
}

void SendBuffer::consume(size_t n) {
  n = std::min(n, size_);
  size_ -= n;
  head_ = size_ == 0 ? 0 : (head_ + n) & (ring_.size() - 1);
}

void SendBuffer::clear() {
  size_ = 0;
  head_ = 0;
}

}  // namespace weir::tcp

namespace weir::tcp {

void SkbLedger::EndRing::grow() {
  std::vector<Seq32> bigger(ring_.empty() ? 64 : ring_.size() * 2);
  for (size_t i = 0; i < count_; ++i) bigger[i] = (*this)[i];
  ring_.swap(bigger);
  mask_ = ring_.size() - 1;
  head_ = 0;
}

void SkbLedger::EndRing::erase_second() {
  const Seq32 first = front();
  pop_front();
  ring_[head_] = first;
}

// One pass per burst sent: the skbs SND.UNA covers whole set aside, then
// the new end appended, without a second call (this runs per burst).
void SkbLedger::on_sent(Seq32 end, Seq32 una) {
  while (!ends_.empty() && ends_.front() <= una) {
    stale_back_ = ends_.front();
    ends_.pop_front();
    ++stale_;
  }
  // A retransmission (ending at or below the newest skb): Linux reuses the skb.
  if (!ends_.empty() ? end <= ends_.back() : (stale_ > 0 && end <= stale_back_)) return;
  ends_.push_back(end);
  if (sent_skbs() > kMaxSkbs) merge_oldest();
}

void SkbLedger::on_sent(Seq32 end) {
  const bool any = stale_ > 0 || !ends_.empty();
  const Seq32 back = ends_.empty() ? stale_back_ : ends_.back();
  if (any && end <= back) return;  // a retransmission: Linux reuses the skb
  ends_.push_back(end);
  if (sent_skbs() > kMaxSkbs) merge_oldest();
}

// Bounded: the two oldest are counted as one (the second is dropped).
void SkbLedger::merge_oldest() {
  if (stale_ >= 2) {
    --stale_;
  } else if (stale_ == 1) {
    ends_.pop_front();
  } else {
    ends_.erase_second();
  }
}

void SkbLedger::on_acked(Seq32 una) {
  stale_ = 0;  // all at or below the SND.UNA on_sent saw, hence below `una`
  while (!ends_.empty() && ends_.front() <= una) ends_.pop_front();
}

size_t SkbLedger::live(Seq32 una) const {
  size_t stale = 0;
  while (stale < ends_.size() && ends_[stale] <= una) ++stale;
  return ends_.size() - stale;
}

void ChronoStats::set(Time now, Chrono type) {
  if (type_ != Chrono::kUnspec) stat_[static_cast<size_t>(type_) - 1] += now - since_;
  since_ = now;
  type_ = type;
}

void ChronoStats::start(Time now, Chrono type) {
  if (type > type_) set(now, type);
}

void ChronoStats::stop(Time now, Chrono type, bool queues_empty) {
  if (queues_empty) {
    set(now, Chrono::kUnspec);
  } else if (type == type_) {
    set(now, Chrono::kBusy);
  }
}

Duration ChronoStats::total(Time now, Chrono type) const {
  if (type == Chrono::kUnspec) return Duration::zero();
  Duration d = stat_[static_cast<size_t>(type) - 1];
  if (type == type_) d += now - since_;
  return d;
}

}  // namespace weir::tcp
