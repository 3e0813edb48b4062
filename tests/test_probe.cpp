// `blurtool probe`: each probe's kernels compute what the tables say they time (the cache
// probe's five texels through the sampler and through a buffer, the divergence probe's branch
// bodies, the stride walk's bytes), checked against the CPU references of probe_reference.cpp;
// and the command's tables, formats, chart and usage errors. Timings are not checked: they
// belong to the probes' own runs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "util/error.h"
#include "tools/probe.h"
#include "tools/svg_chart.h"
#include "tests/cli_support.h"
#include "tests/test_support.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

TEST(Probe, CacheKernelsReadTheFiveTexelsOfTheReference) {
  if (!runtime().device().image_support) GTEST_SKIP() << "no image support";
  // 300 x 210: steps of 3 and 2 texels, fetches wrapping at both edges at every scale.
  const Image source = random_rgba(300, 210, 41);
  CacheProbe probe(runtime(), source);
  for (const ProbeScale& s : cache_scales()) {
    const std::vector<std::uint32_t> want = cache_reference(source, s);
    for (CacheRead read : {CacheRead::image, CacheRead::buffer}) {
      probe.enqueue(read, s).wait();
      const std::vector<std::uint32_t> got = probe.output();
      ASSERT_EQ(got.size(), want.size());
      size_t wrong = 0, first = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i] && wrong++ == 0) first = i;
      }
      EXPECT_EQ(wrong, 0u) << "scale " << s.value()
                           << (read == CacheRead::image ? " image" : " buffer")
                           << ", first at pixel " << first;
    }
  }
  // The reference itself depends on the scale (so the comparison above can fail).
  EXPECT_NE(cache_reference(source, {1, 1}), cache_reference(source, {2, 1}));
}

TEST(Probe, BranchKernelsRunTheBodyTheirConditionPicks) {
  const int w = 120, h = 40, rounds = 3;
  BranchProbe probe(runtime(), w, h, rounds);
  struct Case {
    BranchKind kind;
    float frequency;
  };
  for (const Case c : {Case{BranchKind::none, 0}, Case{BranchKind::three_way, 1},
                       Case{BranchKind::three_way, 7}, Case{BranchKind::three_way, 100}}) {
    probe.enqueue(c.kind, c.frequency).wait();
    const std::vector<float> got = probe.output();
    const std::vector<float> want = branch_reference(w, h, rounds, c.kind, c.frequency);
    ASSERT_EQ(got.size(), want.size());
    std::set<int> taken;
    size_t wrong = 0;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const float doit = c.kind == BranchKind::none ? 0 : branch_doit(x, w, c.frequency);
        taken.insert(doit < 0.3f ? 0 : doit < 0.7f ? 1 : 2);
        for (int ch = 0; ch < 4; ++ch) {
          const size_t i = (static_cast<size_t>(y) * w + x) * 4 + ch;
          if (!(std::abs(got[i] - want[i]) <= 1e-4f * std::max(1.0f, std::abs(want[i])))) ++wrong;
        }
      }
    }
    EXPECT_EQ(wrong, 0u) << "frequency " << c.frequency;
    // Every body is exercised where the probe says it is.
    EXPECT_EQ(taken.size(), c.kind == BranchKind::none ? 1u : 3u) << "frequency " << c.frequency;
  }
  // The three bodies differ: a kernel running the wrong one could not pass.
  const std::vector<float> none = branch_reference(w, h, rounds, BranchKind::none, 0);
  const std::vector<float> split = branch_reference(w, h, rounds, BranchKind::three_way, 1);
  EXPECT_NE(none[(w / 2) * 4], split[(w / 2) * 4]);
  EXPECT_NE(split[(w / 2) * 4], split[(w - 1) * 4]);
}

