// Bright-point extraction: every variant must equal the CPU reference exactly (same points, same
// order) on random images, sides that are not multiples of B, B in {2, 4, 8, 16}, thresholds 0
// and 1, all-black and all-white images (ties everywhere), and the Hubble deep field.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "core/bright_points.h"
#include "tests/test_support.h"

namespace blurtool {

// Readable points in failure messages.
void PrintTo(const BrightPoint& p, std::ostream* os) {
  *os << "(" << p.x << "," << p.y << " rgb " << int(p.r) << "," << int(p.g) << "," << int(p.b)
      << " L " << p.luminance_units << ")";
}

namespace {

bool has_subgroups() {
  return runtime().device().device.getInfo<CL_DEVICE_EXTENSIONS>().find("cl_khr_subgroups") !=
         std::string::npos;
}

// Variants this device can run: every entry of the table, subgroup only with sub-groups.
std::vector<BrightVariant> runnable_variants() {
  std::vector<BrightVariant> all;
  for (const auto& v : bright_variant_table())
    if (v.value != BrightVariant::subgroup || has_subgroups()) all.push_back(v.value);
  return all;
}

Image flat(int w, int h, std::uint8_t v) {
  return Image{w, h, 4, std::vector<std::uint8_t>(static_cast<size_t>(w) * h * 4, v)};
}

void expect_same_as_reference(const Image& image, BrightParams p, const std::string& what) {
  const std::vector<BrightPoint> expected = bright_points_reference(image, p);
  for (BrightVariant v : runnable_variants()) {
    p.variant = v;
    const std::vector<BrightPoint> got = find_bright_points(runtime(), image, p);
    EXPECT_EQ(got, expected) << what << " variant " << name_of(bright_variant_table(), v)
                             << " B=" << p.block << " T=" << p.threshold << ": " << got.size()
                             << " vs " << expected.size() << " points";
  }
}

TEST(BrightPoints, RandomImagesEveryBlockSizeAndThreshold) {
  unsigned seed = 1;
  for (auto [w, h] : {std::pair{64, 48}, {37, 23}, {1, 1}, {17, 5}, {100, 61}}) {
    // 4 levels per channel: many equal luminances inside a block, so tie-breaking is exercised.
    const Image image = random_rgba(w, h, seed++, 4);
    for (int block : {2, 4, 8, 16}) {
      for (double threshold : {0.0, 0.3, 0.5, 1.0}) {
        BrightParams p;
        p.block = block;
        p.threshold = threshold;
        p.per_item = block >= 4 ? 2 : 1;
        expect_same_as_reference(image, p, std::to_string(w) + "x" + std::to_string(h));
      }
    }
  }
}

TEST(BrightPoints, HybridEveryPerItemSize) {
  const Image image = random_rgba(45, 29, 5, 8);
  for (int k = 1; k <= 8; ++k) {
    BrightParams p;
    p.per_item = k;  // 3, 5, 6, 7 do not divide 8: the last work-items cover a partial square
    p.threshold = 0.2;
    p.variant = BrightVariant::hybrid;
    EXPECT_EQ(find_bright_points(runtime(), image, p), bright_points_reference(image, p))
        << "K=" << k;
  }
}

TEST(BrightPoints, BlackAndWhiteImages) {
  for (int block : {2, 8, 16}) {
    BrightParams p;
    p.block = block;
    p.threshold = 0.0;
    // All black: L = 0 is never above 0, so nothing; all white: every block reports its first
    // pixel (every pixel ties).
    expect_same_as_reference(flat(33, 19, 0), p, "black");
    expect_same_as_reference(flat(33, 19, 255), p, "white");
    const std::vector<BrightPoint> white = bright_points_reference(flat(33, 19, 255), p);
    ASSERT_FALSE(white.empty());
    EXPECT_EQ(white[1].x, block);  // the second block's first pixel
    EXPECT_EQ(white[1].y, 0);
    p.threshold = 1.0;  // nothing is brighter than white
    EXPECT_TRUE(bright_points_reference(flat(33, 19, 255), p).empty());
    expect_same_as_reference(flat(33, 19, 255), p, "white, T=1");
  }
}

TEST(BrightPoints, HubbleDeepField) {
  const Image image =
      to_rgba(load_image(BLURTOOL_SOURCE_DIR "/samples/hubble_deep_field_1000x872.jpg"));
  for (double threshold : {0.2, 0.6}) {
    BrightParams p;
    p.threshold = threshold;
    expect_same_as_reference(image, p, "hubble");
  }
}

TEST(BrightPoints, ReferenceKnownAnswer) {
  // 4x2 image, B = 2: block 0 has a tie between (0,0) and (1,1) -> the first in raster order;
  // block 1 has pure green (L = 0.7152) beating pure red and blue.
  Image img = flat(4, 2, 0);
  auto set = [&](int x, int y, int r, int g, int b) {
    img.pixels[img.index(x, y, 0)] = r;
    img.pixels[img.index(x, y, 1)] = g;
    img.pixels[img.index(x, y, 2)] = b;
  };
  set(0, 0, 100, 100, 100);
  set(1, 1, 100, 100, 100);
  set(2, 0, 255, 0, 0);
  set(3, 0, 0, 0, 255);
  set(2, 1, 0, 255, 0);
  BrightParams p;
  p.block = 2;
  p.threshold = 0.2126;  // red is exactly 0.2126: not above it
  const std::vector<BrightPoint> points = bright_points_reference(img, p);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0], (BrightPoint{0, 0, 100, 100, 100, 100 * 10000}));
  EXPECT_EQ(points[1], (BrightPoint{2, 1, 0, 255, 0, 7152 * 255}));
  p.threshold = 0.72;  // green 0.7152 is below
  EXPECT_TRUE(bright_points_reference(img, p).empty());
  EXPECT_EQ(bright_points_csv(points),
            "x,y,r,g,b,luminance\n0,0,100,100,100,0.392157\n2,1,0,255,0,0.715200\n");
}

TEST(BrightPoints, RefusesWhatCannotRun) {
  BrightParams p;
  p.block = 33;
  EXPECT_THROW(validate(p), UsageError);
  p.block = 8;
  p.per_item = 9;
  EXPECT_THROW(validate(p), UsageError);
  p.per_item = 2;
  p.threshold = 1.5;
  EXPECT_THROW(validate(p), UsageError);
  if (!has_subgroups()) {
    p.threshold = 0.5;
    p.variant = BrightVariant::subgroup;
    try {
      BrightFinder finder(runtime(), p, 16, 16);
      FAIL() << "subgroup ran on a device without sub-groups";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("cl_khr_subgroups"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace blurtool
