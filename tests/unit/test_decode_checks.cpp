// The checks decoding makes against damaged and hostile files, and the codings it must read:
// a PNG whose CRC or Adler-32 fails is refused with libpng's words (and never handed to
// stb_image, which checks neither), a JPEG of more than 500 scans is refused before it is
// decoded and by every JPEG decoder on its own, and arithmetic-coded JPEGs (SOF9, SOF10) are
// read by libjpeg-turbo as it decodes them. The JPEGs come from libjpeg's own encoder
// (tests/support/libjpeg_support.h), the PNGs from blurtool's encoder, damaged here.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "image/image_io.h"
#include "image/jpeg_codec.h"
#include "image/jpeg_planes.h"
#include "tests/support/image_io_support.h"
#include "tests/support/jpeg_test_support.h"
#include "tests/support/libjpeg_support.h"
#include "tests/support/test_support.h"
#include "util/error.h"

namespace blurtool {
namespace {

std::uint32_t get32(const Bytes& b, std::size_t at) {
  return std::uint32_t{b[at]} << 24 | std::uint32_t{b[at + 1]} << 16 |
         std::uint32_t{b[at + 2]} << 8 | b[at + 3];
}

void put32(Bytes& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}

// Where each chunk of `png` starts (its length field), by type.
std::vector<std::pair<std::string, std::size_t>> chunks(const Bytes& png) {
  std::vector<std::pair<std::string, std::size_t>> found;
  for (std::size_t at = 8; at + 12 <= png.size(); at += 12 + get32(png, at))
    found.emplace_back(std::string(png.begin() + at + 4, png.begin() + at + 8), at);
  return found;
}

// The chunk of `type` (the last one of that type with `last`) in `png`.
std::size_t chunk_at(const Bytes& png, const std::string& type, bool last = false) {
  std::size_t where = 0;
  for (const auto& [t, at] : chunks(png))
    if (t == type && (last || where == 0)) where = at;
  EXPECT_NE(where, 0u) << "no " << type << " chunk";
  return where;
}

// `png` with byte `offset` of the chunk at `at`'s data inverted; its CRC made to match again
// with `fix_crc`.
Bytes damaged(Bytes png, std::size_t at, std::size_t offset, bool fix_crc) {
  png[at + 8 + offset] ^= 0xFF;
  if (fix_crc) put32(png, at + 8 + get32(png, at), crc32(png, at + 4, at + 8 + get32(png, at)));
  return png;
}

// `png` with the last 4 bytes of its last IDAT (the zlib stream's Adler-32) in an IDAT of their
// own: libpng then checks them after the last row, where a mismatch is only a warning to it.
Bytes adler_apart(const Bytes& png) {
  const std::size_t at = chunk_at(png, "IDAT", true), length = get32(png, at);
  Bytes out(png.begin(), png.begin() + at);
  Bytes first(png.begin() + at, png.begin() + at + 8 + length - 4);
  put32(first, 0, static_cast<std::uint32_t>(length - 4));
  first.resize(first.size() + 4);
  put32(first, first.size() - 4, crc32(first, 4, first.size() - 4));
  Bytes second = {0, 0, 0, 4, 'I', 'D', 'A', 'T'};
  second.insert(second.end(), png.begin() + at + 8 + length - 4, png.begin() + at + 8 + length);
  second.resize(second.size() + 4);
  put32(second, second.size() - 4, crc32(second, 4, second.size() - 4));
  out.insert(out.end(), first.begin(), first.end());
  out.insert(out.end(), second.begin(), second.end());
  out.insert(out.end(), png.begin() + at + 12 + length, png.end());
  return out;
}

// A PNG with a tEXt chunk (ancillary) before IDAT, made by our encoder.
Bytes png_with_text(const Bytes& png) {
  const std::size_t idat = chunk_at(png, "IDAT");
  Bytes text = {0, 0, 0, 7, 't', 'E', 'X', 't', 'a', 0, 'b', 'c', 'd', 'e', 'f', 0, 0, 0, 0};
  put32(text, 15, crc32(text, 4, 15));
  Bytes out(png.begin(), png.begin() + idat);
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), png.begin() + idat, png.end());
  return out;
}

