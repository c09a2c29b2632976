// A windowed running maximum (Kathleen Nichols' algorithm, as Linux
// lib/win_minmax.c): the best, second-best and third-best samples of the
// window, each from a later sub-window, so the max ages out in O(1).
// Time is any monotonically increasing counter (BBR uses round trips).
#pragma once

#include <array>
#include <cstdint>

namespace weir::cc {

class WindowedMax {
 public:
  uint64_t get() const { return s_[0].v; }

  uint64_t reset(uint64_t t, uint64_t v) {
    s_[0] = s_[1] = s_[2] = Sample{t, v};
    return v;
  }

  // A new measurement `v` at time `t`; `win` is the window length.
  uint64_t update(uint64_t win, uint64_t t, uint64_t v) {
    Sample x{t, v};
    // A new maximum, or everything has aged out: start over from it.
    if (v >= s_[0].v || t - s_[2].t > win) return reset(t, v);
    if (v >= s_[1].v)
      s_[2] = s_[1] = x;
    else if (v >= s_[2].v)
      s_[2] = x;
    return age(win, x);
  }

 private:
  struct Sample {
    uint64_t t = 0;
    uint64_t v = 0;
  };

  uint64_t age(uint64_t win, const Sample& x) {
    uint64_t dt = x.t - s_[0].t;
    if (dt > win) {
      // The best sample left the window: promote the others (maybe twice).
      s_[0] = s_[1];
      s_[1] = s_[2];
      s_[2] = x;
      if (x.t - s_[0].t > win) {
        s_[0] = s_[1];
        s_[1] = s_[2];
        s_[2] = x;
      }
    } else if (s_[1].t == s_[0].t && dt > win / 4) {
      // A quarter window without a second choice: take one now.
      s_[2] = s_[1] = x;
    } else if (s_[2].t == s_[1].t && dt > win / 2) {
      // Half a window without a third choice: take one now.
      s_[2] = x;
    }
    return s_[0].v;
  }

  std::array<Sample, 3> s_{};
};

}  // namespace weir::cc
