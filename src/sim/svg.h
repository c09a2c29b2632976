// Minimal SVG charts written directly (no plotting dependency): line and
// step series, dots, and vertical segments (for time-sequence graphs).
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace weir::sim {

struct Series {
  enum class Style { kLine, kStep, kDots, kSegments };
  std::string name;
  std::string color = "#1f77b4";
  Style style = Style::kLine;
  std::vector<std::pair<double, double>> pts;    // line, step, dots
  std::vector<std::array<double, 3>> segs;       // segments: x, y0, y1
};

struct Chart {
  std::string title;
  std::string xlabel = "time (s)";
  std::string ylabel;
  std::vector<Series> series;
  // Renders to a self-contained SVG document. Long series are thinned to
  // about `max_points` drawn points each.
  std::string render(int width = 960, int height = 440, size_t max_points = 6000) const;
};

// Tick positions for [lo, hi] at 1/2/5 x 10^k steps, about `n` of them.
std::vector<double> nice_ticks(double lo, double hi, int n = 6);

}  // namespace weir::sim
