// JPEG encoding on the host: the chroma subsampling asked for, the same bytes on every thread, and
// restart strips (their layout, DRI and restart markers, one-piece pixels, the same bytes on any
// thread count, and a file in one piece where strips cannot be joined).
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "image/image_io.h"
#include "tests/support/image_io_support.h"
#include "util/error.h"

namespace blurtool {
namespace {

// --subsampling reaches the file: TurboJPEG's header reader reports what was asked for, and
// full-resolution chroma costs bytes; grey images are greyscale JPEGs whatever it says.
TEST_F(ImageIo, JpegSubsamplingIsWhatWasAskedFor) {
  const Image photo = load_image(kSamples + "coffee_600x400.png");
  const std::pair<ChromaSubsampling, int> cases[] = {{ChromaSubsampling::s444, TJSAMP_444},
                                                     {ChromaSubsampling::s422, TJSAMP_422},
                                                     {ChromaSubsampling::s420, TJSAMP_420}};
  tjhandle handle = tjInitDecompress();
  ASSERT_NE(handle, nullptr);
  auto subsampling_of = [&](const Bytes& jpeg) {
    int w = 0, h = 0, subsampling = -1, colorspace = -1;
    EXPECT_EQ(
        tjDecompressHeader3(handle, jpeg.data(), jpeg.size(), &w, &h, &subsampling, &colorspace),
        0);
    return subsampling;
  };
  std::vector<std::size_t> sizes;
  for (auto [subsampling, expected] : cases) {
    EncodeOptions options;
    options.jpeg_subsampling = subsampling;
    const Bytes jpeg = encode_image(photo, ImageFormat::jpeg, options);
    EXPECT_EQ(subsampling_of(jpeg), expected);
    EXPECT_EQ(subsampling_of(encode_rgba(to_rgba(photo), 3, ImageFormat::jpeg, options)), expected);
    EXPECT_EQ(subsampling_of(encode_rgba(to_rgba(photo), 1, ImageFormat::jpeg, options)),
              TJSAMP_GRAY);
    EXPECT_LT(difference(decode_image(jpeg, "coffee.jpg"), photo).first, 3.0);
    sizes.push_back(jpeg.size());
  }
  EXPECT_EQ(subsampling_of(encode_image(photo, ImageFormat::jpeg, EncodeOptions{})), TJSAMP_420);
  tjDestroy(handle);
  EXPECT_GT(sizes[0], sizes[1]);
  EXPECT_GT(sizes[1], sizes[2]);
}

// The compressor kept per thread gives every thread the same bytes, image after image of
// different sizes and kinds.
TEST_F(ImageIo, JpegEncodesAreTheSameOnEveryThread) {
  const Image photo = load_image(kSamples + "coffee_600x400.png");
  const Image small = random_image(17, 9, 3, 4);
  const Image grey = from_rgba(to_rgba(photo), 1);
  const Bytes expected[] = {encode_image(photo, ImageFormat::jpeg, 95),
                            encode_image(small, ImageFormat::jpeg, 90),
                            encode_image(grey, ImageFormat::jpeg, 80)};
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        mismatches += encode_image(photo, ImageFormat::jpeg, 95) != expected[0];
        mismatches += encode_image(small, ImageFormat::jpeg, 90) != expected[1];
        EncodeOptions q80;
        q80.jpeg_quality = 80;
        mismatches += encode_rgba(to_rgba(grey), 1, ImageFormat::jpeg, q80) != expected[2];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// --- JPEG restart strips ---

// `image` cut to its top-left `width` x `height` pixels.
Image crop(const Image& image, int width, int height) {
  Image out;
  out.width = width;
  out.height = height;
  out.channels = image.channels;
  for (int y = 0; y < height; ++y) {
    const auto row = image.pixels.begin() + static_cast<std::ptrdiff_t>(image.index(0, y));
    out.pixels.insert(out.pixels.end(), row, row + std::ptrdiff_t{width} * image.channels);
  }
  return out;
}

// TurboJPEG's decode of `jpeg` (grey or RGB as the file holds), failing the test on any error
// or warning (a misplaced restart marker is a warning to libjpeg).
Image tj_decode(const Bytes& jpeg) {
  Image image;
  tjhandle handle = tjInitDecompress();
  int subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle, jpeg.data(), jpeg.size(), &image.width, &image.height,
                          &subsampling, &colorspace) != 0) {
    ADD_FAILURE() << "TurboJPEG cannot read the header: " << tjGetErrorStr2(handle);
    tjDestroy(handle);
    return image;
  }
  image.channels = colorspace == TJCS_GRAY ? 1 : 3;
  image.pixels.resize(std::size_t(image.width) * image.height * image.channels);
  if (tjDecompress2(handle, jpeg.data(), jpeg.size(), image.pixels.data(), image.width, 0,
                    image.height, image.channels == 1 ? TJPF_GRAY : TJPF_RGB, 0) != 0) {
    ADD_FAILURE() << "TurboJPEG: " << tjGetErrorStr2(handle);
  }
  tjDestroy(handle);
  return image;
}

// The markers of a JPEG file in order (the byte after FF), read as T.81 lays them out: marker
// segments skipped by their length up to SOS, then the entropy-coded data, where FF 00 is a
// stuffed byte and any other FF xx a marker (RSTm, EOI). `dri` gets the restart interval of a
// DRI segment (length 4 required), `height` the SOF0 frame's height.
struct JpegMarkers {
  std::vector<int> markers;
  int dri = -1, height = -1;
  std::size_t count(int marker) const { return std::count(markers.begin(), markers.end(), marker); }
};

JpegMarkers jpeg_markers(const Bytes& b) {
  JpegMarkers m;
  std::size_t pos = 0;
  bool scan = false;
  while (pos + 1 < b.size()) {
    if (b[pos] != 0xFF || (scan && (b[pos + 1] == 0x00 || b[pos + 1] == 0xFF))) {
      if (!scan) {
        ADD_FAILURE() << "no marker at byte " << pos;
        return m;
      }
      pos += b[pos] == 0xFF ? 2 : 1;
      continue;
    }
    const int marker = b[pos + 1];
    m.markers.push_back(marker);
    pos += 2;
    if (marker == 0xD8 || marker == 0xD9 || (marker >= 0xD0 && marker <= 0xD7)) continue;
    const std::size_t length = std::size_t{b[pos]} << 8 | b[pos + 1];
    if (marker == 0xDD) {
      EXPECT_EQ(length, 4u) << "DRI";
      m.dri = b[pos + 2] << 8 | b[pos + 3];
    }
    if (marker == 0xC0) m.height = b[pos + 3] << 8 | b[pos + 4];
    pos += length;
    scan = marker == 0xDA;
  }
  return m;
}

EncodeOptions jpeg_options(ChromaSubsampling subsampling, int strip_rows, int threads = 0) {
  EncodeOptions options;
  options.jpeg_subsampling = subsampling;
  options.jpeg_strip_rows = strip_rows;
  options.threads = threads;
  return options;
}

// A JPEG encoded in strips decodes to exactly the pixels of the one-piece encode, by TurboJPEG
// and by stb_image, for every subsampling and greyscale, on sizes that are neither multiples of
// the MCU nor of the strip height, photo and noise (noise makes many FF bytes to stuff).
TEST_F(ImageIo, JpegStripsDecodeToTheOnePiecePixels) {
  const Image photo = load_image(kSamples + "coffee_600x400.png");
  const std::vector<std::pair<std::string, Image>> images = {
      {"photo 587x397", crop(photo, 587, 397)},
      {"photo 600x400", photo},
      {"noise 133x77", random_image(133, 77, 3, 5)},
      {"one row of MCUs 45x7", crop(photo, 45, 7)}};
  for (const auto& [what, image] : images) {
    for (int grey = 0; grey <= 1; ++grey) {
      const Image input = grey ? from_rgba(to_rgba(image), 1) : image;
      for (ChromaSubsampling subsampling :
           {ChromaSubsampling::s420, ChromaSubsampling::s422, ChromaSubsampling::s444}) {
        if (grey && subsampling != ChromaSubsampling::s420) continue;  // ignored for grey
        for (int strip_rows : {8, 16, 48, 100}) {
          SCOPED_TRACE(what + ", " +
                       (grey ? "grey" : name_of(chroma_subsampling_table(), subsampling)) +
                       ", strips of " + std::to_string(strip_rows) + " rows");
          const Bytes whole = encode_image(input, ImageFormat::jpeg, jpeg_options(subsampling, -1));
          const Bytes strips =
              encode_image(input, ImageFormat::jpeg, jpeg_options(subsampling, strip_rows));
          const JpegStripLayout layout =
              jpeg_strip_layout(input.width, input.height, grey, subsampling, strip_rows);
          const JpegMarkers markers = jpeg_markers(strips);
          EXPECT_EQ(markers.count(0xDD), layout.strips > 1 ? 1u : 0u);
          EXPECT_EQ(jpeg_markers(whole).count(0xDD), 0u);
          if (layout.strips > 1) {
            EXPECT_NE(strips, whole);
          }
          const Image expected = tj_decode(whole);
          ASSERT_EQ(expected.channels, grey ? 1 : 3);
          const Image got = tj_decode(strips);
          EXPECT_EQ(got.width, input.width);
          EXPECT_EQ(got.height, input.height);
          EXPECT_EQ(got.pixels, expected.pixels);
          EXPECT_EQ(stb_decode(strips).pixels, stb_decode(whole).pixels);
          EXPECT_EQ(decode_image(strips, "strips.jpg").pixels, expected.pixels);
        }
      }
    }
  }
}

// The file's markers as T.81 lays out restart intervals: SOI, the first strip's APP0 once, one
// DRI of length 4 holding MCU columns * MCU rows a strip, before SOS; the SOF0 height the whole
// image's; in the scan RST0..RST7 in turn, one between each two strips, then EOI, and nothing
// else. Its size costs under 1% more than one piece.
TEST_F(ImageIo, JpegStripsCarryADriAndTheirRestartMarkersInOrder) {
  const Image image = crop(load_image(kSamples + "coffee_600x400.png"), 587, 397);
  struct Case {
    ChromaSubsampling subsampling;
    bool grey;
    int strip_rows, strips, interval;
  };
  // 587 wide: 37 MCU columns of 16, 74 of 8; 397 high: 25 MCU rows of 16, 50 of 8.
  const Case cases[] = {{ChromaSubsampling::s420, false, 16, 25, 37},
                        {ChromaSubsampling::s420, false, 40, 9, 37 * 3},
                        {ChromaSubsampling::s422, false, 24, 17, 37 * 3},
                        {ChromaSubsampling::s444, false, 8, 50, 74},
                        {ChromaSubsampling::s420, true, 64, 7, 74 * 8}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.grey ? "grey" : name_of(chroma_subsampling_table(), c.subsampling)) +
                 ", strips of " + std::to_string(c.strip_rows) + " rows");
    const JpegStripLayout layout =
        jpeg_strip_layout(image.width, image.height, c.grey, c.subsampling, c.strip_rows);
    EXPECT_EQ(layout.strips, c.strips);
    EXPECT_EQ(layout.restart_interval, c.interval);
    const Image input = c.grey ? from_rgba(to_rgba(image), 1) : image;
    const Bytes jpeg =
        encode_image(input, ImageFormat::jpeg, jpeg_options(c.subsampling, c.strip_rows));
    const JpegMarkers m = jpeg_markers(jpeg);
    EXPECT_EQ(m.dri, c.interval);
    EXPECT_EQ(m.height, image.height);
    std::vector<int> expected = {0xD8, 0xE0, 0xDB};
    if (!c.grey) expected.push_back(0xDB);  // luma and chroma quantisation tables
    expected.push_back(0xC0);
    for (int i = 0; i < (c.grey ? 2 : 4); ++i) expected.push_back(0xC4);  // DC and AC tables
    expected.push_back(0xDD);
    expected.push_back(0xDA);
    for (int i = 0; i + 1 < c.strips; ++i) expected.push_back(0xD0 + i % 8);
    expected.push_back(0xD9);
    EXPECT_EQ(m.markers, expected);
    const Bytes whole = encode_image(input, ImageFormat::jpeg, jpeg_options(c.subsampling, -1));
    EXPECT_LT(jpeg.size(), whole.size() * 1.01);
  }
}

