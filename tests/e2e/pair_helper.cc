#include "e2e/pair_helper.h"

namespace weir::test {

Pair::Pair(const PairOptions& o)
    : o_(o), pipe_(link::MemoryPipe::Config{o.delay, o.mtu, o.queue_limit}), rng_(o.seed) {
  a_ = std::make_unique<Stack>(o.a_cfg, pipe_.a());
  b_ = std::make_unique<Stack>(o.b_cfg, pipe_.b());
  a_->add_address(IpAddr::v4(10, 0, 0, 1));
  b_->add_address(IpAddr::v4(10, 0, 0, 2));
  std::uniform_real_distribution<double> u(0, 1);
  pipe_.set_filter([this](link::Side, std::span<const uint8_t>) {
    if (o_.loss > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < o_.loss) {
      ++dropped;
      return false;
    }
    return true;
  });
}

void Pair::release_shaped() {
  while (!shaped_.empty() && shaped_.front().first <= now_) {
    std::vector<uint8_t> bytes = std::move(shaped_.front().second);
    shaped_.pop_front();
    b_->input(now_, bytes);
  }
}

void Pair::deliver(link::Side to, std::span<const uint8_t> bytes) {
  if (to == link::Side::B && o_.rate_bps_to_b > 0) {
    // Serialization at the bottleneck: each packet leaves after the previous.
    const auto ns = static_cast<int64_t>(bytes.size() * 8 * uint64_t{1000000000} / o_.rate_bps_to_b);
    link_free_ = max(link_free_, now_) + Duration::ns(ns);
    shaped_.emplace_back(link_free_, std::vector<uint8_t>(bytes.begin(), bytes.end()));
    return;
  }
  Stack& s = to == link::Side::A ? *a_ : *b_;
  const size_t i = static_cast<size_t>(to);
  std::uniform_real_distribution<double> u(0, 1);
  if (o_.reorder > 0 && !holding_[i] && u(rng_) < o_.reorder) {
    held_[i].assign(bytes.begin(), bytes.end());
    holding_[i] = true;
    ++reordered;
    return;
  }
  s.input(now_, bytes);
  if (o_.duplicate > 0 && u(rng_) < o_.duplicate) {
    ++duplicated;
    s.input(now_, bytes);
  }
  if (holding_[i]) {
    holding_[i] = false;
    std::vector<uint8_t> h;
    h.swap(held_[i]);
    s.input(now_, h);
  }
}

void Pair::run_until(Time until) {
  run_while([] { return true; }, until);
}

bool Pair::run_while(const std::function<bool()>& busy, Time limit) {
  for (;;) {
    if (!busy()) return true;
    pipe_.set_now(now_);
    if (a_->next_deadline() <= now_) a_->advance(now_);
    if (b_->next_deadline() <= now_) b_->advance(now_);
    pipe_.deliver_due(now_, [&](link::Side to, std::span<const uint8_t> bytes) { deliver(to, bytes); });
    release_shaped();
    if (!busy()) return true;
    Time next = min(pipe_.next_delivery(), min(a_->next_deadline(), b_->next_deadline()));
    if (!shaped_.empty()) next = min(next, shaped_.front().first);
    // A held (reordered) packet is released after at most 1 ms.
    if (holding_[0] || holding_[1]) next = min(next, now_ + Duration::ms(1));
    if (next.is_never() || next > limit) {
      now_ = limit;
      return !busy();
    }
    if (holding_[0] || holding_[1]) {
      if (next == now_ + Duration::ms(1) && pipe_.next_delivery() > next) {
        for (size_t i = 0; i < 2; ++i) {
          if (!holding_[i]) continue;
          holding_[i] = false;
          std::vector<uint8_t> h;
          h.swap(held_[i]);
          (i == 0 ? *a_ : *b_).input(next, h);
        }
      }
    }
    now_ = max(next, now_);
  }
}

std::pair<SocketId, SocketId> Pair::connect(uint16_t port) {
  SocketId l = *b_->socket();
  b_->bind(l, Endpoint{IpAddr::v4(10, 0, 0, 2), port});
  b_->listen(now_, l, 16);
  SocketId c = *a_->socket();
  a_->connect(now_, c, Endpoint{IpAddr::v4(10, 0, 0, 2), port});
  SocketId server = kNoSocket;
  run_while([&] {
    auto r = b_->accept(now_, l, nullptr);
    if (r) server = *r;
    return server == kNoSocket;
  }, now_ + Duration::s(30));
  b_->close(now_, l);
  return {c, server};
}

}  // namespace weir::test
