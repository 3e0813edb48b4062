// Tests for image_io on the host: exact PNG round trips for every channel count, JPEG within a
// loose tolerance, JPEG and PNG from RGBA against the reduced image, the checks made before
// anything is decoded (signature, empty and missing files, truncated files, max_pixels and
// max_file_bytes), 16-bit PNG warnings and exact 16-bit decoding, the fast decoders (libpng,
// TurboJPEG) against stb_image, which they replaced, and the atomic save (no partial or temporary
// file left behind, even when a signal ends the process mid-write). The PNG encoder's own tests are
// in test_png_encode.cpp, JPEG's chroma subsampling and restart strips in test_jpeg_encode.cpp, the
// RGBA and depth conversions in test_pixels.cpp.
#include <gtest/gtest.h>
#include <signal.h>
#include <stb/stb_image.h>
#include <sys/resource.h>
#include <turbojpeg.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "image/image_io.h"
#include "image/png_encode.h"
#include "tests/support/image_io_support.h"
#include "util/error.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

// Smooth gradients without a wrap-around: what JPEG is made for, so its error stays small (a
// hard colour edge would be smeared by 4:2:0 chroma subsampling, which is JPEG working as meant).
Image smooth_image(int width, int height, int channels) {
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.resize(static_cast<std::size_t>(width) * height * channels);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c)
        image.pixels[image.index(x, y, c)] =
            static_cast<std::uint8_t>(x * 150 / width + y * 60 / height + c * 15);
  return image;
}

Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  return names;
}

void put32(Bytes& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

void put_chunk(Bytes& out, const char* type, const Bytes& data) {
  put32(out, static_cast<std::uint32_t>(data.size()));
  const std::size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  put32(out, crc32(out, start, out.size()));
}

// A PNG of `rows` (each row's raw bytes, without the filter byte) in one stored (uncompressed)
// deflate block, with `color_type` and `depth` as IHDR says and `chunks` (PLTE, tRNS) before IDAT.
// With `adam7_height` > 0 the image is that high and Adam7-interlaced, `rows` the passes' rows.
// With `apple`, Apple's CgBI variant: a CgBI chunk first and a raw deflate stream (no zlib header
// or Adler-32), which libpng refuses and stb_image reads.
Bytes raw_png(int width, int depth, int color_type, const std::vector<Bytes>& rows,
              const std::vector<std::pair<const char*, Bytes>>& chunks = {}, int adam7_height = 0,
              bool apple = false) {
  Bytes raw;  // filter byte 0 (none) before each row
  for (const Bytes& row : rows) {
    raw.push_back(0);
    raw.insert(raw.end(), row.begin(), row.end());
  }
  Bytes zlib = apple ? Bytes{} : Bytes{0x78, 0x01};  // zlib header
  zlib.push_back(0x01);                              // one final stored block
  const std::uint16_t len = static_cast<std::uint16_t>(raw.size());
  for (std::uint16_t v : {len, static_cast<std::uint16_t>(~len)}) {
    zlib.push_back(v & 0xFF);
    zlib.push_back(v >> 8);
  }
  zlib.insert(zlib.end(), raw.begin(), raw.end());
  std::uint32_t a = 1, b = 0;  // Adler-32
  for (std::uint8_t byte : raw) a = (a + byte) % 65521, b = (b + a) % 65521;
  if (!apple) put32(zlib, (b << 16) | a);

  Bytes png = {0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A};
  if (apple) put_chunk(png, "CgBI", {0x50, 0x00, 0x20, 0x06});
  Bytes ihdr;
  put32(ihdr, width);
  put32(ihdr, adam7_height > 0 ? adam7_height : static_cast<std::uint32_t>(rows.size()));
  // depth, colour type, deflate, filter set 0, interlace method
  ihdr.insert(ihdr.end(), {std::uint8_t(depth), std::uint8_t(color_type), 0, 0,
                           std::uint8_t(adam7_height > 0)});
  put_chunk(png, "IHDR", ihdr);
  for (const auto& [type, data] : chunks) put_chunk(png, type, data);
  put_chunk(png, "IDAT", zlib);
  put_chunk(png, "IEND", {});
  return png;
}

// 16-bit samples as a PNG stores them: big-endian.
Bytes big_endian(const std::vector<std::uint16_t>& samples) {
  Bytes bytes;
  for (std::uint16_t v : samples) {
    bytes.push_back(static_cast<std::uint8_t>(v >> 8));
    bytes.push_back(static_cast<std::uint8_t>(v & 0xFF));
  }
  return bytes;
}

// A greyscale 16-bit PNG of width x (samples.size() / width) big-endian samples.
Bytes grey16_png(int width, const std::vector<std::uint16_t>& samples) {
  std::vector<Bytes> rows;
  for (auto row = samples.begin(); row < samples.end(); row += width) {
    rows.push_back(big_endian(std::vector<std::uint16_t>(row, row + width)));
  }
  return raw_png(width, 16, 0, rows);
}

TEST_F(ImageIo, PngRoundTripIsExactForEveryChannelCount) {
  for (int channels = 1; channels <= 4; ++channels) {
    SCOPED_TRACE("channels " + std::to_string(channels));
    const Image image = random_image(37, 23, channels, 100 + channels);
    const Bytes png = encode_image(image, ImageFormat::png, 95);
    std::vector<std::string> warnings;
    const Image back = decode_image(png, "mem.png", &warnings);
    EXPECT_EQ(back.width, 37);
    EXPECT_EQ(back.height, 23);
    EXPECT_EQ(back.channels, channels);
    EXPECT_EQ(back.pixels, image.pixels);
    EXPECT_TRUE(warnings.empty());
  }
}

TEST_F(ImageIo, PngRoundTripIsExactForOddSizesAndPhotos) {
  for (auto [w, h] : {std::pair{1, 1}, {1, 257}, {257, 1}, {131, 3}}) {
    for (int channels = 1; channels <= 4; ++channels) {
      SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + "x" + std::to_string(channels));
      const Image image = random_image(w, h, channels, w * 7 + h + channels);
      EXPECT_EQ(decode_image(encode_image(image, ImageFormat::png, 95), "mem.png").pixels,
                image.pixels);
    }
  }
  const Image photo = load_image(kSamples + "coffee_600x400.png");
  const Bytes png = encode_image(photo, ImageFormat::png, 95);
  EXPECT_EQ(decode_image(png, "coffee.png").pixels, photo.pixels);
  EXPECT_EQ(stb_decode(png).pixels, photo.pixels);  // a valid PNG for other decoders too
  EXPECT_LT(png.size(), photo.pixels.size());       // and compressed
}

TEST_F(ImageIo, JpegRoundTripIsClose) {
  const Image image = smooth_image(64, 48, 3);
  const Image back = decode_image(encode_image(image, ImageFormat::jpeg, 95), "mem.jpg");
  ASSERT_EQ(back.width, 64);
  ASSERT_EQ(back.height, 48);
  ASSERT_EQ(back.channels, 3);
  const auto [mean, worst] = difference(back, image);
  EXPECT_LT(mean, 3.0);
  EXPECT_LT(worst, 48);
}

TEST_F(ImageIo, JpegRoundTripOfAPhotoIsClose) {
  const Image photo = load_image(kSamples + "coffee_600x400.png");
  const Bytes jpeg = encode_image(photo, ImageFormat::jpeg, 95);
  const Image back = decode_image(jpeg, "coffee.jpg");
  ASSERT_EQ(back.width, 600);
  ASSERT_EQ(back.height, 400);
  ASSERT_EQ(back.channels, 3);
  EXPECT_LT(difference(back, photo).first, 3.0);  // 2.35 with 4:2:0, 1.85 with 4:4:4
  EXPECT_LT(jpeg.size(), photo.pixels.size() / 4);
  // 4:2:0: the frame header (SOF0) gives the luma component 2x2 sampling factors.
  const std::uint8_t sof0[] = {0xFF, 0xC0};
  const auto sof = std::search(jpeg.begin(), jpeg.end(), std::begin(sof0), std::end(sof0));
  ASSERT_LT(sof + 12, jpeg.end());
  EXPECT_EQ(sof[9], 3);      // components
  EXPECT_EQ(sof[11], 0x22);  // Y: 2x2, so Cb and Cr have a quarter of its samples
  // RGBA: the alpha channel is dropped, the colours are encoded as for RGB.
  EXPECT_EQ(encode_image(to_rgba(photo), ImageFormat::jpeg, 95), jpeg);
}

