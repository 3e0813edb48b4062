// Images split into tiles with a halo (issue 8): plan_tiles against a device's limits, on a
// described device. Tiled runs against one run on the device: tests/device/test_tiles.cpp.
#include <gtest/gtest.h>

#include <string>

#include "filters/tiled_run.h"
#include "util/error.h"

namespace blurtool {
namespace {

DeviceInfo small_device() {
  DeviceInfo d;
  d.name = "small test device";
  d.image_support = true;
  d.image2d_max_width = 100;
  d.image2d_max_height = 80;
  d.max_alloc = 16 * 4000;  // 4000 pixels of 16 bytes
  d.global_mem = 1 << 30;
  return d;
}

TEST(PlanTiles, WholeImageWhenItFits) {
  const TileSize t = plan_tiles(small_device(), 60, 50, 5);
  EXPECT_EQ(t.width, 60);
  EXPECT_EQ(t.height, 50);
  const TileSize forced = plan_tiles(small_device(), 60, 50, 5, {16, 1000});
  EXPECT_EQ(forced.width, 16);
  EXPECT_EQ(forced.height, 50);
}

// Too wide for the device's images: tiles as wide as the image limit less the halo, as many
// rows as the allocation limit allows.
TEST(PlanTiles, WithinTheDevicesLimits) {
  const TileSize t = plan_tiles(small_device(), 300, 200, 5);
  EXPECT_EQ(t.width, 90);                // 100 - 2 * 5
  EXPECT_EQ(t.height, 4000 / 100 - 10);  // 40 input rows of 100 pixels, less the halo
  const TileSize tall = plan_tiles(small_device(), 20, 500, 3);
  EXPECT_EQ(tall.width, 20);       // the whole width: no halo at the image's own edges
  EXPECT_EQ(tall.height, 80 - 6);  // the image height limit, less the halo
  const TileSize full_width = plan_tiles(small_device(), 100, 300, 5);
  EXPECT_EQ(full_width.width, 100);  // as wide as the limit: fits whole, not cut by the halo
  EXPECT_EQ(full_width.height, 4000 / 100 - 10);
}

TEST(PlanTiles, RefusesAHaloTheDeviceCannotHold) {
  try {
    plan_tiles(small_device(), 300, 200, 60);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("small test device"), std::string::npos) << m;
    EXPECT_NE(m.find("halo of 60"), std::string::npos) << m;
    EXPECT_NE(m.find("(device)"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace blurtool
