// End-to-end test of `blurtool tune`: a short run writes the table where auto reads it, and bad
// options are usage errors. The table's use: tests/device/test_tune.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

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

}  // namespace
}  // namespace blurtool
