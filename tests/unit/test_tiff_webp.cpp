// TIFF and WebP through image_io's front door and their codecs (image/tiff_codec.h,
// image/webp_codec.h): every TIFF variant read round-trips exactly (8 and 16 bits, grey to RGBA,
// strips and tiles, each compression, separate planes, big-endian); the variants not read are
// refused by name before any pixel is decoded; truncated files are refused as such; WebP lossless
// is exact, lossy close, alpha kept; the metadata tags and chunks round-trip. Files that
// blurtool's encoders do not make are written here with libtiff itself.
#include <gtest/gtest.h>
#include <tiffio.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "image/image_io.h"
#include "image/tiff_codec.h"
#include "image/webp_codec.h"
#include "tests/support/image_io_support.h"
#include "tests/support/test_support.h"

namespace blurtool {
namespace {

// A TIFF written by libtiff with the tags `set` gives, `bits` per sample and `spp` samples, and
// each strip of `rows` x `width` samples filled from `samples` (as many bytes as the strip
// takes; libtiff may swap their bytes in place, so each strip gets a copy); its bytes.
Bytes libtiff_file(int width, int height, int bits, int spp, const std::function<void(TIFF*)>& set,
                   const Bytes& samples, const char* mode = "w") {
  const std::string path =
      ::testing::TempDir() + "blurtool_test_" + std::to_string(::getpid()) + ".tif";
  TIFF* t = TIFFOpen(path.c_str(), mode);
  EXPECT_NE(t, nullptr);
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, width);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, height);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, bits);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, spp);
  TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, height);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  set(t);
  for (tstrip_t s = 0; s < TIFFNumberOfStrips(t); ++s) {
    Bytes strip = samples;
    TIFFWriteEncodedStrip(t, s, strip.data(), TIFFStripSize(t));
  }
  TIFFClose(t);
  const std::string bytes = read_file(path);
  std::filesystem::remove(path);
  return Bytes(bytes.begin(), bytes.end());
}

template <typename T>
void expect_same(const BasicImage<T>& got, const BasicImage<T>& want, const std::string& what) {
  ASSERT_EQ(got.width, want.width) << what;
  ASSERT_EQ(got.height, want.height) << what;
  ASSERT_EQ(got.channels, want.channels) << what;
  EXPECT_TRUE(got.pixels == want.pixels) << what;
}

TEST(Tiff, EveryVariantWrittenReadsBackExactly) {
  // 300x260 crosses 256x256 tiles and several strips, with partial ones at the edges.
  for (const bool tiled : {false, true})
    for (const TiffCompression c :
         {TiffCompression::none, TiffCompression::lzw, TiffCompression::deflate})
      for (int channels = 1; channels <= 4; ++channels) {
        EncodeOptions e;
        e.tiff_compression = c;
        e.tiff_tiled = tiled;
        const std::string what = "tiled " + std::to_string(tiled) + " compression " +
                                 std::to_string(static_cast<int>(c)) + " channels " +
                                 std::to_string(channels);
        const Image image8 = random_image<std::uint8_t>(300, 260, channels, 7 + channels);
        const Bytes b8 = encode_image(image8, ImageFormat::tiff, e);
        const DecodedImage d8 = decode_image_wide(b8, "t.tif");
        EXPECT_FALSE(d8.is_wide()) << what;
        expect_same(d8.narrow, image8, what + " 8-bit");
        const Image16 image16 = random_image<std::uint16_t>(300, 260, channels, 17 + channels);
        const Bytes b16 = encode_image(image16, ImageFormat::tiff, e);
        const DecodedImage d16 = decode_image_wide(b16, "t.tif");
        EXPECT_TRUE(d16.is_wide()) << what;
        expect_same(d16.wide, image16, what + " 16-bit");
        const ImageHeader h = read_image_header(b16, "t.tif");
        EXPECT_EQ(h.width, 300);
        EXPECT_EQ(h.height, 260);
        EXPECT_EQ(h.channels, channels);
        EXPECT_TRUE(h.sixteen_bit);
      }
}

