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
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "filters/box/box_blur.h"
#include "filters/box/box_reference.h"
#include "runtime/cl_runtime.h"
#include "util/error.h"
#include "runtime/kernel_sources.h"
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

// --- Programs of the kernels a run uses --------------------------------------------------------

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The kernels whose definition ("kernel [__attribute__((...))] void name(") starts a line of
// `text`, with that line's number (1-based), read independently of the runtime's scanner.
std::vector<std::pair<std::string, size_t>> kernel_definitions(const std::string& text) {
  static const std::regex definition(R"(^\s*(__)?kernel\b.*?\bvoid\s+(\w+)\s*\()");
  std::vector<std::pair<std::string, size_t>> kernels;
  const std::vector<std::string> lines = lines_of(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_search(lines[i], m, definition)) kernels.emplace_back(m[2], i + 1);
  }
  return kernels;
}

std::set<std::string> program_kernel_names(const cl::Program& program) {
  std::set<std::string> names;
  std::istringstream in(program.getInfo<CL_PROGRAM_KERNEL_NAMES>());
  for (std::string name; std::getline(in, name, ';');)
    if (!name.empty()) names.insert(name);
  return names;
}

// Every kernel of every family, alone: its text keeps the line count and the kernel's own
// definition line where it was, holds no other kernel, and is the family's text with some lines
// blanked, nothing else changed.
TEST(KernelSelection, EachKernelAloneKeepsItsLinesAndDropsTheOthers) {
  size_t families = 0;
  for (const auto& [family, source] : kernel_sources()) {
    if (family == "common") continue;
    ++families;
    const std::string whole = program_source(family, {});
    const std::vector<std::string> whole_lines = lines_of(whole);
    const auto defined = kernel_definitions(whole);
    ASSERT_GE(defined.size(), 2u) << family;
    for (const auto& [name, line] : defined) {
      const std::string text = program_source(family, {name});
      const std::vector<std::string> lines = lines_of(text);
      ASSERT_EQ(lines.size(), whole_lines.size()) << family << " " << name;
      EXPECT_LT(text.size(), whole.size()) << family << " " << name;
      const std::vector<std::pair<std::string, size_t>> only = {{name, line}};
      EXPECT_EQ(kernel_definitions(text), only) << family << " " << name;
      for (size_t i = 0; i < lines.size(); ++i) {
        EXPECT_TRUE(lines[i].empty() || lines[i] == whole_lines[i])
            << family << " " << name << " line " << i + 1 << ": " << lines[i];
      }
    }
    // Two at once: both stay; the order and repeats of the names do not matter.
    const std::string pair = program_source(family, {defined[1].first, defined[0].first});
    EXPECT_EQ(kernel_definitions(pair).size(), 2u) << family;
    EXPECT_EQ(program_source(family, {defined[0].first, defined[1].first, defined[0].first}), pair);
  }
  EXPECT_GE(families, 5u);
  EXPECT_THROW(program_source("no_such_family", {"k"}), Error);
}

