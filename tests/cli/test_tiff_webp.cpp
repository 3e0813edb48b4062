// End-to-end tests of TIFF and WebP: a blur from TIFF to WebP and back, a 16-bit TIFF kept at 16
// bits, a folder batch of TIFF, WebP and PNG inputs, and the refusals (a TIFF variant not read,
// a WebP output too large, a WebP output in strip mode). Outputs are decoded and compared
// with the CPU box blur reference (support/cli_support.h): exactly where the formats are
// lossless, within a tolerance for lossy WebP.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/test_support.h"
#include "util/atomic_file.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

// Writes `image` as `format` (WebP lossless) to `path`.
template <typename T>
void write_as(const BasicImage<T>& image, ImageFormat format, const fs::path& path) {
  EncodeOptions e;
  e.webp_lossless = true;
  write_file_atomic(path.string(), encode_image(image, format, e));
}

// Largest |a - b| of two 16-bit images; 65536 when the shapes differ.
int max_diff16(const Image16& a, const Image16& b) {
  if (a.width != b.width || a.height != b.height || a.channels != b.channels) return 65536;
  int worst = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i)
    worst = std::max(worst, std::abs(int(a.pixels[i]) - int(b.pixels[i])));
  return worst;
}

// Mean |a - b| over all samples of two images of one shape.
double mean_diff(const Image& a, const Image& b) {
  EXPECT_EQ(a.pixels.size(), b.pixels.size());
  double sum = 0;
  for (size_t i = 0; i < a.pixels.size() && i < b.pixels.size(); ++i)
    sum += std::abs(int(a.pixels[i]) - int(b.pixels[i]));
  return sum / std::max<size_t>(1, a.pixels.size());
}

TEST_F(Cli, TiffToWebpAndWebpToTiffMatchTheReference) {
  const Image rgb = random_image(61, 47, 3, 11);
  write_as(rgb, ImageFormat::tiff, in_ / "in.tif");
  const std::string lossless = (out_ / "lossless.webp").string();
  const std::string lossy = (out_ / "lossy.webp").string();
  ASSERT_EQ(run({"--box", "3", "--webp-lossless", (in_ / "in.tif").string(), lossless}).status, 0);
  ASSERT_EQ(run({"--box", "3", "--quality", "90", (in_ / "in.tif").string(), lossy}).status, 0);
  const Image expected = expected_box(rgb, 3, EdgeMode::clamp);
  EXPECT_EQ(max_diff(load_image(lossless), expected), 0);
  const Image got_lossy = load_image(lossy);
  // 4:2:0 chroma on blurred noise: a few levels on average (the unblurred input is ~30 away).
  EXPECT_LT(mean_diff(got_lossy, expected), 6.0);
  EXPECT_GT(mean_diff(rgb, expected), 20.0);
  EXPECT_GT(max_diff(got_lossy, expected), 0);  // lossy it is
  EXPECT_LT(fs::file_size(lossy), fs::file_size(lossless));

  // RGBA with transparency (blurred premultiplied) from a WebP to a TIFF: exact.
  const Image rgba = random_image(37, 29, 4, 12);
  write_as(rgba, ImageFormat::webp, in_ / "in.webp");
  const std::string tif = (out_ / "out.tif").string();
  const Result r = run({"--box", "3", (in_ / "in.webp").string(), tif});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(read_file(tif).substr(0, 4), std::string("II*\0", 4));
  EXPECT_EQ(max_diff(load_image(tif), expected_box(rgba, 3, EdgeMode::clamp)), 0);
}

TEST_F(Cli, SixteenBitTiffKeepsSixteenBitsInTiffAndPng) {
  Image16 deep{29, 17, 3, PixelVector<std::uint16_t>(29 * 17 * 3)};
  for (size_t i = 0; i < deep.pixels.size(); ++i)
    deep.pixels[i] = static_cast<std::uint16_t>(i * 2654435761u >> 7);
  write_as(deep, ImageFormat::tiff, in_ / "deep.tiff");
  for (const char* name : {"out.tiff", "out.png"}) {
    const std::string out = (out_ / name).string();
    ASSERT_EQ(run({"--box", "2", (in_ / "deep.tiff").string(), out}).status, 0) << name;
    const DecodedImage got = load_image_wide(out);
    ASSERT_TRUE(got.is_wide()) << name;
    EXPECT_EQ(max_diff16(got.wide, box_blur_reference(deep, 2, EdgeMode::clamp)), 0) << name;
  }
}

