// Image fidelity end to end (issue 10): the blurtool binary on real files, in single and batch
// mode, with premultiplied alpha (the default), --straight-alpha, --linear-light and 16-bit
// PNGs, each output checked against the CPU reference chain (convert, blur at 16 bits, convert
// back) or against the expected values.
#include <gtest/gtest.h>

#include <tuple>

#include "filters/box/box_reference.h"
#include "filters/bright/bright_points.h"
#include "filters/gauss/gauss_reference.h"
#include "filters/working_space.h"
#include "tests/support/cli_support.h"

namespace fs = std::filesystem;

namespace blurtool {
namespace {

class FidelityCli : public SubcommandCli {
 protected:
  FidelityCli() : SubcommandCli("--box") {}
  void save(const Image& image, const std::string& name) {
    save_image(image, (root_ / name).string());
  }
  void save(const Image16& image, const std::string& name) {
    save_image(image, (root_ / name).string());
  }
  DecodedImage load(const std::string& name) { return load_image_wide((root_ / name).string()); }
};

// 64x8 RGB: black and white columns in turn.
Image stripes() {
  Image img{64, 8, 3, PixelVector<std::uint8_t>(64 * 8 * 3, 255)};
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 64; x += 2)
      for (int c = 0; c < 3; ++c) img.pixels[img.index(x, y, c)] = 0;
  return img;
}

// 16x4 RGBA: fully transparent red on the left half, opaque blue on the right.
Image red_beside_blue() {
  Image img{16, 4, 4, PixelVector<std::uint8_t>(16 * 4 * 4, 0)};
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 16; ++x) {
      const bool opaque = x >= 8;
      img.pixels[img.index(x, y, 0)] = opaque ? 0 : 255;
      img.pixels[img.index(x, y, 2)] = opaque ? 255 : 0;
      img.pixels[img.index(x, y, 3)] = opaque ? 255 : 0;
    }
  return img;
}

// A w x h image of `channels` random 16-bit samples.
Image16 random_deep(int w, int h, int channels, unsigned seed) {
  Image16 img{w, h, channels, PixelVector<std::uint16_t>(static_cast<size_t>(w) * h * channels, 0)};
  std::mt19937 rng(seed);
  for (auto& p : img.pixels) p = static_cast<std::uint16_t>(rng() & 0xFFFF);
  return img;
}

// Largest |a - b| over all samples; 65536 when the shapes differ (an empty or 8-bit result).
int deep_diff(const Image16& a, const Image16& b) {
  if (a.width != b.width || a.height != b.height || a.channels != b.channels) return 65536;
  int worst = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i)
    worst = std::max(worst, std::abs(int(a.pixels[i]) - int(b.pixels[i])));
  return worst;
}

// The reference chain of a box blur of radius r in `space` (clamp-to-edge), at 16 bits.
Image16 box_in_space(const Image16& image, int radius, WorkingSpace space) {
  const Image16 rgba = to_rgba(image);
  return from_rgba(
      from_working_space(box_blur_reference(to_working_space(rgba, space), radius, EdgeMode::clamp),
                         space),
      image.channels);
}

