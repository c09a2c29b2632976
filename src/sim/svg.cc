#include "sim/svg.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace weir::sim {
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else o += c;
  }
  return o;
}

std::string num(double v) {
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3)) return fmt::format("{:.3g}", v);
  return fmt::format("{:g}", std::round(v * 1000) / 1000);
}

struct Frame {
  double x0, x1, y0, y1;
  int left = 70, right = 20, top = 36, bottom = 48, w, h;
  double px(double x) const { return left + (x - x0) / (x1 - x0) * (w - left - right); }
  double py(double y) const { return h - bottom - (y - y0) / (y1 - y0) * (h - top - bottom); }
};

void bounds(const std::vector<Series>& ss, double* x0, double* x1, double* y0, double* y1) {
  *x0 = *y0 = std::numeric_limits<double>::infinity();
  *x1 = *y1 = -std::numeric_limits<double>::infinity();
  auto take = [&](double x, double y) {
    *x0 = std::min(*x0, x);
    *x1 = std::max(*x1, x);
    *y0 = std::min(*y0, y);
    *y1 = std::max(*y1, y);
  };
  for (const auto& s : ss) {
    for (auto [x, y] : s.pts) take(x, y);
    for (const auto& g : s.segs) {
      take(g[0], g[1]);
      take(g[0], g[2]);
    }
  }
  if (!std::isfinite(*x0)) *x0 = 0, *x1 = 1, *y0 = 0, *y1 = 1;
  *y0 = std::min(*y0, 0.0);
  if (*x1 <= *x0) *x1 = *x0 + 1;
  if (*y1 <= *y0) *y1 = *y0 + 1;
  *y1 += (*y1 - *y0) * 0.04;
}

void draw_series(std::string& o, const Series& s, const Frame& f, size_t max_points) {
  size_t n = s.style == Series::Style::kSegments ? s.segs.size() : s.pts.size();
  size_t stride = std::max<size_t>(1, n / std::max<size_t>(1, max_points));
  if (s.style == Series::Style::kSegments) {
    o += fmt::format("<g stroke=\"{}\" stroke-width=\"1.2\">", s.color);
    for (size_t i = 0; i < n; i += stride) {
      const auto& g = s.segs[i];
      o += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>", f.px(g[0]), f.py(g[1]),
                       f.px(g[0]), std::min(f.py(g[1]) - 1.0, f.py(g[2])));
    }
    o += "</g>\n";
    return;
  }
  if (s.style == Series::Style::kDots) {
    o += fmt::format("<g fill=\"{}\">", s.color);
    for (size_t i = 0; i < n; i += stride)
      o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"1.5\"/>", f.px(s.pts[i].first), f.py(s.pts[i].second));
    o += "</g>\n";
    return;
  }
  o += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.3\" points=\"", s.color);
  double prev_y = 0;
  for (size_t i = 0; i < n; i += stride) {
    auto [x, y] = s.pts[i];
    if (s.style == Series::Style::kStep && i > 0) o += fmt::format("{:.1f},{:.1f} ", f.px(x), f.py(prev_y));
    o += fmt::format("{:.1f},{:.1f} ", f.px(x), f.py(y));
    prev_y = y;
  }
  if (n && (n - 1) % stride) o += fmt::format("{:.1f},{:.1f}", f.px(s.pts[n - 1].first), f.py(s.pts[n - 1].second));
  o += "\"/>\n";
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int n) {
  std::vector<double> t;
  double span = hi - lo;
  if (!(span > 0)) return {lo};
  double raw = span / std::max(1, n);
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v == 0 ? 0 : v);
  return t;
}

std::string Chart::render(int width, int height, size_t max_points) const {
  Frame f;
  f.w = width;
  f.h = height;
  bounds(series, &f.x0, &f.x1, &f.y0, &f.y1);
  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height);
  o += fmt::format("<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n", width / 2, esc(title));
  for (double x : nice_ticks(f.x0, f.x1)) {
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>", f.px(x), f.top,
                     height - f.bottom);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", f.px(x), height - f.bottom + 16, num(x));
  }
  for (double y : nice_ticks(f.y0, f.y1)) {
    o += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>", f.left, f.py(y),
                     width - f.right);
    o += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", f.left - 6, f.py(y) + 4, num(y));
  }
  o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", f.left, f.top,
                   width - f.left - f.right, height - f.top - f.bottom);
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (width + f.left) / 2, height - 10,
                   esc(xlabel));
  o += fmt::format("<text transform=\"translate(16,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                   height / 2, esc(ylabel));
  for (const auto& s : series) draw_series(o, s, f, max_points);
  int lx = f.left + 10;
  for (const auto& s : series) {
    o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"4\" fill=\"{}\"/>", lx, f.top + 8, s.color);
    o += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", lx + 16, f.top + 13, esc(s.name));
    lx += 24 + static_cast<int>(s.name.size()) * 7;
  }
  o += "</svg>\n";
  return o;
}

}  // namespace weir::sim