// A wrong CRC in any chunk, critical or ancillary, and a wrong Adler-32 at the end of the zlib
// stream, are errors with libpng's words: no pixels are returned (stb_image, which checks
// neither, would have decoded each of them), at 8 and 16 bits, and for the header alone.
TEST(DecodeChecks, PngChecksumErrorsAreErrors) {
  for (const bool sixteen : {false, true}) {
    SCOPED_TRACE(sixteen ? "16-bit" : "8-bit");
    const Bytes png = sixteen ? encode_image(random_rgba16(37, 11, 3), ImageFormat::png, 95)
                              : encode_image(random_image(37, 11, 3, 3), ImageFormat::png, 95);
    ASSERT_NO_THROW(decode_image_wide(png, "good.png"));
    const std::size_t idat = chunk_at(png, "IDAT"), last_idat = chunk_at(png, "IDAT", true);
    const Bytes text = png_with_text(png), apart = adler_apart(png);
    ASSERT_NO_THROW(decode_image_wide(text, "good.png"));
    ASSERT_NO_THROW(decode_image_wide(apart, "good.png"));
    const std::vector<std::pair<Bytes, std::string>> cases = {
        {damaged(png, chunk_at(png, "IHDR"), 13, false), "IHDR: CRC error"},
        {damaged(png, idat, 5, false), "IDAT: CRC error"},
        {damaged(png, idat, get32(png, idat), false), "IDAT: CRC error"},  // the CRC itself
        // The Adler-32 is the zlib stream's last 4 bytes: the last IDAT's, its CRC made right.
        {damaged(png, last_idat, get32(png, last_idat) - 1, true), "IDAT: incorrect data check"},
        {damaged(apart, chunk_at(apart, "IDAT", true), 3, true), "IDAT: incorrect data check"},
        {damaged(text, chunk_at(text, "tEXt"), 2, false), "tEXt: CRC error"},
        {damaged(png, chunk_at(png, "IEND"), 0, false), "IEND: CRC error"},
        // zlib's stream header broken, the CRC left: libpng stops at inflate's error, before
        // the chunk's CRC, which is checked before any other decoder is asked.
        {damaged(png, idat, 0, false), "IDAT: CRC error"},
    };
    for (const auto& [bad, words] : cases) {
      SCOPED_TRACE(words);
      const std::string expected = "bad.png: corrupt PNG (" + words + ")";
      EXPECT_EQ(error_of([&] { decode_image(bad, "bad.png"); }), expected);
      EXPECT_EQ(error_of([&] {
                  decode_image_wide(bad, "bad.png", nullptr, kDefaultMaxPixels, true, true);
                }),
                expected);
    }
  }
}

// Arithmetic coding, sequential (SOF9) and progressive (SOF10), greyscale and colour: decoded
// as libjpeg-turbo decodes it, with the header read for max_pixels (they were refused as "a
// frame header that stb_image cannot read").
TEST(DecodeChecks, ArithmeticJpegsDecodeAsLibjpegTurboDecodesThem) {
  for (const int channels : {1, 3}) {
    for (const bool progressive : {false, true}) {
      SCOPED_TRACE(std::to_string(channels) + (progressive ? " progressive" : " sequential"));
      const Image image = random_image(45, 29, channels, 7 + channels);
      const Bytes jpeg = libjpeg_jpeg(image, {true, progressive, {}});
      ASSERT_FALSE(jpeg.empty());
      const Image expected = tj_pixels(jpeg);
      const Image got = decode_image(jpeg, "arith.jpg");
      EXPECT_EQ(got.width, 45);
      EXPECT_EQ(got.height, 29);
      EXPECT_EQ(got.channels, channels);
      EXPECT_EQ(got.pixels, expected.pixels);
      const DecodedImage rgba =
          decode_image_wide(jpeg, "arith.jpg", nullptr, kDefaultMaxPixels, true, true);
      EXPECT_EQ(rgba.narrow.pixels, to_rgba(expected).pixels);
      EXPECT_EQ(read_image_header(jpeg, "arith.jpg").width, 45);
      EXPECT_EQ(error_of([&] { decode_image(jpeg, "arith.jpg", nullptr, 45 * 29 - 1); }),
                "arith.jpg: image is 45x29 = 1305 pixels, more than the limit of 1304 pixels "
                "(max_pixels)");
      // The colour planes' path (the device's) takes them too, as TurboJPEG decodes them, and
      // never as DCT blocks (decode_jpeg_blocks leaves arithmetic coding to TurboJPEG).
      YCbCrPlanes planes;
      ASSERT_TRUE(decode_image_planes(jpeg, "arith.jpg", nullptr, kDefaultMaxPixels, true, true,
                                      false, &planes));
      EXPECT_FALSE(planes.as_blocks());
      EXPECT_EQ(planes.samples, decode_jpeg_planes(jpeg, "arith.jpg").samples);
    }
  }
}

