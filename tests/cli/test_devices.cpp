// End-to-end tests of device choice: --list-devices, with and without an OpenCL platform installed,
// --device by index and BLURTOOL_DEVICE, and a device out of memory. Each test runs the real binary
// (fork + execve, no shell, so paths with spaces need no quoting) in its own temporary directory,
// whose name holds spaces on purpose, with stdout and stderr captured to files
// (support/cli_fixture.h). Successful runs are decoded and compared with the exact CPU reference;
// failures must give the documented exit status (1 file or device, 2 usage), a stderr line naming
// the file or option at fault, and leave the output directory exactly as it was (no output, no
// hidden .NAME.blurtool-XXXXXX temporary file).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "runtime/cl_runtime.h"
#include "tests/support/cli_fixture.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

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

// A device that runs out of memory (simulated: BLURTOOL_FAIL_ALLOCATION=WxH fails every
// allocation for a WxH image) is named with the sizes and what to try; a batch goes on, and
// the suggested --max-tile gets the image done.
TEST_F(Cli, DeviceOutOfMemoryIsNamedAndTheBatchGoesOn) {
  ::setenv("BLURTOOL_FAIL_ALLOCATION", "600x400", 1);
  // A box filter with no device named runs on the host's cores: --device 0 asks for the device.
  const Result single = run({"--device", "0", "--box", "3", kCoffee, out_ / "o.png"});
  const Result batch = run({"--device", "0", "--box", "3", kCoffee, kDune, "-o", out_ / "batch"});
  const Result tiled =
      run({"--device", "0", "--box", "3", "--max-tile", "300x200", kCoffee, out_ / "t.png"});
  ::unsetenv("BLURTOOL_FAIL_ALLOCATION");
  for (const Result* r : {&single, &batch}) {
    EXPECT_EQ(r->status, 1) << r->err;
    for (const std::string part :
         {"device '", "600x400 image", "MiB in", "MiB an allocation",
          "CL_MEM_OBJECT_ALLOCATION_FAILURE", "--max-tile 300x200", "--device"})
      EXPECT_NE(r->err.find(part), std::string::npos) << "no '" << part << "' in: " << r->err;
  }
  EXPECT_FALSE(fs::exists(out_ / "o.png"));
  EXPECT_NE(batch.err.find(kCoffee + ": device"), std::string::npos) << batch.err;
  EXPECT_NE(batch.err.find("1 done, 0 skipped, 1 failed"), std::string::npos) << batch.err;
  EXPECT_TRUE(fs::exists(out_ / "batch" / "dune_1680x1050.jpg"));
  EXPECT_FALSE(fs::exists(out_ / "batch" / "coffee_600x400.png"));
  EXPECT_EQ(tiled.status, 0) << tiled.err;
  EXPECT_TRUE(fs::exists(out_ / "t.png"));
}

// A box filter with no device named runs on the host's cores (box_blur_host): with no OpenCL
// platform at all it still gives the reference's bytes, where a Gaussian says what to install.
// --device host asks for the host and refuses, by name, what it cannot run.
TEST_F(Cli, TheHostRunsABoxFilterAndAGaussianWithoutAnyOpenCLDevice) {
  const Image input = random_image(41, 29, 3, 8);
  const std::string in = in_ / "in.png";
  save_image(input, in);
  Image clear = random_image(9, 7, 4, 9);
  clear.pixels[3] = 10;  // one pixel with transparency: blurred premultiplied, on a device
  save_image(clear, in_ / "clear.png");
  const fs::path empty = root_ / "no-icd";
  fs::create_directories(empty);
  ::setenv("OCL_ICD_VENDORS", empty.c_str(), 1);
  const Result box = run({"--box", "4", "--edge", "mirror", in, out_ / "box.png"});
  const Result gauss = run({"--gauss", "2", "--edge", "zero", in, out_ / "gauss.png"});
  const Result pyramid = run({"--gauss", "9", in, out_ / "pyramid.png"});
  const Result bright = run({"--bright", "0.8", in, out_ / "bright.png"});
  ::unsetenv("OCL_ICD_VENDORS");
  ASSERT_EQ(box.status, 0) << box.err;
  EXPECT_EQ(max_diff(load_image(out_ / "box.png"), expected_box(input, 4, EdgeMode::mirror)), 0);
  ASSERT_EQ(gauss.status, 0) << gauss.err;
  EXPECT_LE(max_diff(load_image(out_ / "gauss.png"), expected_gauss(input, 2, 6, EdgeMode::zero)),
            1);
  ASSERT_EQ(pyramid.status, 0) << pyramid.err;  // sigma 9: auto takes the pyramid
  const Image expected_pyramid = expected_blur(
      input, [](const Image16& i) { return gauss_pyramid_reference(i, 9, EdgeMode::clamp); },
      [](const Image& i) { return gauss_pyramid_reference(i, 9, EdgeMode::clamp); });
  EXPECT_LE(max_diff(load_image(out_ / "pyramid.png"), expected_pyramid), 1);
  EXPECT_EQ(bright.status, 1) << bright.err;
  EXPECT_NE(bright.err.find("no OpenCL platform"), std::string::npos) << bright.err;

  const Result host = run({"--device", "host", "--box", "4", in, out_ / "host.png"});
  ASSERT_EQ(host.status, 0) << host.err;
  EXPECT_EQ(max_diff(load_image(out_ / "host.png"), expected_box(input, 4, EdgeMode::clamp)), 0);
  const Files kept = {"box.png", "gauss.png", "pyramid.png", "host.png"};
  expect_failure(run({"--device", "HOST", "--bright", "0.8", in, out_ / "b.png"}), 2,
                 {"--device HOST: the host's cores run the box filter and the Gaussian; --bright "
                  "runs on a device"},
                 kept);
  expect_failure(run({"--device", "host", "--box", "2", "--variant", "scan", in, out_ / "v.png"}),
                 2, {"--device host: --variant"}, kept);
  expect_failure(run({"--gauss", "2", "--gauss-method", "fast", in, out_ / "g.png"}, "host"), 2,
                 {"BLURTOOL_DEVICE=host: the Gaussian's fast method"}, kept);
  expect_failure(
      run({"--device", "host", "--gauss", "30", "--gauss-method", "exact", in, out_ / "g.png"}), 2,
      {"--device host: the exact Gaussian's radius 90", "instead of the host"}, kept);
  expect_failure(run({"--device", "host", "--box", "2", in_ / "clear.png", out_ / "c.png"}), 2,
                 {"--device host: '", "clear.png' has transparency"}, kept);
  // Without --device, transparency goes to a device, premultiplied as ever.
  const Result clear_run = run({"--box", "2", in_ / "clear.png", out_ / "c.png"});
  EXPECT_EQ(clear_run.status, 0) << clear_run.err;
}