// The default layout: strips of at most about kJpegStripPixels, as equal as whole MCU rows
// allow, so one piece up to kJpegStripPixels; a restart interval that DRI's 16 bits hold whatever
// the width; sizes JPEG can store.
TEST(JpegStripLayout, DependsOnlyOnTheImage) {
  struct Case {
    int width, height;
    bool grey;
    ChromaSubsampling subsampling;
    int strip_rows;                                     // asked for
    int mcu_width, mcu_height, strips, rows, interval;  // expected
  };
  const auto s420 = ChromaSubsampling::s420;
  const Case cases[] = {{3024, 4032, false, s420, 0, 16, 16, 42, 96, 189 * 6},
                        {1920, 1080, false, ChromaSubsampling::s422, 0, 16, 8, 8, 136, 120 * 17},
                        {1920, 1080, false, ChromaSubsampling::s444, 0, 8, 8, 8, 136, 240 * 17},
                        {1024, 256, true, s420, 0, 8, 8, 1, 256, 0},
                        {1024, 257, true, s420, 0, 8, 8, 2, 136, 128 * 17},
                        {3024, 4032, false, s420, -1, 16, 16, 1, 4032, 0},
                        {65535, 16, false, s420, 0, 16, 16, 1, 16, 0},  // one MCU row
                        {640, 480, false, s420, 480, 16, 16, 1, 480, 0},
                        {640, 480, false, s420, 1, 16, 16, 30, 16, 40}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.width) + "x" + std::to_string(c.height) + " strip rows " +
                 std::to_string(c.strip_rows));
    const JpegStripLayout layout =
        jpeg_strip_layout(c.width, c.height, c.grey, c.subsampling, c.strip_rows);
    EXPECT_EQ(layout.mcu_width, c.mcu_width);
    EXPECT_EQ(layout.mcu_height, c.mcu_height);
    EXPECT_EQ(layout.strips, c.strips);
    EXPECT_EQ(layout.strip_rows, c.rows);
    EXPECT_EQ(layout.restart_interval, c.interval);
  }
  for (int strip_rows : {0, 1000, 65535}) {
    // 65535 wide: 8192 MCU columns, so at most 7 MCU rows a strip
    const JpegStripLayout wide =
        jpeg_strip_layout(65535, 100, true, ChromaSubsampling::s420, strip_rows);
    EXPECT_LE(wide.restart_interval, 65535);
    EXPECT_GE(wide.strips, 2);
    EXPECT_EQ(wide.strip_rows % 8, 0);
    EXPECT_EQ(wide.restart_interval, wide.strip_rows / 8 * 8192);
  }
  EXPECT_THROW(jpeg_strip_layout(65536, 8, false, ChromaSubsampling::s420), Error);
  EXPECT_THROW(jpeg_strip_layout(8, 0, false, ChromaSubsampling::s420), Error);
}

