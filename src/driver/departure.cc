#include "driver/departure.h"

#include <fmt/format.h>

namespace weir::driver {

std::string_view late_cause_name(LateCause c) {
  switch (c) {
    case LateCause::kWrite: return "tun-write";
    case LateCause::kRead: return "batch-read";
    case LateCause::kWakeSleep: return "wake-up";
    case LateCause::kWakeSpin: return "spin-preempted";
    case LateCause::kOther: return "other";
  }
  return "?";
}

LateCause classify_late(Time due, const DepartureContext& ctx) {
  if (due >= ctx.wait_start && due < ctx.wait_end)
    return ctx.slept ? LateCause::kWakeSleep : LateCause::kWakeSpin;
  // Due while the thread was working: a write returning after `due` held it.
  if (ctx.prev_write_end > due) return LateCause::kWrite;
  return ctx.phase == DepartureContext::Phase::kRead ? LateCause::kRead : LateCause::kOther;
}

void DepartureRecord::add(Time due, Time start, Time end, const DepartureContext& ctx) {
  Duration err = start - due;
  all_.add(err);
  write_.add(end - start);
  if (err > limit_) late_[static_cast<size_t>(classify_late(due, ctx))].add(err);
  if (!prev_start_.is_never() && start - prev_start_ > gap_) {
    if (due - prev_due_ > gap_) ++gaps_modelled_;
    else ++gaps_added_;
  }
  prev_due_ = due;
  prev_start_ = start;
}

void DepartureRecord::merge(const DepartureRecord& o) {
  all_.merge(o.all_);
  write_.merge(o.write_);
  for (size_t i = 0; i < kLateCauses; ++i) late_[i].merge(o.late_[i]);
  gaps_added_ += o.gaps_added_;
  gaps_modelled_ += o.gaps_modelled_;
}

std::string DepartureRecord::format_causes() const {
  std::string out = fmt::format("late > {}us by cause (of {} departures):\n", limit_.us(), all_.count());
  for (size_t i = 0; i < kLateCauses; ++i) {
    const ErrorHistogram& h = late_[i];
    double pct = all_.count() ? 100.0 * static_cast<double>(h.count()) / static_cast<double>(all_.count()) : 0.0;
    out += fmt::format("  {:<15} {:>8} {:>7.3f}%  p50 <= {}us  max {:.0f}us\n",
                       late_cause_name(static_cast<LateCause>(i)), h.count(), pct,
                       h.count() ? h.percentile_bound(0.5).us() : 0, static_cast<double>(h.max().ns()) / 1e3);
  }
  out += fmt::format("TUN write time: p50 <= {}us  p99 <= {}us  mean {:.1f}us  max {:.0f}us\n",
                     write_.percentile_bound(0.5).us(), write_.percentile_bound(0.99).us(),
                     static_cast<double>(write_.mean().ns()) / 1e3, static_cast<double>(write_.max().ns()) / 1e3);
  out += fmt::format("gaps between departures > {}us: {} made by the emulator, {} in the model\n", gap_.us(),
                     gaps_added_, gaps_modelled_);
  return out;
}

}  // namespace weir::driver
