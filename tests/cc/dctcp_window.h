// DCTCP test helpers shared by dctcp_test.cc and plb_test.cc: an ECN
// connection's CcState and one observation window's worth of ACKs.
#pragma once

#include "tcp/cc/dctcp.h"

namespace weir::cc::test {

// An ECN connection established with snd_nxt at 1000.
inline CcState ecn_state() {
  CcState tp;
  tp.ecn_ok = true;
  tp.snd_nxt = Seq32(1000);
  tp.snd_una = Seq32(1000);
  return tp;
}

// One observation window: `pkts` delivered, `ce` of them ECE-acknowledged,
// the last ACK taking SND.UNA to the window's end while the next window's
// data (10 packets) is already out, so the next window ends at the new SND.NXT.
inline void window(Dctcp& d, CcState& tp, uint32_t pkts, uint32_t ce, Time now = Time::zero()) {
  tp.rate.count_delivered(pkts - ce, false);
  tp.rate.count_delivered(ce, true);
  tp.snd_una = tp.snd_nxt;
  tp.snd_nxt = tp.snd_nxt + 10 * 1000;
  tp.packets_out = 10;
  d.in_ack_event(tp, now);
}

}  // namespace weir::cc::test