TEST_F(ImageIo, LowerJpegQualityGivesSmallerFiles) {
  const Image photo = load_image(kSamples + "coffee_600x400.png");
  const std::size_t q95 = encode_image(photo, ImageFormat::jpeg, 95).size();
  const std::size_t q50 = encode_image(photo, ImageFormat::jpeg, 50).size();
  EXPECT_LT(q50, q95 / 2);
}

TEST_F(ImageIo, GreyJpegStaysGrey) {
  for (int channels : {1, 2}) {  // grey + alpha: the alpha channel is dropped
    SCOPED_TRACE("channels " + std::to_string(channels));
    const Image image = smooth_image(32, 16, channels);
    const Bytes jpeg = encode_image(image, ImageFormat::jpeg, 100);
    const Image back = decode_image(jpeg, "grey.jpg");
    ASSERT_EQ(back.channels, 1);
    EXPECT_EQ(stb_decode(jpeg).channels, 1);  // as stb_image read grey JPEGs
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 32; ++x)
        EXPECT_NEAR(back.pixels[back.index(x, y)], image.pixels[image.index(x, y)], 2);
  }
}

// TurboJPEG decodes what stb_image decoded, to within their rounding.
TEST_F(ImageIo, JpegDecodesAsStbImageDid) {
  for (const char* name : {"dune_1680x1050.jpg", "hubble_deep_field_1000x872.jpg"}) {
    SCOPED_TRACE(name);
    const Bytes jpeg = read_bytes(kSamples + name);
    const Image fast = decode_image(jpeg, name);
    const Image stb = stb_decode(jpeg);
    ASSERT_EQ(fast.width, stb.width);
    ASSERT_EQ(fast.height, stb.height);
    ASSERT_EQ(fast.channels, stb.channels);
    const auto [mean, worst] = difference(fast, stb);
    EXPECT_LT(mean, 0.5) << "worst " << worst;
    EXPECT_LE(worst, 16) << "mean " << mean;
  }
}

// A CMYK JPEG (TurboJPEG writes it as YCCK with an Adobe marker) is left to stb_image, which
// converts it to RGB as before.
TEST_F(ImageIo, CmykJpegIsDecodedByStbImage) {
  const Image cmyk = smooth_image(24, 16, 4);
  tjhandle handle = tjInitCompress();
  ASSERT_NE(handle, nullptr);
  unsigned char* data = nullptr;
  unsigned long size = 0;
  ASSERT_EQ(tjCompress2(handle, cmyk.pixels.data(), 24, 0, 16, TJPF_CMYK, &data, &size, TJSAMP_444,
                        90, 0),
            0)
      << tjGetErrorStr2(handle);
  const Bytes jpeg(data, data + size);
  tjFree(data);
  tjDestroy(handle);
  const Image image = decode_image(jpeg, "cmyk.jpg");
  EXPECT_EQ(image.channels, 3);
  EXPECT_EQ(image.pixels, stb_decode(jpeg).pixels);
}

// libpng expands every PNG layout to the channels and values stb_image gave.
TEST_F(ImageIo, PngLayoutsDecodeAsStbImageDid) {
  const Bytes palette = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30};
  const std::vector<std::pair<std::string, Bytes>> cases = {
      {"grey 1-bit", raw_png(10, 1, 0, {{0xA5, 0x40}, {0x0F, 0xC0}})},
      {"grey 4-bit", raw_png(3, 4, 0, {{0x1F, 0x80}, {0xE3, 0x00}})},
      {"grey + tRNS", raw_png(2, 8, 0, {{7, 9}, {9, 7}}, {{"tRNS", {0, 9}}})},
      {"grey + alpha", raw_png(2, 8, 4, {{1, 2, 3, 4}, {5, 6, 7, 8}})},
      {"RGB + tRNS",
       raw_png(2, 8, 2, {{1, 2, 3, 4, 5, 6}, {1, 2, 3, 1, 2, 3}}, {{"tRNS", {0, 1, 0, 2, 0, 3}}})},
      {"RGBA 16-bit", raw_png(1, 16, 6, {{0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0}})},
      {"palette 2-bit", raw_png(4, 2, 3, {{0x1B}, {0xE4}}, {{"PLTE", palette}})},
      {"palette + tRNS",
       raw_png(3, 8, 3, {{0, 1, 2}, {3, 2, 1}}, {{"PLTE", palette}, {"tRNS", {255, 128}}})},
      // 3x3 grey, pixel (x, y) = 10 y + x + 1; Adam7 passes 1, 4, 5, 6, 6, 7 (2 and 3 empty).
      {"Adam7", raw_png(3, 8, 0, {{1}, {3}, {21, 23}, {2}, {22}, {11, 12, 13}}, {}, 3)},
  };
  for (const auto& [what, png] : cases) {
    SCOPED_TRACE(what);
    const Image image = decode_image(png, what);
    if (what == "Adam7") {
      EXPECT_EQ(image.pixels, (Bytes{1, 2, 3, 11, 12, 13, 21, 22, 23}));
    }
    const Image stb = stb_decode(png);
    EXPECT_EQ(image.width, stb.width);
    EXPECT_EQ(image.height, stb.height);
    EXPECT_EQ(image.channels, stb.channels);
    EXPECT_EQ(image.pixels, stb.pixels);
    // Straight into RGBA, as the device takes it: to_rgba's samples, the file's channels kept
    // (a tRNS chunk counts as alpha), at the depth the file stores.
    const DecodedImage rgba = decode_image_wide(png, what, nullptr, kDefaultMaxPixels, true, true);
    EXPECT_EQ(rgba.channels(), image.channels);
    EXPECT_EQ(read_image_header(png, what).channels, image.channels);
    if (rgba.is_wide()) {
      EXPECT_EQ(rgba.wide.channels, 4);
      Bytes high;  // decode_image keeps each sample's high byte
      for (std::uint16_t v : rgba.wide.pixels) high.push_back(static_cast<std::uint8_t>(v >> 8));
      EXPECT_EQ(high, to_rgba(image).pixels);
    } else {
      EXPECT_EQ(rgba.narrow.channels, 4);
      EXPECT_EQ(rgba.narrow.pixels, to_rgba(image).pixels);
    }
  }
}

// A wrong CRC is an error, in libpng's words (it was ignored, as stb_image ignores it; more
// cases in test_decode_checks.cpp).
TEST_F(ImageIo, PngWithABadCrcIsRefused) {
  Bytes png = raw_png(2, 8, 0, {{1, 2}, {3, 4}});
  png[8 + 8 + 13] ^= 0xFF;  // the IHDR chunk's CRC: after the signature, length, type and data
  EXPECT_EQ(error_of([&] { decode_image(png, "crc.png"); }),
            "crc.png: corrupt PNG (IHDR: CRC error)");
}

TEST_F(ImageIo, SamplesDecode) {
  const Image jpeg = load_image(kSamples + "dune_1680x1050.jpg");
  EXPECT_EQ(jpeg.width, 1680);
  EXPECT_EQ(jpeg.height, 1050);
  EXPECT_EQ(jpeg.channels, 3);
  EXPECT_EQ(jpeg.pixels.size(), 1680u * 1050u * 3u);
  const Image png = load_image(kSamples + "coffee_600x400.png");
  EXPECT_EQ(png.width, 600);
  EXPECT_EQ(png.height, 400);
  EXPECT_EQ(png.channels, 3);
}

