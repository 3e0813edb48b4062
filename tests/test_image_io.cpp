// Tests for core/image_io: exact PNG round trips for every channel count, JPEG within a loose
// tolerance, the checks made before stb_image decodes anything (signature, empty and missing
// files, truncated JPEGs, max_pixels), 16-bit PNG warnings, the atomic save (no partial or
// temporary file left behind) and the RGBA conversions.
#include <gtest/gtest.h>
#include <stb/stb_image.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/image_io.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

const std::string kSamples = std::string(BLURTOOL_SOURCE_DIR) + "/samples/";

Image random_image(int width, int height, int channels, unsigned seed) {
  std::mt19937 rng(seed);
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.resize(static_cast<std::size_t>(width) * height * channels);
  for (std::uint8_t& p : image.pixels) p = static_cast<std::uint8_t>(rng() & 0xFF);
  return image;
}

// Smooth gradients: what JPEG is made for, so its error stays small.
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
            static_cast<std::uint8_t>((x * 255 / width + y * 128 / height + c * 40) % 256);
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

// The message of the blurtool::Error that `f` throws ("" and a test failure if none).
template <class E = Error, class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

// --- A hand-made 16-bit PNG: stored (uncompressed) deflate blocks need no zlib. ---

std::uint32_t crc32(const Bytes& data, std::size_t begin, std::size_t end) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = begin; i < end; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
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

// A greyscale 16-bit PNG of width x (samples.size() / width) big-endian samples.
Bytes grey16_png(int width, const std::vector<std::uint16_t>& samples) {
  const int height = static_cast<int>(samples.size()) / width;
  Bytes raw;  // filter byte 0 (none) before each row
  for (int y = 0; y < height; ++y) {
    raw.push_back(0);
    for (int x = 0; x < width; ++x) {
      raw.push_back(static_cast<std::uint8_t>(samples[y * width + x] >> 8));
      raw.push_back(static_cast<std::uint8_t>(samples[y * width + x] & 0xFF));
    }
  }
  Bytes zlib = {0x78, 0x01, 0x01};  // zlib header; one final stored block
  const std::uint16_t len = static_cast<std::uint16_t>(raw.size());
  for (std::uint16_t v : {len, static_cast<std::uint16_t>(~len)}) {
    zlib.push_back(v & 0xFF);
    zlib.push_back(v >> 8);
  }
  zlib.insert(zlib.end(), raw.begin(), raw.end());
  std::uint32_t a = 1, b = 0;  // Adler-32
  for (std::uint8_t byte : raw) a = (a + byte) % 65521, b = (b + a) % 65521;
  put32(zlib, (b << 16) | a);

  Bytes png = {0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A};
  Bytes ihdr;
  put32(ihdr, width);
  put32(ihdr, height);
  ihdr.insert(ihdr.end(), {16, 0, 0, 0, 0});  // depth 16, greyscale, deflate, filter, no interlace
  put_chunk(png, "IHDR", ihdr);
  put_chunk(png, "IDAT", zlib);
  put_chunk(png, "IEND", {});
  return png;
}

// --- Fixture: a fresh temporary directory per test. ---

class ImageIo : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("blurtool_image_io_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

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

TEST_F(ImageIo, JpegRoundTripIsClose) {
  const Image image = smooth_image(64, 48, 3);
  const Image back = decode_image(encode_image(image, ImageFormat::jpeg, 95), "mem.jpg");
  ASSERT_EQ(back.width, 64);
  ASSERT_EQ(back.height, 48);
  ASSERT_EQ(back.channels, 3);
  double total = 0;
  int worst = 0;
  for (std::size_t i = 0; i < image.pixels.size(); ++i) {
    const int diff = std::abs(int(back.pixels[i]) - int(image.pixels[i]));
    total += diff;
    worst = std::max(worst, diff);
  }
  EXPECT_LT(total / image.pixels.size(), 3.0);
  EXPECT_LT(worst, 48);
}

TEST_F(ImageIo, GreyJpegReadsBackAsThreeEqualChannels) {
  const Image image = smooth_image(32, 16, 1);
  const Image back = decode_image(encode_image(image, ImageFormat::jpeg, 100), "grey.jpg");
  ASSERT_EQ(back.channels, 3);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 32; ++x)
      for (int c = 0; c < 3; ++c)
        EXPECT_NEAR(back.pixels[back.index(x, y, c)], image.pixels[image.index(x, y)], 8);
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
  EXPECT_NE(message.find("not a PNG or JPEG"), std::string::npos) << message;
}

