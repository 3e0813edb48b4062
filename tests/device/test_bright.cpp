// Bright-point extraction on the device: every variant must equal the CPU reference exactly (same
// points, same order) on random images, sides that are not multiples of B, B in {2, 4, 8, 16},
// thresholds 0 and 1, all-black and all-white images (ties everywhere), and the Hubble deep field;
// at 8 and 16 bits. At 16 bits also: a widened 8-bit image gives the 8-bit points, pixels that
// differ only below 8-bit precision are told apart, and the glow keeps 16 bits and agrees with the
// 8-bit glow.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>

#include "filters/bright/bright_points.h"
#include "tests/support/test_support.h"
#include "util/error.h"

namespace blurtool {

// Readable points in failure messages.
void PrintTo(const BrightPoint& p, std::ostream* os) {
  *os << "(" << p.x << "," << p.y << " rgb " << int(p.r) << "," << int(p.g) << "," << int(p.b)
      << " L " << p.luminance_units << ")";
}

namespace {

// Variants this device can run: every entry of the table, subgroup only with sub-groups.
std::vector<BrightVariant> runnable_variants() {
  std::vector<BrightVariant> all;
  for (const auto& v : bright_variant_table())
    if (v.value != BrightVariant::subgroup || has_subgroups()) all.push_back(v.value);
  return all;
}

// A `w` x `h` RGBA image of T samples, every sample `v`.
template <typename T>
BasicImage<T> flat(int w, int h, T v) {
  return BasicImage<T>{w, h, 4, PixelVector<T>(static_cast<size_t>(w) * h * 4, v)};
}

// Every runnable variant, at the image's depth, against the reference of that depth.
template <typename T>
void expect_same_as_reference(const BasicImage<T>& image, BrightParams p, const std::string& what) {
  const std::vector<BrightPoint> expected = bright_points_reference(image, p);
  for (BrightVariant v : runnable_variants()) {
    p.variant = v;
    const std::vector<BrightPoint> got = find_bright_points(runtime(), image, p);
    EXPECT_EQ(got, expected) << what << " at " << 8 * sizeof(T) << " bits, variant "
                             << name_of(bright_variant_table(), v) << " B=" << p.block
                             << " T=" << p.threshold << ": " << got.size() << " vs "
                             << expected.size() << " points";
  }
}

// Calls check(w, h, seed, params, what) for every image size (sides that are and are not
// multiples of B, 1x1), block side B and threshold of the random-image tests.
void for_each_random_case(
    const std::function<void(int, int, unsigned, const BrightParams&, const std::string&)>& check) {
  unsigned seed = 1;
  for (auto [w, h] : {std::pair{64, 48}, {37, 23}, {1, 1}, {17, 5}, {100, 61}}) {
    ++seed;
    for (int block : {2, 4, 8, 16}) {
      for (double threshold : {0.0, 0.3, 0.5, 1.0}) {
        BrightParams p;
        p.block = block;
        p.threshold = threshold;
        p.per_item = block >= 4 ? 2 : 1;
        check(w, h, seed, p, std::to_string(w) + "x" + std::to_string(h));
      }
    }
  }
}

TEST(BrightPoints, RandomImagesEveryBlockSizeAndThreshold) {
  // 4 levels per channel: many equal luminances inside a block, so tie-breaking is exercised.
  for_each_random_case(
      [](int w, int h, unsigned seed, const BrightParams& p, const std::string& what) {
        expect_same_as_reference(random_rgba(w, h, seed, 4), p, what);
      });
}

// No sample a multiple of 257: an 8-bit path anywhere (samples, luminance or colour rounded to
// 8 bits) changes the points' luminance or colour.
TEST(BrightPoints, RandomImagesEveryBlockSizeAndThreshold16) {
  for_each_random_case(
      [](int w, int h, unsigned seed, const BrightParams& p, const std::string& what) {
        expect_same_as_reference(random_rgba16(w, h, seed), p, what);
      });
}

// widen() scales every sample by 257, which the 16-bit luminance divides out exactly: the same
// points (ties included, 4 levels a channel) as at 8 bits, from the reference and every variant.
TEST(BrightPoints, WidenedImagesGiveTheEightBitPoints) {
  for_each_random_case(
      [](int w, int h, unsigned seed, const BrightParams& p, const std::string& what) {
        const Image image = random_rgba(w, h, seed, 4);
        const Image16 wide = widen(image);
        EXPECT_EQ(bright_points_reference(wide, p), bright_points_reference(image, p))
            << what << " B=" << p.block << " T=" << p.threshold;
        expect_same_as_reference(wide, p, what + " widened");
      });
}

template <typename T>
void hybrid_every_per_item_size(const BasicImage<T>& image) {
  for (int k = 1; k <= 8; ++k) {
    BrightParams p;
    p.per_item = k;  // 3, 5, 6, 7 do not divide 8: the last work-items cover a partial square
    p.threshold = 0.2;
    p.variant = BrightVariant::hybrid;
    EXPECT_EQ(find_bright_points(runtime(), image, p), bright_points_reference(image, p))
        << "K=" << k << " at " << 8 * sizeof(T) << " bits";
  }
}

TEST(BrightPoints, HybridEveryPerItemSize) {
  hybrid_every_per_item_size(random_rgba(45, 29, 5, 8));
  hybrid_every_per_item_size(random_rgba16(45, 29, 5));
}

template <typename T>
void black_and_white_images() {
  constexpr T white = std::numeric_limits<T>::max();
  for (int block : {2, 8, 16}) {
    BrightParams p;
    p.block = block;
    p.threshold = 0.0;
    // All black: L = 0 is never above 0, so nothing; all white: every block reports its first
    // pixel (every pixel ties).
    expect_same_as_reference(flat<T>(33, 19, 0), p, "black");
    expect_same_as_reference(flat<T>(33, 19, white), p, "white");
    const std::vector<BrightPoint> points = bright_points_reference(flat<T>(33, 19, white), p);
    ASSERT_FALSE(points.empty());
    EXPECT_EQ(points[1].x, block);  // the second block's first pixel
    EXPECT_EQ(points[1].y, 0);
    EXPECT_EQ(points[1], (BrightPoint{block, 0, 255, 255, 255, 2550000}));
    p.threshold = 1.0;  // nothing is brighter than white
    EXPECT_TRUE(bright_points_reference(flat<T>(33, 19, white), p).empty());
    expect_same_as_reference(flat<T>(33, 19, white), p, "white, T=1");
  }
}

TEST(BrightPoints, BlackAndWhiteImages) {
  black_and_white_images<std::uint8_t>();
}

TEST(BrightPoints, BlackAndWhiteImages16) {
  black_and_white_images<std::uint16_t>();
}

TEST(BrightPoints, HubbleDeepField) {
  const Image image =
      to_rgba(load_image(BLURTOOL_SOURCE_DIR "/samples/hubble_deep_field_1000x872.jpg"));
  const Image16 wide = widen(image);
  for (double threshold : {0.2, 0.6}) {
    BrightParams p;
    p.threshold = threshold;
    expect_same_as_reference(image, p, "hubble");
    expect_same_as_reference(wide, p, "hubble widened");
    EXPECT_EQ(bright_points_reference(wide, p), bright_points_reference(image, p));
  }
}

// A 16-bit image whose brightest pixel in every block beats the runner-up only below 8-bit
// precision (both round to the same 8-bit colour, so an 8-bit path ties them and takes the first
// in raster order): every variant must report the brighter one. In half the blocks the brighter
// pixel comes first, so that "the last one on ties" does not pass either.
TEST(BrightPoints, SixteenBitsTellApartWhatEightBitsTie) {
  struct Pair {
    std::uint16_t dim[3], bright[3];
  };
  const Pair pairs[] = {{{0xFF00, 0xFF00, 0xFF00}, {0xFF40, 0xFF40, 0xFF40}},   // grey, 1/4 level
                        {{0xFF00, 0xFF00, 0xFF00}, {0xFF00, 0xFF00, 0xFF01}},   // one level of B
                        {{0x8000, 0xC000, 0x4000}, {0x8000, 0xC001, 0x4000}}};  // one level of G
  for (const Pair& pair : pairs) {
    const Image16 two{
        2,
        1,
        3,
        {pair.dim[0], pair.dim[1], pair.dim[2], pair.bright[0], pair.bright[1], pair.bright[2]}};
    const Image narrowed = narrow(two);
    ASSERT_TRUE(std::equal(narrowed.pixels.begin(), narrowed.pixels.begin() + 3,
                           narrowed.pixels.begin() + 3))
        << "the pair must tie at 8 bits";
  }
  for (int block : {4, 8, 16}) {
    const int w = 5 * block, h = 3 * block;
    Image16 image = random_rgba16(w, h, 40 + block);
    for (auto& v : image.pixels) v /= 4;  // below 0x4000: far below the planted pixels
    std::mt19937 rng(block);
    std::vector<BrightPoint> expected;
    for (int by = 0; by < h / block; ++by) {
      for (int bx = 0; bx < w / block; ++bx) {
        const Pair& pair = pairs[(bx + by) % 3];
        std::uniform_int_distribution<int> index(0, block * block - 1);
        int first = index(rng), second = index(rng);
        while (second == first) second = index(rng);
        if (first > second) std::swap(first, second);
        const bool bright_first = (bx + by * 7) % 2 == 0;
        const int bright = bright_first ? first : second, dim = bright_first ? second : first;
        auto set = [&](int i, const std::uint16_t* rgb) {
          const int x = bx * block + i % block, y = by * block + i / block;
          for (int c = 0; c < 3; ++c) image.pixels[image.index(x, y, c)] = rgb[c];
          return std::pair{x, y};
        };
        set(dim, pair.dim);
        const auto [x, y] = set(bright, pair.bright);
        const Image colour =
            narrow(Image16{1, 1, 3, {pair.bright[0], pair.bright[1], pair.bright[2]}});
        expected.push_back(
            {x, y, colour.pixels[0], colour.pixels[1], colour.pixels[2],
             bright_luminance_units(pair.bright[0], pair.bright[1], pair.bright[2])});
      }
    }
    sort_points(expected);
    BrightParams p;
    p.block = block;
    p.threshold = 0.45;  // 0x8000 grey-ish pairs are about 0.6; the background below 0.25
    p.per_item = 2;
    ASSERT_EQ(bright_points_reference(image, p), expected) << "B=" << block;
    expect_same_as_reference(image, p, "planted pairs");
  }
}

// T is the decimal written: a pixel whose L is exactly T is not above it, also where T's binary
// double times 2550000 falls just short of the integer (0.41 -> 1045499.9999999999 reported
// (3, 125, 201), L = 0.41 exactly, as a bright point).
TEST(BrightPoints, ThresholdIsTheDecimalWritten) {
  for (const auto& [t, units] : std::vector<std::pair<double, std::uint32_t>>{{0.41, 1045500},
                                                                              {0.57, 1453500},
                                                                              {0.69, 1759500},
                                                                              {0.82, 2091000},
                                                                              {0.5, 1275000},
                                                                              {0, 0},
                                                                              {1, 2550000},
                                                                              {0.123456789, 314814},
                                                                              {0.4099999, 1045499}})
    EXPECT_EQ(bright_threshold_units(t), units) << t;
  Image img = flat<std::uint8_t>(1, 1, 0);
  img.pixels = {3, 125, 201, 255};  // 2126 * 3 + 7152 * 125 + 722 * 201 = 1045500: L = 0.41
  BrightParams p;
  p.block = 1;
  p.per_item = 1;
  p.threshold = 0.41;
  EXPECT_TRUE(bright_points_reference(img, p).empty());
  EXPECT_TRUE(find_bright_points(runtime(), img, p).empty());
  p.threshold = 0.4099999;
  EXPECT_EQ(bright_points_reference(img, p).size(), 1u);
}

TEST(BrightPoints, ReferenceKnownAnswer16) {
  // B = 2, T = 0: the colour is each sample's nearest 8-bit level (0x00FF -> 1, where its high
  // byte is 0), the luminance is from the 16-bit samples:
  // (2126 * 255 + 7152 * 32640 + 722 * 32896 + 128) / 257 = 1002857.
  const Image16 img{2, 1, 3, {0x00FF, 0x7F80, 0x8080, 0, 0, 0}};
  BrightParams p;
  p.block = 2;
  p.threshold = 0.0;
  const std::vector<BrightPoint> points = bright_points_reference(img, p);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0], (BrightPoint{0, 0, 1, 127, 128, 1002857}));
  expect_same_as_reference(to_rgba(img), p, "known answer");
}

