// Premultiplied alpha and linear light (issue 10) on the host: the transfer tables against
// published sRGB values, and the host conversions. Every kind of schedule in each working space on
// the device: tests/device/test_working_space.cpp.
#include <gtest/gtest.h>

#include "filters/working_space.h"

namespace blurtool {
namespace {

TEST(WorkingSpace, TransferTablesMatchPublishedSrgbValues) {
  const auto& to_linear = srgb_to_linear_table();
  const auto& to_srgb = linear_to_srgb_table();
  ASSERT_EQ(to_linear.size(), 65536u);
  ASSERT_EQ(to_srgb.size(), 65536u);
  EXPECT_EQ(to_linear[0], 0);
  EXPECT_EQ(to_linear[65535], 65535);
  EXPECT_EQ(to_srgb[65535], 65535);
  // sRGB 0.5 is linear 0.2140 (14027 of 65535); linear 0.5 is sRGB 0.7354 (48192): 187.5 of 255.
  EXPECT_NEAR(to_linear[32768], 14027, 2);
  EXPECT_NEAR(to_srgb[32768], 48192, 2);
  // The linear segment near black: sRGB 0.04 is linear 0.04 / 12.92.
  EXPECT_NEAR(to_linear[2621], 2621 / 12.92, 1);
  for (int v = 1; v < 65536; ++v) {
    ASSERT_LE(to_linear[v - 1], to_linear[v]) << v;
    ASSERT_LE(to_srgb[v - 1], to_srgb[v]) << v;
  }
  // Encoding undoes decoding to within half a step of the encoding curve at the decoded value:
  // steepest just above its linear segment (linear 0.0031308), 12.7 sRGB steps a linear step.
  for (int v = 0; v < 65536; v += 7) EXPECT_NEAR(to_srgb[to_linear[v]], v, 7) << v;
}

TEST(WorkingSpace, PremultiplyRoundTripsAndZeroesTransparentPixels) {
  Image16 img{
      3, 1, 4, {1000, 40000, 65535, 65535, 1000, 40000, 65535, 32768, 1000, 40000, 65535, 0}};
  const Image16 pre = to_working_space(img, {false, true});
  EXPECT_EQ(std::vector<std::uint16_t>(pre.pixels.begin(), pre.pixels.begin() + 4),
            std::vector<std::uint16_t>({1000, 40000, 65535, 65535}));  // opaque: unchanged
  EXPECT_EQ(pre.pixels[4], 500);    // 1000 * 32768 / 65535 = 500.0076
  EXPECT_EQ(pre.pixels[6], 32768);  // colour at most alpha
  EXPECT_EQ(pre.pixels[8], 0);      // alpha 0: no colour left
  // At alpha a premultiplied colour keeps a + 1 levels: back within 65535 / (2 a) of the start.
  const Image16 back = from_working_space(pre, {false, true});
  EXPECT_EQ(back.pixels[4], 1000);
  EXPECT_NEAR(back.pixels[5], 40000, 1);  // 20000 * 65535 / 32768 = 39999.4
  EXPECT_EQ(back.pixels[6], 65535);
  EXPECT_EQ(std::vector<std::uint16_t>(back.pixels.begin() + 8, back.pixels.end()),
            std::vector<std::uint16_t>({0, 0, 0, 0}));  // black-transparent
}

// For an 8-bit output, an alpha that rounds to 0 there (at most 128) gives black-transparent,
// not a sliver of colour amplified 600 times; larger alphas divide as they are.
TEST(WorkingSpace, EightBitAlphaZeroesWhatRoundsToZero) {
  const Image16 pre{3, 1, 4, {60, 30, 0, 100, 60, 30, 0, 128, 60, 30, 0, 129}};
  const Image16 wide = from_working_space(pre, {false, true});
  EXPECT_EQ(wide.pixels[0], 39321);  // 60 * 65535 / 100: a sliver of alpha amplified
  const Image16 eight = from_working_space(pre, {false, true, true});
  EXPECT_EQ(std::vector<std::uint16_t>(eight.pixels.begin(), eight.pixels.begin() + 8),
            std::vector<std::uint16_t>({0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(eight.pixels[8], 30481);  // alpha 129 rounds to 1 of 255: 60 * 65535 / 129
  EXPECT_EQ(eight.pixels[11], 129);
}

}  // namespace
}  // namespace blurtool
