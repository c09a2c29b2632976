// A progress bar for long runs on a terminal: virtual time, wall time and
// events per second. Silent when stderr is not a TTY and for runs that finish
// within a second of wall time.
#pragma once

#include <string>

#include "sim/runner.h"

namespace weir::sim {

class ProgressBar {
 public:
  ProgressBar();
  void set_label(std::string label) { label_ = std::move(label); }
  void update(const Progress& p);
  void clear();
  bool enabled() const { return tty_; }

 private:
  bool tty_;
  bool drawn_ = false;
  std::string label_;
};

}  // namespace weir::sim
