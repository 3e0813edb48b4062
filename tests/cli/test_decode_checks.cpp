// End-to-end tests of what the decoders refuse and read, as a user meets it: a PNG whose CRC or
// Adler-32 fails and a JPEG of more than 500 scans exit 1 with the file named and the reason,
// leaving no output; arithmetic-coded JPEGs are blurred as libjpeg-turbo decodes them, in
// single mode and in a batch. The files are made here: PNGs by blurtool's encoder, then
// damaged; JPEGs by libjpeg's own encoder (support/libjpeg_support.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "image/image_io.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/jpeg_test_support.h"
#include "tests/support/libjpeg_support.h"
#include "tests/support/test_support.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

using Bytes = std::vector<std::uint8_t>;

void write_bytes(const fs::path& path, const Bytes& bytes) {
  write_file(path, std::string(bytes.begin(), bytes.end()));
}

std::uint32_t get32(const Bytes& b, std::size_t at) {
  return std::uint32_t{b[at]} << 24 | std::uint32_t{b[at + 1]} << 16 |
         std::uint32_t{b[at + 2]} << 8 | b[at + 3];
}

// PNG's CRC-32 of bytes [begin, end) of `b`.
std::uint32_t png_crc(const Bytes& b, std::size_t begin, std::size_t end) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = begin; i < end; ++i) {
    crc ^= b[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// A bad CRC (the first IDAT's) and a bad Adler-32 (the zlib stream's last byte changed, the
// chunk's CRC made right): exit 1, the file and libpng's words, no output. Both were blurred
// before without a word; a damaged IDAT gives wrong pixels that only these checksums reveal.
TEST_F(Cli, PngWithABadChecksumIsAnError) {
  const Bytes png = encode_image(random_image(41, 17, 3, 11), ImageFormat::png, 95);
  std::size_t idat = 0, last_idat = 0;
  for (std::size_t at = 8; at + 12 <= png.size(); at += 12 + get32(png, at)) {
    if (std::string(png.begin() + at + 4, png.begin() + at + 8) != "IDAT") continue;
    if (idat == 0) idat = at;
    last_idat = at;
  }
  ASSERT_NE(idat, 0u);
  Bytes bad_crc = png;
  bad_crc[idat + 8 + get32(png, idat)] ^= 0x01;  // the chunk's CRC
  Bytes bad_adler = png;
  const std::size_t length = get32(png, last_idat);
  bad_adler[last_idat + 8 + length - 1] ^= 0x01;
  const std::uint32_t crc = png_crc(bad_adler, last_idat + 4, last_idat + 8 + length);
  for (int i = 0; i < 4; ++i)
    bad_adler[last_idat + 8 + length + i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
  for (const auto& [name, bytes, words] : std::vector<std::tuple<std::string, Bytes, std::string>>{
           {"crc.png", bad_crc, "IDAT: CRC error"},
           {"adler.png", bad_adler, "IDAT: incorrect data check"}}) {
    SCOPED_TRACE(name);
    const fs::path in = in_ / name;
    write_bytes(in, bytes);
    expect_failure(run({"--box", "2", in.string(), (out_ / "o.png").string()}), 1,
                   {in.string() + ": corrupt PNG (" + words + ")"}, Files{});
  }
}

// A progressive JPEG of 501 scans (each a valid scan, most holding little) is refused before it
// is decoded: exit 1, the file named. It was decoded, scan after scan, without a word (one of
// 2000 scans took 38 s). One of 500 scans is blurred as libjpeg-turbo decodes it.
TEST_F(Cli, JpegOfMoreThan500ScansIsRefused) {
  const Image grey = random_image(16, 16, 1, 3);
  const fs::path ok = in_ / "500.jpg", bomb = in_ / "501.jpg";
  write_bytes(ok, progressive_jpeg_of_scans(grey, 500));
  write_bytes(bomb, progressive_jpeg_of_scans(grey, 501));
  expect_failure(run({"--box", "1", bomb.string(), (out_ / "o.png").string()}), 1,
                 {bomb.string() + ": too many scans", "more than 500"}, Files{});
  const Result r = run({"--box", "1", ok.string(), (out_ / "o.png").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(
      max_diff(load_image(out_ / "o.png"),
               expected_box(tj_pixels(progressive_jpeg_of_scans(grey, 500)), 1, EdgeMode::clamp)),
      0);
}

// Arithmetic-coded JPEGs (jpegtran -arithmetic; SOF9, and SOF10 progressive), greyscale and
// colour, are blurred from the pixels libjpeg-turbo decodes, in single mode and in a batch
// (whose JPEG path may decode to colour planes for the device). They were refused as "a frame
// header that stb_image cannot read".
TEST_F(Cli, ArithmeticJpegsAreBlurredAsLibjpegTurboDecodesThem) {
  std::vector<std::pair<std::string, Image>> expected;
  for (const int channels : {1, 3}) {
    for (const bool progressive : {false, true}) {
      const std::string name =
          std::string(channels == 1 ? "grey" : "colour") + (progressive ? "-sof10" : "-sof9");
      const Bytes jpeg =
          libjpeg_jpeg(random_image(47, 31, channels, 20 + channels), {true, progressive, {}});
      ASSERT_FALSE(jpeg.empty());
      write_bytes(in_ / (name + ".jpg"), jpeg);
      expected.emplace_back(name, expected_box(tj_pixels(jpeg), 2, EdgeMode::clamp));
    }
  }
  for (const auto& [name, want] : expected) {
    SCOPED_TRACE(name);
    const fs::path out = out_ / (name + ".png");
    const Result r = run({"--box", "2", (in_ / (name + ".jpg")).string(), out.string()});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(max_diff(load_image(out), want), 0);
  }
  const fs::path batch = root_ / "batch";
  const Result r = run({"--box", "2", "--format", "png", "--quiet", in_.string(), batch.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& [name, want] : expected) {
    SCOPED_TRACE("batch " + name);
    EXPECT_EQ(max_diff(load_image(batch / (name + ".png")), want), 0);
  }
}

}  // namespace
}  // namespace blurtool
