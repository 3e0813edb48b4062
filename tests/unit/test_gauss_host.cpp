// The Gaussian on the host's cores (filters/gauss/gauss_host.h) against its CPU references.
#include <gtest/gtest.h>

#include "filters/gauss/gauss_blur.h"
#include "filters/gauss/gauss_host.h"
#include "filters/gauss/gauss_reference.h"
#include "tests/support/image_io_support.h"
#include "tests/support/test_support.h"

namespace blurtool {
namespace {

// Calls check(image, edge) for a random width x height image of each channel count (1-4) and
// each edge mode, seeds from `seed` on.
template <typename F>
void for_each_input(int width, int height, unsigned& seed, F check) {
  for (int channels = 1; channels <= 4; ++channels)
    for (EdgeMode edge : {EdgeMode::clamp, EdgeMode::mirror, EdgeMode::zero})
      check(random_image(width, height, channels, seed++), edge);
}

// The host's exact method within 1 level of the double-precision 2-D reference: every channel
// count and edge mode, images smaller than the radius (the halo wraps the mirror more than
// once), a 1x1 image, the largest radius the host takes, bands on one thread and on several;
// and most samples exact (float sums only move a sum within rounding of a half).
TEST(GaussHost, ExactWithinOneLevelOfTheReference) {
  struct Case {
    int width, height;
    double sigma;
    int radius, threads;
  };
  const Case cases[] = {{1, 1, 1.0, -1, 1},   {7, 3, 2.5, -1, 2},
                        {33, 17, 1.5, -1, 3}, {20, 9, 7.5, -1, 0},
                        {61, 37, 4.0, 5, 4},  {5, 40, 6.0, kGaussHostMaxRadius, 2}};
  unsigned seed = 3;
  for (const Case& k : cases)
    for_each_input(k.width, k.height, seed, [&](const Image& image, EdgeMode edge) {
      GaussParams p;
      p.sigma = k.sigma;
      p.radius = k.radius;
      p.edge = edge;
      ASSERT_EQ(gauss_method_of(p), GaussMethod::exact);
      const Image expected = gauss_blur_reference(image, k.sigma, gauss_radius(p), edge);
      const Image got = gauss_blur_host(image, p, k.threads);
      ASSERT_EQ(got.channels, image.channels);
      ASSERT_EQ(got.pixels.size(), expected.pixels.size());
      std::size_t off = 0;
      for (std::size_t i = 0; i < got.pixels.size(); ++i)
        off += got.pixels[i] != expected.pixels[i];
      EXPECT_LE(max_error(got, expected), 1)
          << k.width << "x" << k.height << "x" << image.channels << " sigma " << k.sigma << " edge "
          << static_cast<int>(edge);
      EXPECT_LE(off, got.pixels.size() / 50 + 1) << "more than 2% of the samples off by one";
    });
}

// The host's pyramid within 1 level of its double-precision reference: factors 1 to 64, every
// edge mode and channel count, images smaller than a cell and a reach beyond the image; auto at
// sigma 8 and above takes it.
TEST(GaussHost, PyramidWithinOneLevelOfItsReference) {
  struct Case {
    int width, height;
    double sigma;
  };
  const Case cases[] = {{1, 1, 7.0},    {7, 3, 6.5},     {33, 17, 2.5},  {61, 37, 13.0},
                        {19, 11, 30.0}, {129, 7, 250.0}, {45, 83, 25.0}, {64, 48, 10.0}};
  unsigned seed = 40;
  for (const Case& k : cases)
    for_each_input(k.width, k.height, seed, [&](const Image& image, EdgeMode edge) {
      GaussParams p;
      p.sigma = k.sigma;
      p.edge = edge;
      p.method = k.sigma >= kGaussPyramidSigma ? GaussMethod::automatic : GaussMethod::pyramid;
      ASSERT_EQ(gauss_method_of(p), GaussMethod::pyramid);
      const Image expected = gauss_pyramid_reference(image, k.sigma, edge);
      const Image got = gauss_blur_host(image, p, image.channels);
      EXPECT_LE(max_error(got, expected), 1)
          << k.width << "x" << k.height << "x" << image.channels << " sigma " << k.sigma << " edge "
          << static_cast<int>(edge);
    });
}

// The bands a run is cut into do not change a byte: one thread and many give the same image.
TEST(GaussHost, ThreadsDoNotChangeTheBytes) {
  const Image image = random_image(150, 130, 4, 77);
  for (double sigma : {3.0, 12.0}) {
    GaussParams p;
    p.sigma = sigma;
    EXPECT_TRUE(gauss_blur_host(image, p, 1).pixels == gauss_blur_host(image, p, 5).pixels)
        << sigma;
  }
}

// What the host does not run is refused with the option at fault; so is a buffer of the wrong
// size.
TEST(GaussHost, RefusesWhatADeviceRuns) {
  GaussParams fast;
  fast.sigma = 10;
  fast.method = GaussMethod::fast;
  EXPECT_NE(gauss_host_refusal(fast).find("--gauss-method fast"), std::string::npos);
  GaussParams huge;  // auto takes the fast method: the message says so, not --gauss-method
  huge.sigma = 1100;
  EXPECT_NE(gauss_host_refusal(huge).find("sigma above about 1030"), std::string::npos);
  GaussParams wide;
  wide.sigma = 30;
  wide.method = GaussMethod::exact;  // radius 90
  EXPECT_NE(gauss_host_refusal(wide).find("radius 90"), std::string::npos);
  GaussParams variant;
  variant.variant = GaussVariant::naive;
  EXPECT_NE(gauss_host_refusal(variant).find("--variant"), std::string::npos);
  const Image image = random_image(8, 8, 3, 1);
  EXPECT_THROW(gauss_blur_host(image, fast), UsageError);
  GaussParams fine;
  EXPECT_EQ(gauss_host_refusal(fine), "");
  Image bad{4, 4, 3, {}};
  bad.pixels.resize(47);
  EXPECT_NE(error_of([&] { gauss_blur_host(bad, fine); }).find("4x4x3"), std::string::npos);
}

}  // namespace
}  // namespace blurtool
