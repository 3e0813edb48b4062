// The OpenCL runtime on a device: a failed kernel build reported with its log and -D options,
// options and build logs from the environment, programs of only the selected kernels, device
// selection by index and by name, and the on-disk program cache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "filters/box/box_blur.h"
#include "filters/box/box_reference.h"
#include "runtime/cl_runtime.h"
#include "runtime/kernel_sources.h"
#include "tests/support/test_support.h"
#include "util/error.h"

namespace blurtool {
namespace {

TEST(ClRuntime, FailedBuildReportsLogAndOptions) {
  Runtime runtime(select_device(""));
  try {
    runtime.program("box_running", "-DSCAN_LANES=no_such_size");
    FAIL() << "the build should have failed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kernels/box_running.cl"), std::string::npos) << what;
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
    runtime.program("box_running", "");
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

// --- Programs of the kernels a run uses --------------------------------------------------------

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::set<std::string> program_kernel_names(const cl::Program& program) {
  std::set<std::string> names;
  std::istringstream in(program.getInfo<CL_PROGRAM_KERNEL_NAMES>());
  for (std::string name; std::getline(in, name, ';');)
    if (!name.empty()) names.insert(name);
  return names;
}

// Programs built for a selection hold just those kernels (CL_PROGRAM_KERNEL_NAMES); the
// selection is part of the in-memory key, in any order; a kernel the family lacks is an
// OpenCL error, not a crash.
TEST(ClRuntime, ProgramsHoldOnlyTheSelectedKernels) {
  ScopedEnv env;
  env.set("BLURTOOL_PROGRAM_CACHE", "off");
  Runtime rt(select_device(""));
  cl::Program& tiled = rt.program("box_buffer", "", {"box_tiled"});
  EXPECT_EQ(program_kernel_names(tiled), std::set<std::string>{"box_tiled"});
  EXPECT_EQ(tiled.getInfo<CL_PROGRAM_NUM_KERNELS>(), 1u);
  cl::Program& pair = rt.program("box_window", "", {"box_rows_direct", "box_cols_direct"});
  EXPECT_EQ(program_kernel_names(pair),
            (std::set<std::string>{"box_cols_direct", "box_rows_direct"}));
  EXPECT_EQ(rt.program_cache_stats().built, 2);
  cl::Program& again =
      rt.program("box_window", "", {"box_cols_direct", "box_rows_direct", "box_cols_direct"});
  EXPECT_EQ(&again, &pair);
  EXPECT_EQ(rt.program_cache_stats().built, 2);
  // One kernel a program: no sharing between two single-kernel selections.
  const std::vector<cl::Kernel> both =
      rt.kernels("box_window", {"box_rows_direct", "box_cols_direct"}, "");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].getInfo<CL_KERNEL_FUNCTION_NAME>(), "box_rows_direct");
  EXPECT_EQ(both[1].getInfo<CL_KERNEL_FUNCTION_NAME>(), "box_cols_direct");
  EXPECT_EQ(rt.program_cache_stats().built, 2);
  const cl::Kernel single = rt.kernel("box_window", "box_single", "");
  EXPECT_EQ(program_kernel_names(single.getInfo<CL_KERNEL_PROGRAM>()),
            std::set<std::string>{"box_single"});
  EXPECT_EQ(rt.program_cache_stats().built, 3);
  // No selection: the whole family.
  const std::set<std::string> whole = program_kernel_names(rt.program("box_running", ""));
  EXPECT_EQ(whole.size(), 5u);
  EXPECT_TRUE(whole.count("box_rows_segmented") && whole.count("box_cols_scan") &&
              whole.count("box_cols_ring"));
  EXPECT_THROW(rt.kernel("bright", "no_such_kernel", ""), cl::Error);
}

// A failed build of a selection names it, and its log points at the family file's own line.
TEST(ClRuntime, FailedBuildOfASelectionPointsAtTheFamilyLine) {
  ScopedEnv env;
  env.set("BLURTOOL_PROGRAM_CACHE", "off");
  Runtime rt(select_device(""));
  // box_cols_scan's first use of SCAN_LANES, as the family file numbers it.
  const std::vector<std::string> lines = lines_of(kernel_sources().at("box_running"));
  size_t line = 0;
  for (size_t i = 0, in_kernel = 0; i < lines.size() && !line; ++i) {
    if (lines[i].find("void box_cols_scan(") != std::string::npos) in_kernel = 1;
    if (in_kernel && lines[i].find("SCAN_LANES") != std::string::npos && lines[i].find("//") != 0)
      line = i + 1;
  }
  ASSERT_GT(line, 0u);
  try {
    rt.program("box_running", "-DSCAN_LANES=no_such_size", {"box_cols_scan"});
    FAIL() << "the build should have failed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("building kernels/box_running.cl (box_cols_scan) failed"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find(":" + std::to_string(line) + ":"), std::string::npos)
        << "line " << line << " not in: " << what;
  }
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

// Two selections of one family and options are two entries on disk, each loaded back as its
// own program by a new Runtime: never one for the other.
TEST_F(ProgramCache, TwoSelectionsNeverShareAnEntry) {
  {
    Runtime rt(select_device(""));
    rt.program("bright", "", {"bright_serial"});
    rt.program("bright", "", {"bright_tree"});
    EXPECT_EQ(rt.program_cache_stats().built, 2);
    EXPECT_EQ(rt.program_cache_stats().stored, 2);
  }
  EXPECT_EQ(cached_files().size(), 2u);
  Runtime rt(select_device(""));
  EXPECT_EQ(program_kernel_names(rt.program("bright", "", {"bright_tree"})),
            std::set<std::string>{"bright_tree"});
  EXPECT_EQ(program_kernel_names(rt.program("bright", "", {"bright_serial"})),
            std::set<std::string>{"bright_serial"});
  EXPECT_EQ(rt.program_cache_stats().loaded, 2);
  EXPECT_EQ(rt.program_cache_stats().built, 0);
  // The whole family is a third entry.
  EXPECT_GT(program_kernel_names(rt.program("bright", "")).size(), 2u);
  EXPECT_EQ(rt.program_cache_stats().built, 1);
  EXPECT_EQ(cached_files().size(), 3u);
}

TEST_F(ProgramCache, TurnedOffItNeitherReadsNorWrites) {
  save("BLURTOOL_PROGRAM_CACHE", "0");
  const ProgramCacheStats stats = blur_with_new_runtime();
  EXPECT_GE(stats.built, 1);
  EXPECT_EQ(stats.stored, 0);
  EXPECT_TRUE(cached_files().empty());
}

}  // namespace
}  // namespace blurtool
