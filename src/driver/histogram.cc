#include "driver/histogram.h"

#include <algorithm>

#include <fmt/format.h>

namespace weir::driver {

void ErrorHistogram::add(Duration err) {
  if (err < Duration::zero()) {
    ++early_;
    err = Duration::zero();
  }
  ++n_;
  sum_ns_ += static_cast<double>(err.ns());
  max_ = std::max(max_, err);
  size_t i = 0;
  while (i < kEdgesUs.size() && err.ns() > kEdgesUs[i] * 1000) ++i;
  ++b_[i];
}

double ErrorHistogram::fraction_within(Duration limit) const {
  if (!n_) return 1.0;
  uint64_t in = 0;
  for (size_t i = 0; i < kEdgesUs.size() && kEdgesUs[i] * 1000 <= limit.ns(); ++i) in += b_[i];
  return static_cast<double>(in) / static_cast<double>(n_);
}

Duration ErrorHistogram::percentile_bound(double q) const {
  uint64_t need = static_cast<uint64_t>(q * static_cast<double>(n_));
  uint64_t acc = 0;
  for (size_t i = 0; i < kEdgesUs.size(); ++i) {
    acc += b_[i];
    if (acc >= need) return Duration::us(kEdgesUs[i]);
  }
  return max_;
}

std::string ErrorHistogram::format() const {
  std::string out;
  uint64_t acc = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    acc += b_[i];
    std::string edge = i < kEdgesUs.size() ? fmt::format("<= {}us", kEdgesUs[i])
                                           : fmt::format(" > {}us", kEdgesUs.back());
    double pct = n_ ? 100.0 * static_cast<double>(acc) / static_cast<double>(n_) : 100.0;
    size_t bar = n_ ? static_cast<size_t>(40.0 * static_cast<double>(b_[i]) / static_cast<double>(n_)) : 0;
    out += fmt::format("  {:>10} {:>10} {:>7.2f}%  {}\n", edge, b_[i], pct, std::string(bar, '#'));
  }
  out += fmt::format("  samples {}  mean {:.1f}us  max {:.1f}us  early {}\n", n_,
                     static_cast<double>(mean().ns()) / 1e3, static_cast<double>(max_.ns()) / 1e3, early_);
  return out;
}

void ErrorHistogram::merge(const ErrorHistogram& o) {
  for (size_t i = 0; i < kBuckets; ++i) b_[i] += o.b_[i];
  n_ += o.n_;
  sum_ns_ += o.sum_ns_;
  max_ = std::max(max_, o.max_);
  early_ += o.early_;
}

}  // namespace weir::driver
