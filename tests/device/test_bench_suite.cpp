// `blurtool bench`'s suite in process: it holds every case it promises (each variant and
// intermediate, the sweep's radii), times each one or says why not, measures the floor in the same
// run, and prints the same cases as table, CSV and JSON; the chart draws one line per swept
// variant. The images are scaled down (--scale) so that the suite runs in seconds on the CPU
// device; the timings themselves are not checked (they belong to benchmarks, not tests). The
// command itself: tests/cli/test_bench.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "filters/box/box_blur.h"
#include "filters/bright/bright_points.h"
#include "filters/gauss/gauss_blur.h"
#include "filters/intermediate.h"
#include "tests/support/test_support.h"
#include "tools/bench_suite.h"
#include "util/error.h"

namespace blurtool {
namespace {

SuiteOptions small_quick() {
  SuiteOptions o;
  o.runs = 2;
  o.quick = true;
  o.scale = 0.01;  // box 30x40, Gaussian and bright points 19x11
  return o;
}

// The variants the radius sweep holds on the test device: tiled only off GPUs (a CPU
// schedule, 50-100x slower on a GPU; tools/bench_suite.cpp). The same as in
// tests/cli/test_bench.cpp.
std::vector<std::string> swept_variants() {
  std::vector<std::string> v = {"accumulated", "unrolled",        "scan",
                                "segmented",   "segmented-local", "fused"};
  if (!(runtime().device().type & CL_DEVICE_TYPE_GPU)) v.push_back("tiled");
  return v;
}

const std::vector<SuiteCase>& quick_suite() {
  static const std::vector<SuiteCase> cases = run_suite(runtime(), small_quick(), nullptr);
  return cases;
}

TEST(BenchSuite, QuickSuiteHoldsEveryPromisedCase) {
  std::set<std::string> got;
  for (const SuiteCase& c : quick_suite())
    got.insert(c.group + "/" + c.variant + "/" + c.intermediate + "/" + std::to_string(c.radius) +
               (c.sigma > 0 ? "@" + std::to_string(c.sigma) : ""));
  std::set<std::string> want;
  for (const auto& v : box_variant_table()) {
    if (v.value == BoxVariant::automatic || v.value == BoxVariant::single ||
        v.value == BoxVariant::single_linear)
      continue;                       // auto is one of the others; quick skips the O(R^2) ones
    if (!box_is_two_pass(v.value)) {  // tiled, fused: one pass, no intermediate
      want.insert(std::string("box/") + v.name + "//30");
      continue;
    }
    for (const auto& f : intermediate_table())
      want.insert(std::string("box/") + v.name + "/" + f.name + "/30");
  }
  for (const std::string& v : swept_variants()) {
    const bool one_pass = v == "tiled" || v == "fused";
    for (int r : {1, 8, 16, 24, 30, 40, 48, 56, 63})
      want.insert(std::string("sweep/") + v + (one_pass ? "//" : "/rgba32f/") + std::to_string(r));
  }
  for (const auto& v : gauss_variant_table()) {
    if (v.value == GaussVariant::automatic || v.value == GaussVariant::naive ||
        v.value == GaussVariant::naive_local)
      continue;
    if (!gauss_is_two_pass(v.value)) {
      want.insert(std::string("gauss/") + v.name + "//16");
      continue;
    }
    for (const auto& f : intermediate_table())
      want.insert(std::string("gauss/") + v.name + "/" + f.name + "/16");
  }
  for (double sigma : {1, 3, 10, 30, 60, 120, 250}) {  // each method and auto, at every sigma
    for (const auto& m : gauss_method_table()) {
      GaussParams p;
      p.sigma = sigma;
      p.method = m.value;
      want.insert(std::string("sigma/") + m.name + "//" + std::to_string(gauss_radius(p)) + "@" +
                  std::to_string(sigma));
    }
  }
  for (const auto& v : bright_variant_table())
    if (v.value != BrightVariant::automatic) want.insert(std::string("bright/") + v.name + "//0");
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.size(), quick_suite().size()) << "a case appears twice";
}

TEST(BenchSuite, EveryCaseIsTimedAgainstAFloorOrSaysWhyNot) {
  for (const SuiteCase& c : quick_suite()) {
    const std::string name = c.group + " " + c.variant + " " + c.intermediate;
    if (!c.skipped.empty()) {
      // Only a feature the device may lack (PoCL and NVIDIA have no sub-groups; PoCL has no
      // tensor cores).
      if (c.variant == "separable-mma" || c.variant == "fused-mma") {
        EXPECT_NE(c.skipped.find("compute capability 8.0"), std::string::npos) << c.skipped;
        EXPECT_FALSE(gauss_has_tensor_cores(runtime().device()));
        continue;
      }
      if (c.group == "sigma") {  // --quick times exact only up to sigma 60
        EXPECT_GT(c.sigma, 60) << name;
        EXPECT_NE(c.skipped.find("--quick"), std::string::npos) << c.skipped;
        continue;
      }
      EXPECT_EQ(c.variant, "subgroup") << name << ": " << c.skipped;
      EXPECT_NE(c.skipped.find("cl_khr_subgroups"), std::string::npos) << c.skipped;
      continue;
    }
    EXPECT_GT(c.ms.median, 0) << name;
    EXPECT_LE(c.ms.min, c.ms.median) << name;
    EXPECT_LE(c.ms.median, c.ms.max) << name;
    EXPECT_GE(c.runs, 1) << name;
    EXPECT_LE(c.runs, 2) << name;
    EXPECT_GT(c.floor_ms, 0) << name;
    const std::uint64_t pixels = static_cast<std::uint64_t>(c.width) * c.height;
    EXPECT_EQ(c.bytes, (c.group == "bright" ? 4 : 8) * pixels) << name;
    EXPECT_EQ(c.width, c.group == "box" || c.group == "sweep" || c.group == "sigma" ? 30 : 19)
        << name;
    EXPECT_FALSE(c.schedule.empty()) << name;
    if (c.group == "box" || c.group == "sweep") {
      EXPECT_EQ(c.schedule.rfind("box r=" + std::to_string(c.radius) + " " + c.variant, 0), 0u)
          << c.schedule;
    }
  }
}

TEST(BenchSuite, TableCsvAndJsonListTheSameCases) {
  const SuiteOptions o = small_quick();
  std::ostringstream table, csv, json;
  print_suite(quick_suite(), runtime().device(), o, "table", table);
  print_suite(quick_suite(), runtime().device(), o, "csv", csv);
  print_suite(quick_suite(), runtime().device(), o, "json", json);
  // CSV: a header and one line per case.
  std::istringstream lines(csv.str());
  std::string line;
  size_t n = 0;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("group,variant,intermediate,radius,", 0), 0u) << line;
  while (std::getline(lines, line)) ++n;
  EXPECT_EQ(n, quick_suite().size());
  // JSON: the same cases in the same order.
  const nlohmann::json j = nlohmann::json::parse(json.str());
  ASSERT_EQ(j["cases"].size(), quick_suite().size());
  for (size_t i = 0; i < quick_suite().size(); ++i) {
    EXPECT_EQ(j["cases"][i]["variant"], quick_suite()[i].variant);
    if (quick_suite()[i].skipped.empty()) {
      EXPECT_DOUBLE_EQ(j["cases"][i]["median_ms"].get<double>(), quick_suite()[i].ms.median);
    }
  }
  // Table: the sweep matrix has a row per radius and the r = 30 deviation line.
  const std::string t = table.str();
  EXPECT_NE(t.find("box blur radius sweep"), std::string::npos) << t;
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n') > 40, true) << t;
  const std::string row63 = "\n +63( +[0-9.]+){" + std::to_string(swept_variants().size()) + "}\n";
  EXPECT_TRUE(std::regex_search(t, std::regex(row63))) << t;
  EXPECT_NE(t.find("vs r30"), std::string::npos);
  EXPECT_NE(t.find("Gaussian by --gauss-method over sigma"), std::string::npos) << t;
  std::ostringstream ignored;
  EXPECT_THROW(print_suite(quick_suite(), runtime().device(), o, "xml", ignored), UsageError);
}

