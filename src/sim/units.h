// Quantities in scenario files: rates ("50Mbit", "1Gbit/s", "2MB/s"),
// durations ("150ms", "15us", "1.5s"), sizes ("256KB", "20MB", "64KiB") and
// fractions ("3%", 0.03). Each parser returns an error message instead of
// throwing; the loader adds the line number.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "weir/expected.h"
#include "weir/time.h"

namespace weir::sim {

// Bits per second. Decimal prefixes for rates, as tc and iperf use them;
// "B/s" suffixes are bytes per second.
Expected<double, std::string> parse_rate(std::string_view s);
// A bare number is seconds.
Expected<Duration, std::string> parse_duration(std::string_view s);
// Bytes. KB/MB/GB are decimal (1000), KiB/MiB/GiB binary; a bare number is bytes.
Expected<uint64_t, std::string> parse_size(std::string_view s);
// "3%" is 0.03; a bare number must lie in [0, 1].
Expected<double, std::string> parse_fraction(std::string_view s);

std::string format_rate(double bps);
std::string format_duration(Duration d);

}  // namespace weir::sim