// What the selection keeps of texts made for it: helpers the kept kernel calls (and what they
// call), kernels that a kept kernel calls, macros and the functions they name, and whole texts
// where it cannot tell what a function's lines do.
TEST(KernelSelection, KeepsWhatItCannotProveUnused) {
  const std::string text =
      "#define SCALE 2\n"                                        // 1
      "inline int twice(int x) { return SCALE * x; }\n"          // 2
      "inline int used(int x) {\n"                               // 3
      "  return twice(x) + 1;\n"                                 // 4
      "}\n"                                                      // 5
      "inline int unused(int x) { return x; }\n"                 // 6
      "#define CALLS_NAMED(x) named(x)\n"                        // 7
      "inline int named(int x) { return x; }\n"                  // 8
      "kernel void a(global int* p) { p[0] = used(p[0]); }\n"    // 9
      "kernel __attribute__((reqd_work_group_size(1, 1, 1)))\n"  // 10
      "void b(global int* p) {\n"                                // 11
      "  a(p);  // a kernel that calls another\n"                // 12
      "}\n"                                                      // 13
      "kernel void c(global int* p) {\n"                         // 14
      "#define LOCAL_ONLY 3\n"                                   // 15
      "  p[0] = LOCAL_ONLY;\n"                                   // 16
      "#undef LOCAL_ONLY\n"                                      // 17
      "}\n"                                                      // 18
      "kernel void d(global int* p) {\n"                         // 19
      "#define LEAKS 4\n"                                        // 20
      "  p[0] = LEAKS;\n"                                        // 21
      "}\n"                                                      // 22
      "inline int after(void) { return LEAKS; }\n";              // 23
  auto kept = [&](const std::vector<std::string>& kernels) {
    const std::string selected = select_kernels(text, kernels);
    EXPECT_EQ(lines_of(selected).size(), lines_of(text).size());
    std::string lines;  // the numbers of the lines left, e.g. "1 2 3"
    const std::vector<std::string> all = lines_of(selected);
    for (size_t i = 0; i < all.size(); ++i)
      if (!all[i].empty()) lines += (lines.empty() ? "" : " ") + std::to_string(i + 1);
    return lines;
  };
  // a, its helper and the helper's helper, not unused(); named() stays since a macro names it;
  // d stays since a line after it names its macro, though after(), that line, goes (nothing
  // calls it).
  EXPECT_EQ(kept({"a"}), "1 2 3 4 5 7 8 9 19 20 21 22");
  // b calls a, so a and its helpers stay.
  EXPECT_EQ(kept({"b"}), "1 2 3 4 5 7 8 9 10 11 12 13 19 20 21 22");
  // c's macro lives and dies inside it.
  EXPECT_EQ(kept({"c"}), "1 7 8 14 15 16 17 18 19 20 21 22");
  EXPECT_EQ(kept({"c", "a"}), "1 2 3 4 5 7 8 9 14 15 16 17 18 19 20 21 22");
  EXPECT_EQ(select_kernels(text, {}), text);
  EXPECT_EQ(select_kernels(text, {"no_such_kernel"}), text);
  EXPECT_EQ(select_kernels(text, {"twice"}), text);  // a function, not a kernel

  // A kernel that a macro defines is not seen: asking for it keeps everything, and the macro's
  // use stays whatever is asked for.
  const std::string made =
      "#define MAKE(n) kernel void n(global int* p) { p[0] = 1; }\n"
      "MAKE(made)\n"
      "kernel void plain(global int* p) { p[0] = 2; }\n";
  EXPECT_EQ(select_kernels(made, {"made"}), made);
  EXPECT_EQ(select_kernels(made, {"plain"}), made);
  EXPECT_EQ(select_kernels(made, {"plain", "made"}), made);
  // Braces that differ between the branches of an #if: the text as it is.
  const std::string branches =
      "kernel void x(global int* p) {\n"
      "#ifdef A\n"
      "  if (p[0]) {\n"
      "#else\n"
      "  if (p[1]) {\n"
      "#endif\n"
      "    p[2] = 0;\n"
      "  }\n"
      "}\n"
      "kernel void y(global int* p) { p[0] = 0; }\n";
  EXPECT_EQ(select_kernels(branches, {"y"}), branches);
  // A comment or literal that mentions a name is no use of it.
  const std::string mentions =
      "inline int helper(void) { return 1; }\n"
      "kernel void k(global int* p) { p[0] = 0; }  // not helper()\n"
      "/* helper */ kernel void other(global int* p) { p[0] = helper(); }\n";
  EXPECT_EQ(select_kernels(mentions, {"k"}),
            "\nkernel void k(global int* p) { p[0] = 0; }  // "
            "not helper()\n\n");
}

