// Line charts as standalone SVG text, for the charts of `blurtool bench --plot` (the radius
// sweep) and `blurtool probe --plot`: one polyline per series with a <title> naming it, a
// legend, a grid, and a time axis from 0 to a round value above the largest point (or, where
// asked, a logarithmic one between round values around the points).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace blurtool {

/// One line of a chart: (x, y) points in the order they are drawn.
struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

/// What line_chart_svg draws.
struct LineChart {
  std::string title;
  std::string x_label, y_label;
  /// Logarithmic x axis (every x must be above 0), for sweeps over scales or frequencies.
  bool log_x = false;
  /// Logarithmic y axis (every y must be above 0), for lines that span decades: it runs from
  /// 1, 2 or 5 times a power of ten at or below the smallest y to one at or above the largest,
  /// with a grid line at each of those values.
  bool log_y = false;
  /// The x values that get a tick and a label; empty: 6 evenly spaced ones (linear axis) or the
  /// powers of ten in range (log axis).
  std::vector<double> x_ticks;
  std::vector<ChartSeries> series;
};

/// `text` with &, < and > escaped for SVG/XML text.
std::string xml_escape(const std::string& text);

/// `chart` as a 760x460 SVG document. The linear x axis starts at 0, the log one at the
/// smallest x; the linear y axis runs from 0 to 1, 2 or 5 times a power of ten above the
/// largest y (the log one: see log_y). Throws blurtool::Error when no series has a point, or a
/// log axis has a value <= 0.
std::string line_chart_svg(const LineChart& chart);

}  // namespace blurtool
