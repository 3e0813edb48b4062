// Premultiplied alpha and linear light (issue 10) on the device: every kind of box schedule, and
// bright points, run in each working space against the CPU reference chain (convert, blur at 16
// bits, convert back), exactly; 8-bit pixels widened and narrowed on the device.
#include <gtest/gtest.h>

#include <memory>

#include "filters/box/box_blur.h"
#include "filters/box/box_reference.h"
#include "filters/bright/bright_points.h"
#include "filters/gauss/gauss_blur.h"
#include "filters/gauss/gauss_reference.h"
#include "filters/working_space.h"
#include "tests/support/test_support.h"

namespace blurtool {
namespace {

const WorkingSpace kSpaces[] = {{true, false}, {false, true}, {true, true}, {true, true, true}};

// A straight-alpha RGBA16 image whose alpha takes 0, 65535 and values between.
Image16 random_with_alpha(int w, int h, unsigned seed) {
  Image16 img = random_rgba16(w, h, seed);
  for (size_t i = 3; i < img.pixels.size(); i += 4) {
    if (i % 12 == 3) img.pixels[i] = 0;
    if (i % 12 == 7) img.pixels[i] = 65535;
  }
  return img;
}

// One image schedule with two passes, one with one pass, and both buffer schedules, in each
// working space: the device's prepare, blur and finish equal the reference chain exactly.
TEST(WorkingSpace, DeviceFilterMatchesReferenceChain) {
  const Image16 input = random_with_alpha(37, 23, 5);
  for (BoxVariant v :
       {BoxVariant::segmented, BoxVariant::single, BoxVariant::tiled, BoxVariant::fused}) {
    for (WorkingSpace space : kSpaces) {
      for (int radius : {0, 4}) {
        BoxParams p;
        p.radius = radius;
        p.variant = v;
        p.edge = EdgeMode::mirror;
        auto inner = std::make_shared<BoxFilter>(runtime(), p, 37, 23, PixelDepth::u16);
        WorkingSpaceFilter filter(runtime(), inner, space, 37, 23);
        const Image16 expected = from_working_space(
            box_blur_reference(to_working_space(input, space), radius, EdgeMode::mirror), space);
        EXPECT_EQ(max_error(run_filter(runtime(), filter, input).output, expected), 0)
            << filter.describe() << " r=" << radius;
        EXPECT_NE(filter.describe().find(" 16-bit " + space.text()), std::string::npos)
            << filter.describe();
      }
    }
  }
}

// An 8-bit stored form goes to the device as it is: the filter widens it, blurs at 16 bits and
// narrows the result, exactly as the host's widen() and narrow() around the 16-bit chain.
TEST(WorkingSpace, EightBitPixelsAreWidenedAndNarrowedOnTheDevice) {
  const Image input = narrow(random_with_alpha(37, 23, 9));
  for (BoxVariant v : {BoxVariant::segmented, BoxVariant::tiled}) {
    for (WorkingSpace space : kSpaces) {
      BoxParams p;
      p.radius = 3;
      p.variant = v;
      auto inner = std::make_shared<BoxFilter>(runtime(), p, 37, 23, PixelDepth::u16);
      WorkingSpaceFilter filter(runtime(), inner, space, 37, 23, PixelDepth::u8);
      EXPECT_EQ(filter.depth(), PixelDepth::u8);
      const Image expected = narrow(from_working_space(
          box_blur_reference(to_working_space(widen(input), space), 3, EdgeMode::clamp), space));
      const Image output = run_filter(runtime(), filter, input).output;
      EXPECT_EQ(max_error(output, expected), 0) << filter.describe();
      // The conversions bite: the stored form's blur differs.
      EXPECT_GT(max_error(output, box_blur_reference(input, 3, EdgeMode::clamp)), 0)
          << filter.describe();
      EXPECT_EQ(filter.compulsory_bytes(), 2u * 37 * 23 * 4) << filter.describe();
    }
  }
}

// Every box and Gaussian variant in linear light against the reference chain: box exactly
// (single-linear and double-linear within 1 level off CPU devices: at 16 bits their bilinear
// fetches carry the sampler's precision, which OpenCL leaves to the device; an NVIDIA H100
// measured 1); Gaussian within 3 levels, its float rounding (at most 1 level in the working
// space) times the slope of the sRGB encoding at the image's darkest value (linear 0.25: 1.24).
TEST(WorkingSpace, EveryVariantInLinearLightMatchesTheReferenceChain) {
  Image16 input = random_rgba16(29, 19, 12);
  for (auto& v : input.pixels) v = static_cast<std::uint16_t>(16384 + v * 3 / 4);  // >= 0.25
  const WorkingSpace space{true, false};
  const Image16 linear = to_working_space(input, space);
  auto run_in_space = [&](std::shared_ptr<Filter> inner) {
    WorkingSpaceFilter filter(runtime(), std::move(inner), space, 29, 19);
    return run_filter(runtime(), filter, input).output;
  };
  const Image16 box = from_working_space(box_blur_reference(linear, 3, EdgeMode::clamp), space);
  const bool cpu = runtime().device().type & CL_DEVICE_TYPE_CPU;
  for (const auto& v : box_variant_table()) {
    BoxParams p;
    p.radius = 3;
    p.variant = v.value;
    const bool linear = box_samples_linearly(v.value);
    EXPECT_LE(
        max_error(run_in_space(std::make_shared<BoxFilter>(runtime(), p, 29, 19, PixelDepth::u16)),
                  box),
        linear && !cpu ? 1 : 0)
        << v.name;
  }
  const Image16 gauss =
      from_working_space(gauss_blur_reference(linear, 1.5, 4, EdgeMode::clamp), space);
  for (const auto& v : gauss_variant_table()) {
    if (gauss_is_mma(v.value)) continue;  // 8 bits only
    GaussParams p;
    p.sigma = 1.5;
    p.radius = 4;
    p.variant = v.value;
    // separable-linear off CPU devices: a GPU's filter keeps its fraction in 8 bits, up to 256
    // levels more in the working space (tests/device/test_gauss.cpp), times the slope 1.24: 318 (an
    // NVIDIA H100 measured 12).
    const int bound = v.value == GaussVariant::separable_linear && !cpu ? 3 + 318 : 3;
    EXPECT_LE(max_error(run_in_space(
                            std::make_shared<GaussFilter>(runtime(), p, 29, 19, PixelDepth::u16)),
                        gauss),
              bound)
        << v.name;
  }
}

// Every bright-point variant this device runs, in linear light: the points of the reference
// on the linearised image (luminance of linear light), exactly.
TEST(WorkingSpace, EveryBrightVariantInLinearLightFindsTheReferencePoints) {
  const Image16 input = random_rgba16(37, 29, 14);
  const WorkingSpace space{true, false};
  BrightParams params;
  params.threshold = 0.3;
  const std::string expected =
      bright_points_csv(bright_points_reference(to_working_space(input, space), params));
  ASSERT_NE(expected, bright_points_csv(bright_points_reference(input, params)));  // it bites
  for (const auto& v : bright_variant_table()) {
    if (v.value == BrightVariant::subgroup && !has_subgroups()) continue;
    params.variant = v.value;
    auto finder = std::make_shared<BrightFinder>(runtime(), params, 37, 29, PixelDepth::u16);
    WorkingSpaceFilter filter(runtime(), finder, space, 37, 29);
    run_filter(runtime(), filter, input);
    EXPECT_EQ(bright_points_csv(bright_finder_of(filter).points()), expected) << v.name;
  }
}

TEST(WorkingSpace, RefusesAnEightBitSchedule) {
  BoxParams p;
  p.radius = 1;
  auto inner = std::make_shared<BoxFilter>(runtime(), p, 8, 8);
  EXPECT_THROW(WorkingSpaceFilter(runtime(), inner, {true, false}, 8, 8), Error);
}

// Blurs `input` (8-bit values widened) with a box of radius r in `space`; returns 8-bit values.
Image16 blur_in(const Image16& input, int radius, WorkingSpace space) {
  BoxParams p;
  p.radius = radius;
  auto inner =
      std::make_shared<BoxFilter>(runtime(), p, input.width, input.height, PixelDepth::u16);
  WorkingSpaceFilter filter(runtime(), inner, space, input.width, input.height);
  return run_filter(runtime(), filter, input).output;
}

// The test: black and white mixed half and half blur to linear mid-grey, about 188 of
// 255 in sRGB, where the stored form gives about 128.
TEST(WorkingSpace, LinearLightMixesBlackAndWhiteToSrgb188) {
  Image16 stripes{64, 8, 4, PixelVector<std::uint16_t>(64 * 8 * 4, 65535)};
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 64; x += 2)
      for (int c = 0; c < 3; ++c) stripes.pixels[stripes.index(x, y, c)] = 0;
  // A window of 2 * 32 + 1 = 65 columns: 32 or 33 white of 65, linear 0.49 or 0.51.
  const Image16 linear = blur_in(stripes, 32, {true, false});
  const Image16 stored = blur_in(stripes, 32, {false, false});
  const int centre = linear.index(32, 4, 0);
  EXPECT_NEAR(linear.pixels[centre] / 257.0, 188, 2);
  EXPECT_NEAR(stored.pixels[centre] / 257.0, 128, 2);
}

// The halo test: a fully transparent red region next to an opaque blue one. Blurred in
// premultiplied form no red reaches the blue side and the transparent side turns blue, not
// purple; blurred straight, red bleeds into the opaque pixels.
TEST(WorkingSpace, PremultipliedBlurHasNoHaloFromTransparentColour) {
  Image16 img{16, 4, 4, PixelVector<std::uint16_t>(16 * 4 * 4, 0)};
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 16; ++x) {
      const bool opaque = x >= 8;
      img.pixels[img.index(x, y, 0)] = opaque ? 0 : 65535;  // red where transparent
      img.pixels[img.index(x, y, 2)] = opaque ? 65535 : 0;  // blue where opaque
      img.pixels[img.index(x, y, 3)] = opaque ? 65535 : 0;
    }
  const Image16 pre = blur_in(img, 3, {false, true});
  const Image16 straight = blur_in(img, 3, {false, false});
  for (int x = 5; x < 11; ++x) {  // the pixels whose window spans the edge
    EXPECT_EQ(pre.pixels[pre.index(x, 1, 0)], 0) << "x=" << x;
    EXPECT_EQ(pre.pixels[pre.index(x, 1, 2)], 65535) << "x=" << x;
    EXPECT_GT(straight.pixels[straight.index(x, 1, 0)], 0) << "x=" << x;
  }
  EXPECT_EQ(pre.pixels[pre.index(0, 1, 3)], 0);  // far from the edge: still transparent
  EXPECT_EQ(pre.pixels[pre.index(0, 1, 0)], 0);  // and black-transparent
}

}  // namespace
}  // namespace blurtool