// Progressive Huffman files go as DCT blocks unless the caller keeps them as planes (a batch's
// --jpeg-codec auto: pipeline.cpp's decode_planes); sequential ones go as blocks either way.
TEST(DecodeChecks, ProgressiveJpegsAreKeptAsPlanesWhereAsked) {
  for (const bool progressive : {false, true}) {
    SCOPED_TRACE(progressive ? "progressive" : "sequential");
    LibjpegCoding coding;
    coding.progressive = progressive;
    const Bytes jpeg = libjpeg_jpeg(random_image(45, 29, 3, 11), coding);
    const auto expected = decode_jpeg_planes(jpeg, "p.jpg").samples;
    for (const bool progressive_blocks : {false, true}) {
      YCbCrPlanes planes;
      ASSERT_TRUE(decode_image_planes(jpeg, "p.jpg", nullptr, kDefaultMaxPixels, true, true, false,
                                      &planes, nullptr, progressive_blocks));
      EXPECT_EQ(planes.as_blocks(), !progressive || progressive_blocks);
      EXPECT_EQ(planes.as_blocks() ? blocks_to_planes(planes).samples : planes.samples, expected);
    }
  }
}

// At most 500 scans, libjpeg-turbo's TJFLAG_LIMITSCANS figure: a progressive file of 501 is
// refused before it is decoded, by name; one of 500 decodes as TurboJPEG decodes it.
TEST(DecodeChecks, JpegOfMoreThan500ScansIsRefused) {
  const Image image = random_image(16, 16, 1, 5);
  const Bytes ok = progressive_jpeg_of_scans(image, 500);
  const Bytes bomb = progressive_jpeg_of_scans(image, 501);
  ASSERT_FALSE(ok.empty());
  ASSERT_FALSE(bomb.empty());
  std::vector<std::string> warnings;
  EXPECT_EQ(decode_image(ok, "ok.jpg", &warnings).pixels, tj_pixels(ok).pixels);
  EXPECT_TRUE(warnings.empty());
  const std::string refused = "bomb.jpg: too many scans (the JPEG has more than 500, the limit)";
  EXPECT_EQ(error_of([&] { decode_image(bomb, "bomb.jpg"); }), refused);
  EXPECT_EQ(error_of([&] { decode_image_wide(bomb, "bomb.jpg"); }), refused);
  EXPECT_EQ(error_of([&] { read_image_header(bomb, "bomb.jpg"); }), refused);
  YCbCrPlanes planes;
  EXPECT_EQ(error_of([&] {
              decode_image_planes(bomb, "bomb.jpg", nullptr, kDefaultMaxPixels, true, true, false,
                                  &planes);
            }),
            refused);
}

// Each JPEG decoder keeps the limit on its own, for a file that reached it without the count
// (TurboJPEG's TJFLAG_LIMITSCANS, a progress monitor on libjpeg's coefficient reader), and
// TurboJPEG's refusal is one stb_image is not asked to override. A sequential file repeating a
// scan (libjpeg decodes every repetition) counts as a progressive one does.
TEST(DecodeChecks, EveryJpegDecoderStopsAfter500Scans) {
  const Image colour = random_image(24, 16, 3, 9);
  const Bytes few = repeated_scan_jpeg(colour, 10), many = repeated_scan_jpeg(colour, 498);
  ASSERT_FALSE(few.empty());
  const std::vector<JpegSegment> segments = check_jpeg_complete(many, "many.jpg");
  EXPECT_EQ(count_jpeg_scans(few, check_jpeg_complete(few, "few.jpg"), 500), 13);
  EXPECT_EQ(count_jpeg_scans(many, segments, 500), 501);
  EXPECT_EQ(count_jpeg_scans(many, segments, 1000), 501);
  const Image expected = tj_pixels(libjpeg_jpeg(colour, {}));
  EXPECT_EQ(decode_image(few, "few.jpg").pixels, expected.pixels);
  EXPECT_EQ(error_of([&] { decode_image(many, "many.jpg"); }),
            "many.jpg: too many scans (the JPEG has more than 500, the limit)");

  Image image;
  std::string damage, refusal;
  EXPECT_TRUE(decode_jpeg_turbojpeg(few, 24, 16, 3, false, &image, &damage, &refusal));
  EXPECT_FALSE(decode_jpeg_turbojpeg(many, 24, 16, 3, false, &image, &damage, &refusal));
  EXPECT_NE(refusal.find("500 scans"), std::string::npos) << refusal;
  YCbCrPlanes planes;
  EXPECT_TRUE(decode_jpeg_blocks(few, &planes));
  EXPECT_FALSE(decode_jpeg_blocks(many, &planes));
  EXPECT_NE(error_of([&] { decode_jpeg_planes(many, "many.jpg"); }).find("500 scans"),
            std::string::npos);
  const Bytes progressive = progressive_jpeg_of_scans(random_image(16, 16, 1, 5), 501);
  EXPECT_FALSE(decode_jpeg_turbojpeg(progressive, 16, 16, 1, false, &image, &damage, &refusal));
  EXPECT_NE(refusal.find("500 scans"), std::string::npos) << refusal;
}

}  // namespace
}  // namespace blurtool
