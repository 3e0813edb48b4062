// Bright-point extraction's CPU reference: known answers at 8 and 16 bits, and the 16-bit luminance
// units. Every variant on the device against the reference: tests/device/test_bright.cpp.
#include <gtest/gtest.h>

#include "filters/bright/bright_points.h"

namespace blurtool {

// Readable points in failure messages.
void PrintTo(const BrightPoint& p, std::ostream* os) {
  *os << "(" << p.x << "," << p.y << " rgb " << int(p.r) << "," << int(p.g) << "," << int(p.b)
      << " L " << p.luminance_units << ")";
}

namespace {

// A `w` x `h` RGBA image of T samples, every sample `v`.
template <typename T>
BasicImage<T> flat(int w, int h, T v) {
  return BasicImage<T>{w, h, 4, PixelVector<T>(static_cast<size_t>(w) * h * 4, v)};
}

// The 16-bit luminance is the 8-bit one on every widened pixel, and tells apart pixels whose
// samples differ by one 16-bit level, or by less than half an 8-bit level.
TEST(BrightPoints, SixteenBitLuminanceUnits) {
  for (int r = 0; r < 256; ++r)
    for (int g = 0; g < 256; ++g)
      for (int b = 0; b < 256; ++b) {
        const std::uint32_t eight =
            bright_luminance_units(std::uint8_t(r), std::uint8_t(g), std::uint8_t(b));
        const std::uint32_t sixteen = bright_luminance_units(
            std::uint16_t(r * 257), std::uint16_t(g * 257), std::uint16_t(b * 257));
        if (eight != sixteen)
          FAIL() << r << "," << g << "," << b << ": " << eight << " vs " << sixteen;
      }
  const auto grey = [](std::uint16_t v) { return bright_luminance_units(v, v, v); };
  EXPECT_EQ(grey(0xFF00), 2540078u);  // (652800000 + 128) / 257 = 2540078.3
  EXPECT_EQ(grey(0xFF40), 2542568u);
  EXPECT_EQ(grey(0xFFFF), 2550000u);
  EXPECT_EQ(
      bright_luminance_units(std::uint16_t(0xFF00), std::uint16_t(0xFF00), std::uint16_t(0xFF01)),
      2540081u);  // one level of B, the smallest weight: 722 / 257 = 2.8 units more
}

TEST(BrightPoints, ReferenceKnownAnswer) {
  // 4x2 image, B = 2: block 0 has a tie between (0,0) and (1,1) -> the first in raster order;
  // block 1 has pure green (L = 0.7152) beating pure red and blue.
  Image img = flat<std::uint8_t>(4, 2, 0);
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

}  // namespace
}  // namespace blurtool
