// The box filter's host code: parameter checks, the column-segment and ring sizes of
// segmented-local, the CPU reference's known values and the edge modes' index mapping. Every
// variant on the device against the reference: tests/device/test_box.cpp.
#include <gtest/gtest.h>

#include <algorithm>

#include "filters/box/box_blur.h"
#include "filters/box/box_host.h"
#include "filters/box/box_reference.h"
#include "tests/support/image_io_support.h"

namespace blurtool {
namespace {

TEST(BoxParams, RefusesOutOfRangeValues) {
  BoxParams p;
  p.radius = -1;
  EXPECT_THROW(validate(p), UsageError);
  p.radius = kMaxBoxRadius + 1;
  EXPECT_THROW(validate(p), UsageError);
  p.radius = 3;
  p.unroll = 3;
  EXPECT_THROW(validate(p), UsageError);
  p.unroll = 8;
  EXPECT_NO_THROW(validate(p));
  p.segment = -1;
  EXPECT_THROW(validate(p), UsageError);
  p.segment = 0;  // the variant's default
  EXPECT_NO_THROW(validate(p));
  p.segment = kMaxBoxSegment + 1;
  EXPECT_THROW(validate(p), UsageError);
}

// The rows of segmented-local's column pass (box_cols_ring): the longest multiple of 64 up to
// 1024 rows giving 8 work-groups a compute unit.
TEST(BoxSegmentedLocal, ColumnSegmentFollowsTheImage) {
  EXPECT_EQ(box_ring_segment(3024, 4032, 132), 768);  // 189 strips x 6 segments >= 1056
  EXPECT_EQ(box_ring_segment(3024, 4032, 2), 1024);
  EXPECT_EQ(box_ring_segment(37, 700, 2), 128);  // 3 strips x 6 segments >= 16
  EXPECT_EQ(box_ring_segment(16, 64, 132), 64);  // too small for any: one batch
  // The ring for R = 63: 64 + 127 rows of 16 columns, 8 bytes an entry (rgba32f at 8 bits:
  // q <= 255 * 127), 16 with 16-bit pixels; plus 8 lanes x 16 columns of 16-byte sums.
  EXPECT_EQ(box_ring_local_bytes(63, Intermediate::rgba32f, PixelDepth::u8),
            16 * (191 * 8 + 8 * 16));
  EXPECT_EQ(box_ring_local_bytes(63, Intermediate::rgba32f, PixelDepth::u16),
            16 * (191 * 16 + 8 * 16));
  EXPECT_EQ(box_ring_local_bytes(129, Intermediate::rgba32f, PixelDepth::u8),
            16 * (323 * 16 + 8 * 16));  // 255 * 259 > 65535
}

TEST(BoxReference, KnownValues) {
  // 3x1 image 0, 10, 255 (one channel), radius 1, clamp: the 3x3 window repeats the single
  // row three times, so the means are the row means: 10/3 -> 3, 265/3 -> 88, 520/3 -> 173.
  Image img{3, 1, 1, {0, 10, 255}};
  EXPECT_EQ(box_blur_reference(img, 1, EdgeMode::clamp).pixels,
            (std::vector<std::uint8_t>{3, 88, 173}));
  // zero edge: window sums 10, 265, 265 over 9 -> 1.1->1, 29.4->29, 29.4->29
  EXPECT_EQ(box_blur_reference(img, 1, EdgeMode::zero).pixels,
            (std::vector<std::uint8_t>{1, 29, 29}));
  // mirror repeats the edge pixel: same as clamp for radius 1
  EXPECT_EQ(box_blur_reference(img, 1, EdgeMode::mirror).pixels,
            (std::vector<std::uint8_t>{3, 88, 173}));
  // Zero edge divides by the full window: a 2x2 image of 9s, radius 1: every 3x3 window holds
  // the four 9s, 36 / 9 = 4. (A window has an odd pixel count, so a mean is never a half.)
  Image flat{2, 2, 1, {9, 9, 9, 9}};
  EXPECT_EQ(box_blur_reference(flat, 1, EdgeMode::zero).pixels,
            (std::vector<std::uint8_t>{4, 4, 4, 4}));
}

// The host's running sums give the reference's bytes: every channel count and edge mode, radii
// from 0 to past both sides (the halo then wraps the mirror more than once), bands of a few rows
// and of one (more threads than 16-row bands), and a radius past 2047 (64-bit sums).
TEST(BoxHost, MatchesTheReference) {
  struct Case {
    int width, height, radius, threads;
  };
  const Case cases[] = {{1, 1, 0, 1},   {1, 1, 3, 2},    {17, 5, 1, 1},  {17, 5, 2, 4},
                        {5, 40, 7, 3},  {33, 70, 12, 4}, {9, 13, 30, 2}, {64, 48, 5, 0},
                        {3, 100, 2, 8}, {7, 3, 2100, 2},
                        // the last 32-bit sums, the first 64-bit ones, the largest radius
                        {5, 4, 1447, 2}, {5, 4, 1448, 2}, {3, 2, 16383, 1}};
  unsigned seed = 1;
  for (const Case& k : cases)
    for (int channels = 1; channels <= 4; ++channels)
      for (EdgeMode edge : {EdgeMode::clamp, EdgeMode::mirror, EdgeMode::zero}) {
        const Image image = random_image(k.width, k.height, channels, seed++);
        const Image expected = box_blur_reference(image, k.radius, edge);
        const Image got = box_blur_host(image, k.radius, edge, k.threads);
        ASSERT_EQ(got.width, k.width);
        ASSERT_EQ(got.channels, channels);
        EXPECT_TRUE(got.pixels == expected.pixels)
            << k.width << "x" << k.height << "x" << channels << " r=" << k.radius << " edge "
            << static_cast<int>(edge) << " threads " << k.threads;
      }
}

// A flat image stays itself at every level, whatever the radius and edge mode (zero excepted):
// the division by the window's size, in double, is exact at both ends of the range.
TEST(BoxHost, FlatImagesStayFlat) {
  Image flat{16, 16, 1, {}};
  flat.pixels.resize(256);
  for (int level = 0; level < 256; ++level) {
    std::fill(flat.pixels.begin(), flat.pixels.end(), static_cast<std::uint8_t>(level));
    const Image got = box_blur_host(flat, 4 + level % 40, EdgeMode::mirror, 2);
    EXPECT_TRUE(got.pixels == flat.pixels) << level;
  }
}

// The single-precision mean is exact for every sum a window of each radius up to
// kBoxHostFloatRadius can hold (the reference's (2 sum + count) / (2 count) in integers).
TEST(BoxHost, FloatMeansAreExactForEverySum) {
  for (int r = 0; r <= kBoxHostFloatRadius; ++r) {
    const std::int64_t count = static_cast<std::int64_t>(2 * r + 1) * (2 * r + 1);
    const float scale = static_cast<float>(1.0 / count);
    int wrong = 0;
    for (std::int64_t sum = 0; sum <= 255 * count; ++sum)
      wrong +=
          box_mean_float(static_cast<std::int32_t>(sum), scale) != (2 * sum + count) / (2 * count);
    EXPECT_EQ(wrong, 0) << "radius " << r;
  }
}

TEST(BoxHost, RefusesABufferOfTheWrongSize) {
  Image bad{4, 4, 3, {}};
  bad.pixels.resize(47);
  EXPECT_NE(error_of([&] { box_blur_host(bad, 1, EdgeMode::clamp); }).find("4x4x3"),
            std::string::npos);
}

TEST(EdgeIndex, MirrorIsPeriodicWithEdgeRepeated) {
  // n = 3: ... 2 1 0 | 0 1 2 | 2 1 0 | 0 1 ...
  const int expected[] = {0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0};  // i = -6 .. 5
  for (int i = -6; i < 6; ++i) EXPECT_EQ(edge_index(i, 3, EdgeMode::mirror), expected[i + 6]) << i;
  EXPECT_EQ(edge_index(-5, 3, EdgeMode::clamp), 0);
  EXPECT_EQ(edge_index(7, 3, EdgeMode::clamp), 2);
  EXPECT_EQ(edge_index(3, 3, EdgeMode::zero), -1);
}

}  // namespace
}  // namespace blurtool