// Sizes follow the depth, and an image of the other depth is refused.
TEST(BrightPoints, BytesFollowTheDepth) {
  BrightParams p;
  for (const auto& v : runnable_variants()) {
    p.variant = v;
    const BrightFinder eight(runtime(), p, 40, 30), sixteen(runtime(), p, 40, 30, PixelDepth::u16);
    EXPECT_EQ(eight.depth(), PixelDepth::u8);
    EXPECT_EQ(sixteen.depth(), PixelDepth::u16);
    EXPECT_EQ(eight.compulsory_bytes(), 4u * 40 * 30);
    EXPECT_EQ(sixteen.compulsory_bytes(), 8u * 40 * 30);
    EXPECT_EQ(sixteen.passes().at(0).bytes, 8u * 40 * 30);
  }
  BrightFinder eight(runtime(), p, 40, 30);
  EXPECT_THROW(run_filter(runtime(), eight, random_rgba16(40, 30, 1)), Error);
}

// The glow at 16 bits reads and writes 16-bit samples: with no point in reach a pixel comes out
// exactly as it went in, which an 8-bit image or an 8-bit scale anywhere would break.
TEST(BrightGlow, KeepsSixteenBits) {
  const Image16 image = random_rgba16(61, 37, 3);
  BrightParams p;
  EXPECT_EQ(draw_glow(runtime(), image, {}, p).pixels, image.pixels);
  // One point at (4, 4): its glow reaches 3 blocks (24 pixels) from its block; beyond, every
  // pixel is untouched.
  const BrightPoint point{4, 4, 255, 200, 100, 2000000};
  const Image16 out = draw_glow(runtime(), image, {point}, p);
  EXPECT_GT(out.pixels[out.index(4, 4, 0)], image.pixels[image.index(4, 4, 0)]);
  for (int y = 0; y < image.height; ++y)
    for (int x = 32; x < image.width; ++x)
      for (int c = 0; c < 4; ++c)
        ASSERT_EQ(out.pixels[out.index(x, y, c)], image.pixels[image.index(x, y, c)])
            << x << "," << y << " channel " << c;
}

