// The OpenCL runtime's user-facing behaviour: error codes named, never bare numbers; a failed
// kernel build reported with its log and -D options; device selection by index and by name; and
// the message when no OpenCL platform is installed at all; the on-disk program cache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "core/box_blur.h"
#include "core/box_reference.h"
#include "core/cl_runtime.h"
#include "core/error.h"
#include "tests/cli_support.h"
#include "tests/test_support.h"

namespace blurtool {
namespace {

TEST(ClErrors, CodesHaveNames) {
  EXPECT_EQ(cl_error_name(CL_INVALID_IMAGE_SIZE), "CL_INVALID_IMAGE_SIZE");
  EXPECT_EQ(cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_EQ(cl_error_name(-9999), "CL_UNKNOWN_ERROR");
  const std::string line =
      describe_cl_error(cl::Error(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateImage"));
  EXPECT_EQ(line, "clCreateImage failed: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)");
  EXPECT_NE(describe_cl_error(cl::Error(-1001, "clGetPlatformIDs")).find("pocl-opencl-icd"),
            std::string::npos);
}

TEST(ClRuntime, FailedBuildReportsLogAndOptions) {
  Runtime runtime(select_device(""));
  try {
    runtime.program("box", "-DSCAN_LANES=no_such_size");
    FAIL() << "the build should have failed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kernels/box.cl"), std::string::npos) << what;
    EXPECT_NE(what.find("-DSCAN_LANES=no_such_size"), std::string::npos) << what;
    // The options name it once; the compiler's build log must name it again.
    size_t mentions = 0;
    for (size_t at = what.find("no_such_size"); at != std::string::npos;
         at = what.find("no_such_size", at + 1))
      ++mentions;
    EXPECT_GE(mentions, 2u) << "no build log in: " << what;
  }
  EXPECT_THROW(runtime.program("no_such_family", ""), Error);
}

// BLURTOOL_CL_OPTIONS reaches the compiler (a macro it defines breaks the build on purpose,
// and the error names it among the options); BLURTOOL_BUILD_LOG prints each build.
TEST(ClRuntime, ExtraBuildOptionsAndBuildLogFromTheEnvironment) {
  ScopedEnv env;
  env.set("BLURTOOL_PROGRAM_CACHE", "off");
  env.set("BLURTOOL_CL_OPTIONS", "-DSCAN_LANES=from_the_environment");
  Runtime runtime(select_device(""));
  try {
    runtime.program("box", "");
    FAIL() << "the extra options did not reach the build";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("options '-DSCAN_LANES=from_the_environment'"),
              std::string::npos)
        << e.what();
  }
  env.set("BLURTOOL_CL_OPTIONS", "-DBLURTOOL_TEST_OPTION=1");
  env.set("BLURTOOL_BUILD_LOG", "1");
  ::testing::internal::CaptureStderr();
  runtime.program("bright", "-DFROM_THE_SCHEDULE");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("blurtool: built kernels/bright.cl on " + runtime.device().name +
                     " with options '-DFROM_THE_SCHEDULE -DBLURTOOL_TEST_OPTION=1'"),
            std::string::npos)
      << err;
  env.set("BLURTOOL_BUILD_LOG", "0");
  ::testing::internal::CaptureStderr();
  runtime.program("bright", "-DFROM_THE_SCHEDULE -DSECOND");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(ClRuntime, SelectsDevicesByIndexAndName) {
  const std::vector<DeviceInfo> devices = list_devices();
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(select_device("0").name, devices[0].name);
  // Case-insensitive part of the platform name.
  std::string part = devices[0].platform.substr(0, 4);
  for (char& c : part) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(select_device(part).platform, devices[0].platform);
  // The driver's short name in the device version (PoCL's "PoCL", NVIDIA's "CUDA") picks a
  // device with it: the README's BLURTOOL_DEVICE=pocl. Other words of the version do not.
  auto lower = [](std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  };
  const std::string driver = device_driver_name(devices[0]);
  if (devices[0].platform == "Portable Computing Language") {
    EXPECT_EQ(driver, "PoCL") << devices[0].version;
  }
  if (!driver.empty()) {
    EXPECT_EQ(lower(device_driver_name(select_device(lower(driver)))), lower(driver));
  }
  bool opencl_in_a_name = false;
  for (const DeviceInfo& d : devices)
    opencl_in_a_name =
        opencl_in_a_name || lower(d.platform + d.name).find("opencl") != std::string::npos;
  if (!opencl_in_a_name) {
    EXPECT_THROW(select_device("OpenCL"), UsageError);
  }
  EXPECT_THROW(select_device(std::to_string(devices.size())), UsageError);
  EXPECT_THROW(select_device("no such device anywhere"), UsageError);
}

// With the ICD loader pointed at an empty vendor directory there is no platform (-1001): the
// message must say what to install, and the exit status is 1.
TEST(ClRuntime, NoPlatformSaysWhatToInstall) {
  namespace fs = std::filesystem;
  const fs::path empty = fs::temp_directory_path() / "blurtool-no-icd";
  fs::create_directories(empty);
  const fs::path log = empty / "stderr.txt";
  const std::string command = "OCL_ICD_VENDORS='" + empty.string() +
                              "' '" BLURTOOL_BINARY "' --list-devices 2>'" + log.string() +
                              "' >/dev/null";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::FILE* f = std::fopen(log.c_str(), "r");
  ASSERT_NE(f, nullptr);
  char buffer[1024] = {};
  size_t n = std::fread(buffer, 1, sizeof buffer - 1, f);
  std::fclose(f);
  const std::string text(buffer, n);
  EXPECT_NE(text.find("no OpenCL platform"), std::string::npos) << text;
  EXPECT_NE(text.find("pocl-opencl-icd"), std::string::npos) << text;
  fs::remove_all(empty);
}

// The on-disk program cache, in a folder of its own (BLURTOOL_CACHE_DIR): each test sets the
// variables it needs and restores them, since getenv is read at every program build.
class ProgramCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("blurtool program cache " + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    save("BLURTOOL_CACHE_DIR", dir_.c_str());
    save("BLURTOOL_PROGRAM_CACHE", "on");  // write even where the driver caches (auto does not)
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void save(const std::string& name, const char* value) { env_.set(name, value); }
  std::vector<std::filesystem::path> cached_files() const {
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir_ / "programs", ec))
      files.push_back(e.path());
    return files;
  }
  // A box blur of a fixed random image with a new Runtime, checked against the reference;
  // returns what that Runtime's program cache did.
  ProgramCacheStats blur_with_new_runtime() {
    Runtime rt(select_device(""));
    const Image input = random_rgba(37, 29, 9);
    BoxParams params;
    params.radius = 3;
    params.variant = BoxVariant::double_pass;
    EXPECT_EQ(max_error(box_blur(rt, input, params), box_blur_reference(input, 3, EdgeMode::clamp)),
              0);
    return rt.program_cache_stats();
  }

