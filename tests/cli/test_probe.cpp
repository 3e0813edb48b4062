// End-to-end tests of `blurtool probe`: each probe's table, JSON and chart, and its usage errors.
// Timings are not checked: they belong to the probes' own runs. The probes' kernels:
// tests/device/test_probe.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tests/support/cli_support.h"
#include "tools/probe.h"
#include "tools/svg_chart.h"
#include "util/error.h"

namespace blurtool {
namespace {

class ProbeCli : public SubcommandCli {
 protected:
  ProbeCli() : SubcommandCli("probe") {}
};

// The polylines of an SVG chart: name -> number of points.
std::map<std::string, int> chart_lines(const std::string& svg) {
  std::map<std::string, int> lines;
  const std::regex line("<polyline[^>]*points=\"([^\"]*)\"><title>([^<]*)</title>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator();
       ++it) {
    std::istringstream points((*it)[1].str());
    std::string point;
    while (points >> point) ++lines[(*it)[2]];
  }
  return lines;
}

TEST_F(ProbeCli, CacheWritesJsonAndAChartWithBothReads) {
  const Result r = run({"cache", "--size", "64", "--runs", "1", "--bench-format", "json", "--plot",
                        "cache chart.svg"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["probe"], "cache");
  ASSERT_EQ(j["rows"].size(), 7u);
  std::vector<double> scales;
  for (const auto& row : j["rows"]) {
    scales.push_back(row["scale"].get<double>());
    EXPECT_GT(row["image ns/px"].get<double>(), 0) << row;
    EXPECT_GT(row["buffer ns/px"].get<double>(), 0) << row;
  }
  EXPECT_EQ(scales, (std::vector<double>{0.1, 0.5, 1, 2, 4, 8, 16}));
  EXPECT_EQ(j["rows"][2]["image x scale 1"], 1.0);
  EXPECT_EQ(chart_lines(read_file(root_ / "cache chart.svg")),
            (std::map<std::string, int>{{"image (sampler)", 7}, {"buffer", 7}}));
  EXPECT_NE(r.err.find("probe cache: scale 16 buffer"), std::string::npos) << r.err;
}

TEST_F(ProbeCli, DivergenceTableHasTheBaselineAndBothWriteUpCases) {
  const Result r =
      run({"divergence", "--size", "64", "--rounds", "1", "--runs", "1", "--bench-format", "csv"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "branch,frequency,period px,ns/px,x no branch");
  std::vector<std::string> names, frequencies;
  while (std::getline(lines, line)) {
    names.push_back(line.substr(0, line.find(',')));
    const size_t a = line.find(',') + 1;
    frequencies.push_back(line.substr(a, line.find(',', a) - a));
  }
  // 64 pixels wide: frequencies up to 32 (bands of 2 pixels or more), and the write-up's 100.
  EXPECT_EQ(frequencies, (std::vector<std::string>{"-", "1", "2", "4", "8", "16", "32", "100"}));
  EXPECT_EQ(names.front(), "none");
  EXPECT_EQ(names[1], "coherent");
  EXPECT_EQ(names.back(), "incoherent");
}

TEST_F(ProbeCli, StrideTableListsTheWriteUpsStridesAndTheRatio) {
  const Result r = run({"stride", "--runs", "1", "-q", "--plot", "stride.svg"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* s : {"\n     1 ", "\n     2 ", "\n    15 ", "\n    99 ", "\n   185 "})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("stride 185 against stride 1: host [0-9.]+x, "
                                                  "device [0-9.]+x")))
      << r.out;
  EXPECT_EQ(chart_lines(read_file(root_ / "stride.svg")),
            (std::map<std::string, int>{{"host CPU, one thread", 9}, {"device kernel", 9}}));
}

TEST_F(ProbeCli, TransferTableHasEverySizeAndKind) {
  const Result r = run({"transfer", "--runs", "1", "--bench-format", "json", "--plot", "t.svg"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["probe"], "transfer");
  ASSERT_EQ(j["rows"].size(), 4u);
  std::vector<double> sizes;
  for (const auto& row : j["rows"]) {
    sizes.push_back(row["MiB"].get<double>());
    for (const char* c : {"to dev pageable", "to dev pinned", "from dev pageable",
                          "from dev pinned", "both ways pinned", "two to dev pinned"})
      EXPECT_GT(row[c].get<double>(), 0) << c << " " << row;
  }
  EXPECT_EQ(sizes, (std::vector<double>{1, 4, 16, 64}));
  const std::map<std::string, int> lines = chart_lines(read_file(root_ / "t.svg"));
  EXPECT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines.at("two to device at once, pinned"), 4);
  EXPECT_NE(r.err.find("probe transfer: 64 MiB both ways at once, pinned"), std::string::npos)
      << r.err;
}

TEST_F(ProbeCli, BadArgumentsAreUsageErrorsBeforeAnyMeasurement) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "name a probe"},
      {{"branch"}, "probe 'branch'"},
      {{"cache", "extra"}, "'extra'"},
      {{"stride", "--size", "64"}, "--size"},
      {{"transfer", "--size", "64"}, "--size: probe transfer copies"},
      {{"cache", "--size", "8"}, "--size '8'"},
      {{"cache", "--rounds", "3"}, "--rounds"},
      {{"divergence", "--rounds", "0"}, "--rounds '0'"},
      {{"cache", "--runs", "0"}, "--runs '0'"},
      {{"cache", "--bench-format", "xml"}, "--bench-format"},
      {{"cache", "--plot", "no such folder/x.svg"}, "--plot"},
      {{"cache", "--plot", "-"}, "--plot -: give a file name"},
  };
  for (const auto& [args, named] : cases) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << (args.empty() ? "" : args[0]) << ": " << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(see blurtool probe --help)"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace
}  // namespace blurtool
