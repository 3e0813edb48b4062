// The fixture of the tests of the tuning table (tests/device/test_tune.cpp) and of `blurtool
// tune` (tests/cli/test_tune.cpp): each test gets a cache folder of its own (BLURTOOL_CACHE_DIR),
// so that its table reaches no other test, and BLURTOOL_TUNE unset.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/test_support.h"
#include "tools/tune.h"

namespace blurtool {

class Tune : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("blurtool tune " + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    save("BLURTOOL_CACHE_DIR", dir_.c_str());
    save("BLURTOOL_TUNE", nullptr);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void save(const std::string& name, const char* value) { env_.set(name, value); }
  // Writes `text`, a JSON object, as this device's table, tuned on these kernels unless
  // `current` is false (then as it is).
  void write_table(const std::string& text, bool current = true) {
    const std::string path = tune_table_path(runtime().device());
    EXPECT_EQ(std::filesystem::path(path).parent_path(), dir_);
    std::ofstream(path) << (current ? "{\"kernels\": \"" + tune_kernels_fingerprint() + "\", " +
                                          text.substr(text.find('{') + 1)
                                    : text);
  }
  std::filesystem::path dir_;
  ScopedEnv env_;
};

}  // namespace blurtool