TEST_F(ImageIo, TextFileNamedPngIsRefused) {
  const std::string file = path("x.png");
  write_bytes(file, Bytes{'h', 'e', 'l', 'l', 'o', '\n'});
  const std::string message = error_of([&] { load_image(file); });
  EXPECT_NE(message.find(file), std::string::npos) << message;
  EXPECT_NE(message.find("not a PNG, JPEG, TIFF or WebP"), std::string::npos) << message;
}

TEST_F(ImageIo, OtherFormatsStbKnowsAreRefused) {
  const std::string pgm = "P5\n2 1\n255\n\x10\x20";  // a valid binary PGM
  const Bytes bytes(pgm.begin(), pgm.end());
  int w = 0, h = 0, c = 0;  // stb_image itself would accept it...
  ASSERT_TRUE(stbi_info_from_memory(bytes.data(), int(bytes.size()), &w, &h, &c));
  const std::string message = error_of([&] { decode_image(bytes, "img.pgm"); });  // ...we don't
  EXPECT_NE(message.find("img.pgm: not a PNG, JPEG, TIFF or WebP"), std::string::npos) << message;
}

TEST_F(ImageIo, EmptyFileIsRefused) {
  const std::string file = path("empty.png");
  write_bytes(file, {});
  const std::string message = error_of([&] { load_image(file); });
  EXPECT_NE(message.find(file), std::string::npos) << message;
  EXPECT_NE(message.find("is empty"), std::string::npos) << message;
}

TEST_F(ImageIo, MissingFileIsRefused) {
  const std::string file = path("missing.png");
  const std::string message = error_of([&] { load_image(file); });
  EXPECT_NE(message.find(file), std::string::npos) << message;
  EXPECT_NE(message.find(std::strerror(ENOENT)), std::string::npos) << message;
}

TEST_F(ImageIo, DirectoryIsRefused) {
  const std::string message = error_of([&] { load_image(dir_.string()); });
  EXPECT_NE(message.find(dir_.string()), std::string::npos) << message;
}

TEST_F(ImageIo, TruncatedJpegIsRefused) {
  const Bytes full = read_bytes(kSamples + "dune_1680x1050.jpg");
  ASSERT_GT(full.size(), 1000u);
  for (std::size_t keep :
       {full.size() / 2, std::size_t{100}, std::size_t{3}, std::size_t{2}, std::size_t{1}}) {
    SCOPED_TRACE("keep " + std::to_string(keep));
    const std::string file = path("half.jpg");
    write_bytes(file, Bytes(full.begin(), full.begin() + keep));
    const std::string message = error_of([&] { load_image(file); });
    EXPECT_NE(message.find(file), std::string::npos) << message;
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  }
}

// Damaged scan data that libjpeg decodes anyway (the damaged part grey, as viewers show it) is
// read, with a warning that names the file and gives libjpeg's words.
TEST_F(ImageIo, DamagedJpegDataIsReadWithAWarning) {
  Bytes jpeg = encode_image(smooth_image(256, 256, 3), ImageFormat::jpeg, 90);
  std::vector<std::string> warnings;
  decode_image(jpeg, "whole.jpg", &warnings);
  EXPECT_TRUE(warnings.empty());
  std::size_t scan = 0;
  for (std::size_t i = 0; i + 1 < jpeg.size(); ++i)
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xDA) scan = i;
  ASSERT_GT(scan, 0u);
  ASSERT_GT(jpeg.size(), scan + 600);
  for (std::size_t i = scan + 300; i < scan + 500; ++i) jpeg[i] = 0xA5;  // no 0xFF: no marker
  const Image image = decode_image(jpeg, "damaged.jpg", &warnings);
  EXPECT_EQ(image.width, 256);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("damaged.jpg: JPEG data with errors, decoded anyway (libjpeg: ", 0),
            0u)
      << warnings[0];
}

// An EXIF-style thumbnail (a whole JPEG, EOI included) inside APP1 must not count as the main
// image's end-of-image marker.
TEST_F(ImageIo, ThumbnailEoiDoesNotHideTruncation) {
  const Bytes main = encode_image(smooth_image(64, 48, 3), ImageFormat::jpeg, 90);
  const Bytes thumb = encode_image(smooth_image(8, 8, 3), ImageFormat::jpeg, 90);
  Bytes app1 = {'E', 'x', 'i', 'f', 0, 0};
  app1.insert(app1.end(), thumb.begin(), thumb.end());
  const std::size_t length = app1.size() + 2;
  Bytes with_thumb = {0xFF, 0xD8, 0xFF, 0xE1, std::uint8_t(length >> 8), std::uint8_t(length)};
  // Reserved first: appending to the 6 bytes made GCC 12 warn (-Warray-bounds, a false positive).
  with_thumb.reserve(with_thumb.size() + app1.size() + main.size());
  with_thumb.insert(with_thumb.end(), app1.begin(), app1.end());
  with_thumb.insert(with_thumb.end(), main.begin() + 2, main.end());

  const Image image = decode_image(with_thumb, "thumb.jpg");
  EXPECT_EQ(image.width, 64);
  EXPECT_EQ(image.height, 48);

  const Bytes cut(with_thumb.begin(), with_thumb.end() - (main.size() / 4));
  const std::string message = error_of([&] { decode_image(cut, "thumb.jpg"); });
  EXPECT_NE(message.find("thumb.jpg: truncated"), std::string::npos) << message;
}

TEST_F(ImageIo, TruncatedPngIsRefused) {
  const Bytes full = read_bytes(kSamples + "coffee_600x400.png");
  const Bytes half(full.begin(), full.begin() + full.size() / 2);
  const std::string message = error_of([&] { decode_image(half, "half.png"); });
  EXPECT_NE(message.find("half.png"), std::string::npos) << message;
  EXPECT_NE(message.find("PNG"), std::string::npos) << message;
}

// A PNG whose IHDR declares `width` x `height` 8-bit RGB, with one IDAT (a few rows' worth of
// compressed zeros, not the whole image) and IEND unless `cut`; with `apple`, a CgBI chunk first.
Bytes png_declaring(std::uint32_t width, std::uint32_t height, bool cut = false,
                    bool apple = false) {
  Bytes png = raw_png(1, 8, 2, {{0, 0, 0}}, {}, 0, apple);
  const std::size_t ihdr = apple ? 8 + 16 + 8 : 8 + 8;  // IHDR's data
  Bytes fields;
  put32(fields, width);
  put32(fields, height);
  std::copy(fields.begin(), fields.end(), png.begin() + ihdr);
  const Bytes crc = [&] {
    Bytes c;
    put32(c, crc32(png, ihdr - 4, ihdr + 13));
    return c;
  }();
  std::copy(crc.begin(), crc.end(), png.begin() + ihdr + 13);
  if (cut) png.resize(ihdr + 13 + 4);
  return png;
}

// A header over stb_image's 2^30-byte limit is held against max_pixels, not called corrupt.
TEST_F(ImageIo, LargePngHeaderGivesTheMaxPixelsMessage) {
  for (bool cut : {false, true}) {
    for (std::uint64_t limit : {kDefaultMaxPixels, std::uint64_t{100}}) {
      SCOPED_TRACE(std::string(cut ? "cut" : "whole") + ", limit " + std::to_string(limit));
      const Bytes png = png_declaring(40000, 40000, cut);
      const std::string expected =
          "big.png: image is 40000x40000 = 1600000000 pixels, more than "
          "the limit of " +
          std::to_string(limit) + " pixels (max_pixels)";
      EXPECT_EQ(error_of([&] { decode_image(png, "big.png", nullptr, limit); }), expected);
      EXPECT_EQ(error_of([&] { decode_image_wide(png, "big.png", nullptr, limit); }), expected);
    }
  }
}