// Programs built for a selection hold just those kernels (CL_PROGRAM_KERNEL_NAMES); the
// selection is part of the in-memory key, in any order; a kernel the family lacks is an
// OpenCL error, not a crash.
TEST(ClRuntime, ProgramsHoldOnlyTheSelectedKernels) {
  ScopedEnv env;
  env.set("BLURTOOL_PROGRAM_CACHE", "off");
  Runtime rt(select_device(""));
  cl::Program& tiled = rt.program("box", "", {"box_tiled"});
  EXPECT_EQ(program_kernel_names(tiled), std::set<std::string>{"box_tiled"});
  EXPECT_EQ(tiled.getInfo<CL_PROGRAM_NUM_KERNELS>(), 1u);
  cl::Program& pair = rt.program("box", "", {"box_rows_direct", "box_cols_direct"});
  EXPECT_EQ(program_kernel_names(pair),
            (std::set<std::string>{"box_cols_direct", "box_rows_direct"}));
  EXPECT_EQ(rt.program_cache_stats().built, 2);
  cl::Program& again =
      rt.program("box", "", {"box_cols_direct", "box_rows_direct", "box_cols_direct"});
  EXPECT_EQ(&again, &pair);
  EXPECT_EQ(rt.program_cache_stats().built, 2);
  // One kernel a program: no sharing between two single-kernel selections.
  const std::vector<cl::Kernel> both =
      rt.kernels("box", {"box_rows_direct", "box_cols_direct"}, "");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].getInfo<CL_KERNEL_FUNCTION_NAME>(), "box_rows_direct");
  EXPECT_EQ(both[1].getInfo<CL_KERNEL_FUNCTION_NAME>(), "box_cols_direct");
  EXPECT_EQ(rt.program_cache_stats().built, 2);
  const cl::Kernel single = rt.kernel("box", "box_single", "");
  EXPECT_EQ(program_kernel_names(single.getInfo<CL_KERNEL_PROGRAM>()),
            std::set<std::string>{"box_single"});
  EXPECT_EQ(rt.program_cache_stats().built, 3);
  // No selection: the whole family.
  const std::set<std::string> whole = program_kernel_names(rt.program("box", ""));
  EXPECT_GT(whole.size(), 10u);
  EXPECT_TRUE(whole.count("box_tiled") && whole.count("box_single") &&
              whole.count("box_cols_ring"));
  EXPECT_THROW(rt.kernel("bright", "no_such_kernel", ""), cl::Error);
}

// A failed build of a selection names it, and its log points at the family file's own line.
TEST(ClRuntime, FailedBuildOfASelectionPointsAtTheFamilyLine) {
  ScopedEnv env;
  env.set("BLURTOOL_PROGRAM_CACHE", "off");
  Runtime rt(select_device(""));
  // box_cols_scan's first use of SCAN_LANES, as the family file numbers it.
  const std::vector<std::string> lines = lines_of(kernel_sources().at("box"));
  size_t line = 0;
  for (size_t i = 0, in_kernel = 0; i < lines.size() && !line; ++i) {
    if (lines[i].find("void box_cols_scan(") != std::string::npos) in_kernel = 1;
    if (in_kernel && lines[i].find("SCAN_LANES") != std::string::npos && lines[i].find("//") != 0)
      line = i + 1;
  }
  ASSERT_GT(line, 0u);
  try {
    rt.program("box", "-DSCAN_LANES=no_such_size", {"box_cols_scan"});
    FAIL() << "the build should have failed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("building kernels/box.cl (box_cols_scan) failed"), std::string::npos)
        << what;
    EXPECT_NE(what.find(":" + std::to_string(line) + ":"), std::string::npos)
        << "line " << line << " not in: " << what;
  }
}

// NVIDIA's compiler ignores #line and numbers the program's physical lines as "<kernel>:N:":
// family_locations writes them in the family file's numbering, as PoCL's log already is.
TEST(ClRuntime, NvidiaBuildLogLocationsNameTheFamilyLine) {
  const std::string program = program_source("box", {"box_cols_scan"});
  const std::vector<std::string> physical = lines_of(program);
  const std::vector<std::string> family = lines_of(kernel_sources().at("box"));
  size_t at = 0;  // box_cols_scan's first line, physical
  while (at < physical.size() && physical[at].find("void box_cols_scan(") == std::string::npos) ++at;
  ASSERT_LT(at, physical.size());
  size_t line = 0;  // ... and in the family file
  while (line < family.size() && family[line].find("void box_cols_scan(") == std::string::npos)
    ++line;
  ASSERT_LT(line, family.size());
  const std::string log = "<kernel>:" + std::to_string(at + 1) + ":19: error: x\n<kernel>:3:1: note: y\n" +
                          "<kernel>: no number\n";
  EXPECT_EQ(family_locations(log, "box"), "kernels/box.cl:" + std::to_string(line + 1) +
                                              ":19: error: x\nkernels/common.cl:3:1: note: y\n" +
                                              "<kernel>: no number\n");
  EXPECT_EQ(family_locations("no location", "box"), "no location");
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