TEST_F(ImageIo, OtherFormatsStbKnowsAreRefused) {
  const std::string pgm = "P5\n2 1\n255\n\x10\x20";  // a valid binary PGM
  const Bytes bytes(pgm.begin(), pgm.end());
  int w = 0, h = 0, c = 0;  // stb_image itself would accept it...
  ASSERT_TRUE(stbi_info_from_memory(bytes.data(), int(bytes.size()), &w, &h, &c));
  const std::string message = error_of([&] { decode_image(bytes, "img.pgm"); });  // ...we don't
  EXPECT_NE(message.find("img.pgm: not a PNG or JPEG"), std::string::npos) << message;
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
  for (std::size_t keep : {full.size() / 2, std::size_t{100}, std::size_t{3}}) {
    SCOPED_TRACE("keep " + std::to_string(keep));
    const std::string file = path("half.jpg");
    write_bytes(file, Bytes(full.begin(), full.begin() + keep));
    const std::string message = error_of([&] { load_image(file); });
    EXPECT_NE(message.find(file), std::string::npos) << message;
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  }
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

TEST_F(ImageIo, MaxPixelsIsEnforcedFromTheHeader) {
  const Bytes png = read_bytes(kSamples + "coffee_600x400.png");
  EXPECT_NO_THROW(decode_image(png, "coffee.png", nullptr, 600 * 400));
  const std::string message =
      error_of([&] { decode_image(png, "coffee.png", nullptr, 600 * 400 - 1); });
  EXPECT_NE(message.find("coffee.png"), std::string::npos) << message;
  EXPECT_NE(message.find("600x400"), std::string::npos) << message;
  EXPECT_NE(message.find("239999"), std::string::npos) << message;
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
    EXPECT_NE(message.find(".png, .jpg or .jpeg"), std::string::npos) << message;
  }
}

TEST(Encode, ChecksItsArguments) {
  const Image image = random_image(5, 3, 3, 2);
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
}

TEST(Rgba, ExpandsEveryChannelCount) {
  const std::vector<std::pair<Bytes, Bytes>> cases = {
      {{10}, {10, 10, 10, 255}},
      {{10, 20}, {10, 10, 10, 20}},
      {{1, 2, 3}, {1, 2, 3, 255}},
      {{1, 2, 3, 4}, {1, 2, 3, 4}},
  };
  for (const auto& [in, out] : cases) {
    Image image;
    image.width = image.height = 1;
    image.channels = static_cast<int>(in.size());
    image.pixels = in;
    const Image rgba = to_rgba(image);
    EXPECT_EQ(rgba.channels, 4);
    EXPECT_EQ(rgba.pixels, out) << "channels " << in.size();
  }
}

TEST(Rgba, FromRgbaInvertsToRgba) {
  for (int channels = 1; channels <= 4; ++channels) {
    const Image image = random_image(13, 7, channels, 50 + channels);
    const Image back = from_rgba(to_rgba(image), channels);
    EXPECT_EQ(back.width, 13);
    EXPECT_EQ(back.height, 7);
    EXPECT_EQ(back.channels, channels);
    EXPECT_EQ(back.pixels, image.pixels) << "channels " << channels;
  }
  EXPECT_THROW(from_rgba(random_image(2, 2, 3, 1), 3), Error);
  EXPECT_THROW(from_rgba(random_image(2, 2, 4, 1), 5), Error);
}

}  // namespace
}  // namespace blurtool