TEST(Tiff, SixteenBitsReducedToHighBytesByTheNarrowReaderWithAWarning) {
  const Image16 image16 = random_image<std::uint16_t>(9, 7, 3, 3);
  const Bytes b = encode_image(image16, ImageFormat::tiff, EncodeOptions{});
  std::vector<std::string> warnings;
  const Image got = decode_image(b, "d.tif", &warnings);
  ASSERT_EQ(got.pixels.size(), image16.pixels.size());
  for (std::size_t i = 0; i < got.pixels.size(); ++i)
    ASSERT_EQ(got.pixels[i], image16.pixels[i] >> 8) << i;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "d.tif: 16-bit TIFF read as 8-bit");
}

TEST(Tiff, ExpandedToRgbaAsToRgbaWould) {
  const Image grey = random_image<std::uint8_t>(13, 5, 2, 4);
  const Bytes b = encode_image(grey, ImageFormat::tiff, EncodeOptions{});
  const DecodedImage d = decode_image_wide(b, "g.tif", nullptr, kDefaultMaxPixels, true, true);
  EXPECT_EQ(d.stored_channels, 2);
  expect_same(d.narrow, to_rgba(grey), "grey + alpha to RGBA");
}

TEST(Tiff, SeparatePlanesBigEndianAndAssociatedAlphaAreRead) {
  const int w = 11, h = 6;
  // RGB in separate planes: the strip of plane p holds the plane's samples, 16 bits each.
  Bytes planes(static_cast<std::size_t>(w) * h * 2);
  for (std::size_t i = 0; i < planes.size(); ++i) planes[i] = static_cast<std::uint8_t>(i * 7);
  const Bytes file = libtiff_file(
      w, h, 16, 3,
      [](TIFF* t) {
        TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
        TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_SEPARATE);
        TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_LZW);
      },
      planes, "wb");  // big-endian
  ASSERT_EQ(file[0], 'M');
  const DecodedImage d = decode_image_wide(file, "p.tif");
  ASSERT_TRUE(d.is_wide());
  ASSERT_EQ(d.wide.channels, 3);
  const std::uint16_t* native = reinterpret_cast<const std::uint16_t*>(planes.data());
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < w * h; ++p)
      ASSERT_EQ(d.wide.pixels[p * 3 + c], native[p]) << "plane " << c << " pixel " << p;

  // Grey + associated alpha: 100 premultiplied by alpha 128 is 200 straight.
  const Bytes pre = libtiff_file(
      1, 1, 8, 2,
      [](TIFF* t) {
        TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
        const std::uint16_t extra[] = {EXTRASAMPLE_ASSOCALPHA};
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, extra);
      },
      Bytes{100, 128});
  const Image got = decode_image(pre, "a.tif");
  ASSERT_EQ(got.channels, 2);
  EXPECT_EQ(got.pixels[0], 199);  // 100 * 255 / 128, rounded
  EXPECT_EQ(got.pixels[1], 128);
}

TEST(Tiff, UnsupportedVariantsAreRefusedByNameBeforeDecoding) {
  struct Case {
    int bits, spp;
    std::function<void(TIFF*)> set;
    std::string message;
  };
  const auto photometric = [](int p) {
    return [p](TIFF* t) { TIFFSetField(t, TIFFTAG_PHOTOMETRIC, p); };
  };
  const std::vector<Case> cases = {
      {8, 3,
       [](TIFF* t) {
         TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
         TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_PACKBITS);
       },
       "v.tif: TIFF with PackBits compression is not supported (none, LZW and deflate are)"},
      {32, 1,
       [](TIFF* t) {
         TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
         TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP);
       },
       "v.tif: TIFF with 32-bit float samples is not supported"},
      {8, 1,
       [](TIFF* t) {
         static std::uint16_t map[256] = {};
         TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_PALETTE);
         TIFFSetField(t, TIFFTAG_COLORMAP, map, map, map);
       },
       "v.tif: TIFF with a palette is not supported"},
      {8, 4, photometric(PHOTOMETRIC_SEPARATED),
       "v.tif: TIFF with CMYK (separated) colour is not supported"},
      {8, 1, photometric(PHOTOMETRIC_MINISWHITE),
       "v.tif: TIFF with min-is-white grey is not supported"},
      {4, 1, photometric(PHOTOMETRIC_MINISBLACK), "v.tif: TIFF with 4-bit samples"},
      {8, 1,
       [](TIFF* t) {
         TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
         TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_INT);
       },
       "v.tif: TIFF with signed integer samples is not supported"},
      {8, 3, photometric(PHOTOMETRIC_MINISBLACK), "v.tif: TIFF with 3 samples a pixel"},
  };
  for (const Case& c : cases) {
    const Bytes file = libtiff_file(4, 3, c.bits, c.spp, c.set, Bytes(4 * 3 * 4 * 4, 0));
    EXPECT_EQ(error_of([&] { read_image_header(file, "v.tif"); }).rfind(c.message, 0), 0u)
        << c.message;
    EXPECT_EQ(error_of([&] { decode_image_wide(file, "v.tif"); }).rfind(c.message, 0), 0u)
        << c.message;
  }
  // JPEG compression: the tag is refused whatever the data.
  Bytes jpeg = libtiff_file(
      4, 3, 8, 3,
      [](TIFF* t) {
        TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
        TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_JPEG);
      },
      Bytes(4 * 3 * 3, 0));
  EXPECT_EQ(error_of([&] { decode_image(jpeg, "j.tif"); }),
            "j.tif: TIFF with JPEG compression is not supported (none, LZW and deflate are)");
}