TEST_F(ImageIo, LargeJpegHeaderGivesTheMaxPixelsMessage) {
  // SOI, SOF0 of 60000x60000 greyscale, SOS, some scan data, EOI.
  const Bytes jpeg = {0xFF, 0xD8, 0xFF, 0xC0, 0,    11,   8, 0xEA, 0x60, 0xEA, 0x60,
                      1,    1,    0x11, 0,    0xFF, 0xDA, 0, 8,    1,    1,    0,
                      0,    0x3F, 0,    0,    0,    0,    0, 0xFF, 0xD9};
  for (std::uint64_t limit : {kDefaultMaxPixels, std::uint64_t{100}}) {
    EXPECT_EQ(error_of([&] { decode_image(jpeg, "big.jpg", nullptr, limit); }),
              "big.jpg: image is 60000x60000 = 3600000000 pixels, more than the limit of " +
                  std::to_string(limit) + " pixels (max_pixels)");
  }
}

// stb_image's header reader refuses more than 2^24 pixels a side; libpng decodes it.
TEST_F(ImageIo, PngWiderThanStbReadsDecodes) {
  const Image wide = random_image((1 << 24) + 1, 1, 1, 5);
  const Image back = decode_image(encode_image(wide, ImageFormat::png, 0), "wide.png");
  EXPECT_EQ(back.width, wide.width);
  EXPECT_EQ(back.height, 1);
  EXPECT_EQ(back.pixels, wide.pixels);
}

// Apple's CgBI PNG goes to stb_image, which cannot hold 20000x20000 RGB: said so, not "corrupt".
TEST_F(ImageIo, PngTooLargeForStbSaysSo) {
  const Bytes png = png_declaring(20000, 20000, false, true);
  EXPECT_EQ(error_of([&] { decode_image(png, "cgbi.png", nullptr, 400000000); }),
            "cgbi.png: image is 20000x20000, too large for the stb_image decoder");
}

// Every cut of a PNG is reported as truncated, with where it ends (inside its signature too),
// but one that keeps IEND's type (stb_image never reads IEND's CRC, and decodes it as before).
TEST_F(ImageIo, TruncatedPngSaysWhereItEnds) {
  const std::vector<std::pair<std::string, Bytes>> files = {
      {"8-bit", raw_png(4, 8, 2, {Bytes(12, 7), Bytes(12, 8), Bytes(12, 9)})},
      {"16-bit", grey16_png(2, {1, 2, 3, 4})}};
  for (const auto& [what, png] : files) {
    for (std::size_t n = 1; n < png.size(); ++n) {
      SCOPED_TRACE(what + " cut at " + std::to_string(n));
      const Bytes cut(png.begin(), png.begin() + n);
      if (n >= png.size() - 4) {  // IEND's length and type kept
        EXPECT_NO_THROW(decode_image_wide(cut, "cut.png"));
        continue;
      }
      const std::string message = error_of([&] { decode_image(cut, "cut.png"); });
      const std::string start =
          "cut.png: truncated PNG (the file ends at byte " + std::to_string(n) + ", ";
      EXPECT_EQ(message.substr(0, start.size()), start) << message;
      if (n < 8) {
        EXPECT_EQ(message.substr(start.size()), "inside its signature)");
      } else if (n < 8 + 8 + 13) {
        EXPECT_EQ(message.substr(start.size()), "inside its header)");
      }
      if (n == png.size() - 12) {
        EXPECT_EQ(message.substr(start.size()), "before its IEND chunk)");
      }
      EXPECT_EQ(message, error_of([&] { decode_image_wide(cut, "cut.png"); }));
    }
  }
}

