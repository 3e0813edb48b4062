// The fixture of the end-to-end tests of single-image mode and the subcommands (tests/cli/:
// test_blur.cpp, test_formats.cpp, test_files.cpp, test_options.cpp, test_devices.cpp,
// test_bench.cpp, test_bright.cpp, test_blas.cpp): the sample images, and a fresh temporary
// directory per test (its name holds spaces on purpose) with an input and an output folder.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/support/cli_support.h"

namespace blurtool {

using Files = std::set<std::string>;

inline const std::string kCoffee = std::string(BLURTOOL_SOURCE_DIR) + "/samples/coffee_600x400.png";
inline const std::string kDune = std::string(BLURTOOL_SOURCE_DIR) + "/samples/dune_1680x1050.jpg";
inline const std::string kHubble =
    std::string(BLURTOOL_SOURCE_DIR) + "/samples/hubble_deep_field_1000x872.jpg";

/// The names of the entries of `dir`.
inline Files listing(const std::filesystem::path& dir) {
  Files names;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    names.insert(entry.path().filename());
  return names;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    root_ = std::filesystem::temp_directory_path() /
            ("blurtool cli " + name + " " + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(in_ = root_ / "in dir");
    std::filesystem::create_directories(out_ = root_ / "out dir");
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  // Runs blurtool with `args` in directory `cwd` (default: the test's root). BLURTOOL_DEVICE is
  // removed from the environment, then set to `env_device` if that is not null.
  Result run(const std::vector<std::string>& args, const char* env_device = nullptr,
             const std::filesystem::path& cwd = {}) {
    Spawn spawn;
    spawn.env_device = env_device;
    return run_blurtool(args, cwd.empty() ? root_ : cwd, root_, spawn);
  }

  // A failed run: exit `status`, each of `parts` in stderr, and `out_` holding just `files`.
  void expect_failure(const Result& r, int status, const std::vector<std::string>& parts,
                      const Files& files) {
    EXPECT_EQ(r.status, status) << r.err;
    for (const std::string& part : parts)
      EXPECT_NE(r.err.find(part), std::string::npos) << "no '" << part << "' in: " << r.err;
    EXPECT_EQ(listing(out_), files) << "output directory changed";
  }

  std::filesystem::path root_, in_, out_;
};

}  // namespace blurtool
