// The SVG charts of bench and probe (tools/svg_chart.h): logarithmic axes and their errors.
#include <gtest/gtest.h>

#include "tools/svg_chart.h"
#include "util/error.h"

namespace blurtool {
namespace {

TEST(Chart, LogAxisAndErrors) {
  LineChart c;
  c.title = "a < b";
  c.log_x = true;
  c.series = {{"one", {{0.1, 1}, {16, 3}}}};
  const std::string svg = line_chart_svg(c);
  EXPECT_NE(svg.find("a &lt; b"), std::string::npos);
  // The points span the plot from its left edge (x 70) to its right edge (x 580).
  EXPECT_NE(svg.find("points=\"70.0,"), std::string::npos) << svg;
  EXPECT_NE(svg.find(" 580.0,"), std::string::npos) << svg;
  c.series[0].points.push_back({0, 2});
  EXPECT_THROW(line_chart_svg(c), Error);
  c.series.clear();
  EXPECT_THROW(line_chart_svg(c), Error);
}

// A log y axis runs between 1-2-5 steps around the points, with a grid line and label at each.
TEST(Chart, LogYAxis) {
  LineChart c;
  c.log_y = true;
  c.series = {{"one", {{0, 0.05}, {1, 0.5}, {2, 5}}}};
  const std::string svg = line_chart_svg(c);
  // 0.05 at the foot of the plot (y 410), 5 at its top (y 50), 0.5 halfway on the log scale.
  EXPECT_NE(svg.find("points=\"70.0,410.0 325.0,230.0 580.0,50.0 \""), std::string::npos) << svg;
  // y labels are right-aligned (text-anchor end), x labels centred.
  for (const char* v : {"0.05", "0.1", "0.2", "0.5", "1", "2", "5"})
    EXPECT_NE(svg.find(std::string("\"end\">") + v + "<"), std::string::npos) << v;
  EXPECT_EQ(svg.find("\"end\">10<"), std::string::npos);
  // Points between steps: the axis reaches the steps around them.
  c.series = {{"one", {{0, 0.06}, {1, 0.3}}}};
  const std::string between = line_chart_svg(c);
  EXPECT_NE(between.find("\"end\">0.05<"), std::string::npos);
  EXPECT_NE(between.find("\"end\">0.5<"), std::string::npos);
  EXPECT_EQ(between.find("\"end\">1<"), std::string::npos);
  c.series[0].points.push_back({2, 0});
  EXPECT_THROW(line_chart_svg(c), Error);
}

}  // namespace
}  // namespace blurtool