// When both decoders refuse a whole PNG, libpng's reason is given, never an empty or clipped one.
TEST_F(ImageIo, PngDecodeErrorsSayWhatIsWrong) {
  const std::vector<Bytes> rows = {Bytes(6, 1), Bytes(6, 2)};
  // IDAT's CRC made to match its changed data (else the CRC error is what is reported).
  const auto fix_idat_crc = [](Bytes& png) {
    const std::size_t at = 8 + 25, length = std::size_t{png[at + 2]} << 8 | png[at + 3];
    const std::uint32_t crc = crc32(png, at + 4, at + 8 + length);
    for (int i = 0; i < 4; ++i)
      png[at + 8 + length + i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
  };
  Bytes bad_zlib = raw_png(2, 8, 2, rows);
  bad_zlib[8 + 25 + 8 + 1] = 0x02;  // the zlib header's check bits, in IDAT's data
  fix_idat_crc(bad_zlib);
  // A whole zlib stream of one row where IHDR says two (its CRC made right).
  Bytes short_zlib = raw_png(2, 8, 2, {rows[0]});
  short_zlib[8 + 8 + 7] = 2;
  const std::uint32_t ihdr_crc = crc32(short_zlib, 8 + 4, 8 + 8 + 13);
  for (int i = 0; i < 4; ++i)
    short_zlib[8 + 8 + 13 + i] = static_cast<std::uint8_t>(ihdr_crc >> (24 - 8 * i));
  const std::vector<std::tuple<std::string, Bytes, std::string>> cases = {
      {"chunk type with zero bytes", raw_png(2, 8, 2, rows, {{"X\0\0\0", {1, 2}}}),
       "X[00][00][00]: invalid chunk type"},
      {"bad zlib header", bad_zlib, "IDAT: incorrect header check"},
      {"short image data", short_zlib, "Not enough image data"},
      {"no palette", raw_png(2, 8, 3, {{0, 1}, {1, 0}}), "Missing PLTE before IDAT"},
  };
  for (const auto& [what, png, reason] : cases) {
    SCOPED_TRACE(what);
    const std::string message = error_of([&] { decode_image(png, "bad.png"); });
    EXPECT_EQ(message.substr(0, 26), "bad.png: cannot decode PNG") << message;
    EXPECT_NE(message.find(reason + ")"), std::string::npos) << message;
  }
}

// What is wrong with a header is said, not stb_image's "unknown image type".
TEST_F(ImageIo, HeaderErrorsSayWhatIsWrong) {
  auto with_ihdr_byte = [](std::size_t at, std::uint8_t value) {  // `at` within IHDR's data
    Bytes png = raw_png(2, 8, 2, {Bytes(6, 1)});
    png[8 + 8 + at] = value;
    return png;
  };
  Bytes short_ihdr = raw_png(2, 8, 2, {Bytes(6, 1)});
  short_ihdr[8 + 3] = 12;
  const Bytes png = raw_png(2, 8, 2, {Bytes(6, 1)});
  Bytes plte_first(png.begin(), png.begin() + 8);
  put_chunk(plte_first, "PLTE", {1, 2, 3});
  plte_first.insert(plte_first.end(), png.begin() + 8, png.end());
  const std::vector<std::pair<Bytes, std::string>> png_cases = {
      {with_ihdr_byte(8, 7), "bit depth 7"},
      {with_ihdr_byte(9, 5), "colour type 5 with bit depth 8"},
      {with_ihdr_byte(12, 2), "interlace method 2"},
      {with_ihdr_byte(3, 0), "size 0x1"},
      {short_ihdr, "'IHDR' chunk of 12 bytes, not 13"},
      {plte_first, "the first chunk is 'PLTE', not 'IHDR'"},
  };
  for (const auto& [png, reason] : png_cases) {
    SCOPED_TRACE(reason);
    EXPECT_EQ(error_of([&] { decode_image(png, "h.png"); }),
              "h.png: corrupt or unsupported PNG header (" + reason + ")");
  }
  // A lossless JPEG (SOF3), which neither decoder reads: TurboJPEG's reason.
  const Bytes lossless = {0xFF, 0xD8, 0xFF, 0xC3, 0, 11, 8, 0, 16,   0, 16, 1, 1, 0x11, 0,
                          0xFF, 0xDA, 0,    8,    1, 1,  0, 0, 0x3F, 0, 0,  0, 0, 0xFF, 0xD9};
  EXPECT_EQ(error_of([&] { decode_image(lossless, "h.jpg"); }),
            "h.jpg: corrupt or unsupported JPEG header (Unsupported JPEG process: SOF type 0xc3)");
}

TEST_F(ImageIo, SixteenBitPngIsReadAsEightBitWithAWarning) {
  const Bytes png = grey16_png(3, {0x1234, 0xABCD, 0xFFFF, 0x0000, 0x80FF, 0x7F00});
  const std::string file = path("deep.png");
  write_bytes(file, png);
  std::vector<std::string> warnings;
  const Image image = load_image(file, &warnings);
  EXPECT_EQ(image.width, 3);
  EXPECT_EQ(image.height, 2);
  EXPECT_EQ(image.channels, 1);
  EXPECT_EQ(image.pixels, (Bytes{0x12, 0xAB, 0xFF, 0x00, 0x80, 0x7F}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], file + ": 16-bit PNG read as 8-bit");
  EXPECT_NO_THROW(load_image(file));  // warnings are optional
}

const std::string kSeeds = std::string(BLURTOOL_SOURCE_DIR) + "/tests/fuzz/seeds/";

// Each sample's high byte: how load_image has always reduced a 16-bit PNG.
Bytes high_bytes(const Samples16& samples) {
  Bytes bytes;
  for (std::uint16_t v : samples) bytes.push_back(static_cast<std::uint8_t>(v >> 8));
  return bytes;
}

// 16-bit PNGs made by hand, not by our encoder, decode to their exact samples at every colour
// type (tRNS giving a 16-bit alpha), by libpng or, for Apple's CgBI variant that libpng refuses,
// by stb_image at 16 bits; stb_image reads the same samples. load_image reads their high bytes.
TEST_F(ImageIo, SixteenBitPngLayoutsDecodeExactly) {
  struct Case {
    std::string what;
    Bytes png;
    int width, height, channels;
    Samples16 samples;
  };
  const auto be = big_endian;
  // 3x3 grey, pixel (x, y) = 1001 * (10 y + x + 1); Adam7 passes 1, 4, 5, 6, 6, 7.
  const auto adam7 = [](std::initializer_list<std::uint16_t> v) {
    Samples16 samples(v);
    for (std::uint16_t& s : samples) s = static_cast<std::uint16_t>(s * 1001);
    return big_endian(samples);
  };
  const std::vector<Case> cases = {
      {"grey",
       raw_png(2, 16, 0, {be({0x1234, 0xABCD}), be({0x0001, 0xFFFE})}),
       2,
       2,
       1,
       {0x1234, 0xABCD, 0x0001, 0xFFFE}},
      {"grey + alpha",
       raw_png(2, 16, 4, {be({0x1234, 0x00FF, 0xFEDC, 0x8001})}),
       2,
       1,
       2,
       {0x1234, 0x00FF, 0xFEDC, 0x8001}},
      {"RGB",
       raw_png(2, 16, 2, {be({1, 2, 3, 0x7FFF, 0x8000, 0x8001})}),
       2,
       1,
       3,
       {1, 2, 3, 0x7FFF, 0x8000, 0x8001}},
      {"RGBA",
       raw_png(1, 16, 6, {be({0x0102, 0x0304, 0x0506, 0x0708}), be({0xF0F1, 0, 9, 0xFFFF})}),
       1,
       2,
       4,
       {0x0102, 0x0304, 0x0506, 0x0708, 0xF0F1, 0, 9, 0xFFFF}},
      // Only the exact 16-bit value is transparent: 0x1235 and 0x1334 differ in one byte.
      {"grey + tRNS",
       raw_png(4, 16, 0, {be({0x1234, 0x1235, 0x1334, 0x1234})}, {{"tRNS", be({0x1234})}}),
       4,
       1,
       2,
       {0x1234, 0, 0x1235, 0xFFFF, 0x1334, 0xFFFF, 0x1234, 0}},
      {"RGB + tRNS",
       raw_png(2, 16, 2, {be({1, 2, 3, 1, 2, 0x0103})}, {{"tRNS", be({1, 2, 3})}}),
       2,
       1,
       4,
       {1, 2, 3, 0, 1, 2, 0x0103, 0xFFFF}},
      {"Adam7",
       raw_png(
           3, 16, 0,
           {adam7({1}), adam7({3}), adam7({21, 23}), adam7({2}), adam7({22}), adam7({11, 12, 13})},
           {}, 3),
       3,
       3,
       1,
       {1001, 2002, 3003, 11011, 12012, 13013, 21021, 22022, 23023}},
      {"RGBA, Apple CgBI",
       raw_png(1, 16, 6, {be({0x0102, 0x0304, 0x0506, 0x0708})}, {}, 0, true),
       1,
       1,
       4,
       {0x0102, 0x0304, 0x0506, 0x0708}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<std::string> warnings;
    const DecodedImage decoded = decode_image_wide(c.png, c.what, &warnings);
    ASSERT_TRUE(decoded.is_wide());
    EXPECT_EQ(decoded.narrow.channels, 0);
    EXPECT_EQ(decoded.width(), c.width);
    EXPECT_EQ(decoded.height(), c.height);
    EXPECT_EQ(decoded.channels(), c.channels);
    EXPECT_EQ(decoded.wide.pixels, c.samples);
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ(stb_decode<std::uint16_t>(c.png).pixels, c.samples);
    // Decoded straight into RGBA: to_rgba of the same samples, the file's channels remembered.
    const DecodedImage rgba =
        decode_image_wide(c.png, c.what, nullptr, kDefaultMaxPixels, true, true);
    EXPECT_EQ(rgba.wide.channels, 4);
    EXPECT_EQ(rgba.channels(), c.channels);
    EXPECT_EQ(rgba.wide.pixels, to_rgba(decoded.wide).pixels);
    const ImageHeader header = read_image_header(c.png, c.what);
    EXPECT_EQ(header.width, c.width);
    EXPECT_EQ(header.height, c.height);
    EXPECT_EQ(header.channels, c.channels);
    EXPECT_TRUE(header.sixteen_bit);
    const Image eight = decode_image(c.png, c.what, &warnings);
    EXPECT_EQ(eight.channels, c.channels);
    EXPECT_EQ(eight.pixels, high_bytes(c.samples));
    EXPECT_EQ(warnings, std::vector<std::string>{c.what + ": 16-bit PNG read as 8-bit"});
  }
}

// Our 16-bit PNGs keep every sample, for every channel count and odd sizes; stb_image reads the
// same samples (so the file is big-endian, as PNG says, not just consistent with our decoder).
TEST_F(ImageIo, SixteenBitPngRoundTripIsExactForEveryChannelCount) {
  for (auto [w, h] : {std::pair{37, 23}, {1, 1}, {257, 3}}) {
    for (int channels = 1; channels <= 4; ++channels) {
      SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + "x" + std::to_string(channels));
      Image16 image = random_image<std::uint16_t>(w, h, channels, w * 7 + h + channels);
      image.pixels[0] = 0x1235;  // not a multiple of 257, even in a 1x1 grey image
      ASSERT_NE(widen(narrow(image)).pixels, image.pixels);  // so 8 bits cannot hold it
      const Bytes png = encode_image(image, ImageFormat::png, 95);
      ASSERT_GT(png.size(), 24u);
      EXPECT_EQ(png[24], 16);  // IHDR's bit depth
      std::vector<std::string> warnings;
      const DecodedImage back = decode_image_wide(png, "mem.png", &warnings);
      ASSERT_TRUE(back.is_wide());
      EXPECT_EQ(back.wide.width, w);
      EXPECT_EQ(back.wide.height, h);
      EXPECT_EQ(back.wide.channels, channels);
      EXPECT_EQ(back.wide.pixels, image.pixels);
      EXPECT_TRUE(warnings.empty());
      EXPECT_EQ(stb_decode<std::uint16_t>(png).pixels, image.pixels);
    }
  }
}

// A 16-bit PNG from another encoder (filtered rows, zlib-compressed) decodes too: its samples
// are 8-bit values times 257, so they are what load_image reads, widened.
TEST_F(ImageIo, SixteenBitPngFromAnotherEncoderDecodes) {
  const std::string file = kSeeds + "coffee_24x16_rgb16.png";
  const DecodedImage decoded = load_image_wide(file);
  ASSERT_TRUE(decoded.is_wide());
  EXPECT_EQ(decoded.wide.width, 24);
  EXPECT_EQ(decoded.wide.height, 16);
  EXPECT_EQ(decoded.wide.channels, 3);
  EXPECT_EQ(decoded.wide.pixels, widen(load_image(file)).pixels);
  EXPECT_EQ(decoded.wide.pixels, stb_decode<std::uint16_t>(read_bytes(file)).pixels);
}

// load_image_wide keeps a 16-bit file's samples without a warning; load_image still reduces it
// to the high bytes (0x12F0 -> 0x12, where narrow() would round to 0x13) with the warning.
TEST_F(ImageIo, LoadImageWideKeepsSixteenBitsWhereLoadImageReduces) {
  const Samples16 samples = {0x1234, 0xABCD, 0xFFFF, 0x0000, 0x80FF, 0x12F0};
  const std::string file = path("deep.png");
  write_bytes(file, grey16_png(3, samples));
  std::vector<std::string> warnings;
  const DecodedImage wide = load_image_wide(file, &warnings);
  ASSERT_TRUE(wide.is_wide());
  EXPECT_EQ(wide.width(), 3);
  EXPECT_EQ(wide.height(), 2);
  EXPECT_EQ(wide.channels(), 1);
  EXPECT_EQ(wide.wide.pixels, samples);
  EXPECT_TRUE(wide.narrow.pixels.empty());
  EXPECT_TRUE(warnings.empty());
  const Image eight = load_image(file, &warnings);
  EXPECT_EQ(eight.pixels, (Bytes{0x12, 0xAB, 0xFF, 0x00, 0x80, 0x12}));
  EXPECT_EQ(warnings, std::vector<std::string>{file + ": 16-bit PNG read as 8-bit"});
}

// Every file that is not a 16-bit PNG comes back in `narrow`, as load_image reads it, a JPEG's
// EXIF orientation applied or not as asked.
TEST_F(ImageIo, EightBitFilesThroughLoadImageWideAreAsLoadImageReadsThem) {
  const Bytes palette = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30};
  write_bytes(path("grey1.png"), raw_png(10, 1, 0, {{0xA5, 0x40}, {0x0F, 0xC0}}));
  write_bytes(path("palette.png"), raw_png(4, 2, 3, {{0x1B}, {0xE4}}, {{"PLTE", palette}}));
  for (const std::string& file :
       {kSamples + "coffee_600x400.png", kSamples + "dune_1680x1050.jpg",
        kSeeds + "coffee_24x16_rgba.png", kSeeds + "dune_40x25_grey.jpg",
        kSeeds + "dune_40x25_exif6.jpg", path("grey1.png"), path("palette.png")}) {
    for (bool orient : {true, false}) {
      SCOPED_TRACE(file + (orient ? "" : " as stored"));
      std::vector<std::string> warnings;
      const DecodedImage decoded =
          load_image_wide(file, &warnings, kDefaultMaxPixels, kDefaultMaxFileBytes, orient);
      const Image expected =
          load_image(file, &warnings, kDefaultMaxPixels, kDefaultMaxFileBytes, orient);
      ASSERT_FALSE(decoded.is_wide());
      EXPECT_TRUE(decoded.wide.pixels.empty());
      EXPECT_EQ(decoded.width(), expected.width);
      EXPECT_EQ(decoded.height(), expected.height);
      EXPECT_EQ(decoded.channels(), expected.channels);
      EXPECT_EQ(decoded.narrow.pixels, expected.pixels);
      EXPECT_TRUE(warnings.empty());
      // Decoded straight into RGBA (TurboJPEG's RGBX, libpng's gray-to-RGB and filler): the
      // samples of to_rgba, the file's channel count kept; the header says the same size.
      const DecodedImage rgba =
          load_image_wide(file, &warnings, kDefaultMaxPixels, kDefaultMaxFileBytes, orient, true);
      EXPECT_EQ(rgba.narrow.channels, 4);
      EXPECT_EQ(rgba.channels(), expected.channels);
      EXPECT_EQ(rgba.narrow.pixels, to_rgba(expected).pixels);
      const ImageHeader header =
          read_image_header(read_bytes(file), file, kDefaultMaxPixels, orient);
      EXPECT_EQ(header.width, expected.width);
      EXPECT_EQ(header.height, expected.height);
      EXPECT_EQ(header.channels, expected.channels);
      EXPECT_FALSE(header.sixteen_bit);
    }
  }
  const std::string turned = kSeeds + "dune_40x25_exif6.jpg";  // orientation 6: 90 degrees
  EXPECT_EQ(load_image_wide(turned).width(), 25);
  EXPECT_EQ(
      load_image_wide(turned, nullptr, kDefaultMaxPixels, kDefaultMaxFileBytes, false).width(), 40);
}

