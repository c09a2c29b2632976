#include "sim/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace weir::sim {

ProgressBar::ProgressBar() : tty_(isatty(STDERR_FILENO) == 1) {}

void ProgressBar::update(const Progress& p) {
  if (!tty_ || p.wall_s < 1.0) return;
  double frac = p.end > Time::zero() ? p.now.secs() / p.end.secs() : 0;
  frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
  constexpr int kWidth = 30;
  int fill = static_cast<int>(frac * kWidth);
  std::string bar(static_cast<size_t>(fill), '#');
  bar.resize(kWidth, ' ');
  std::string line = fmt::format("\r{} [{}] virtual {:.2f}/{:.2f} s  wall {:.1f} s  {:.2f} M events/s ", label_, bar,
                                 p.now.secs(), p.end.secs(), p.wall_s,
                                 static_cast<double>(p.events) / p.wall_s / 1e6);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::clear() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace weir::sim