TEST_F(Cli, BatchTakesTiffAndWebpFromAFolder) {
  const Image a = random_image(40, 30, 3, 21), b = random_image(33, 20, 4, 22),
              c = random_image(25, 25, 1, 23);
  write_as(a, ImageFormat::tiff, in_ / "a.tif");
  write_as(b, ImageFormat::webp, in_ / "b.webp");
  write_as(c, ImageFormat::png, in_ / "c.png");
  write_file((in_ / "notes.txt").string(), "not an image");
  const Result r = run({"--box", "3", "--webp-lossless", in_.string(), out_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(listing(out_), (Files{"a.tif", "b.webp", "c.png"}));
  EXPECT_EQ(max_diff(load_image((out_ / "a.tif").string()), expected_box(a, 3, EdgeMode::clamp)),
            0);
  EXPECT_EQ(max_diff(load_image((out_ / "b.webp").string()), expected_box(b, 3, EdgeMode::clamp)),
            0);
  EXPECT_EQ(max_diff(load_image((out_ / "c.png").string()), expected_box(c, 3, EdgeMode::clamp)),
            0);
}

TEST_F(Cli, TiffInputLargerThanMaxMemoryIsDecodedWholeAndRunInStrips) {
  // 600x400 needs 8 MiB in one piece: under 4 MiB it runs in strips, the TIFF decoded whole
  // first (1 MiB of RGBA); under 1 MiB that leaves too little, and the message says why.
  write_as(load_image(kCoffee), ImageFormat::tiff, in_ / "coffee.tif");
  const std::string in = (in_ / "coffee.tif").string();
  const std::string whole = (out_ / "whole.png").string(), strips = (out_ / "strips.png").string();
  ASSERT_EQ(run({"--box", "4", in, whole}).status, 0);
  const Result r = run({"--box", "4", "--max-memory", "4M", in, strips});
  ASSERT_EQ(r.status, 0) << r.err;
  // The same pixels (the strip encoder's zlib stream is cut differently).
  EXPECT_EQ(max_diff(load_image(strips), load_image(whole)), 0);
  EXPECT_EQ(max_diff(load_image(strips), expected_box(load_image(kCoffee), 4, EdgeMode::clamp)), 0);
  expect_failure(run({"--box", "4", "--max-memory", "1M", in, (out_ / "small.png").string()}), 1,
                 {"coffee.tif: the image is 600x400", "a TIFF is decoded whole"},
                 {"whole.png", "strips.png"});
}

TEST_F(Cli, TiffAndWebpRefusals) {
  // A truncated TIFF: refused naming it, exit 1, no output.
  const std::vector<std::uint8_t> whole =
      encode_image(random_image(4, 4, 1, 1), ImageFormat::tiff, EncodeOptions{});
  const std::string cut = (in_ / "cut.tif").string();
  write_file(cut, std::string(whole.begin(), whole.begin() + whole.size() / 2));
  expect_failure(run({"--box", "1", cut, (out_ / "o.png").string()}), 1,
                 {"cut.tif: corrupt TIFF (libtiff: "}, {});
  // Wider than WebP holds: refused naming the output before any blur.
  write_as(random_image(16384, 1, 3, 2), ImageFormat::png, in_ / "wide.png");
  const std::string webp = (out_ / "wide.webp").string();
  expect_failure(
      run({"--box", "1", (in_ / "wide.png").string(), webp}), 1,
      {webp + ": the image is 16384x1, too large for WebP (at most 16383 pixels a side)"}, {});
  // A WebP output larger than --max-memory: refused in one line naming the input and why, the
  // formats that stream suggested (TIFF outputs run in strips: test_strips.cpp).
  const Result big =
      run({"--box", "1", "--max-memory", "1M", kCoffee, (out_ / "big.webp").string()});
  expect_failure(big, 1,
                 {kCoffee + ": a WebP output is encoded from the whole image (libwebp has no "
                            "incremental encoder), which needs ",
                  "more than --max-memory (1 MiB); raise it or write a PNG, JPEG or TIFF"},
                 {});
  EXPECT_EQ(std::count(big.err.begin(), big.err.end(), '\n'), 1) << big.err;
  // --format names the new formats; others are refused.
  expect_failure(run({"--box", "1", "--format", "gif", kCoffee, (out_ / "o.gif").string()}), 2,
                 {"--format 'gif': choose png, jpg, tif or webp"}, {});
}

}  // namespace
}  // namespace blurtool