TEST_F(FidelityCli, LinearLightMixesBlackAndWhiteTo188) {
  save(stripes(), "stripes.png");
  Result r = run({"32", "--linear-light", "stripes.png", "linear.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  r = run({"32", "stripes.png", "stored.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  r = run({"32", "--bench", "2", "--bench-format", "json", "stripes.png", "bench.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"pixels\": \"RGBA8\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"width\": 64"), std::string::npos) << r.out;
  const DecodedImage linear = load("linear.png"), stored = load("stored.png");
  ASSERT_FALSE(linear.is_wide());  // an 8-bit input gives an 8-bit output
  ASSERT_EQ(linear.channels(), 3);
  EXPECT_NEAR(linear.narrow.pixels[linear.narrow.index(32, 4, 0)], 188, 2);
  EXPECT_NEAR(stored.narrow.pixels[stored.narrow.index(32, 4, 0)], 128, 2);
}

TEST_F(FidelityCli, TransparentColourLeavesNoHaloUnlessStraightAlpha) {
  save(red_beside_blue(), "edge.png");
  Result r = run({"3", "edge.png", "pre.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  r = run({"3", "--straight-alpha", "edge.png", "straight.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Image pre = load("pre.png").narrow, straight = load("straight.png").narrow;
  ASSERT_EQ(pre.channels, 4);
  for (int x = 5; x < 11; ++x) {  // windows across the edge
    EXPECT_EQ(pre.pixels[pre.index(x, 1, 0)], 0) << "x=" << x;
    EXPECT_EQ(pre.pixels[pre.index(x, 1, 2)], 255) << "x=" << x;
    EXPECT_GT(straight.pixels[straight.index(x, 1, 0)], 30) << "x=" << x;  // 255/7 and up
  }
  for (int c = 0; c < 4; ++c) EXPECT_EQ(pre.pixels[pre.index(0, 1, c)], 0);  // black-transparent
  // The 8-bit result is the 16-bit reference chain rounded to 8 bits.
  const Image expected =
      narrow(box_in_space(widen(red_beside_blue()), 3, WorkingSpace{false, true, true}));
  EXPECT_EQ(max_diff(pre, expected), 0);
  // --straight-alpha: the 8-bit blur of the channels as stored.
  EXPECT_EQ(max_diff(straight, box_blur_reference(red_beside_blue(), 3, EdgeMode::clamp)), 0);
}

// Pixels the kernels read and write where they lie (PoCL) must be aligned for their widest
// vector, 32 bytes at 16 bits; where malloc placed them on a 16-byte boundary only, a 40x30
// 16-bit PNG once crashed the process. Sizes whose buffers land on either boundary.
TEST_F(FidelityCli, SixteenBitPngsOfEverySizeAreBlurred) {
  for (const auto& [w, h, channels] :
       {std::tuple{40, 30, 3}, {40, 30, 4}, {41, 30, 3}, {33, 7, 4}, {64, 48, 3}, {400, 300, 1}}) {
    const Image16 deep = random_deep(w, h, channels, static_cast<unsigned>(w + h));
    save(deep, "sized.png");
    const Result r = run({"2", "--straight-alpha", "sized.png", "sized-out.png"});
    ASSERT_EQ(r.status, 0) << w << "x" << h << "x" << channels << ": " << r.err;
    const DecodedImage out = load("sized-out.png");
    ASSERT_TRUE(out.is_wide());
    EXPECT_EQ(deep_diff(out.wide, box_blur_reference(deep, 2, EdgeMode::clamp)), 0)
        << w << "x" << h << "x" << channels;
  }
}

TEST_F(FidelityCli, SixteenBitPngIsBlurredAndWrittenAtSixteenBits) {
  const Image16 deep = random_deep(29, 17, 3, 4);
  save(deep, "deep.png");
  Result r = run({"2", "deep.png", "out.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  const DecodedImage out = load("out.png");
  ASSERT_TRUE(out.is_wide());
  EXPECT_EQ(deep_diff(out.wide, box_blur_reference(deep, 2, EdgeMode::clamp)), 0);
  // --bench says what ran: the image's size and depth, the schedule at 16 bits.
  r = run({"2", "--bench", "2", "deep.png", "bench.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(" 16-bit, 29x17 RGBA16, median of 2 runs"), std::string::npos) << r.out;
  // JPEG holds 8 bits.
  r = run({"2", "deep.png", "out.jpg"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(load("out.jpg").is_wide());
  // Linear light on 16-bit samples, and premultiplied alpha on a 16-bit RGBA image.
  r = run({"2", "--linear-light", "deep.png", "linear.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(deep_diff(load("linear.png").wide, box_in_space(deep, 2, WorkingSpace{true, false})),
            0);
  const Image16 deep_alpha = random_deep(23, 11, 4, 5);
  save(deep_alpha, "alpha.png");
  r = run({"2", "--linear-light", "alpha.png", "both.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(deep_diff(load("both.png").wide, box_in_space(deep_alpha, 2, WorkingSpace{true, true})),
            0);
}

TEST_F(FidelityCli, BatchGivesTheSingleModeBytes) {
  fs::create_directories(root_ / "in");
  save(random_deep(29, 17, 3, 4), "in/deep.png");
  save(red_beside_blue(), "in/edge.png");
  save(stripes(), "in/stripes.png");
  Result r = run({"3", "--linear-light", "in", "out/"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* name : {"deep.png", "edge.png", "stripes.png"}) {
    r = run({"3", "--linear-light", (fs::path("in") / name).string(), name});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(root_ / "out" / name), read_file(root_ / name)) << name;
  }
}

TEST_F(FidelityCli, GaussianInLinearLightMatchesTheReferenceChain) {
  save(red_beside_blue(), "edge.png");
  const Result r =
      run_blurtool({"--gauss", "1.5", "--linear-light", "edge.png", "g.png"}, root_, root_);
  ASSERT_EQ(r.status, 0) << r.err;
  // Every pixel whose 8-bit alpha is 0 is black-transparent (the Gaussian leaves slivers of
  // alpha far from the edge; dividing by them would give any colour).
  const Image g = load("g.png").narrow;
  for (size_t i = 0; i < g.pixels.size(); i += 4) {
    if (g.pixels[i + 3] == 0) {
      EXPECT_EQ(g.pixels[i] | g.pixels[i + 1] | g.pixels[i + 2], 0) << "pixel " << i / 4;
    }
  }
  const WorkingSpace space{true, true, true};
  const Image16 rgba = widen(red_beside_blue());
  const Image expected =
      narrow(from_working_space(gauss_blur_reference(to_working_space(rgba, space), 1.5,
                                                     gauss_default_radius(1.5), EdgeMode::clamp),
                                space));
  EXPECT_LE(max_diff(load("g.png").narrow, expected), 1);
}

// Bright points never premultiply (they are not a blur): --straight-alpha is a usage error.
TEST_F(FidelityCli, StraightAlphaIsRefusedWithBrightPoints) {
  save(stripes(), "stripes.png");
  const Result r =
      run_blurtool({"--bright", "0.5", "--straight-alpha", "stripes.png", "p.csv"}, root_, root_);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--straight-alpha"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(fs::exists(root_ / "p.csv"));
}

// Bright points of a 16-bit PNG at 16 bits, and in linear light (luminance of the decoded
// colour, the stored colour reported), in one piece and in tiles: the CPU reference's points.
TEST_F(FidelityCli, BrightPointsAtSixteenBitsAndInLinearLight) {
  const Image16 deep = random_deep(48, 40, 3, 8);
  save(deep, "deep.png");
  BrightParams params;
  params.threshold = 0.4;
  const std::string expected = bright_points_csv(bright_points_reference(to_rgba(deep), params));
  Result r = run_blurtool({"--bright", "0.4", "deep.png", "p.csv"}, root_, root_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(root_ / "p.csv"), expected);
  r = run_blurtool({"--bright", "0.4", "--max-tile", "16x16", "deep.png", "t.csv"}, root_, root_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(root_ / "t.csv"), expected);
  // Linear light: a threshold of 0.4 in linear luminance is sRGB 0.66, so fewer points.
  std::vector<BrightPoint> linear =
      bright_points_reference(to_working_space(to_rgba(deep), {true, false}), params);
  stored_colours(linear, to_rgba(deep));
  ASSERT_NE(bright_points_csv(linear), expected);
  for (const char* tile : {"", "16x16"}) {
    std::vector<std::string> args = {"--bright", "0.4", "--linear-light", "deep.png", "l.csv"};
    if (*tile) args.insert(args.begin(), {"--max-tile", tile});
    r = run_blurtool(args, root_, root_);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(root_ / "l.csv"), bright_points_csv(linear)) << tile;
  }
  // The glow of a 16-bit PNG is a 16-bit PNG.
  r = run_blurtool({"--bright", "0.4", "deep.png", "glow.png"}, root_, root_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(load("glow.png").is_wide());
}

// A device that runs out of memory on a 16-bit image (simulated, as in
// Cli.DeviceOutOfMemoryIsNamedAndTheBatchGoesOn) is told the image's 16-bit size: 600x400 at
// 8 bytes a pixel is 1.8 MiB in and out (at 8 bits 0.9, printed as 1).
TEST_F(FidelityCli, DeviceOutOfMemoryNamesTheSixteenBitSizes) {
  save(random_deep(600, 400, 4, 9), "deep.png");
  ::setenv("BLURTOOL_FAIL_ALLOCATION", "600x400", 1);
  const Result r = run_blurtool({"--box", "3", "deep.png", "o.png"}, root_, root_);
  ::unsetenv("BLURTOOL_FAIL_ALLOCATION");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("600x400 image (2 MiB in, 2 MiB out"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "o.png"));
}

}  // namespace
}  // namespace blurtool
