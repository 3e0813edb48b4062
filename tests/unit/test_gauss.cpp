// The Gaussian's host code: the weights and the linear-sampling taps, the tile widths and local
// memory of tiled and fused, and the CPU reference on flat images. Every variant on the device
// against the reference: tests/device/test_gauss.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "filters/gauss/gauss_blur.h"
#include "filters/gauss/gauss_reference.h"
#include "filters/gauss/gauss_weights.h"
#include "image/image_io.h"
#include "tests/support/test_support.h"

namespace blurtool {
namespace {

TEST(GaussFused, TileWidthAndLocalMemory) {
  EXPECT_EQ(gauss_fused_tile_width(16, 128), 224);  // TW + 2R = 2G
  EXPECT_EQ(gauss_fused_tile_width(3, 128), 248);   // a multiple of 8
  EXPECT_EQ(gauss_fused_tile_width(63, 128), 128);
  EXPECT_EQ(gauss_fused_tile_width(200, 128), 8);   // at least 8
  EXPECT_EQ(gauss_fused_tile_width(16, 256), 224);  // TW + 2R <= 256 however large G is
  EXPECT_EQ(gauss_fused_tile_width(16, 64), 96);
  EXPECT_EQ(gauss_fused_default_group(32), 256);
  EXPECT_EQ(gauss_fused_default_group(33), 128);
  EXPECT_EQ(gauss_fused_local_bytes(16, 128, 8), 8u * 257 * 16);
  EXPECT_EQ(gauss_fused_local_bytes(16, 64, 16), 16u * 129 * 16);
}

TEST(GaussTiled, TileWidthKeepsTheRingWithin256KiB) {
  EXPECT_EQ(gauss_tile_width(16), 256);   // 36 rows: 262144 / 576 - 4 = 451, at most 256
  EXPECT_EQ(gauss_tile_width(30), 240);   // 64 rows: 256 - 4 = 252 columns
  EXPECT_EQ(gauss_tile_width(63), 112);   // 132 rows: 124 - 4 = 120 columns
  EXPECT_EQ(gauss_tile_width(0), 256);    // 4 rows
  EXPECT_EQ(gauss_tile_width(4000), 16);  // at least 16
}

TEST(GaussWeights, NormalisedSymmetricAndGaussian) {
  const std::vector<double> w = gauss_weights(10.0, 16);
  ASSERT_EQ(w.size(), 33u);
  double total = 0;
  for (double v : w) total += v;
  EXPECT_NEAR(total, 1.0, 1e-12);
  for (int i = 1; i <= 16; ++i) {
    EXPECT_DOUBLE_EQ(w[16 + i], w[16 - i]);
    EXPECT_NEAR(w[16 + i] / w[16], std::exp(-i * i / 200.0), 1e-12);
  }
  EXPECT_EQ(gauss_default_radius(10.0), 30);
  EXPECT_EQ(gauss_default_radius(0.5), 2);
  // sigma^2 underflows below 1e-154; the weights must still be the identity, not NaN.
  EXPECT_EQ(gauss_weights(1e-300, 2), (std::vector<double>{0, 0, 1, 0, 0}));
  EXPECT_THROW(gauss_weights(0.0, 3), UsageError);
  EXPECT_THROW(gauss_weights(-1.0, 3), UsageError);
}

// The taps of separable-linear reproduce every weight: 1 + 2 ceil(R/2) fetches whose split
// weights (1 - t) W and t W land on the right pixels.
TEST(GaussLinearTaps, ReproduceTheWeights) {
  for (int r : {0, 1, 2, 5, 16}) {
    const std::vector<double> w = gauss_weights(r ? r / 1.6 : 1.0, r);
    const std::vector<LinearTap> taps = gauss_linear_taps(w);
    EXPECT_EQ(taps.size(), 1u + 2 * ((r + 1) / 2)) << "r=" << r;
    std::vector<double> rebuilt(w.size(), 0.0);
    for (const LinearTap& t : taps) {
      rebuilt[r + t.lo] += (1.0 - t.t) * t.weight;
      if (t.t != 0) rebuilt[r + t.lo + 1] += t.t * t.weight;
    }
    for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(rebuilt[i], w[i], 1e-6) << "r=" << r;
  }
}

// A flat image of samples `level` stays flat but for the zero edge mode, which darkens it.
template <typename T>
void expect_flat_stays_flat(T level) {
  const BasicImage<T> flat{9, 7, 1, PixelVector<T>(63, level)};
  EXPECT_EQ(gauss_blur_reference(flat, 2.0, 6, EdgeMode::clamp).pixels, flat.pixels);
  EXPECT_EQ(gauss_blur_reference(flat, 2.0, 6, EdgeMode::mirror).pixels, flat.pixels);
  const BasicImage<T> zero = gauss_blur_reference(flat, 2.0, 6, EdgeMode::zero);
  EXPECT_LT(zero.pixels[0], level);           // the corner sees zeros on two sides
  EXPECT_LT(zero.pixels[0], zero.pixels[4]);  // more than the middle of the top row
}

TEST(GaussReference, FlatImageStaysFlatAndZeroEdgeDarkens) {
  expect_flat_stays_flat<std::uint8_t>(200);
  expect_flat_stays_flat<std::uint16_t>(51234);  // between 8-bit levels (199.4 * 257)
}

// The fast method's extended boxes: alpha in [0, 1), r the largest plain box within sigma^2,
// and the cascade's kernel sums to 1, is symmetric and has variance sigma^2 exactly (the point
// of the extended box: Gwosdek et al. 2011), its reach K (r + 1).
TEST(GaussCascade, VarianceIsSigmaSquared) {
  for (double sigma : {0.3, 1.0, 2.5, 4.0, 10.0, 33.3, 120.0, 250.0}) {
    const BoxCascade c = gauss_box_cascade(sigma);
    SCOPED_TRACE(sigma);
    EXPECT_EQ(c.boxes, kGaussCascadeBoxes);
    EXPECT_GE(c.alpha, 0.0);
    EXPECT_LT(c.alpha, 1.0);
    const double s = sigma * sigma / c.boxes;
    EXPECT_LE(c.radius * (c.radius + 1) / 3.0, s);
    EXPECT_GT((c.radius + 1) * (c.radius + 2) / 3.0, s);
    const std::vector<double> w = box_cascade_weights(c);
    ASSERT_EQ(w.size(), 2 * static_cast<size_t>(c.reach()) + 1);
    double sum = 0, var = 0;
    for (int i = -c.reach(); i <= c.reach(); ++i) {
      sum += w[c.reach() + i];
      var += w[c.reach() + i] * i * i;
      EXPECT_NEAR(w[c.reach() + i], w[c.reach() - i], 1e-15);
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
    EXPECT_NEAR(var, sigma * sigma, 1e-9 * sigma * sigma);
  }
  EXPECT_THROW(gauss_box_cascade(0.0), UsageError);
}

// The fast method's stated error (man/blurtool.1, docs/notes/gauss.md): within kFastMaxError
// levels of the exact Gaussian (ceil(3 sigma) taps) and kFastMeanError on average, 8-bit, on a
// real photo, at sigmas from auto's threshold up. Both CPU references in double precision; the
// device's fast result is within 1 level of the cascade reference (tests/device/test_gauss.cpp),
// so within kFastMaxError + 1 of exact.
// The largest and the mean absolute difference of two images' samples, in levels.
std::pair<int, double> difference(const Image& a, const Image& b) {
  int worst = 0;
  double sum = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) {
    const int d = std::abs(a.pixels[i] - b.pixels[i]);
    worst = std::max(worst, d);
    sum += d;
  }
  return {worst, sum / a.pixels.size()};
}

constexpr int kFastMaxError = 5;
constexpr double kFastMeanError = 1.0;

TEST(GaussCascade, WithinTheStatedBoundOfExactOnAPhoto) {
  const Image photo = load_image(std::string(BLURTOOL_SOURCE_DIR) + "/samples/coffee_600x400.png");
  for (double sigma : {32.5, 10.0, 30.0}) {
    const Image exact =
        gauss_separable_reference(photo, sigma, gauss_default_radius(sigma), EdgeMode::clamp);
    const Image fast = gauss_cascade_reference(photo, sigma, EdgeMode::clamp);
    const auto [worst, mean] = difference(exact, fast);
    std::cout << "[ accuracy ] fast vs exact, coffee, sigma " << sigma << ": max " << worst
              << ", mean " << mean << "\n";
    EXPECT_LE(worst, kFastMaxError) << sigma;
    EXPECT_LE(mean, kFastMeanError) << sigma;
  }
}

// The pyramid method's stated error (man/blurtool.1, docs/notes/gauss.md): within
// kPyramidMaxError levels of the exact Gaussian and kPyramidMeanError on average, 8-bit, on a
// real photo, at sigmas from auto's threshold up, each factor f from 2 to 32. The device's
// result is within 1 level of the pyramid reference (tests/device/test_gauss.cpp).
constexpr int kPyramidMaxError = 2;
constexpr double kPyramidMeanError = 0.25;

TEST(GaussPyramid, WithinTheStatedBoundOfExactOnAPhoto) {
  const Image photo = load_image(std::string(BLURTOOL_SOURCE_DIR) + "/samples/coffee_600x400.png");
  // 16, 32 and 64: where f doubles and the coarse sigma is least.
  for (double sigma : {kGaussPyramidSigma + 0.5, 10.0, 13.0, 16.0, 30.0, 32.0, 64.0, 120.0}) {
    const Image exact =
        gauss_separable_reference(photo, sigma, gauss_default_radius(sigma), EdgeMode::clamp);
    const Image pyramid = gauss_pyramid_reference(photo, sigma, EdgeMode::clamp);
    const auto [worst, mean] = difference(exact, pyramid);
    std::cout << "[ accuracy ] pyramid vs exact, coffee, sigma " << sigma << " (f "
              << gauss_pyramid(sigma).factor << "): max " << worst << ", mean " << mean << "\n";
    EXPECT_LE(worst, kPyramidMaxError) << sigma;
    EXPECT_LE(mean, kPyramidMeanError) << sigma;
  }
}

// The pyramid's factor keeps the coarse sigma at kGaussPyramidCoarseSigma or more (below twice
// it one pixel a cell).
TEST(GaussPyramid, FactorAndCoarseSigma) {
  EXPECT_EQ(gauss_pyramid(3.9).factor, 1);
  EXPECT_NEAR(gauss_pyramid(3.9).coarse_sigma, 3.9, 1e-9);
  EXPECT_EQ(gauss_pyramid(4.0).factor, 2);
  EXPECT_EQ(gauss_pyramid(7.9).factor, 2);
  EXPECT_EQ(gauss_pyramid(8.0).factor, 4);
  EXPECT_EQ(gauss_pyramid(250.0).factor, 64);
  for (double sigma : {4.0, 7.0, 8.0, 100.0, 250.0}) {
    const GaussPyramid p = gauss_pyramid(sigma);
    EXPECT_GE(p.coarse_sigma, kGaussPyramidCoarseSigma - 0.1) << sigma;
    EXPECT_LT(p.coarse_sigma, 2 * kGaussPyramidCoarseSigma) << sigma;
    EXPECT_EQ(p.coarse_radius, gauss_default_radius(p.coarse_sigma)) << sigma;
    EXPECT_EQ(p.reach(), (p.coarse_radius + 2) * p.factor) << sigma;
  }
  EXPECT_THROW(gauss_pyramid(0.0), UsageError);
}

// The separable reference is the direct one computed in another order.
TEST(GaussReference, SeparableEqualsDirect) {
  const Image input = random_image<std::uint8_t>(23, 17, 3);
  for (const auto& edge : edge_mode_table())
    EXPECT_LE(max_error(gauss_separable_reference(input, 2.0, 7, edge.value),
                        gauss_blur_reference(input, 2.0, 7, edge.value)),
              1)
        << edge.name;
}

}  // namespace
}  // namespace blurtool