TEST(Tiff, TruncatedCorruptAndOversizedFilesAreRefused) {
  EXPECT_EQ(error_of([&] {
              decode_image(Bytes{'I', 'I', 42}, "s.tif");
            }),
            "s.tif: truncated TIFF (the file ends at byte 3, inside its signature)");
  EXPECT_EQ(error_of([&] {
              decode_image(Bytes{'M', 'M', 0, 42, 0, 0}, "h.tif");
            }).rfind("h.tif: corrupt TIFF (libtiff: ", 0),
            0u);
  // A file whose directory comes first and whose strip is cut short.
  const Image image = random_image<std::uint8_t>(64, 64, 3, 9);
  Bytes strip(image.pixels.begin(), image.pixels.end());
  Bytes file = libtiff_file(
      64, 64, 8, 3, [](TIFF* t) { TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB); }, strip);
  expect_same(decode_image(file, "c.tif"), image, "whole");
  // Cut in half: libtiff writes the directory last, so it is gone.
  const Bytes half(file.begin(), file.begin() + file.size() / 2);
  EXPECT_EQ(
      error_of([&] { decode_image(half, "c.tif"); }).rfind("c.tif: corrupt TIFF (libtiff: ", 0),
      0u);
  // The strip's offset moved to 100 bytes before the end: its data runs past the file's end.
  Bytes cut = file;
  std::uint32_t ifd;
  std::memcpy(&ifd, &cut[4], 4);
  std::uint16_t entries;
  std::memcpy(&entries, &cut[ifd], 2);
  bool moved = false;
  for (int e = 0; e < entries; ++e) {
    std::uint8_t* entry = &cut[ifd + 2 + 12 * e];
    if (entry[0] == 0x11 && entry[1] == 0x01) {  // StripOffsets (273), one value
      const std::uint32_t offset = static_cast<std::uint32_t>(cut.size() - 100);
      std::memcpy(entry + 8, &offset, 4);
      moved = true;
    }
  }
  ASSERT_TRUE(moved);
  const std::string message = error_of([&] { decode_image(cut, "c.tif"); });
  EXPECT_EQ(message.rfind("c.tif: truncated or corrupt TIFF (strip 0: libtiff: ", 0), 0u)
      << message;
  // Larger than max_pixels: refused from the header.
  EXPECT_NE(error_of([&] {
              read_image_header(file, "c.tif", 4095);
            }).find("c.tif: image is 64x64 = 4096 pixels, more than the limit of 4095"),
            std::string::npos);
}

TEST(Tiff, ThreadsDecodingDamagedFilesEachGetTheirOwnFilesMessage) {
  // libtiff's messages go to each open file's handler: a batch's decoding threads must not see
  // one another's. Half the threads read a file whose directory is cut off, half one whose strip
  // does not inflate; each message names its own file and its own damage.
  const Image image = random_image<std::uint8_t>(64, 64, 3, 5);
  const Bytes good = encode_image(image, ImageFormat::tiff, EncodeOptions{});
  const Bytes no_directory(good.begin(), good.begin() + good.size() / 2);
  Bytes bad_strip = good;
  for (std::size_t i = 8; i < 400; ++i) bad_strip[i] ^= 0x5A;  // the deflate stream, first
  std::vector<std::string> messages(16);
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        messages[t] = error_of([&] {
          decode_image(t % 2 ? bad_strip : no_directory, "f" + std::to_string(t) + ".tif");
        });
    });
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 16; ++t) {
    const std::string name = "f" + std::to_string(t) + ".tif: ";
    EXPECT_EQ(messages[t].rfind(name + (t % 2 ? "truncated or corrupt TIFF (strip 0: libtiff: "
                                              : "corrupt TIFF (libtiff: "),
                                0),
              0u)
        << messages[t];
    // libtiff's own words, for this file's damage.
    EXPECT_NE(messages[t].find(t % 2 ? "ZIPDecode" : "TIFFFetchDirectory"), std::string::npos)
        << messages[t];
  }
}