// The sweep's time axis is logarithmic where the variants' times span 10x or more (on an
// H100, 0.06 ms for fused against 3.3 for accumulated), else linear from 0.
TEST(BenchSuite, ChartTimeAxisIsLogWhereTimesSpanADecade) {
  auto sweep = [](double fast, double slow) {
    std::vector<SuiteCase> cases;
    for (int r : {1, 30, 63}) {
      for (const auto& [variant, ms] : {std::pair{"fused", fast}, std::pair{"scan", slow}}) {
        SuiteCase c;
        c.group = "sweep";
        c.variant = variant;
        c.radius = r;
        c.width = 64;
        c.height = 48;
        c.ms.median = ms * (1 + r / 630.0);
        cases.push_back(c);
      }
    }
    return cases;
  };
  const std::string wide = sweep_chart_svg(sweep(0.06, 3.3), runtime().device());
  EXPECT_NE(wide.find("median kernel time (ms), log scale"), std::string::npos);
  EXPECT_NE(wide.find("\"end\">0.05<"), std::string::npos);  // y labels: text-anchor end
  EXPECT_NE(wide.find("\"end\">5<"), std::string::npos);
  // A zero time (a timer too coarse) keeps the axis linear instead of failing the chart.
  std::vector<SuiteCase> with_zero = sweep(0.06, 3.3);
  with_zero[1].ms.median = 0;
  EXPECT_EQ(sweep_chart_svg(with_zero, runtime().device()).find("log scale"), std::string::npos);
  const std::string narrow = sweep_chart_svg(sweep(1, 3), runtime().device());
  EXPECT_EQ(narrow.find("log scale"), std::string::npos);
  EXPECT_NE(narrow.find("\"end\">0<"), std::string::npos);  // linear: the axis starts at 0
}

TEST(BenchSuite, ChartHasALinePerSweptVariantWithAPointPerRadius) {
  const std::string svg = sweep_chart_svg(quick_suite(), runtime().device());
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  const std::regex line("<polyline[^>]*points=\"([^\"]*)\"><title>([^<]*)</title>");
  std::set<std::string> variants;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator();
       ++it) {
    variants.insert((*it)[2]);
    std::istringstream points((*it)[1].str());
    std::string point;
    int count = 0;
    while (points >> point) ++count;
    EXPECT_EQ(count, 9) << (*it)[2];
  }
  const std::vector<std::string> swept = swept_variants();
  EXPECT_EQ(variants, std::set<std::string>(swept.begin(), swept.end()));
  SuiteOptions no_sweep = small_quick();
  no_sweep.groups = {"bright"};
  const std::vector<SuiteCase> bright = run_suite(runtime(), no_sweep, nullptr);
  EXPECT_THROW(sweep_chart_svg(bright, runtime().device()), Error);
  no_sweep.groups = {"blur"};
  EXPECT_THROW(run_suite(runtime(), no_sweep, nullptr), UsageError);
}

}  // namespace
}  // namespace blurtool