// decode_image_wide and load_image_wide make load_image's checks, with the same messages.
TEST_F(ImageIo, WideDecodeRefusesWhatDecodeImageRefuses) {
  const Bytes deep = grey16_png(3, {1, 2, 3, 4, 5, 6});
  const Bytes jpeg = read_bytes(kSamples + "dune_1680x1050.jpg");
  const std::vector<std::pair<std::string, Bytes>> cases = {
      {"empty", {}},
      {"text", {'h', 'i', '\n'}},
      {"truncated JPEG", Bytes(jpeg.begin(), jpeg.begin() + jpeg.size() / 2)},
      {"truncated 16-bit PNG", Bytes(deep.begin(), deep.begin() + 50)},
      {"16-bit PNG over max_pixels", deep},
  };
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    const std::string message = error_of([&] { decode_image_wide(bytes, what, nullptr, 5); });
    EXPECT_NE(message.find(what + ": "), std::string::npos) << message;
    EXPECT_EQ(message, error_of([&] { decode_image(bytes, what, nullptr, 5); }));
  }
  const std::string file = path("deep.png");
  write_bytes(file, deep);
  EXPECT_EQ(error_of([&] { load_image_wide(file, nullptr, kDefaultMaxPixels, deep.size() - 1); }),
            error_of([&] { load_image(file, nullptr, kDefaultMaxPixels, deep.size() - 1); }));
  EXPECT_NE(error_of([&] { load_image_wide(path("missing.png")); }).find(std::strerror(ENOENT)),
            std::string::npos);
}

// JPEG holds 8 bits: a 16-bit image is narrowed, then encoded as that 8-bit image is.
TEST_F(ImageIo, SixteenBitJpegIsTheNarrowedImage) {
  for (int channels : {2, 3, 4}) {
    SCOPED_TRACE("channels " + std::to_string(channels));
    Image16 image = widen(smooth_image(64, 48, channels));
    for (std::size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] += i % 200;
    const Image narrowed = narrow(image);
    const Bytes jpeg = encode_image(image, ImageFormat::jpeg, 95);
    EXPECT_EQ(jpeg, encode_image(narrowed, ImageFormat::jpeg, 95));
    const Image back = decode_image(jpeg, "deep.jpg");
    ASSERT_EQ(back.width, 64);
    ASSERT_EQ(back.height, 48);
    ASSERT_EQ(back.channels, channels < 3 ? 1 : 3);
    const auto [mean, worst] = difference(back, from_rgba(to_rgba(narrowed), back.channels));
    EXPECT_LT(mean, 3.0);
    EXPECT_LT(worst, 48);
  }
}