// A JPEG large enough for 32 strips by default: the same bytes on 1, 2, 8 and the hardware
// threads (and from encode_rgba), decoded to the one-piece encode's pixels.
TEST_F(ImageIo, JpegStripsGiveTheSameBytesOnAnyThreadCount) {
  const Image photo = load_image(kSamples + "dune_1680x1050.jpg");
  Image image;  // 3000x3000: the photo tiled, mirrored where it repeats
  image.width = image.height = 3000;
  image.channels = 3;
  image.pixels.resize(std::size_t{3000} * 3000 * 3);
  auto mirror = [](int i, int n) {
    return i % (2 * n) < n ? i % (2 * n) : 2 * n - 1 - i % (2 * n);
  };
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x)
      for (int c = 0; c < 3; ++c)
        image.pixels[image.index(x, y, c)] =
            photo.pixels[photo.index(mirror(x, photo.width), mirror(y, photo.height), c)];
  ASSERT_EQ(jpeg_strip_layout(3000, 3000, false, ChromaSubsampling::s420).strips, 32);
  const Bytes one =
      encode_image(image, ImageFormat::jpeg, jpeg_options(ChromaSubsampling::s420, 0, 1));
  EXPECT_EQ(jpeg_markers(one).count(0xDD), 1u);
  for (int threads : {2, 8, 0}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    EXPECT_EQ(
        encode_image(image, ImageFormat::jpeg, jpeg_options(ChromaSubsampling::s420, 0, threads)),
        one);
  }
  EXPECT_EQ(encode_rgba(to_rgba(image), 3, ImageFormat::jpeg,
                        jpeg_options(ChromaSubsampling::s420, 0, 2)),
            one);
  const Bytes whole =
      encode_image(image, ImageFormat::jpeg, jpeg_options(ChromaSubsampling::s420, -1));
  EXPECT_EQ(tj_decode(one).pixels, tj_decode(whole).pixels);
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// TurboJPEG's environment variables can make strips that do not join into one scan: Huffman
// tables optimised per strip (TJ_OPTIMIZE), restart markers of their own (TJ_RESTART),
// progressive scans (TJ_PROGRESSIVE). Then the image is written in one piece, as TurboJPEG
// writes it, and still decodes to the same pixels as it. The encodes run on a thread of their
// own: TurboJPEG's compressor keeps something of these settings after the variables are gone
// (progression, seen as later JPEG-byte tests failing in the same process), and each thread's
// compressor ends with the thread.
TEST_F(ImageIo, JpegStripsThatCannotBeJoinedAreWrittenInOnePiece) {
  const Image image = crop(load_image(kSamples + "coffee_600x400.png"), 587, 397);
  const std::pair<const char*, const char*> settings[] = {
      {"TJ_OPTIMIZE", "1"}, {"TJ_RESTART", "2"}, {"TJ_PROGRESSIVE", "1"}};
  for (const auto& [name, value] : settings) {
    SCOPED_TRACE(name);
    const ScopedEnv env(name, value);
    Bytes whole, strips;
    std::thread encoder([&] {
      whole = encode_image(image, ImageFormat::jpeg, jpeg_options(ChromaSubsampling::s420, -1));
      strips = encode_image(image, ImageFormat::jpeg, jpeg_options(ChromaSubsampling::s420, 48));
    });
    encoder.join();
    EXPECT_EQ(strips, whole);
    EXPECT_EQ(tj_decode(strips).pixels, tj_decode(whole).pixels);
  }
}

}  // namespace
}  // namespace blurtool
