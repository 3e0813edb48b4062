// End-to-end tests of `blurtool tune` and its table: a short run writes the table where auto
// reads it, bad options are usage errors, a cache folder that cannot take the table fails before
// measuring, and a table that is not valid is ignored with a warning. The table's use:
// tests/device/test_tune.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/cli_support.h"
#include "tests/support/test_support.h"
#include "tests/support/tune_fixture.h"
#include "tools/tune.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

TEST_F(Tune, CommandWritesTheTableAndRefusesBadOptions) {
  const fs::path scratch = dir_ / "scratch";
  fs::create_directories(scratch);
  Result r = run_blurtool({"tune", "--runs", "1", "--scale", "0.02"}, scratch, scratch);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("box r=30 rgba32f: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("table written to " + tune_table_path(runtime().device())),
            std::string::npos)
      << r.out;
  r = run_blurtool({"tune", "--runs", "0"}, scratch, scratch);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--runs"), std::string::npos) << r.err;
  r = run_blurtool({"tune", "--scale", "2"}, scratch, scratch);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--scale '2'"), std::string::npos) << r.err;
  r = run_blurtool({"tune", "photo.jpg"}, scratch, scratch);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unexpected argument 'photo.jpg'"), std::string::npos) << r.err;
}

// A batch of `input` blurred with --box 8 into `folder` under `scratch` (a batch keeps auto's
// pick on every device, as single mode does on CPUs), killed after two minutes (a table's
// negative segment hung PoCL): its result and the output's bytes.
std::pair<Result, std::string> blur_with_auto(const fs::path& input, const fs::path& scratch,
                                              const std::string& folder) {
  Spawn spawn;
  spawn.while_running = kill_after(std::chrono::minutes(2));
  // --device 0: a box filter with no device named runs on the host's cores, which take no table.
  const Result r = run_blurtool(
      {"--device", "0", "--box", "8", input.string(), "-o", (scratch / folder).string()}, scratch,
      scratch, spawn);
  return {r, read_file(scratch / folder / input.filename())};
}

// The lines of `text` that hold `part`.
int lines_with(const std::string& text, const std::string& part) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.find(part) != std::string::npos;
  return n;
}

// The tuning table is input like any other: a value the matching option refuses (a segment of
// -5 hung PoCL or made every pixel 0, a work-group of 0x8 gave a wrong image, both with exit 0),
// a table cut short or an empty file (every auto run exited 1) is ignored with one warning
// naming the file, the image is what it is without a table, and blurtool tune replaces it.
TEST_F(Tune, AnInvalidTableIsIgnoredWithOneWarningAndTuneReplacesIt) {
  const fs::path scratch = dir_ / "scratch";
  fs::create_directories(scratch);
  const fs::path input = scratch / "in.png";
  save_image(random_image(40, 30, 3, 5), input.string());
  const std::string table = tune_table_path(runtime().device());
  const auto [plain, want] = blur_with_auto(input, scratch, "plain");
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_FALSE(want.empty());

  auto entry = [](const std::string& variant, int segment, const std::string& wg) {
    return R"({"kernels": ")" + tune_kernels_fingerprint() +
           R"(", "entries": [{"op": "box", "intermediate": "rgba32f", "radius": 8, "variant": ")" +
           variant + R"(", "segment": )" + std::to_string(segment) + R"(, "unroll": 0, "wg": ")" +
           wg + R"(", "ms": 1, "width": 1920, "height": 1080}]})";
  };
  const std::string valid = entry("segmented", 16, "8x8");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"segment -5", entry("segmented", -5, "0x0")},
      {"work-group 0x8", entry("segmented", 0, "0x8")},
      {"cut short", valid.substr(0, valid.size() / 2)},
      {"empty", ""}};
  int n = 0;
  for (const auto& [name, text] : cases) {
    SCOPED_TRACE(name);
    write_table(text, false);
    const auto [r, got] = blur_with_auto(input, scratch, "out" + std::to_string(n++));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(got == want) << "not the image auto makes without a table";
    EXPECT_EQ(lines_with(r.err, "warning"), 1) << r.err;
    EXPECT_EQ(lines_with(r.err, "warning: " + table + ": ignored, not a valid tuning table"), 1)
        << r.err;
  }
  // A valid table is used without a word.
  write_table(valid, false);
  const auto [used, got] = blur_with_auto(input, scratch, "valid");
  EXPECT_EQ(used.status, 0) << used.err;
  EXPECT_EQ(lines_with(used.err, "warning"), 0) << used.err;
  EXPECT_TRUE(got == want);  // segmented is exact too

  write_table("", false);
  const Result t = run_blurtool({"tune", "--runs", "1", "--scale", "0.02"}, scratch, scratch);
  ASSERT_EQ(t.status, 0) << t.err;
  const auto [after, again] = blur_with_auto(input, scratch, "after tune");
  EXPECT_EQ(after.status, 0) << after.err;
  EXPECT_EQ(lines_with(after.err, "warning"), 0) << after.err;
  EXPECT_TRUE(again == want);
}

// tune checks that its cache folder can take the table before it measures anything (it measured
// for minutes, then failed to write): one line naming the folder, exit 1, no case timed.
TEST_F(Tune, ACacheFolderThatCannotTakeTheTableFailsBeforeMeasuring) {
  const fs::path scratch = dir_ / "scratch";
  fs::create_directories(scratch);
  write_file(dir_ / "a file", "x");
  const fs::path cache = dir_ / "a file" / "cache";
  save("BLURTOOL_CACHE_DIR", cache.c_str());
  const Result r = run_blurtool({"tune", "--runs", "1", "--scale", "0.02"}, scratch, scratch);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(lines_with(r.err, "blurtool: "), 1) << r.err;
  EXPECT_EQ(lines_with(r.err, "'" + cache.string() + "'"), 1) << r.err;
  EXPECT_EQ(r.out.find("box r="), std::string::npos) << "measured first:\n" << r.out;
}

}  // namespace
}  // namespace blurtool