// save_image of an Image16: 16 bits in a PNG, 8 in a JPEG; nothing else left behind.
TEST_F(ImageIo, SaveSixteenBitImage) {
  const Image16 image = random_image<std::uint16_t>(19, 11, 4, 3);
  write_bytes(path("deep.png"), Bytes{'o', 'l', 'd'});
  save_image(image, path("deep.png"));
  save_image(image, path("deep.jpg"), 90);
  EXPECT_EQ(entries(dir_), (std::set<std::string>{"deep.png", "deep.jpg"}));
  EXPECT_EQ(load_image_wide(path("deep.png")).wide.pixels, image.pixels);
  EXPECT_EQ(read_bytes(path("deep.jpg")), encode_image(narrow(image), ImageFormat::jpeg, 90));
  EXPECT_THROW(save_image(image, path("deep.gif")), UsageError);
  EXPECT_EQ(in_flight_temp_files(), 0);
}

TEST_F(ImageIo, MaxPixelsIsEnforcedFromTheHeader) {
  const Bytes png = read_bytes(kSamples + "coffee_600x400.png");
  EXPECT_NO_THROW(decode_image(png, "coffee.png", nullptr, 600 * 400));
  const std::string message =
      error_of([&] { decode_image(png, "coffee.png", nullptr, 600 * 400 - 1); });
  EXPECT_NE(message.find("coffee.png"), std::string::npos) << message;
  EXPECT_NE(message.find("600x400"), std::string::npos) << message;
  EXPECT_NE(message.find("239999"), std::string::npos) << message;
}