TEST(Tiff, MetadataTagsRoundTrip) {
  ImageMetadata m;
  m.icc = Bytes(300, 0);
  for (std::size_t i = 0; i < m.icc.size(); ++i) m.icc[i] = static_cast<std::uint8_t>(i);
  m.xmp = "<x:xmpmeta xmlns:x='adobe:ns:meta/'>blurred</x:xmpmeta>";
  m.resolution = Resolution{Resolution::Unit::centimetre, 118, 59};
  const Image image = random_image<std::uint8_t>(5, 4, 3, 1);
  const Bytes b = encode_tiff(image, 3, EncodeOptions{}, m);
  const ImageMetadata got = read_tiff_metadata(b, "m.tif");
  EXPECT_EQ(got.icc, m.icc);
  EXPECT_EQ(got.xmp, m.xmp);
  ASSERT_TRUE(got.resolution);
  EXPECT_EQ(got.resolution->unit, Resolution::Unit::centimetre);
  EXPECT_FLOAT_EQ(static_cast<float>(got.resolution->x), 118.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(got.resolution->y), 59.0f);
  expect_same(decode_image(b, "m.tif"), image, "pixels with metadata");
  // None written, none read; a damaged file gives a warning, not an exception.
  EXPECT_TRUE(read_tiff_metadata(encode_tiff(image, 3, EncodeOptions{}), "n.tif").empty());
  std::vector<std::string> warnings;
  EXPECT_TRUE(read_tiff_metadata(Bytes{'I', 'I', 42, 0, 9, 9}, "d.tif", &warnings).empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("d.tif: TIFF metadata left out (libtiff: ", 0), 0u) << warnings[0];
}

// A TiffStripWriter's file into memory, taking the image's RGBA rows in uneven pieces (1 row,
// 7, then the rest): the bytes encode_tiff writes from the whole image, for strips and tiles
// (which buffer 256 rows), 8 and 16 bits, each channel count kept from RGBA, metadata included.
TEST(Tiff, StripWriterTakingRowsInPiecesWritesEncodeTiffsBytes) {
  ImageMetadata m;
  m.icc = Bytes(200, 7);
  m.xmp = "<x:xmpmeta xmlns:x='adobe:ns:meta/'>rows</x:xmpmeta>";
  m.resolution = Resolution{Resolution::Unit::inch, 300, 300};
  m.orientation = 6;
  for (const bool tiled : {false, true})
    for (int channels = 1; channels <= 4; ++channels)
      for (const int depth : {8, 16}) {
        const std::string what = "tiled " + std::to_string(tiled) + " channels " +
                                 std::to_string(channels) + " depth " + std::to_string(depth);
        EncodeOptions e;
        e.tiff_tiled = tiled;
        const Image rgba8 = random_image<std::uint8_t>(300, 600, 4, channels);
        const Image16 rgba16 = random_image<std::uint16_t>(300, 600, 4, channels);
        const Bytes whole =
            depth == 8 ? encode_tiff(rgba8, channels, e, m) : encode_tiff(rgba16, channels, e, m);
        Bytes file;
        std::size_t writes = 0;
        TiffStripWriter writer(300, 600, channels, depth, e, m,
                               [&](std::uint64_t offset, const std::uint8_t* data, std::size_t n) {
                                 ++writes;
                                 if (offset + n > file.size()) file.resize(offset + n);
                                 std::memcpy(file.data() + offset, data, n);
                               });
        const auto* rows = depth == 8 ? static_cast<const void*>(rgba8.pixels.data())
                                      : static_cast<const void*>(rgba16.pixels.data());
        const std::size_t row = 300 * 4 * depth / 8;
        const auto at = [&](int y) { return static_cast<const std::uint8_t*>(rows) + y * row; };
        writer.write(at(0), 4, 1);
        writer.write(at(1), 4, 7);
        EXPECT_LT(file.size(), whole.size() / 2) << what;  // written as it goes, not at the end
        writer.write(at(8), 4, 592);
        EXPECT_GT(writes, 3u) << what;
        EXPECT_TRUE(file == whole) << what;
        EXPECT_THROW(writer.write(at(0), 4, 1), Error) << what;  // past the last row
        EXPECT_EQ(read_tiff_metadata(file, "w.tif").orientation, 6) << what;
      }
}

