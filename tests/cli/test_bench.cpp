// End-to-end tests of --bench and of `blurtool bench`: tables, CSV and JSON, the Gaussian's
// work-group sweep, and the suite's JSON and chart. Each test runs the real binary (fork + execve,
// no shell, so paths with spaces need no quoting) in its own temporary directory, whose name holds
// spaces on purpose, with stdout and stderr captured to files (support/cli_fixture.h). Successful
// runs are decoded and compared with the exact CPU reference; failures must give the documented
// exit status (1 file or device, 2 usage), a stderr line naming the file or option at fault, and
// leave the output directory exactly as it was (no output, no hidden .NAME.blurtool-XXXXXX
// temporary file).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "filters/bright/bright_points.h"
#include "filters/gauss/gauss_blur.h"
#include "image/image_io.h"
#include "runtime/cl_runtime.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/test_support.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

// The first word of every line of `text` (leading blanks skipped), in order.
std::vector<std::string> first_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream lines(text);
  std::string line, word;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    if (fields >> word) words.push_back(word);
  }
  return words;
}

// The work-group sizes --sweep-wg must print for separable-local: 4x1, 8x1, ..., 256x1.
std::vector<std::string> row_segment_sizes() {
  std::vector<std::string> sizes;
  for (int g = 4; g <= 256; g *= 2) sizes.push_back(std::to_string(g) + "x1");
  return sizes;
}

