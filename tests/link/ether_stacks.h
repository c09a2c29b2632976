// Two weir stacks over Ethernet: TwoHosts' links (ether_harness.h) with a
// Stack on each, driven in virtual time.
#pragma once

#include <vector>

#include "link/ether_harness.h"
#include "weir/stack.h"

namespace weir::link::test {

// Two stacks on the links of TwoHosts, driven in virtual time.
struct EtherStacks {
  TwoHosts h;
  Stack sa{StackConfig{}, h.a}, sb{StackConfig{}, h.b};
  Time now = at_ms(1000);
  EtherStacks() {
    sa.add_address(ip4(10, 0, 0, 1));
    sb.add_address(ip4(10, 0, 0, 2));
    sa.add_address(ip6("2001:db8::1"));
    sb.add_address(ip6("2001:db8::2"));
    advance_links();  // the links transmit at the time of their last advance
  }
  // Frames across, the datagrams in them up, until nothing moves.
  void settle() {
    for (;;) {
      h.exchange(now);
      if (h.up_a.empty() && h.up_b.empty()) return;
      auto ua = std::move(h.up_a);
      auto ub = std::move(h.up_b);
      h.up_a.clear();
      h.up_b.clear();
      for (auto& p : ua) sa.input(now, p);
      for (auto& p : ub) sb.input(now, p);
    }
  }
  // The links' timers, and the errors they made for their own stacks.
  void advance_links() {
    h.a.advance(now);
    h.b.advance(now);
    for (const auto& d : h.a.take_local()) sa.input(now, d);
    for (const auto& d : h.b.take_local()) sb.input(now, d);
  }
  // Runs every stack and link timer due up to `t`, then moves to `t`.
  void run_to(Time t) {
    for (;;) {
      const Time next = min(min(sa.next_deadline(), sb.next_deadline()),
                            min(h.a.next_deadline(), h.b.next_deadline()));
      const Time at = next > t ? t : max(next, now);
      now = at;
      advance_links();
      sa.advance(now);
      sb.advance(now);
      settle();
      if (at == t) return;
    }
  }
};

}  // namespace weir::link::test