// An output that fails (a full disk) fails the write that reached it with the output's own
// error, through libtiff; a writer left unfinished writes nothing more when destroyed.
TEST(Tiff, StripWriterPassesItsOutputsErrorOn) {
  const Image rgba = random_image<std::uint8_t>(500, 400, 4, 3);
  std::size_t written = 0, after_failure = 0;
  bool failed = false;
  {
    EncodeOptions e;
    e.tiff_compression = TiffCompression::none;
    TiffStripWriter writer(500, 400, 3, 8, e, ImageMetadata{},
                           [&](std::uint64_t, const std::uint8_t*, std::size_t n) {
                             if (failed) ++after_failure;
                             if (written + n > 100000) {
                               failed = true;
                               throw Error("out.tif: cannot write: No space left on device");
                             }
                             written += n;
                           });
    try {
      writer.write(rgba.pixels.data(), 4, 400);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "out.tif: cannot write: No space left on device");
    }
  }
  EXPECT_TRUE(failed);
  EXPECT_EQ(after_failure, 0u);  // none after the failing one, none at destruction
  // Unfinished without a failure: destroyed quietly, nothing written after the rows.
  std::size_t writes = 0;
  {
    TiffStripWriter writer(50, 40, 1, 16, EncodeOptions{}, ImageMetadata{},
                           [&](std::uint64_t, const std::uint8_t*, std::size_t) { ++writes; });
    const Image16 grey = random_image<std::uint16_t>(50, 40, 1, 4);
    writer.write(grey.pixels.data(), 1, 10);
    EXPECT_THROW(writer.write(grey.pixels.data(), 5, 1), Error);  // 5 samples a pixel
  }
  EXPECT_EQ(writes, 1u);  // the header only: one strip holds all 40 rows
}

// A smooth image (lossy codecs keep it close), 8 bits, `channels` samples.
Image smooth_image(int w, int h, int channels) {
  Image image{w, h, channels,
              PixelVector<std::uint8_t>(static_cast<std::size_t>(w) * h * channels)};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c)
        image.pixels[image.index(x, y, c)] =
            static_cast<std::uint8_t>(128 + 100 * std::sin(0.05 * (x + 2 * y) + c));
  return image;
}

TEST(Webp, LosslessIsExactWithAndWithoutAlpha) {
  EncodeOptions e;
  e.webp_lossless = true;
  for (int channels = 1; channels <= 4; ++channels) {
    const Image image = random_image<std::uint8_t>(41, 23, channels, 5 + channels);
    const Bytes b = encode_image(image, ImageFormat::webp, e);
    EXPECT_EQ(std::string(b.begin() + 8, b.begin() + 12), "WEBP");
    const DecodedImage d = decode_image_wide(b, "l.webp");
    // WebP holds RGB or RGBA: grey comes back as R=G=B.
    const int stored = channels == 2 || channels == 4 ? 4 : 3;
    ASSERT_EQ(d.narrow.channels, stored);
    const Image want = channels >= 3 ? image : from_rgba(to_rgba(image), stored);
    expect_same(d.narrow, want, "channels " + std::to_string(channels));
    EXPECT_EQ(read_image_header(b, "l.webp").channels, stored);
  }
}