  std::filesystem::path dir_;
  ScopedEnv env_;
};

TEST_F(ProgramCache, SecondRuntimeLoadsTheBinaryTheFirstStored) {
  const ProgramCacheStats first = blur_with_new_runtime();
  EXPECT_GE(first.built, 1);
  EXPECT_EQ(first.stored, first.built);
  EXPECT_EQ(first.loaded, 0);
  EXPECT_EQ(cached_files().size(), static_cast<size_t>(first.stored));
  const ProgramCacheStats second = blur_with_new_runtime();
  EXPECT_EQ(second.loaded, first.built);
  EXPECT_EQ(second.built, 0);
  EXPECT_EQ(second.stored, 0);
}

TEST_F(ProgramCache, DamagedOrForeignFilesAreMissesAndReplaced) {
  const ProgramCacheStats first = blur_with_new_runtime();
  ASSERT_GE(first.stored, 1);
  const std::vector<std::filesystem::path> files = cached_files();
  ASSERT_FALSE(files.empty());
  const std::string good = read_file(files[0]);
  const size_t key_at = std::string("blurtool program binary 2\n").size() + 8;
  ASSERT_GT(good.size(), key_at + 1000);
  std::string foreign = good;  // another key under this file's name: a hash collision
  foreign[key_at] = static_cast<char>(foreign[key_at] ^ 0x20);
  std::string damaged = good;  // the key intact, the binary garbage and short
  for (size_t i = damaged.size() - 512; i < damaged.size(); ++i) damaged[i] = '\x5a';
  damaged.resize(damaged.size() - 100);
  for (const std::string& bad : {foreign, damaged, good.substr(0, key_at - 8), std::string()}) {
    for (const auto& file : files) write_file(file, bad);
    const ProgramCacheStats again = blur_with_new_runtime();
    EXPECT_EQ(again.loaded, 0);
    EXPECT_EQ(again.built, first.built);
    EXPECT_EQ(again.stored, first.built);  // every bad file replaced
    EXPECT_EQ(read_file(files[0]).substr(0, key_at + 200), good.substr(0, key_at + 200));
  }
  const ProgramCacheStats last = blur_with_new_runtime();
  EXPECT_EQ(last.loaded, first.built);
  EXPECT_EQ(last.built, 0);
}

