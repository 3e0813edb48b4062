// Images split into tiles with a halo (issue 8): run_filter_tiled against one run of the same
// filter, bit for bit, for every box and Gaussian variant and edge mode (the Gaussian, bright
// points and their glow at 8 and 16 bits), with tiles small enough that every tile edge and corner
// case occurs (halo cut at the image's edges, short last tiles, tiles narrower than the halo); and
// the message of a device allocation failure.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "filters/box/box_blur.h"
#include "filters/bright/bright_points.h"
#include "filters/edge_mode.h"
#include "filters/gauss/gauss_blur.h"
#include "filters/gauss/gauss_weights.h"
#include "filters/tiled_run.h"
#include "tests/support/test_support.h"
#include "util/error.h"

namespace blurtool {
namespace {

// An allocation failure names the input's and output's size from their bytes a pixel: a
// 2048x2048 RGBA8 image is 16 MiB, RGBA16 32 MiB. Other errors give no line.
TEST(DeviceFault, SizesFollowThePixelBytes) {
  const cl::Error fault(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateBuffer");
  const DeviceInfo& d = runtime().device();
  const std::string u8 = device_fault_message(fault, d, 2048, 2048, 4);
  const std::string u16 = device_fault_message(fault, d, 2048, 2048, 8);
  EXPECT_NE(u8.find("(16 MiB in, 16 MiB out, up to 64 MiB intermediate"), std::string::npos) << u8;
  EXPECT_NE(u16.find("(32 MiB in, 32 MiB out, up to 64 MiB intermediate"), std::string::npos)
      << u16;
  EXPECT_NE(u16.find("max_tile 1024x1024"), std::string::npos) << u16;
  EXPECT_EQ(device_fault_message(cl::Error(CL_INVALID_KERNEL_ARGS, "clEnqueueNDRangeKernel"), d,
                                 2048, 2048, 8),
            "");
}

// A FilterT for `p` and a `w` x `h` image of T samples: 16-bit ones need a filter built for
// PixelDepth::u16.
template <typename Params, typename FilterT, typename T>
std::shared_ptr<FilterT> filter_for(const Params& p, int w, int h) {
  if constexpr (depth_of<T> == PixelDepth::u16)
    return std::make_shared<FilterT>(runtime(), p, w, h, PixelDepth::u16);
  else
    return std::make_shared<FilterT>(runtime(), p, w, h);
}

template <typename Params, typename FilterT, typename T>
BasicFilterRun<T> tiled(const BasicImage<T>& input, const Params& p, int halo, TileSize tile) {
  const MakeFilter make =
      make_filter_per_size([&](int w, int h) { return filter_for<Params, FilterT, T>(p, w, h); });
  return run_filter_tiled(runtime(), make, input, halo, tile);
}

template <typename Params, typename FilterT, typename T>
BasicImage<T> whole(const BasicImage<T>& input, const Params& p) {
  return run_filter(runtime(), *filter_for<Params, FilterT, T>(p, input.width, input.height), input)
      .output;
}

TEST(TiledRun, BoxEqualsOneRunForEveryVariantAndEdgeMode) {
  const Image input = random_rgba(131, 97, 3);
  for (const auto& v : box_variant_table()) {
    if (v.value == BoxVariant::automatic) continue;
    for (const auto& edge : edge_mode_table()) {
      BoxParams p;
      p.radius = 6;
      p.variant = v.value;
      p.edge = edge.value;
      SCOPED_TRACE(std::string(v.name) + " " + edge.name);
      // 29x17 tiles: 5x6 of them, the last ones short; 4x3: tiles narrower than the halo.
      for (TileSize t : {TileSize{29, 17}, TileSize{4, 3}}) {
        if (t.width == 4 && v.value != BoxVariant::fused && v.value != BoxVariant::unrolled)
          continue;  // the tiny tiles once for a buffer and an image schedule: they are slow
        const Image a = tiled<BoxParams, BoxFilter>(input, p, p.radius, t).output;
        const Image b = whole<BoxParams, BoxFilter>(input, p);
        EXPECT_EQ(a.pixels, b.pixels) << t.width << "x" << t.height;
      }
    }
  }
}

// Every Gaussian variant gives the very same samples but those in `near`, which may be as many
// levels off as it says. On images of T samples.
template <typename T>
void expect_gauss_tiled_equals_one_run(const std::map<GaussVariant, int>& near) {
  const BasicImage<T> input = random_image<T>(131, 97, 4);
  for (const auto& v : gauss_variant_table()) {  // auto: one of the others
    if (v.value == GaussVariant::automatic ||
        !gauss_variant_runs(v.value, runtime().device(), depth_of<T>, 8))
      continue;
    for (const auto& edge : edge_mode_table()) {
      GaussParams p;
      p.sigma = 2.5;
      p.variant = v.value;
      p.edge = edge.value;
      SCOPED_TRACE(std::string(v.name) + " " + edge.name);
      const int halo = gauss_radius(p);
      const BasicImage<T> a = tiled<GaussParams, GaussFilter>(input, p, halo, {29, 17}).output;
      const BasicImage<T> b = whole<GaussParams, GaussFilter>(input, p);
      if (near.count(v.value))
        EXPECT_LE(max_error(a, b), near.at(v.value));
      else
        EXPECT_EQ(a.pixels, b.pixels);
    }
  }
}

// separable-linear's hardware-filter weights come from float coordinates whose rounding
// depends on the position in the (tile's) image: at most 1 level off. So do separable-mma's
// sums (measured on an H100): the tensor cores add a pixel's taps in blocks of 16 counted from
// the strip's start, so a pixel's rounding depends on its offset in the strip.
TEST(TiledRun, GaussEqualsOneRunForEveryVariantAndEdgeMode) {
  expect_gauss_tiled_equals_one_run<std::uint8_t>({{GaussVariant::separable_linear, 1},
                                                   {GaussVariant::separable_mma, 1},
                                                   {GaussVariant::fused_mma, 1}});
}

// The same at 16 bits a sample (PixelDepth::u16), where float rounding (about 0.004 of a
// level) tips more samples that lie near a half level: besides separable-linear (337 of 50828
// samples on PoCL), tiled, which adds a pixel's taps in an order that depends on its column in
// its tile (the 16- and 4-pixel paths and the tail; 20 samples). At 8 bits the same can happen,
// 257 times less often: not on this image. Both 1 level off at most on PoCL. A GPU's filter
// keeps the fraction t in 8 bits: where t * 256 rounds the other way for the tile's
// coordinates a fetch moves by 1/256 of its two pixels' difference, up to 256 levels a pass
// (derived, not measured).
TEST(TiledRun, Gauss16EqualsOneRunForEveryVariantAndEdgeMode) {
  const bool cpu = runtime().device().type & CL_DEVICE_TYPE_CPU;
  expect_gauss_tiled_equals_one_run<std::uint16_t>(
      {{GaussVariant::separable_linear, cpu ? 1 : 512}, {GaussVariant::tiled, 1}});
}

// The Gaussian's fast method with a halo of its reach (gauss_radius: K (r + 1)) gives the very
// same bytes in tiles as in one run, at 8 and 16 bits and in every edge mode: its window sums
// are exact, so a box's result does not depend on where a tile's rows and columns begin.
template <typename T>
void expect_gauss_fast_tiled_equals_one_run() {
  const BasicImage<T> input = random_image<T>(131, 97, 8);
  for (const auto& edge : edge_mode_table()) {
    GaussParams p;
    p.sigma = 6.0;
    p.method = GaussMethod::fast;
    p.edge = edge.value;
    SCOPED_TRACE(edge.name);
    const int halo = gauss_radius(p);
    EXPECT_EQ(halo, gauss_box_cascade(p.sigma).reach());
    const BasicImage<T> a = tiled<GaussParams, GaussFilter>(input, p, halo, {29, 17}).output;
    EXPECT_EQ(a.pixels, (whole<GaussParams, GaussFilter>(input, p).pixels));
  }
}

TEST(TiledRun, GaussFastEqualsOneRun) {
  expect_gauss_fast_tiled_equals_one_run<std::uint8_t>();
  expect_gauss_fast_tiled_equals_one_run<std::uint16_t>();
}

// The pyramid method with a halo of its reach gives the very same bytes in tiles as in one
// run, at 8 and 16 bits and in every edge mode: each tile is told its origin (set_origin), so
// its cells are the image's, each computed from the same pixels in the same order. Tiles of
// odd sizes put the origins at every phase of a cell (an outer origin, a strip's: CliStrips).
template <typename T>
void expect_gauss_pyramid_tiled_equals_one_run() {
  const BasicImage<T> input = random_image<T>(131, 97, 9);
  for (const auto& edge : edge_mode_table()) {
    for (double sigma : {6.5, 13.0, 20.0}) {
      // f 4, and f 8 (a level of 2 x 2 cells), once each are enough.
      if (sigma > 10 && edge.value != EdgeMode::clamp) continue;
      GaussParams p;
      p.sigma = sigma;
      p.method = GaussMethod::pyramid;
      p.edge = edge.value;
      SCOPED_TRACE(std::string(edge.name) + " sigma " + std::to_string(sigma));
      const int halo = gauss_radius(p);
      EXPECT_EQ(halo, gauss_pyramid(p.sigma).reach());
      const BasicImage<T> a = tiled<GaussParams, GaussFilter>(input, p, halo, {53, 37}).output;
      EXPECT_EQ(a.pixels, (whole<GaussParams, GaussFilter>(input, p).pixels));
    }
  }
}

TEST(TiledRun, GaussPyramidEqualsOneRun) {
  expect_gauss_pyramid_tiled_equals_one_run<std::uint8_t>();
  expect_gauss_pyramid_tiled_equals_one_run<std::uint16_t>();
}

// A filter told the wrong origin gives other bytes: the test above could not pass by chance.
TEST(TiledRun, GaussPyramidDependsOnTheOrigin) {
  const Image input = random_image<std::uint8_t>(64, 48, 10);
  GaussParams p;
  p.sigma = 13.0;
  p.method = GaussMethod::pyramid;
  GaussFilter filter(runtime(), p, input.width, input.height);
  const Image at0 = run_filter(runtime(), filter, input).output;
  filter.set_origin(1, 0);
  EXPECT_NE(run_filter(runtime(), filter, input).output.pixels, at0.pixels);
  filter.set_origin(0, 0);
  EXPECT_EQ(run_filter(runtime(), filter, input).output.pixels, at0.pixels);
}

// The tiles' kernel times add up per pass and repetition.
TEST(TiledRun, TimesAreSummedOverTiles) {
  BoxParams p;
  p.radius = 2;
  p.variant = BoxVariant::unrolled;
  const MakeFilter make = make_filter_per_size(
      [&](int w, int h) { return std::make_shared<BoxFilter>(runtime(), p, w, h); });
  const FilterRun run = run_filter_tiled(runtime(), make, random_rgba(40, 30, 5), 2, {20, 15}, 3);
  ASSERT_EQ(run.pass_ms.size(), 2u);  // unrolled: rows, then columns
  for (const auto& pass : run.pass_ms) {
    ASSERT_EQ(pass.size(), 3u);
    for (double ms : pass) EXPECT_GT(ms, 0.0);
  }
}

// Bright points over tiles of whole blocks: the same points (offsets added, sorted by (y, x))
// and the same glow (each tile read with the glow's halo), for block sides that divide the
// image and ones that leave partial blocks at its edges; at 8 and 16 bits.
template <typename T>
void bright_points_and_glow_equal_one_run() {
  const BasicImage<T> input = random_image<T>(131, 97, 6);
  for (int block : {8, 5}) {
    SCOPED_TRACE(block);
    BrightParams p;
    p.threshold = 0.3;
    p.block = block;
    const TileSize tile{4 * block, 3 * block};
    const std::vector<BrightPoint> points = find_bright_points(runtime(), input, p);
    ASSERT_GT(points.size(), 100u);
    EXPECT_EQ(find_bright_points_tiled(runtime(), input, p, tile), points);
    EXPECT_EQ(draw_glow_tiled(runtime(), input, points, p, tile).pixels,
              draw_glow(runtime(), input, points, p).pixels);
  }
  BrightParams p;
  p.block = 8;
  EXPECT_THROW(find_bright_points_tiled(runtime(), input, p, {20, 16}), Error);  // 20 % 8
}

TEST(TiledRun, BrightPointsAndGlowEqualOneRun) {
  bright_points_and_glow_equal_one_run<std::uint8_t>();
}

TEST(TiledRun, BrightPointsAndGlowEqualOneRun16) {
  bright_points_and_glow_equal_one_run<std::uint16_t>();
}

}  // namespace
}  // namespace blurtool
