// The pixel conversions of image/pixel_layout.h: to_rgba and from_rgba for every channel count at 8 and 16
// bits, and widen and narrow between the depths.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <vector>

#include "image/image_io.h"
#include "tests/support/image_io_support.h"
#include "util/error.h"

namespace blurtool {
namespace {

// The RGBA conversions at both depths.
template <typename T>
class Rgba : public ::testing::Test {};
using SampleTypes = ::testing::Types<std::uint8_t, std::uint16_t>;
TYPED_TEST_SUITE(Rgba, SampleTypes);

TYPED_TEST(Rgba, ExpandsEveryChannelCount) {
  using T = TypeParam;
  using Samples = PixelVector<T>;
  const T kMax = std::numeric_limits<T>::max();  // opaque
  const T a = kMax / 3, b = kMax / 5, c = kMax / 7, d = kMax / 11;
  const std::vector<std::pair<Samples, Samples>> cases = {
      {{a}, {a, a, a, kMax}},
      {{a, b}, {a, a, a, b}},
      {{a, b, c}, {a, b, c, kMax}},
      {{a, b, c, d}, {a, b, c, d}},
  };
  for (const auto& [in, out] : cases) {
    BasicImage<T> image;
    image.width = image.height = 1;
    image.channels = static_cast<int>(in.size());
    image.pixels = in;
    const BasicImage<T> rgba = to_rgba(image);
    EXPECT_EQ(rgba.channels, 4);
    EXPECT_EQ(rgba.pixels, out) << "channels " << in.size();
  }
}

TYPED_TEST(Rgba, FromRgbaInvertsToRgba) {
  using T = TypeParam;
  for (int channels = 1; channels <= 4; ++channels) {
    const BasicImage<T> image = random_image<T>(13, 7, channels, 50 + channels);
    const BasicImage<T> back = from_rgba(to_rgba(image), channels);
    EXPECT_EQ(back.width, 13);
    EXPECT_EQ(back.height, 7);
    EXPECT_EQ(back.channels, channels);
    EXPECT_EQ(back.pixels, image.pixels) << "channels " << channels;
  }
  EXPECT_THROW(from_rgba(random_image<T>(2, 2, 3, 1), 3), Error);
  EXPECT_THROW(from_rgba(random_image<T>(2, 2, 4, 1), 5), Error);
}

// widen and narrow: v -> 257 v and back to the nearest 8-bit level.
TEST(Depth, WidenScalesBy257) {
  const Image image{2, 2, 1, {0, 1, 128, 255}};
  const Image16 wide = widen(image);
  EXPECT_EQ(wide.width, 2);
  EXPECT_EQ(wide.height, 2);
  EXPECT_EQ(wide.channels, 1);
  EXPECT_EQ(wide.pixels, (Samples16{0, 257, 32896, 65535}));
}

TEST(Depth, NarrowRoundsToTheNearestLevel) {
  // 8-bit level k is 257 k in 16 bits; half-way between k and k + 1 lies 257 k + 128.5.
  const std::vector<std::pair<std::uint16_t, std::uint8_t>> cases = {
      {0, 0},       {128, 0},     {129, 1},     {255, 1},     {257, 1},
      {32767, 127}, {32768, 128}, {32896, 128}, {33024, 128}, {33025, 129},
      {65406, 254}, {65407, 255}, {65535, 255}, {0x12F0, 19}, {0x80FF, 128}};
  Image16 image{static_cast<int>(cases.size()), 1, 1, {}};
  Bytes expected;
  for (const auto& [wide, level] : cases) {
    image.pixels.push_back(wide);
    expected.push_back(level);
  }
  const Image narrowed = narrow(image);
  EXPECT_EQ(narrowed.width, image.width);
  EXPECT_EQ(narrowed.channels, 1);
  EXPECT_EQ(narrowed.pixels, expected);
}

// Over every value: narrow undoes widen exactly, and no 16-bit value is more than half a level
// (128) from the level it narrows to.
TEST(Depth, NarrowIsTheNearestLevelAndUndoesWiden) {
  Image all{128, 1, 2, {}};
  for (int v = 0; v < 256; ++v) all.pixels.push_back(static_cast<std::uint8_t>(v));
  const Image back = narrow(widen(all));
  EXPECT_EQ(back.width, 128);
  EXPECT_EQ(back.channels, 2);
  EXPECT_EQ(back.pixels, all.pixels);
  Image16 every{256, 256, 1, PixelVector<std::uint16_t>(65536)};
  for (int v = 0; v < 65536; ++v) every.pixels[v] = static_cast<std::uint16_t>(v);
  const Image levels = narrow(every);
  for (int v = 0; v < 65536; ++v) {
    ASSERT_LE(std::abs(v - 257 * levels.pixels[v]), 128) << v;
  }
}

}  // namespace
}  // namespace blurtool
