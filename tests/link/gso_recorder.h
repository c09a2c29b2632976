// A GsoCoalescer::Output for tests: lends a buffer for each run and keeps
// every packet handed over (runs and passed packets alike) with its vnet
// header, in order; `room` false plays a device with no room for a run.
#pragma once

#include <vector>

#include "link/vnet.h"

namespace weir::link::test {

struct Written {
  VnetHdr h;
  std::vector<uint8_t> pkt;  // link header (if any) and IP datagram
};

struct GsoRecorder final : GsoCoalescer::Output {
  std::vector<Written> out;
  bool room = true;
  std::vector<uint8_t> buf;
  uint8_t* open(size_t max) override {
    if (!room) return nullptr;
    buf.assign(max, 0);
    return buf.data();
  }
  void close(const VnetHdr& h, size_t len) override { out.push_back({h, {buf.begin(), buf.begin() + len}}); }
  XmitResult pass(std::span<const uint8_t> l2, std::span<const uint8_t> pkt) override {
    Written w;
    w.pkt.assign(l2.begin(), l2.end());
    w.pkt.insert(w.pkt.end(), pkt.begin(), pkt.end());
    out.push_back(std::move(w));
    return XmitResult::kSent;
  }
};

}  // namespace weir::link::test
