// Images a band of rows at a time (image/row_codec.h, PngStreamEncoder): the rows a RowSource
// hands out are the whole-image decoder's, and a file written in bands decodes to the samples of
// the whole-image encode, for PNG (1-4 channels, 8 and 16 bits) and JPEG (grey and YCbCr, every
// subsampling), whatever the bands.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "image/png_encode.h"
#include "image/row_codec.h"
#include "tests/support/image_io_support.h"

namespace blurtool {
namespace {

// `image` (RGBA) written through a RowWriter in bands of `band` rows.
template <typename T>
Bytes write_in_bands(const BasicImage<T>& rgba, ImageFormat format, int channels,
                     const EncodeOptions& e, int band) {
  Bytes out;
  RowWriter writer(
      format, rgba.width, rgba.height, channels, 8 * sizeof(T), e,
      [&out](const std::uint8_t* p, std::size_t n) { out.insert(out.end(), p, p + n); });
  const std::size_t row = static_cast<std::size_t>(rgba.width) * 4;
  for (int y = 0; y < rgba.height; y += band)
    writer.write(rgba.pixels.data() + row * y, std::min(band, rgba.height - y));
  return out;
}

template <typename T>
void check_png_bands() {
  for (int channels = 1; channels <= 4; ++channels) {
    const BasicImage<T> rgba = to_rgba(random_image<T>(37, 29, channels, 11 + channels));
    EncodeOptions e;
    e.png_level = 6;
    const Bytes whole = encode_rgba(rgba, channels, ImageFormat::png, e);
    for (int band : {1, 2, 7, 29, 100}) {
      SCOPED_TRACE(std::to_string(channels) + " channels at " + std::to_string(8 * sizeof(T)) +
                   " bits, bands of " + std::to_string(band));
      const Bytes png = write_in_bands(rgba, ImageFormat::png, channels, e, band);
      if (band >= rgba.height) {
        EXPECT_EQ(png, whole) << "one band is encode_png's file";
      }
      const DecodedImage back = decode_image_wide(png, "bands.png");
      const DecodedImage want = decode_image_wide(whole, "whole.png");
      EXPECT_EQ(back.narrow.pixels, want.narrow.pixels);
      EXPECT_EQ(back.wide.pixels, want.wide.pixels);
      EXPECT_EQ(back.channels(), channels);
    }
  }
}

// A patterned RGBA8 image whose rows repeat: deflate's matches reach back into the rows
// before each band (its dictionary).
Image repeating_image(int width, int height) {
  Image image{width, height, 4, PixelVector<std::uint8_t>(std::size_t{4} * width * height)};
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width * 4; ++x)
      image.pixels[std::size_t{4} * width * y + x] =
          static_cast<std::uint8_t>((x % 97) * 3 + (y % 5) * 41 + (x / 400) * 7);
  return image;
}

// Bands after more than deflate's 32 KiB window of rows, at a level whose matches reach into
// the dictionary (level 6, Z_FILTERED), with the rows above each band in the caller's buffer
// (`before`, as strips pass them) and without: the file decodes to the image. Wide rows (one
// row is the whole window) and narrow ones (many rows are).
TEST(RowCodec, PngBandsPastTheWindowKeepTheirContext) {
  for (const auto& [width, height] : std::vector<std::pair<int, int>>{{8300, 24}, {61, 700}}) {
    const Image rgba = repeating_image(width, height);
    for (int before : {0, 1, 2, 3}) {
      for (int band : {1, 5, 64}) {
        SCOPED_TRACE(std::to_string(width) + " wide, bands of " + std::to_string(band) + " with " +
                     std::to_string(before) + " rows before");
        EncodeOptions e;
        e.png_level = 6;
        Bytes png;
        RowWriter writer(
            ImageFormat::png, width, height, 4, 8, e,
            [&png](const std::uint8_t* p, std::size_t n) { png.insert(png.end(), p, p + n); });
        const std::size_t row = std::size_t{4} * width;
        for (int y = 0; y < height; y += band)
          writer.write(rgba.pixels.data() + row * y, std::min(band, height - y),
                       std::min(y, before));
        EXPECT_TRUE(decode_image(png, "bands.png").pixels == rgba.pixels);
      }
    }
  }
}

TEST(RowCodec, PngWrittenInBandsDecodesToTheWholeImagesSamples8) {
  check_png_bands<std::uint8_t>();
}

TEST(RowCodec, PngWrittenInBandsDecodesToTheWholeImagesSamples16) {
  check_png_bands<std::uint16_t>();
}

// A JPEG written in bands of any height is encode_rgba's file for the same options, byte for
// byte: one piece, and restart strips (JpegStripWriter) whose rows come in bands that end inside
// a strip, at a strip's end or span several; greyscale and every subsampling, odd sizes, the fast
// and the accurate DCT.
TEST(RowCodec, JpegWrittenInBandsIsTheWholeImagesFile) {
  const Image rgba = to_rgba(random_image<std::uint8_t>(53, 75, 3, 5));
  for (int channels : {1, 3}) {
    for (ChromaSubsampling s :
         {ChromaSubsampling::s444, ChromaSubsampling::s422, ChromaSubsampling::s420}) {
      for (int quality : {75, 98}) {
        for (int strip_rows : {-1, 16, 32}) {
          EncodeOptions e;
          e.jpeg_quality = quality;
          e.jpeg_subsampling = s;
          e.jpeg_strip_rows = strip_rows;
          e.threads = 2;
          SCOPED_TRACE(std::to_string(channels) + " channels, subsampling " +
                       std::to_string(static_cast<int>(s)) + ", quality " +
                       std::to_string(quality) + ", strips of " + std::to_string(strip_rows));
          const Bytes want = encode_rgba(rgba, channels, ImageFormat::jpeg, e);
          for (int band : {1, 16, 35, 75}) {
            EXPECT_TRUE(write_in_bands(rgba, ImageFormat::jpeg, channels, e, band) == want)
                << "bands of " << band;
          }
        }
      }
    }
  }
}

// A RowSource hands out the rows of decode_image_wide with expand_rgba, in any bands; reading
// past the last row is an error naming the file.
TEST(RowCodec, RowsAreTheWholeDecodersInAnyBands) {
  std::vector<std::pair<std::string, Bytes>> files;
  for (int channels = 1; channels <= 4; ++channels) {
    files.push_back({"png" + std::to_string(channels),
                     encode_image(random_image<std::uint8_t>(31, 19, channels, channels),
                                  ImageFormat::png, 95)});
    files.push_back({"png16-" + std::to_string(channels),
                     encode_image(random_image<std::uint16_t>(31, 19, channels, channels),
                                  ImageFormat::png, 95)});
  }
  files.push_back(
      {"grey.jpg", encode_image(random_image<std::uint8_t>(33, 21, 1, 3), ImageFormat::jpeg, 90)});
  files.push_back({"colour.jpg",
                   encode_image(random_image<std::uint8_t>(33, 21, 3, 3), ImageFormat::jpeg, 90)});
  for (const auto& [name, bytes] : files) {
    SCOPED_TRACE(name);
    ASSERT_EQ(rows_unreadable(bytes, true), "");
    const DecodedImage want =
        decode_image_wide(bytes, name, nullptr, kDefaultMaxPixels, true, true);
    std::unique_ptr<RowSource> rows = open_rows(bytes, name, 16, std::uint64_t{1} << 30);
    EXPECT_EQ(rows->width(), want.width());
    EXPECT_EQ(rows->height(), want.height());
    EXPECT_EQ(rows->stored_channels(), want.channels());
    EXPECT_EQ(rows->sixteen_bit(), want.is_wide());
    std::vector<std::uint8_t> got(rows->row_bytes() * rows->height());
    for (int y = 0, band = 1; y < rows->height(); y += band, band += 2) {
      band = std::min(band, rows->height() - y);
      rows->read(got.data() + rows->row_bytes() * y, band);
    }
    const void* expected = want.is_wide() ? static_cast<const void*>(want.wide.pixels.data())
                                          : static_cast<const void*>(want.narrow.pixels.data());
    EXPECT_EQ(std::memcmp(got.data(), expected, got.size()), 0);
    std::uint8_t spare[512];
    try {
      rows->read(spare, 1);
      ADD_FAILURE() << "read past the last row";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(name + ": rows"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace blurtool
