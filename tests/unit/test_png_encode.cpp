// The parallel PNG encoder (image/png_encode.h): exact round trips for every layout, depth, filter,
// zlib level and strip layout, checked by zlib, libpng and stb_image too; the same bytes on any
// thread count.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "image/png_encode.h"
#include "tests/support/image_io_support.h"

namespace blurtool {
namespace {

// --- The PNG encoder: strips deflated in parallel, joined into one zlib stream ---

struct Chunk {
  std::string type;
  Bytes data;
};

// The chunks of a PNG, each one's CRC checked with zlib's crc32 (the project's decoders ignore
// CRCs, as stb_image did, so they would not notice a wrong one).
std::vector<Chunk> png_chunks(const Bytes& png) {
  std::vector<Chunk> chunks;
  const Bytes signature = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  EXPECT_TRUE(png.size() >= 8 && Bytes(png.begin(), png.begin() + 8) == signature);
  auto get32 = [&](std::size_t at) {
    return std::uint32_t{png[at]} << 24 | std::uint32_t{png[at + 1]} << 16 |
           std::uint32_t{png[at + 2]} << 8 | png[at + 3];
  };
  std::size_t at = 8;
  while (at + 12 <= png.size()) {
    const std::size_t length = get32(at);
    if (at + 12 + length > png.size()) break;
    Chunk chunk{std::string(png.begin() + at + 4, png.begin() + at + 8),
                Bytes(png.begin() + at + 8, png.begin() + at + 8 + length)};
    const std::uint32_t crc = ::crc32(0, png.data() + at + 4, static_cast<uInt>(4 + length));
    EXPECT_EQ(get32(at + 8 + length), crc) << "CRC of chunk " << chunks.size() << " " << chunk.type;
    chunks.push_back(std::move(chunk));
    at += 12 + length;
  }
  EXPECT_EQ(at, png.size()) << "bytes after the last whole chunk";
  return chunks;
}

// The IDAT chunks' zlib stream inflated by zlib, which checks its header and Adler-32: the
// filtered rows. Fails the test unless it is one complete stream with nothing after it.
Bytes inflate_idat(const std::vector<Chunk>& chunks, std::size_t expected_size) {
  Bytes stream;
  for (const Chunk& c : chunks)
    if (c.type == "IDAT") stream.insert(stream.end(), c.data.begin(), c.data.end());
  Bytes out(expected_size + 1);  // one byte more: a stream holding too much shows
  z_stream z{};
  EXPECT_EQ(inflateInit(&z), Z_OK);
  z.next_in = stream.data();
  z.avail_in = static_cast<uInt>(stream.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  const int status = inflate(&z, Z_FINISH);
  EXPECT_EQ(status, Z_STREAM_END) << (z.msg ? z.msg : "");
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the zlib stream";
  out.resize(out.size() - z.avail_out);
  inflateEnd(&z);
  EXPECT_EQ(out.size(), expected_size);
  return out;
}

// The types of the chunks, in order, with runs of IDAT written once.
std::vector<std::string> chunk_types(const std::vector<Chunk>& chunks) {
  std::vector<std::string> types;
  for (const Chunk& c : chunks)
    if (types.empty() || c.type != "IDAT" || types.back() != "IDAT") types.push_back(c.type);
  return types;
}

std::size_t idat_count(const std::vector<Chunk>& chunks) {
  return std::count_if(chunks.begin(), chunks.end(),
                       [](const Chunk& c) { return c.type == "IDAT"; });
}

// Decodes `png` with libpng (decode_image_wide) at its own depth, as samples of T.
template <typename T>
BasicImage<T> libpng_decode(const Bytes& png) {
  std::vector<std::string> warnings;
  const DecodedImage d = decode_image_wide(png, "mem.png", &warnings);
  EXPECT_TRUE(warnings.empty());
  if constexpr (sizeof(T) == 1) {
    EXPECT_FALSE(d.is_wide());
    return d.narrow;
  } else {
    EXPECT_TRUE(d.is_wide());
    return d.wide;
  }
}

// Every layout, depth and strip layout comes back exactly through libpng and stb_image, and is
// one valid zlib stream (zlib checks it): 1-4 channels, 8 and 16 bits, odd and prime sizes, 1x1,
// 1xN and Nx1, a strip per row on more threads than rows, strips of a few rows, and the default
// (one strip for images this small); from the image itself and from its RGBA expansion (the
// samples from_rgba keeps, without the reduced copy), which give the same bytes.
template <typename T>
void check_png_layouts() {
  struct Strips {
    std::size_t bytes;
    int threads;
  };
  const std::vector<std::pair<int, int>> sizes = {{1, 1},   {1, 29},  {29, 1},
                                                  {37, 23}, {131, 3}, {3, 131}};
  for (auto [w, h] : sizes) {
    for (int channels = 1; channels <= 4; ++channels) {
      const BasicImage<T> image = random_image<T>(w, h, channels, w * 31 + h * 7 + channels);
      const BasicImage<T> rgba = to_rgba(image);
      const std::size_t filtered = h * (1 + std::size_t(w) * channels * sizeof(T));
      Bytes first;
      for (Strips strips : {Strips{0, 0}, Strips{1, 8}, Strips{100, 3}, Strips{1, 1}}) {
        SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + "x" + std::to_string(channels) +
                     " at " + std::to_string(8 * sizeof(T)) + " bits, strips of " +
                     std::to_string(strips.bytes) + " bytes on " + std::to_string(strips.threads) +
                     " threads");
        PngSettings settings;
        settings.level = 6;
        settings.filter = PngFilter::paeth;
        settings.strip_bytes = strips.bytes;
        settings.threads = strips.threads;
        const Bytes png = encode_png(png_pixels(image, channels), settings);
        EXPECT_EQ(encode_png(png_pixels(rgba, channels), settings), png) << "from RGBA";
        const std::vector<Chunk> chunks = png_chunks(png);
        EXPECT_EQ(chunk_types(chunks), (std::vector<std::string>{"IHDR", "IDAT", "IEND"}));
        // A strip per row: an IDAT chunk per row.
        if (strips.bytes == 1) {
          EXPECT_EQ(idat_count(chunks), std::size_t(h));
        }
        inflate_idat(chunks, filtered);
        const BasicImage<T> back = libpng_decode<T>(png);
        EXPECT_EQ(back.width, w);
        EXPECT_EQ(back.height, h);
        EXPECT_EQ(back.channels, channels);
        EXPECT_EQ(back.pixels, image.pixels);
        EXPECT_EQ(stb_decode<T>(png).pixels, image.pixels);
        // The same filtered bytes whatever the strips: only the deflate blocks differ.
        if (first.empty()) first = inflate_idat(chunks, filtered);
        EXPECT_EQ(inflate_idat(chunks, filtered), first);
      }
    }
  }
}

TEST(PngEncoder, RoundTripIsExactForEveryLayoutDepthAndStripping8) {
  check_png_layouts<std::uint8_t>();
}

TEST(PngEncoder, RoundTripIsExactForEveryLayoutDepthAndStripping16) {
  check_png_layouts<std::uint16_t>();
}

// Every filter is exact too (the encoder's own filters against libpng's unfiltering), on a
// photo whose neighbouring pixels are alike, where a wrong predictor would show.
TEST(PngEncoder, EveryFilterRoundTrips) {
  const Image photo = load_image(kSamples + "coffee_600x400.png");
  for (PngFilter filter : {PngFilter::none, PngFilter::sub, PngFilter::up, PngFilter::average,
                           PngFilter::paeth, PngFilter::adaptive}) {
    for (int channels : {3, 4}) {
      SCOPED_TRACE("filter " + std::to_string(static_cast<int>(filter)) + ", " +
                   std::to_string(channels) + " channels");
      const Image image = channels == 3 ? photo : to_rgba(photo);
      PngSettings settings;
      settings.level = 1;
      settings.filter = filter;
      settings.strip_bytes = 50000;  // several strips, a filter reading across their boundary
      const Bytes png = encode_png(png_pixels(image, channels), settings);
      EXPECT_GT(idat_count(png_chunks(png)), 10u);
      EXPECT_EQ(libpng_decode<std::uint8_t>(png).pixels, image.pixels);
      // The filter type bytes: the one asked for on every row, or for adaptive a mix.
      const Bytes rows = inflate_idat(png_chunks(png), image.pixels.size() + image.height);
      std::set<int> types;
      for (int y = 0; y < image.height; ++y)
        types.insert(rows[y * (1 + std::size_t(image.width) * channels)]);
      if (filter == PngFilter::adaptive) {
        EXPECT_GT(types.size(), 1u);
      } else {
        EXPECT_EQ(types, std::set<int>{static_cast<int>(filter)});
      }
    }
  }
}

// A photo of several strips: the same bytes on any number of threads, one zlib stream within
// 1% of one strip's size, decoded exactly.
TEST(PngEncoder, StripsGiveTheSameBytesOnAnyThreadCountAndCostUnderOnePercent) {
  const Image photo = load_image(kSamples + "dune_1680x1050.jpg");  // 5.3 MB: 6 strips
  PngSettings settings;
  settings.level = kDefaultPngLevel;
  settings.threads = 1;
  const Bytes one_thread = encode_png(png_pixels(photo, 3), settings);
  const std::vector<Chunk> chunks = png_chunks(one_thread);
  EXPECT_EQ(idat_count(chunks), 6u);
  inflate_idat(chunks, photo.pixels.size() + photo.height);
  for (int threads : {2, 5, 64}) {
    settings.threads = threads;
    EXPECT_EQ(encode_png(png_pixels(photo, 3), settings), one_thread) << threads << " threads";
  }
  settings.strip_bytes = std::size_t{1} << 30;  // one strip: one deflate stream
  const Bytes one_stream = encode_png(png_pixels(photo, 3), settings);
  EXPECT_EQ(idat_count(png_chunks(one_stream)), 1u);
  EXPECT_LT(double(one_thread.size()), 1.01 * double(one_stream.size()));
  EXPECT_EQ(decode_image(one_thread, "dune.png").pixels, photo.pixels);
}

// Every --png-level round-trips exactly through encode_image: level 0 stores the rows (more
// bytes than the samples), 9 gives less than 1 and 4; each file is one valid zlib stream whose
// header names the level as zlib's deflate would.
TEST_F(ImageIo, PngRoundTripIsExactAtEveryLevel) {
  const Image photo = load_image(kSamples + "coffee_600x400.png");
  const Image16 deep = random_image<std::uint16_t>(41, 17, 4, 5);
  std::vector<std::size_t> sizes;
  for (int level = 0; level <= 9; ++level) {
    SCOPED_TRACE("level " + std::to_string(level));
    EncodeOptions options;
    options.png_level = level;
    const Bytes png = encode_image(photo, ImageFormat::png, options);
    const std::vector<Chunk> chunks = png_chunks(png);
    inflate_idat(chunks, photo.pixels.size() + photo.height);
    const std::uint16_t header = chunks[1].data[0] << 8 | chunks[1].data[1];
    EXPECT_EQ(header, zlib_header(level, level == 1 ? Z_RLE : Z_FILTERED));
    EXPECT_EQ(decode_image(png, "coffee.png").pixels, photo.pixels);
    EXPECT_EQ(
        decode_image_wide(encode_image(deep, ImageFormat::png, options), "deep.png").wide.pixels,
        deep.pixels);
    sizes.push_back(png.size());
  }
  EXPECT_GT(sizes[0], photo.pixels.size());
  EXPECT_LT(sizes[1], photo.pixels.size());
  EXPECT_LT(sizes[9], sizes[1]);
  EXPECT_LT(sizes[9], sizes[4]);
}

// The header bytes are the ones zlib's deflate writes for each level and strategy.
TEST(PngEncoder, ZlibHeaderIsDeflates) {
  for (int level = 0; level <= 9; ++level) {
    for (int strategy : {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_RLE}) {
      z_stream z{};
      ASSERT_EQ(deflateInit2(&z, level, Z_DEFLATED, 15, 8, strategy), Z_OK);
      std::uint8_t in = 0, out[64];
      z.next_in = &in;
      z.avail_in = 1;
      z.next_out = out;
      z.avail_out = sizeof out;
      ASSERT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
      deflateEnd(&z);
      EXPECT_EQ(zlib_header(level, strategy), out[0] << 8 | out[1])
          << "level " << level << " strategy " << strategy;
    }
  }
}

}  // namespace
}  // namespace blurtool