TEST(Probe, StrideKernelLeavesTheBytesOfTheHostWalk) {
  // 64 KiB and 8 Ki accesses: as the probe's 32 MiB and 4 Mi, no two accesses meet.
  const size_t bytes = 1 << 16, accesses = 1 << 13;
  StrideProbe probe(runtime(), bytes, accesses);
  for (std::uint32_t stride : {1u, 2u, 4u, 8u, 15u, 28u, 53u, 99u, 185u}) {
    probe.clear();
    probe.enqueue(stride).wait();
    const std::vector<std::uint8_t> got = probe.output();
    std::vector<std::uint8_t> want(bytes, 0);
    stride_walk(want.data(), bytes, stride, accesses);
    EXPECT_EQ(got, want) << "stride " << stride;
    EXPECT_EQ(static_cast<size_t>(std::count(got.begin(), got.end(), 1)), accesses)
        << "stride " << stride;
  }
  // The host walk's sum counts what it read: a second walk over the same bytes reads 1s.
  std::vector<std::uint8_t> buf(bytes, 0);
  EXPECT_EQ(stride_walk(buf.data(), bytes, 8, accesses), 0u);
  EXPECT_EQ(stride_walk(buf.data(), bytes, 8, accesses), accesses);
  EXPECT_THROW(StrideProbe(runtime(), 3000, 16), Error);
}

TEST(Probe, StrideKernelAtTheProbesOwnSize) {
  const size_t bytes = size_t(32) << 20, accesses = size_t(1) << 22;
  StrideProbe probe(runtime(), bytes, accesses);
  probe.enqueue(8).wait();  // the largest power-of-two factor of the probe's strides
  const std::vector<std::uint8_t> got = probe.output();
  std::vector<std::uint8_t> want(bytes, 0);
  stride_walk(want.data(), bytes, 8, accesses);
  EXPECT_EQ(got, want);
}

TEST(Probe, TransfersCarryTheBytesEachWayAndOnBothQueues) {
  const std::size_t bytes = (std::size_t(1) << 20) + 12;
  TransferProbe probe(runtime(), bytes);
  auto pattern = [&](std::uint8_t* p, unsigned seed) {
    for (std::size_t i = 0; i < bytes; ++i)
      p[i] = static_cast<std::uint8_t>(i * 7 + seed + i / 251);
  };
  auto holds = [&](const std::uint8_t* p, unsigned seed) {
    for (std::size_t i = 0; i < bytes; ++i)
      if (p[i] != static_cast<std::uint8_t>(i * 7 + seed + i / 251)) return false;
    return true;
  };
  // Queue 0: pinned up, pageable down; then pageable up, pinned down.
  pattern(probe.host(true, 0), 1);
  probe.run(TransferKind::to_device_pinned);
  std::memset(probe.host(false, 0), 0, bytes);
  probe.run(TransferKind::from_device_pageable);
  EXPECT_TRUE(holds(probe.host(false, 0), 1));
  pattern(probe.host(false, 0), 2);
  probe.run(TransferKind::to_device_pageable);
  std::memset(probe.host(true, 0), 0, bytes);
  probe.run(TransferKind::from_device_pinned);
  EXPECT_TRUE(holds(probe.host(true, 0), 2));
  // Two uploads at once fill both queues' buffers; both ways at once reads queue 1's back.
  pattern(probe.host(true, 0), 3);
  pattern(probe.host(true, 1), 4);
  probe.run(TransferKind::two_to_device_pinned);
  std::memset(probe.host(false, 0), 0, bytes);
  probe.run(TransferKind::from_device_pageable);
  EXPECT_TRUE(holds(probe.host(false, 0), 3));
  // Both ways at once: queue 0 uploads a new pattern while queue 1 reads its buffer back.
  std::memset(probe.host(true, 1), 0, bytes);
  pattern(probe.host(true, 0), 5);
  probe.run(TransferKind::both_ways_pinned);
  EXPECT_TRUE(holds(probe.host(true, 1), 4));
  std::memset(probe.host(false, 0), 0, bytes);
  probe.run(TransferKind::from_device_pageable);
  EXPECT_TRUE(holds(probe.host(false, 0), 5));
  EXPECT_EQ(probe.moved(TransferKind::to_device_pinned), bytes);
  EXPECT_EQ(probe.moved(TransferKind::both_ways_pinned), 2 * bytes);
}

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
