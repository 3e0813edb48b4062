// EXIF orientation on the host: JPEGs carrying each of the 8 orientations (an APP1 segment made by
// libexif, in both byte orders) decode upright, as a viewer shows them; damaged or missing EXIF
// data means upright; turning keeps every pixel. The expected pictures are built from the tag's
// definition (support/orientation_support.h), not from the code under test. TIFFs carrying each
// of the 8 in their Orientation tag decode upright too. The binary's --no-orient:
// tests/cli/test_orientation.cpp.
#include <gtest/gtest.h>
#include <libexif/exif-data.h>

#include <cstdlib>
#include <vector>

#include "image/image_io.h"
#include "image/metadata.h"
#include "tests/support/orientation_support.h"

namespace blurtool {
namespace {

// Whether each quadrant's centre of `got` has the upright picture's colour (JPEG: within 24).
::testing::AssertionResult is_upright(const Image& got) {
  if (got.width != kW || got.height != kH)
    return ::testing::AssertionFailure()
           << got.width << "x" << got.height << ", want " << kW << "x" << kH;
  for (int q = 0; q < 4; ++q) {
    const int x = (q % 2) * kW / 2 + kW / 4, y = (q / 2) * kH / 2 + kH / 4;
    for (int c = 0; c < 3; ++c) {
      const int d = std::abs(int(got.pixels[got.index(x, y, c)]) - int(kQuadrant[q][c]));
      if (d > 24)
        return ::testing::AssertionFailure()
               << "quadrant " << q << " channel " << c << " off by " << d;
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(Orientation, EachOfTheEightDecodesUpright) {
  for (int o = 1; o <= 8; ++o) {
    for (ExifByteOrder order : {EXIF_BYTE_ORDER_MOTOROLA, EXIF_BYTE_ORDER_INTEL}) {
      const std::vector<std::uint8_t> jpeg = tagged_jpeg(o, order);
      EXPECT_EQ(exif_orientation(jpeg), o);
      EXPECT_TRUE(is_upright(decode_image(jpeg, "tagged.jpg"))) << "orientation " << o;
      // Without orientation the stored pixels come back as they are.
      const Image stored = decode_image(jpeg, "tagged.jpg", nullptr, kDefaultMaxPixels, false);
      EXPECT_EQ(stored.width, o >= 5 ? kH : kW) << "orientation " << o;
      if (o != 1) {
        EXPECT_FALSE(is_upright(stored)) << "orientation " << o;
      }
    }
  }
}

TEST(Orientation, MissingOrDamagedExifMeansUpright) {
  const std::vector<std::uint8_t> plain = encode_image(upright(), ImageFormat::jpeg, 100);
  EXPECT_EQ(exif_orientation(plain), 1);
  EXPECT_EQ(exif_orientation(encode_image(upright(), ImageFormat::png, 0)), 1);
  EXPECT_EQ(exif_orientation({}), 1);
  // An EXIF header followed by garbage, a value out of range, an EXIF segment after a damaged
  // marker: all upright, and the image still decodes.
  std::vector<std::uint8_t> garbage = {'E', 'x', 'i', 'f', 0, 0};
  for (int i = 0; i < 40; ++i) garbage.push_back(static_cast<std::uint8_t>(i * 37));
  const std::vector<std::uint8_t> damaged = with_app1(plain, garbage);
  EXPECT_EQ(exif_orientation(damaged), 1);
  EXPECT_TRUE(is_upright(decode_image(damaged, "damaged.jpg")));
  const std::vector<std::uint8_t> nine =
      with_app1(plain, exif_with_orientation(9, EXIF_BYTE_ORDER_INTEL));
  EXPECT_EQ(exif_orientation(nine), 1);
  EXPECT_TRUE(is_upright(decode_image(nine, "nine.jpg")));
  std::vector<std::uint8_t> truncated = tagged_jpeg(6, EXIF_BYTE_ORDER_INTEL);
  truncated.resize(30);
  EXPECT_EQ(exif_orientation(truncated), 1);
}

TEST(Orientation, ApplyKeepsEveryPixelAndChannelCount) {
  Image rgba{5, 3, 4, {}};
  for (int i = 0; i < 5 * 3 * 4; ++i) rgba.pixels.push_back(static_cast<std::uint8_t>(i));
  for (int o = 1; o <= 8; ++o) {
    const Image turned = apply_orientation(rgba, o);
    EXPECT_EQ(turned.channels, 4);
    EXPECT_EQ(turned.width * turned.height, 15);
    // The inverse of stored_for: what a viewer shows from the stored pixels.
    EXPECT_EQ(stored_for(turned, o).pixels, rgba.pixels) << "orientation " << o;
  }
}

// A TIFF's Orientation tag, written by libtiff, is the EXIF orientation's twin: the pixels come
// back exactly upright (TIFF is lossless), at 8 and at 16 bits, the header's size turned with
// them; without orientation they come back as stored, and the tag is kept as metadata.
TEST(Orientation, EachOfTheEightTiffTagsDecodesUpright) {
  Image16 shown16 = widen(upright());
  for (std::size_t i = 0; i < shown16.pixels.size(); ++i)
    shown16.pixels[i] = static_cast<std::uint16_t>(shown16.pixels[i] - i % 200);  // not v * 257
  for (int o = 1; o <= 8; ++o) {
    SCOPED_TRACE("orientation " + std::to_string(o));
    const Image stored = stored_for(upright(), o);
    const std::vector<std::uint8_t> tiff = tagged_tiff(stored, o);
    const Image got = decode_image(tiff, "tagged.tif");
    EXPECT_EQ(got.width, kW);
    EXPECT_EQ(got.height, kH);
    EXPECT_EQ(got.pixels, upright().pixels);
    const ImageHeader h = read_image_header(tiff, "tagged.tif");
    EXPECT_EQ(h.width, kW);
    EXPECT_EQ(h.height, kH);
    const Image as_stored = decode_image(tiff, "tagged.tif", nullptr, kDefaultMaxPixels, false);
    EXPECT_EQ(as_stored.width, stored.width);
    EXPECT_EQ(as_stored.pixels, stored.pixels);
    EXPECT_EQ(read_image_header(tiff, "tagged.tif", kDefaultMaxPixels, false).width, stored.width);
    EXPECT_EQ(read_metadata(tiff, "tagged.tif").orientation, o);
    // 16 bits, samples that are not 8-bit ones widened.
    const Image16 stored16 = stored_for(shown16, o);
    const DecodedImage wide = decode_image_wide(tagged_tiff(stored16, o), "tagged16.tif");
    ASSERT_TRUE(wide.is_wide());
    EXPECT_EQ(wide.wide.width, kW);
    EXPECT_TRUE(wide.wide.pixels == shown16.pixels);
  }
}

}  // namespace
}  // namespace blurtool
