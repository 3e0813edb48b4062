// SVG line charts (see svg_chart.h).
#include "tools/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <sstream>

#include "util/error.h"

namespace blurtool {

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

namespace {

// A tick label: whole numbers without a point, others with up to 3 significant digits.
std::string tick_text(double v) {
  std::ostringstream s;
  if (v == std::round(v) && std::abs(v) < 1e9) {
    s << static_cast<long long>(std::round(v));
  } else {
    s.precision(3);
    s << v;
  }
  return s.str();
}

// The values 1, 2 and 5 times a power of ten, from the largest at or below `low` to the
// smallest at or above `high` (0 < low <= high).
std::vector<double> decade_steps(double low, double high) {
  std::vector<double> all;
  const int k0 = static_cast<int>(std::floor(std::log10(low))) - 1;
  const int k1 = static_cast<int>(std::ceil(std::log10(high))) + 1;
  for (int k = k0; k <= k1; ++k)
    for (double m : {1.0, 2.0, 5.0}) all.push_back(m * std::pow(10.0, k));
  const double slack = 1e-9;
  size_t first = 0, last = 0;
  while (first + 1 < all.size() && all[first + 1] <= low * (1 + slack)) ++first;
  for (last = first; last + 1 < all.size() && all[last] < high * (1 - slack);) ++last;
  return {all.begin() + static_cast<std::ptrdiff_t>(first),
          all.begin() + static_cast<std::ptrdiff_t>(last) + 1};
}

}  // namespace

std::string line_chart_svg(const LineChart& chart) {
  double min_x = 0, max_x = 0, min_y = 0, max_y = 0;
  bool any = false;
  for (const ChartSeries& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (chart.log_x && !(x > 0)) throw Error("chart '" + chart.title + "': log axis with x <= 0");
      if (chart.log_y && !(y > 0)) throw Error("chart '" + chart.title + "': log axis with y <= 0");
      min_x = any ? std::min(min_x, x) : x;
      max_x = any ? std::max(max_x, x) : x;
      min_y = any ? std::min(min_y, y) : y;
      max_y = std::max(max_y, y);
      any = true;
    }
  }
  if (!any) throw Error("chart '" + chart.title + "': nothing to draw");
  if (!chart.log_x) min_x = std::min(0.0, min_x);
  if (max_x == min_x) max_x = min_x + (chart.log_x ? min_x : 1);

  // A "nice" top for the y axis: 1, 2 or 5 times a power of ten, above the largest value.
  const double step = std::pow(10, std::floor(std::log10(max_y > 0 ? max_y : 1)));
  double top = step;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    top = m * step;
    if (top >= max_y) break;
  }
  const int width = 760, height = 460, left = 70, right = 180, up = 50, down = 50;
  const double plot_w = width - left - right, plot_h = height - up - down;
  auto px = [&](double x) {
    const double f =
        chart.log_x ? std::log(x / min_x) / std::log(max_x / min_x) : (x - min_x) / (max_x - min_x);
    return left + plot_w * f;
  };
  // The y grid: 0 to top in fifths, or the log axis' 1-2-5 steps.
  std::vector<double> y_grid;
  if (chart.log_y) {
    y_grid = decade_steps(min_y, max_y);
    if (y_grid.size() < 2) y_grid.push_back(y_grid.back() * 2);
  } else {
    for (int i = 0; i <= 5; ++i) y_grid.push_back(top * i / 5);
  }
  const double bottom_y = y_grid.front(), top_y = y_grid.back();
  auto py = [&](double y) {
    const double f = chart.log_y ? std::log(y / bottom_y) / std::log(top_y / bottom_y) : y / top;
    return up + plot_h * (1 - f);
  };
  std::vector<double> ticks = chart.x_ticks;
  if (ticks.empty() && chart.log_x) {
    for (double t = std::pow(10, std::ceil(std::log10(min_x))); t <= max_x * 1.0001; t *= 10)
      ticks.push_back(t);
  } else if (ticks.empty()) {
    for (int i = 0; i <= 5; ++i) ticks.push_back(min_x + (max_x - min_x) * i / 5);
  }
  static const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                  "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

  std::ostringstream svg;
  svg.setf(std::ios::fixed);
  svg.precision(1);
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << left << "\" y=\"24\" font-size=\"14\">" << xml_escape(chart.title)
      << "</text>\n";
  // Axes, grid and ticks.
  for (double v : y_grid) {
    const double y = py(v);
    svg << "<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\"" << left + plot_w << "\" y2=\""
        << y << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
        << tick_text(v) << "</text>\n";
  }
  for (double t : ticks) {
    if (t < min_x || t > max_x * 1.0001) continue;
    svg << "<line x1=\"" << px(t) << "\" y1=\"" << up + plot_h << "\" x2=\"" << px(t) << "\" y2=\""
        << up + plot_h + 5 << "\" stroke=\"black\"/>\n"
        << "<text x=\"" << px(t) << "\" y=\"" << up + plot_h + 18 << "\" text-anchor=\"middle\">"
        << tick_text(t) << "</text>\n";
  }
  svg << "<line x1=\"" << left << "\" y1=\"" << up << "\" x2=\"" << left << "\" y2=\""
      << up + plot_h << "\" stroke=\"black\"/>\n"
      << "<line x1=\"" << left << "\" y1=\"" << up + plot_h << "\" x2=\"" << left + plot_w
      << "\" y2=\"" << up + plot_h << "\" stroke=\"black\"/>\n"
      << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 12
      << "\" text-anchor=\"middle\">" << xml_escape(chart.x_label) << "</text>\n"
      << "<text x=\"16\" y=\"" << up + plot_h / 2
      << "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " << up + plot_h / 2 << ")\">"
      << xml_escape(chart.y_label) << "</text>\n";
  // One line per series, with its legend entry.
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    const char* colour = colours[i % std::size(colours)];
    svg << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" points=\"";
    for (const auto& [x, y] : s.points) svg << px(x) << "," << py(y) << " ";
    svg << "\"><title>" << xml_escape(s.name) << "</title></polyline>\n";
    const double y = up + 10 + 20.0 * i;
    svg << "<line x1=\"" << width - right + 15 << "\" y1=\"" << y << "\" x2=\""
        << width - right + 40 << "\" y2=\"" << y << "\" stroke=\"" << colour
        << "\" stroke-width=\"2\"/>\n"
        << "<text x=\"" << width - right + 46 << "\" y=\"" << y + 4 << "\">" << xml_escape(s.name)
        << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace blurtool