TEST(Webp, LossyIsCloseAtItsQualityAndKeepsAlphaExactly) {
  const Image image = smooth_image(96, 64, 4);
  std::size_t previous = 0;
  for (const int quality : {50, 95}) {
    EncodeOptions e;
    e.jpeg_quality = quality;
    const Bytes b = encode_image(image, ImageFormat::webp, e);
    EXPECT_GT(b.size(), previous) << "quality " << quality << " made no larger file";
    previous = b.size();
    const Image got = decode_image(b, "q.webp");
    ASSERT_EQ(got.channels, 4);
    double sum = 0;
    for (std::size_t i = 0; i < got.pixels.size(); ++i) {
      if (i % 4 == 3) {
        ASSERT_EQ(got.pixels[i], image.pixels[i]) << "alpha at " << i;
        continue;
      }
      sum += std::abs(int(got.pixels[i]) - int(image.pixels[i]));
    }
    EXPECT_LT(sum / (got.pixels.size() * 3 / 4), quality == 95 ? 2.0 : 4.0) << quality;
  }
  EncodeOptions bad;
  bad.jpeg_quality = 0;
  EXPECT_NE(
      error_of<UsageError>([&] { encode_image(image, ImageFormat::webp, bad); }).find("1..100"),
      std::string::npos);
}

TEST(Webp, TruncatedAnimatedAndOversizedAreRefused) {
  EncodeOptions e;
  e.webp_lossless = true;
  const Bytes b = encode_image(random_image<std::uint8_t>(30, 20, 3, 2), ImageFormat::webp, e);
  const Bytes cut(b.begin(), b.begin() + b.size() / 2);
  EXPECT_EQ(error_of([&] { decode_image(cut, "t.webp"); }),
            "t.webp: truncated WebP (its RIFF header says " + std::to_string(b.size()) +
                " bytes, the file has " + std::to_string(cut.size()) + ")");
  EXPECT_EQ(error_of([&] {
              decode_image(Bytes{'R', 'I', 'F', 'F', 1, 0}, "r.webp");
            }),
            "r.webp: truncated WebP (the file ends at byte 6, inside its RIFF header)");
  // Its VP8L data overwritten: the header still reads, the decode does not.
  Bytes corrupt = b;
  for (std::size_t i = 25; i < corrupt.size(); ++i) corrupt[i] = 0xFF;
  EXPECT_EQ(error_of([&] { decode_image(corrupt, "c.webp"); }).rfind("c.webp: corrupt WebP", 0),
            0u);
  const Image wide = random_image<std::uint8_t>(kMaxWebpSide + 1, 1, 3, 1);
  EXPECT_EQ(error_of([&] { encode_image(wide, ImageFormat::webp, e); }),
            "encode_webp: the image is 16384x1, too large for WebP (at most 16383 pixels a side)");
  // A RIFF file of another kind is no WebP.
  Bytes wav = b;
  std::memcpy(&wav[8], "WAVE", 4);
  EXPECT_NE(error_of([&] { decode_image(wav, "w.webp"); }).find("not a PNG, JPEG, TIFF or WebP"),
            std::string::npos);
}

TEST(Webp, MetadataChunksRoundTrip) {
  ImageMetadata m;
  m.icc = Bytes(200, 7);
  m.exif = {'I', 'I', 42, 0, 8, 0, 0, 0, 0, 0};
  m.xmp = "<x:xmpmeta xmlns:x='adobe:ns:meta/'/>";
  const Image image = random_image<std::uint8_t>(8, 8, 4, 3);
  EncodeOptions e;
  e.webp_lossless = true;
  const Bytes b = encode_webp(image, 4, e, m);
  const ImageMetadata got = read_webp_metadata(b, "m.webp");
  EXPECT_EQ(got.icc, m.icc);
  EXPECT_EQ(got.exif, m.exif);
  EXPECT_EQ(got.xmp, m.xmp);
  expect_same(decode_image(b, "m.webp"), image, "pixels with metadata");
  EXPECT_TRUE(read_webp_metadata(encode_webp(image, 4, e), "n.webp").empty());
}

TEST(Formats, OutputNamesAndMisnamedInputs) {
  EXPECT_EQ(output_format_for("a.TIF"), ImageFormat::tiff);
  EXPECT_EQ(output_format_for("a.tiff"), ImageFormat::tiff);
  EXPECT_EQ(output_format_for("a.WebP"), ImageFormat::webp);
  EXPECT_NE(error_of<UsageError>([] { output_format_for("a.gif"); }).find(".tiff or .webp"),
            std::string::npos);
  const Bytes tiff =
      encode_image(random_image<std::uint8_t>(3, 3, 1, 1), ImageFormat::tiff, EncodeOptions{});
  std::vector<std::string> warnings;
  decode_image(tiff, "x.webp", &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "x.webp: a TIFF image under a WebP name, read as what it is");
}

}  // namespace
}  // namespace blurtool
