// The OpenCL runtime's user-facing behaviour: error codes named, never bare numbers; a failed
// kernel build reported with its log and -D options; device selection by index and by name; and
// the message when no OpenCL platform is installed at all.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/cl_runtime.h"
#include "core/error.h"

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

TEST(ClRuntime, SelectsDevicesByIndexAndName) {
  const std::vector<DeviceInfo> devices = list_devices();
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(select_device("0").name, devices[0].name);
  // Case-insensitive part of the platform name.
  std::string part = devices[0].platform.substr(0, 4);
  for (char& c : part) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(select_device(part).platform, devices[0].platform);
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

}  // namespace
}  // namespace blurtool