TEST_F(Cli, BenchPrintsTable) {
  const Result r = run({"--bench", "--variant", "double", "--box", "3", kCoffee, out_ / "o.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* part : {"median", "box_rows_direct", "box_cols_direct", "floor"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " in:\n" << r.out;
  EXPECT_TRUE(fs::exists(out_ / "o.png"));
}

TEST_F(Cli, BenchPrintsCsv) {
  const Result r =
      run({"--box", "3", "--bench", "3", "--bench-format", "csv", kCoffee, out_ / "o.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, line;
  std::getline(lines, header);
  EXPECT_EQ(header, "kind,name,median_ms,min_ms,max_ms,bytes,gbps");
  int kernels = 0;
  while (std::getline(lines, line)) kernels += line.rfind("kernel,box_", 0) == 0;
  EXPECT_GE(kernels, 1) << r.out;
}

TEST_F(Cli, BenchPrintsJson) {
  const Result r =
      run({"--box", "3", "--bench", "2", "--bench-format", "json", kCoffee, out_ / "o.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  ASSERT_TRUE(j.contains("kernels") && j["kernels"].is_array() && !j["kernels"].empty()) << r.out;
  EXPECT_TRUE(j["kernels"][0].contains("median_ms"));
  ASSERT_TRUE(j.contains("floor")) << r.out;
  EXPECT_TRUE(j["floor"].contains("gbps"));
  EXPECT_EQ(j.value("runs", 0), 2);
}

TEST_F(Cli, GaussSweepPrintsEveryRowSegmentSize) {
  const std::string in = in_ / "small.png", out = out_ / "o.png";
  save_image(random_image(31, 23, 4, 11), in);
  const Result r =
      run({"--gauss", "2", "--variant", "separable-local", "--bench", "1", "--sweep-wg", in, out});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> words = first_words(r.out);
  std::vector<std::string> rows;  // first words that name a work-group size, in order
  for (const std::string& w : words)
    if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('x') != w.npos)
      rows.push_back(w);
  EXPECT_EQ(rows, row_segment_sizes()) << r.out;
  EXPECT_NE(r.out.find("floor"), std::string::npos) << r.out;
  EXPECT_EQ(listing(out_), Files{"o.png"});  // the image is still written
}

TEST_F(Cli, GaussSweepPrintsJson) {
  const std::string in = in_ / "small.png", out = out_ / "o.png";
  save_image(random_image(31, 23, 4, 12), in);
  const Result r = run({"--gauss", "2", "--variant", "separable-local", "--bench", "1",
                        "--sweep-wg", "--bench-format", "json", in, out});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  ASSERT_TRUE(j.contains("sweep") && j["sweep"].is_array()) << r.out;
  ASSERT_EQ(j["sweep"].size(), 7u) << r.out;
  const std::vector<std::string> sizes = row_segment_sizes();
  for (size_t i = 0; i < sizes.size(); ++i) {
    const nlohmann::json& e = j["sweep"][i];
    EXPECT_EQ(e.value("wg", ""), sizes[i]) << e.dump();
    EXPECT_TRUE(e.contains("total") != e.contains("skipped")) << e.dump();  // timed or skipped
  }
  EXPECT_TRUE(j.contains("floor")) << r.out;
}

// The man page documents that --sweep-wg implies --bench 10. The tool does not do so yet (it
// writes the image and prints nothing); enable this test once it does.
TEST_F(Cli, GaussSweepWithoutBenchImpliesBench10) {
  const std::string in = in_ / "small.png", out = out_ / "o.png";
  save_image(random_image(31, 23, 4, 13), in);
  const Result r = run({"--gauss", "2", "--variant", "separable-local", "--sweep-wg", in, out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("10 runs"), std::string::npos) << r.out;
  const std::vector<std::string> words = first_words(r.out);
  for (const std::string& size : row_segment_sizes())
    EXPECT_EQ(std::count(words.begin(), words.end(), size), 1) << size << " in:\n" << r.out;
}

// The variants the radius sweep holds on the test device: tiled only off GPUs (a CPU
// schedule, 50-100x slower on a GPU; tools/bench_suite.cpp). The same as in
// tests/device/test_bench_suite.cpp.
std::vector<std::string> swept_variants() {
  std::vector<std::string> v = {"accumulated", "unrolled",        "scan",
                                "segmented",   "segmented-local", "fused"};
  if (!(runtime().device().type & CL_DEVICE_TYPE_GPU)) v.push_back("tiled");
  return v;
}

class BenchCli : public SubcommandCli {
 protected:
  BenchCli() : SubcommandCli("bench") {}
};

TEST_F(BenchCli, WritesJsonToStdoutAndTheChartToItsFile) {
  const Result r = run({"--quick", "--scale", "0.01", "--runs", "1", "--only", "sweep,bright",
                        "--bench-format", "json", "--plot", "sweep chart.svg"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  // The swept variants (tiled on CPUs only) at 9 radii, and every bright variant but auto.
  EXPECT_EQ(j["cases"].size(), swept_variants().size() * 9 + bright_variant_table().size() - 1);
  EXPECT_NE(read_file(root_ / "sweep chart.svg").find("<polyline"), std::string::npos);
  EXPECT_NE(r.err.find("sweep segmented rgba32f r=63: "), std::string::npos) << r.err;
}

TEST_F(BenchCli, BadArgumentsAreUsageErrorsBeforeAnyMeasurement) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--runs", "0"}, "--runs"},
      {{"--scale", "2"}, "--scale"},
      {{"--only", "box,blur"}, "--only 'blur'"},
      {{"--bench-format", "xml"}, "--bench-format"},
      {{"--plot", "no such folder/x.svg"}, "--plot"},
      {{"--only", "box", "--plot", "x.svg"}, "sweep"},
      {{"in.png"}, "in.png"},
  };
  for (const auto& [args, named] : cases) {
    // The bad value last: cxxopts keeps an option's last value.
    std::vector<std::string> all = {"--quick", "--scale", "0.01", "--runs", "1", "-q"};
    all.insert(all.end(), args.begin(), args.end());
    const Result r = run(all);
    EXPECT_EQ(r.status, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << args[0];
  }
  // Without -q too: the usage error's one line, and no banner of a device opened before it.
  const Result r = run({"--quick", "--only", "box,blur"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.find("bench on"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace blurtool