// On a widened image the 16-bit glow and the 8-bit glow round the same value c (the input,
// v / 255 either way, plus the same glow) to their levels: o8 = round(255 c) and
// o16 = round(65535 c). As 65535 = 257 * 255, |o16 - 257 o8| <= 0.5 + 257 * 0.5 = 129 (float
// rounding moves c by far less than a 16-bit level); narrowed, o16 is within 1 level of o8.
// That is where the device rounds to nearest when it writes the 8-bit image (PoCL does);
// OpenCL lets a device approximate that rounding within 0.6 of a level (OpenCL C, "Converting
// floating-point values to normalized integer channel data types"): 0.5 + 257 * 0.6 = 154.7,
// so 155 on other devices (an NVIDIA H100 measured 138).
TEST(BrightGlow, SixteenBitsAgreeWithEightOnAWidenedImage) {
  const Image image = random_rgba(67, 45, 9);
  const bool cpu = runtime().device().type & CL_DEVICE_TYPE_CPU;
  for (int block : {4, 8}) {
    BrightParams p;
    p.block = block;
    p.threshold = 0.3;
    const std::vector<BrightPoint> points = find_bright_points(runtime(), image, p);
    ASSERT_FALSE(points.empty());
    const Image eight = draw_glow(runtime(), image, points, p);
    const Image16 sixteen = draw_glow(runtime(), widen(image), points, p);
    ASSERT_GT(max_error(eight, image), 50) << "the glow must show";
    int worst = 0;
    for (size_t i = 0; i < eight.pixels.size(); ++i)
      worst = std::max(worst, std::abs(int(sixteen.pixels[i]) - 257 * int(eight.pixels[i])));
    EXPECT_LE(worst, cpu ? 129 : 155) << "B=" << block;
    EXPECT_LE(max_error(narrow(sixteen), eight), 1) << "B=" << block;
  }
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
