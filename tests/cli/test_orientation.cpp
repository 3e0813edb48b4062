// EXIF orientation end to end: a JPEG tagged with an orientation is blurred upright, or as stored
// with --no-orient, in single and batch mode. The JPEGs are made by support/orientation_support.h;
// the decoding itself: tests/unit/test_orientation.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "tests/support/cli_support.h"
#include "tests/support/orientation_support.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

class OrientationCli : public SubcommandCli {
 protected:
  OrientationCli() : SubcommandCli("--box") {}
};

TEST_F(OrientationCli, BlurWritesTheUprightPictureAndNoOrientKeepsTheStoredOne) {
  write_file(root_ / "phone.jpg", [] {
    const std::vector<std::uint8_t> b = tagged_jpeg(6, EXIF_BYTE_ORDER_MOTOROLA);
    return std::string(b.begin(), b.end());
  }());
  Result r = run({"1", "phone.jpg", "upright.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Image out = load_image((root_ / "upright.png").string());
  EXPECT_EQ(out.width, kW);
  EXPECT_EQ(out.height, kH);
  r = run({"1", "--no-orient", "phone.jpg", "stored.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Image stored = load_image((root_ / "stored.png").string());
  EXPECT_EQ(stored.width, kH);
  EXPECT_EQ(stored.height, kW);
  // Batch mode turns it too.
  fs::create_directories(root_ / "in");
  fs::copy_file(root_ / "phone.jpg", root_ / "in" / "phone.jpg");
  r = run({"1", "in", "out/"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(load_image((root_ / "out" / "phone.jpg").string()).width, kW);
}

}  // namespace
}  // namespace blurtool