TEST_F(ProgramCache, AutoWritesOnlyWhereTheDriverKeepsNoCacheButAlwaysReads) {
  save("BLURTOOL_PROGRAM_CACHE", nullptr);  // auto
  const bool driver_caches = driver_caches_programs(runtime().device());
  const ProgramCacheStats first = blur_with_new_runtime();
  EXPECT_EQ(first.stored, driver_caches ? 0 : first.built);
  EXPECT_EQ(cached_files().size(), static_cast<size_t>(first.stored));
  save("BLURTOOL_PROGRAM_CACHE", "on");
  const ProgramCacheStats written = blur_with_new_runtime();
  save("BLURTOOL_PROGRAM_CACHE", "auto");
  const ProgramCacheStats read = blur_with_new_runtime();
  EXPECT_EQ(read.loaded, written.built + written.loaded);
  EXPECT_EQ(read.built, 0);
  // Which drivers count as caching their own: PoCL unless POCL_KERNEL_CACHE=0.
  DeviceInfo pocl;
  pocl.platform = "Portable Computing Language";
  save("POCL_KERNEL_CACHE", nullptr);
  EXPECT_TRUE(driver_caches_programs(pocl));
  save("POCL_KERNEL_CACHE", "0");
  EXPECT_FALSE(driver_caches_programs(pocl));
  DeviceInfo other;
  other.platform = "Intel(R) OpenCL Graphics";
  EXPECT_FALSE(driver_caches_programs(other));
}

TEST_F(ProgramCache, TurnedOffItNeitherReadsNorWrites) {
  save("BLURTOOL_PROGRAM_CACHE", "0");
  const ProgramCacheStats stats = blur_with_new_runtime();
  EXPECT_GE(stats.built, 1);
  EXPECT_EQ(stats.stored, 0);
  EXPECT_TRUE(cached_files().empty());
}

TEST(CacheDirectory, FollowsTheEnvironment) {
  const char* saved = std::getenv("BLURTOOL_CACHE_DIR");
  const std::string restore = saved ? saved : "";
  ::setenv("BLURTOOL_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(cache_directory(), "/some/where");
  ::unsetenv("BLURTOOL_CACHE_DIR");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg)
    EXPECT_EQ(cache_directory(), std::string(xdg) + "/blurtool");
  else
    EXPECT_EQ(cache_directory(), std::string(std::getenv("HOME")) + "/.cache/blurtool");
  if (saved) ::setenv("BLURTOOL_CACHE_DIR", restore.c_str(), 1);
  EXPECT_EQ(file_name_safe("NVIDIA CUDA/535.1"), "NVIDIA_CUDA_535.1");
}

}  // namespace
}  // namespace blurtool