TEST_F(Cli, ListDevicesPrintsHeaderAndADevice) {
  const Result r = run({"--list-devices"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, device;
  std::getline(lines, header);
  EXPECT_NE(header.find("platform"), std::string::npos) << r.out;
  ASSERT_TRUE(std::getline(lines, device)) << r.out;
  EXPECT_EQ(device.rfind("0 ", 0), 0u) << device;  // rows start with the device index
}

// A platform that reports no device (PoCL told to offer a driver it has not: a driver that could
// not start reads the same) is named, rather than "install a driver": --list-devices and a run on
// a named device fail (exit 1) with one line saying so, and no output is left.
TEST_F(Cli, APlatformWithoutDevicesIsNamed) {
  // PoCL alone (a GPU's platform beside it would list its devices).
  const fs::path pocl = "/etc/OpenCL/vendors/pocl.icd";
  if (!fs::exists(pocl)) GTEST_SKIP() << "needs PoCL's " << pocl;
  const fs::path vendors = root_ / "pocl-only";
  fs::create_directories(vendors);
  fs::copy_file(pocl, vendors / "pocl.icd");
  ::setenv("OCL_ICD_VENDORS", vendors.c_str(), 1);
  ::setenv("POCL_DEVICES", "no-such-driver", 1);
  const Result list = run({"--list-devices"});
  const std::string out = (out_ / "o.png").string();
  const Result blur = run({"--box", "2", "--device", "0", kCoffee, out});
  ::unsetenv("POCL_DEVICES");
  ::unsetenv("OCL_ICD_VENDORS");
  for (const Result* r : {&list, &blur}) {
    EXPECT_EQ(r->status, 1) << r->err;
    EXPECT_EQ(std::count(r->err.begin(), r->err.end(), '\n'), 1) << r->err;
    EXPECT_NE(r->err.find("no OpenCL device found: the OpenCL platform '"), std::string::npos)
        << r->err;
    EXPECT_NE(r->err.find("' reports none (its driver failed to start or offers none"),
              std::string::npos)
        << r->err;
  }
  EXPECT_EQ(list.out, "");
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(Cli, AnUnknownDeviceIndexPointsToListDevicesOnce) {
  save_image(random_image(8, 8, 3, 6), in_ / "in.png");
  const Result r = run({"--box", "1", "--device", "99", in_ / "in.png", out_ / "o.png"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.rfind("blurtool: --device 99: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("see --list-devices)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--help"), std::string::npos) << r.err;  // one pointer, not two
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(out_ / "o.png"));
}

TEST_F(Cli, DeviceChoiceByIndexAndEnvironment) {
  const Image input = random_image(23, 17, 3, 5);
  const std::string in = in_ / "in.png", out = out_ / "o.png";
  save_image(input, in);
  expect_failure(run({"--box", "1", in, out}, "nosuch"), 2, {"BLURTOOL_DEVICE", "nosuch"}, Files{});
  // --device wins over the environment.
  const Result r = run({"--device", "0", "--box", "1", in, out}, "nosuch");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(max_diff(load_image(out), expected_box(input, 1, EdgeMode::clamp)), 0);
}

}  // namespace
}  // namespace blurtool
