// A histogram of timing errors (how late a packet left against when it was
// due), with fixed bucket edges so runs compare, plus exact extremes and
// percentiles from the buckets.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "weir/time.h"

namespace weir::driver {

class ErrorHistogram {
 public:
  // Upper edges of the buckets, in microseconds; the last bucket is open.
  static constexpr std::array<int64_t, 13> kEdgesUs{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000};
  static constexpr size_t kBuckets = kEdgesUs.size() + 1;

  // `err` is actual minus due; early (negative) counts as 0 late.
  void add(Duration err);
  uint64_t count() const { return n_; }
  Duration max() const { return max_; }
  Duration mean() const { return n_ ? Duration::ns(static_cast<int64_t>(sum_ns_ / static_cast<double>(n_))) : Duration::zero(); }
  uint64_t bucket(size_t i) const { return b_[i]; }
  // Fraction of samples at or under `limit` (bucket resolution: `limit`
  // should be one of the edges).
  double fraction_within(Duration limit) const;
  // The smallest bucket edge under which at least `q` of the samples fall.
  Duration percentile_bound(double q) const;
  // One line per bucket: "  <= 50us   12345  98.71%  ####".
  std::string format() const;
  void merge(const ErrorHistogram& o);

 private:
  std::array<uint64_t, kBuckets> b_{};
  uint64_t n_ = 0;
  double sum_ns_ = 0;
  Duration max_ = Duration::zero();
  uint64_t early_ = 0;
};

}  // namespace weir::driver