TEST_F(ImageIo, MaxFileBytesIsEnforcedBeforeReading) {
  const std::string file = kSamples + "coffee_600x400.png";
  const std::uint64_t size = fs::file_size(file);
  EXPECT_NO_THROW(load_image(file, nullptr, kDefaultMaxPixels, size));
  const std::string message =
      error_of([&] { load_image(file, nullptr, kDefaultMaxPixels, size - 1); });
  EXPECT_NE(message.find(file), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(size) + " bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("limit of " + std::to_string(size - 1)), std::string::npos) << message;
}

// A pipe has no size to check first: the limit is held while reading.
TEST_F(ImageIo, MaxFileBytesHoldsForPipes) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::string data(5000, 'x');  // a PNG signature, or read_all refuses it on its first bytes
  data.replace(0, 8, "\x89PNG\r\n\x1a\n");
  ASSERT_EQ(::write(fds[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ::close(fds[1]);
  const std::string message = error_of([&] { read_all(fds[0], "<stdin>", 4096); });
  ::close(fds[0]);
  EXPECT_NE(message.find("<stdin>: file is longer, more than the limit of 4096 bytes"),
            std::string::npos)
      << message;
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ::close(fds[1]);
  EXPECT_EQ(read_all(fds[0], "<stdin>", 5000).size(), 5000u);
  ::close(fds[0]);
}

// A stream that is no image is refused on its first bytes, not read to --max-file-size (1 GiB).
TEST_F(ImageIo, NonImageStreamIsRefusedOnItsFirstBytes) {
  EXPECT_EQ(error_of([&] { load_image("/dev/zero"); }),
            "/dev/zero: not a PNG, JPEG, TIFF or WebP image (unrecognised signature bytes)");
  auto piped = [](const std::string& data) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    EXPECT_EQ(::write(fds[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
    ::close(fds[1]);
    return fds[0];
  };
  int fd = piped(std::string(100, 'x'));
  EXPECT_EQ(error_of([&] { read_all(fd, "<stdin>"); }),
            "<stdin>: not a PNG, JPEG, TIFF or WebP image (unrecognised signature bytes)");
  ::close(fd);
  fd = piped("abc");  // too short to judge: decode_image says what is wrong
  EXPECT_EQ(read_all(fd, "<stdin>").size(), 3u);
  ::close(fd);
  fd = piped("\x89PNG\r\n\x1a\n and the rest");
  EXPECT_EQ(read_all(fd, "<stdin>").size(), 21u);
  ::close(fd);
}

// Inputs that once crashed a fuzzer (tests/fuzz/regressions/fuzz_image/, kept by scripts/fuzz)
// decode or are refused with blurtool::Error; under -DBLURTOOL_SANITIZE=ON any memory error in
// them fails the run.
TEST_F(ImageIo, KeptFuzzInputsAreDecodedOrRefused) {
  const fs::path dir =
      fs::path(BLURTOOL_SOURCE_DIR) / "tests" / "fuzz" / "regressions" / "fuzz_image";
  if (!fs::exists(dir)) GTEST_SKIP() << "no kept fuzz inputs";
  int count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    SCOPED_TRACE(entry.path().string());
    const Bytes bytes = read_bytes(entry.path().string());
    try {
      const Image image = decode_image(bytes, entry.path().string(), nullptr, 1u << 22);
      EXPECT_GT(image.width, 0);
    } catch (const Error&) {
    }
    ++count;
  }
  EXPECT_GT(count, 0);
}

TEST_F(ImageIo, SaveWritesOnlyTheOutput) {
  const Image image = random_image(31, 17, 4, 7);
  write_bytes(path("out.png"), Bytes{'o', 'l', 'd'});  // replaced, not appended to
  save_image(image, path("out.png"));
  save_image(smooth_image(20, 10, 3), path("out.JPG"), 80);
  EXPECT_EQ(entries(dir_), (std::set<std::string>{"out.png", "out.JPG"}));
  EXPECT_EQ(load_image(path("out.png")).pixels, image.pixels);
  EXPECT_EQ(load_image(path("out.JPG")).width, 20);
  EXPECT_EQ(fs::status(path("out.png")).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
}

TEST_F(ImageIo, SaveIntoMissingDirectoryThrowsAndLeavesNothing) {
  const std::string file = path("missing/out.png");
  const std::string message = error_of([&] { save_image(random_image(4, 4, 3, 1), file); });
  EXPECT_NE(message.find(file), std::string::npos) << message;
  EXPECT_NE(message.find(std::strerror(ENOENT)), std::string::npos) << message;
  EXPECT_TRUE(entries(dir_).empty());
}

TEST_F(ImageIo, SaveOverADirectoryThrowsAndLeavesNoTemporaryFile) {
  fs::create_directory(path("out.png"));
  const std::string message =
      error_of([&] { save_image(random_image(4, 4, 3, 1), path("out.png")); });
  EXPECT_NE(message.find(path("out.png")), std::string::npos) << message;
  EXPECT_EQ(entries(dir_), std::set<std::string>{"out.png"});
}

TEST_F(ImageIo, SaveIntoUnwritableDirectoryThrows) {
  if (::geteuid() == 0) GTEST_SKIP() << "root can write into a read-only directory";
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string message =
      error_of([&] { save_image(random_image(4, 4, 3, 1), path("out.png")); });
  EXPECT_NE(message.find(path("out.png")), std::string::npos) << message;
  EXPECT_NE(message.find(std::strerror(EACCES)), std::string::npos) << message;
  fs::permissions(dir_, fs::perms::owner_all);
  EXPECT_TRUE(entries(dir_).empty());
}

TEST_F(ImageIo, SaveWithUnknownExtensionWritesNothing) {
  EXPECT_THROW(save_image(random_image(4, 4, 3, 1), path("out.gif")), UsageError);
  EXPECT_TRUE(entries(dir_).empty());
}

// Every temporary file is registered for the signal handlers only while it exists.
TEST_F(ImageIo, ConcurrentSavesLeaveNothingRegisteredOrBehind) {
  std::set<std::string> expected;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    for (int i = 0; i < 20; ++i) expected.insert("t" + std::to_string(t) + "_" + std::to_string(i));
    threads.emplace_back([this, t] {
      for (int i = 0; i < 20; ++i) {
        const Bytes bytes(1000 + i, static_cast<std::uint8_t>(t));
        write_file_atomic(path("t" + std::to_string(t) + "_" + std::to_string(i)), bytes);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(in_flight_temp_files(), 0);
  EXPECT_EQ(entries(dir_), expected);
  EXPECT_EQ(read_bytes(path("t3_7")), Bytes(1007, 3));

  fs::create_directory(path("dir.png"));  // a failed save releases its slot too
  EXPECT_THROW(save_image(random_image(4, 4, 3, 1), path("dir.png")), Error);
  EXPECT_EQ(in_flight_temp_files(), 0);
}

// Writes 1 MiB to `path` in a process that may write only 4 KiB (RLIMIT_FSIZE): the write
// raises SIGXFSZ, whose handler sends SIGTERM to the process in the middle of write_file_atomic.
void write_until_killed(const std::string& path) {
  install_cleanup_handlers();
  ::signal(
      SIGXFSZ, +[](int) { ::raise(SIGTERM); });
  const rlimit limit = {4096, 4096};
  ::setrlimit(RLIMIT_FSIZE, &limit);
  write_file_atomic(path, Bytes(1 << 20, 7));
  std::_Exit(0);  // not reached
}

// The cleanup handler unlinks the temporary file, then re-raises SIGTERM with its default action.
TEST_F(ImageIo, SignalMidWriteRemovesTheTemporaryFile) {
  EXPECT_EXIT(write_until_killed(path("big.png")), ::testing::KilledBySignal(SIGTERM), "");
  EXPECT_TRUE(entries(dir_).empty());
}

TEST(OutputFormat, ByExtension) {
  EXPECT_EQ(output_format_for("a.png"), ImageFormat::png);
  EXPECT_EQ(output_format_for("dir/A.PNG"), ImageFormat::png);
  EXPECT_EQ(output_format_for("b.jpg"), ImageFormat::jpeg);
  EXPECT_EQ(output_format_for("c.JPEG"), ImageFormat::jpeg);
  EXPECT_EQ(output_format_for("/x.y/d.Jpg"), ImageFormat::jpeg);
  for (const char* bad : {"e.gif", "noext", "f.png.txt", "g.jpe", "dir.png/file", "h.png/"}) {
    SCOPED_TRACE(bad);
    const std::string message = error_of<UsageError>([&] { output_format_for(bad); });
    EXPECT_NE(message.find(bad), std::string::npos) << message;
    EXPECT_NE(message.find(".png, .jpg, .jpeg, .tif, .tiff or .webp"), std::string::npos) << message;
  }
}

TEST(Encode, ChecksItsArguments) {
  const Image image = random_image(5, 3, 3, 2);
  EncodeOptions options;
  for (int level : {-1, 10}) {
    options.png_level = level;
    const std::string message =
        error_of<UsageError>([&] { encode_image(image, ImageFormat::png, options); });
    EXPECT_NE(message.find("PNG level " + std::to_string(level)), std::string::npos) << message;
    EXPECT_NO_THROW(encode_image(image, ImageFormat::jpeg, options));  // JPEG ignores it
  }
  options = EncodeOptions{};
  options.jpeg_quality = 0;
  EXPECT_THROW(encode_image(image, ImageFormat::jpeg, options), UsageError);
  EXPECT_NO_THROW(encode_image(image, ImageFormat::png, options));  // PNG ignores it
  const Image rgba = to_rgba(image);
  for (int channels : {0, 5})
    EXPECT_THROW(encode_rgba(rgba, channels, ImageFormat::png, EncodeOptions{}), Error);
  EXPECT_THROW(encode_rgba(image, 3, ImageFormat::jpeg, EncodeOptions{}), Error);  // not RGBA
  Image short_rgba = rgba;
  short_rgba.pixels.pop_back();
  EXPECT_THROW(encode_rgba(short_rgba, 3, ImageFormat::png, EncodeOptions{}), Error);
  EXPECT_THROW(encode_image(image, ImageFormat::jpeg, 0), UsageError);
  EXPECT_THROW(encode_image(image, ImageFormat::jpeg, 101), UsageError);
  EXPECT_NO_THROW(encode_image(image, ImageFormat::jpeg, 1));
  EXPECT_NO_THROW(encode_image(image, ImageFormat::jpeg, 100));
  Image short_buffer = image;
  short_buffer.pixels.pop_back();
  EXPECT_THROW(encode_image(short_buffer, ImageFormat::png, 95), Error);
  Image no_channels = image;
  no_channels.channels = 0;
  EXPECT_THROW(encode_image(no_channels, ImageFormat::png, 95), Error);
  Image16 wide = widen(image);  // the same checks at 16 bits
  EXPECT_THROW(encode_image(wide, ImageFormat::jpeg, 0), UsageError);
  EXPECT_THROW(encode_image(wide, ImageFormat::jpeg, 101), UsageError);
  EXPECT_NO_THROW(encode_image(wide, ImageFormat::jpeg, 100));
  wide.pixels.pop_back();
  EXPECT_THROW(encode_image(wide, ImageFormat::png, 95), Error);
}

// encode_rgba writes what encode_image writes for the image from_rgba would make: the same
// bytes, PNG and JPEG (every subsampling), 8 and 16 bits, 1-4 channels, on a photo (grey and
// grey + alpha from its red channel, as to_rgba expands them: R = G = B).
TEST_F(ImageIo, EncodeRgbaWritesWhatEncodingTheReducedImageWrites) {
  const Image photo = load_image(kSamples + "coffee_600x400.png");
  const Image photo_rgba = to_rgba(photo);
  Image alpha = random_image(photo.width, photo.height, 1, 9);
  for (int channels = 1; channels <= 4; ++channels) {
    // The photo with `channels`: grey from R, alpha random.
    Image image = from_rgba(photo_rgba, channels == 2 ? 1 : channels);
    if (channels == 2) {
      Image ga = from_rgba(photo_rgba, 2);
      for (std::size_t i = 0; i < alpha.pixels.size(); ++i) {
        ga.pixels[2 * i] = image.pixels[i];
        ga.pixels[2 * i + 1] = alpha.pixels[i];
      }
      image = ga;
    }
    const Image rgba = to_rgba(image);
    for (ChromaSubsampling subsampling :
         {ChromaSubsampling::s444, ChromaSubsampling::s422, ChromaSubsampling::s420}) {
      SCOPED_TRACE(std::to_string(channels) + " channels, subsampling " +
                   name_of(chroma_subsampling_table(), subsampling));
      EncodeOptions options;
      options.jpeg_subsampling = subsampling;
      EXPECT_EQ(encode_rgba(rgba, channels, ImageFormat::jpeg, options),
                encode_image(image, ImageFormat::jpeg, options));
      EXPECT_EQ(encode_rgba(widen(rgba), channels, ImageFormat::jpeg, options),
                encode_image(image, ImageFormat::jpeg, options));
    }
    SCOPED_TRACE(std::to_string(channels) + " channels");
    EXPECT_EQ(encode_rgba(rgba, channels, ImageFormat::png, EncodeOptions{}),
              encode_image(image, ImageFormat::png, EncodeOptions{}));
    const Image16 deep = random_image<std::uint16_t>(53, 29, channels, 77 + channels);
    EXPECT_EQ(encode_rgba(to_rgba(deep), channels, ImageFormat::png, EncodeOptions{}),
              encode_image(deep, ImageFormat::png, EncodeOptions{}));
  }
}

}  // namespace
}  // namespace blurtool
