// End-to-end tests of --max-memory (pipeline/strip_pipeline.h): an image whose run would take
// more memory than the budget is read, blurred and written in strips of rows, with the same
// output as one run on the same device (checked against the CPU reference and the one-piece run,
// named --device 0: a Gaussian's one piece would run on the host, within 1 level); one that fits no
// strip, or cannot be read by rows, is refused before decoding with the memory it needs; a
// batch runs its large images in strips beside the others. Peak memory itself is measured by
// scripts/bench-memory, not here.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "filters/gauss/gauss_blur.h"
#include "image/image_io.h"
#include "image/metadata.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/metadata_support.h"
#include "tests/support/orientation_support.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

// BLURTOOL_TRACE set while it lives: the run's milestones on stderr say whether it ran in strips.
struct Traced {
  Traced() { ::setenv("BLURTOOL_TRACE", "1", 1); }
  ~Traced() { ::unsetenv("BLURTOOL_TRACE"); }
};

bool ran_in_strips(const Result& r) {
  return r.err.find("strips planned") != std::string::npos;
}

void write_bytes(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  write_file(path, std::string(bytes.begin(), bytes.end()));
}

// `png` (a one-piece PNG, IHDR first) with the IHDR's width, height and interlace method set
// and its CRC made again.
std::vector<std::uint8_t> with_ihdr(std::vector<std::uint8_t> png, std::uint32_t width,
                                    std::uint32_t height, std::uint8_t interlace) {
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = static_cast<std::uint8_t>(width >> (24 - 8 * i));
    png[20 + i] = static_cast<std::uint8_t>(height >> (24 - 8 * i));
  }
  png[28] = interlace;
  const std::uint32_t crc = static_cast<std::uint32_t>(crc32(0, png.data() + 12, 17));
  for (int i = 0; i < 4; ++i) png[29 + i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
  return png;
}

// Inputs of odd sizes: RGB and RGBA with transparency (premultiplied working space) as PNG, a
// 16-bit PNG, greyscale and colour JPEGs; blurred by box and Gaussian with every edge mode, in
// strips (a 1 MiB budget) and in one piece: the same samples, and the CPU reference's for 8 bits.
TEST_F(Cli, ImagesOverMaxMemoryRunInStripsWithTheSameOutput) {
  const Image rgb = random_image(211, 157, 3, 1);
  const Image rgba = random_image(211, 157, 4, 2);
  write_bytes(in_ / "rgb.png", encode_image(rgb, ImageFormat::png, 95));
  write_bytes(in_ / "rgba.png", encode_image(rgba, ImageFormat::png, 95));
  Image16 deep{211, 157, 3, PixelVector<std::uint16_t>(211 * 157 * 3)};
  for (std::size_t i = 0; i < deep.pixels.size(); ++i)
    deep.pixels[i] = static_cast<std::uint16_t>(i * 2654435761u >> 7);
  write_bytes(in_ / "deep.png", encode_image(deep, ImageFormat::png, 95));
  write_bytes(in_ / "grey.jpg", encode_image(random_image(211, 157, 1, 3), ImageFormat::jpeg, 90));
  write_bytes(in_ / "colour.jpg", encode_image(rgb, ImageFormat::jpeg, 90));
  const Traced traced;
  struct Case {
    std::vector<std::string> op;
    EdgeMode edge;
  };
  const std::vector<Case> cases = {{{"--box", "5"}, EdgeMode::clamp},
                                   {{"--box", "4", "--edge", "mirror"}, EdgeMode::mirror},
                                   {{"--gauss", "1.5", "--edge", "zero"}, EdgeMode::zero}};
  for (const std::string name : {"rgb.png", "rgba.png", "deep.png", "grey.jpg", "colour.jpg"}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(name + " " + c.op[0] + " " + c.op[1]);
      const fs::path input = in_ / name, whole = out_ / ("whole-" + name),
                     strips = out_ / ("strips-" + name);
      std::vector<std::string> args = c.op;
      args.insert(args.end(), {"--device", "0", input.string(), whole.string()});
      const Result one = run(args);
      ASSERT_EQ(one.status, 0) << one.err;
      EXPECT_FALSE(ran_in_strips(one));
      args = c.op;
      args.insert(args.end(), {"--max-memory", "1M", input.string(), strips.string()});
      const Result r = run(args);
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_TRUE(ran_in_strips(r)) << r.err;
      const DecodedImage a = load_image_wide(whole), b = load_image_wide(strips);
      EXPECT_EQ(a.channels(), b.channels());
      EXPECT_EQ(a.narrow.pixels, b.narrow.pixels);
      EXPECT_EQ(a.wide.pixels, b.wide.pixels);
      if (name == "rgb.png" || name == "rgba.png") {
        const Image& in = name == "rgb.png" ? rgb : rgba;
        GaussParams gauss;
        gauss.sigma = 1.5;
        const Image want = c.op[0] == "--box"
                               ? expected_box(in, std::stoi(c.op[1]), c.edge)
                               : expected_gauss(in, 1.5, gauss_radius(gauss), c.edge);
        EXPECT_LE(max_diff(load_image(strips), want), 1);
      }
    }
  }
}

// TIFF outputs in strips (a 1 MiB budget), each strip written into the output's temporary file
// and libtiff's directory last: the pixels decode to the one-piece run's (RGB with an ICC
// profile, RGBA, 16-bit, grey, a TIFF turned by its Orientation tag), the RGB ones within a level
// of the CPU reference, and the metadata is the one-piece run's (the profile kept, orientation
// 1). Standard output that is a file takes it too.
TEST_F(Cli, TiffOutputsRunInStripsWithTheOnePieceOutput) {
  const Bytes profile = read_bytes(kAdobeRgbProfile);
  ASSERT_GT(profile.size(), 128u) << kAdobeRgbProfile << " (Debian's icc-profiles-free)";
  const Image rgb = random_image(211, 157, 3, 21);
  write_bytes(in_ / "rgb.png", with_iccp(encode_image(rgb, ImageFormat::png, 95), profile));
  write_bytes(in_ / "rgba.png", encode_image(random_image(211, 157, 4, 22), ImageFormat::png, 95));
  Image16 deep{211, 157, 3, PixelVector<std::uint16_t>(211 * 157 * 3)};
  for (std::size_t i = 0; i < deep.pixels.size(); ++i)
    deep.pixels[i] = static_cast<std::uint16_t>(i * 2654435761u >> 7);
  write_bytes(in_ / "deep.png", encode_image(deep, ImageFormat::png, 95));
  write_bytes(in_ / "grey.jpg", encode_image(random_image(211, 157, 1, 23), ImageFormat::jpeg, 90));
  const Image shown = random_image(157, 211, 3, 24);
  write_bytes(in_ / "turned.tif", tagged_tiff(stored_for(shown, 6), 6));
  const Traced traced;
  for (const std::string name : {"rgb.png", "rgba.png", "deep.png", "grey.jpg", "turned.tif"}) {
    SCOPED_TRACE(name);
    const fs::path input = in_ / name, whole = out_ / (name + ".whole.tif"),
                   strips = out_ / (name + ".strips.tif");
    const Result one = run({"--box", "4", input, whole});
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_FALSE(ran_in_strips(one));
    const Result r = run({"--box", "4", "--max-memory", "1M", input, strips});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(ran_in_strips(r)) << r.err;
    const DecodedImage a = load_image_wide(whole), b = load_image_wide(strips);
    EXPECT_EQ(b.is_wide(), name == "deep.png");
    EXPECT_EQ(a.channels(), b.channels());
    EXPECT_EQ(a.width(), b.width());
    EXPECT_TRUE(a.narrow.pixels == b.narrow.pixels);
    EXPECT_TRUE(a.wide.pixels == b.wide.pixels);
    const ImageMetadata ma = read_metadata(read_bytes(whole), "whole.tif"),
                        mb = read_metadata(read_bytes(strips), "strips.tif");
    EXPECT_EQ(ma.icc, mb.icc);
    EXPECT_EQ(mb.icc, name == "rgb.png" ? profile : Bytes{});
    EXPECT_EQ(mb.orientation, 1);
    if (name == "rgb.png") {
      EXPECT_LE(max_diff(b.narrow, expected_box(rgb, 4, EdgeMode::clamp)), 1);
    }
    if (name == "turned.tif") {
      EXPECT_EQ(b.width(), shown.width);
      EXPECT_LE(max_diff(b.narrow, expected_box(shown, 4, EdgeMode::clamp)), 1);
    }
  }
  // Standard output onto a file: written at offsets from where it stands.
  Spawn spawn;
  spawn.stdout_path = out_ / "stdout.tif";
  const Result r = run_blurtool(
      {"--box", "4", "--max-memory", "1M", "--format", "tif", (in_ / "rgb.png").string(), "-"},
      root_, root_, spawn);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(ran_in_strips(r)) << r.err;
  EXPECT_EQ(read_file(out_ / "stdout.tif"), read_file(out_ / "rgb.png.strips.tif"));
}

// A TIFF in strips needs an output it can seek in: a named pipe as the output, or standard
// output on a pipe, is refused before any work, in one line naming the input and the output,
// exit 1, nothing written.
TEST_F(Cli, TiffInStripsRefusesAPipe) {
  const fs::path fifo = out_ / "pipe.tif";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Result r = run({"--box", "1", "--max-memory", "1M", kCoffee, fifo});
  expect_failure(r, 1,
                 {kCoffee + ": the image needs ", "--max-memory (1 MiB), so it runs in strips",
                  "'" + fifo.string() + "' is a pipe", "write a PNG or JPEG"},
                 Files{"pipe.tif"});
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // Standard output on a pipe: the reader sees nothing written.
  const fs::path stdout_fifo = root_ / "stdout.fifo";
  ASSERT_EQ(::mkfifo(stdout_fifo.c_str(), 0600), 0);
  std::string seen = "not read";
  std::thread reader([&] { seen = read_file(stdout_fifo); });  // opens it, waits for the child
  Spawn spawn;
  spawn.stdout_path = stdout_fifo;
  spawn.timeout_s = 120;
  r = run_blurtool({"--box", "1", "--max-memory", "1M", "--format", "tif", kCoffee, "-"}, root_,
                   root_, spawn);
  reader.join();
  expect_failure(r, 1, {kCoffee + ": ", "standard output is a pipe", "redirect it to a file"},
                 Files{"pipe.tif"});
  EXPECT_EQ(seen, "");
  // The same run to a PNG streams through the pipe.
  std::thread png_reader([&] { seen = read_file(stdout_fifo); });
  r = run_blurtool({"--box", "1", "--max-memory", "1M", "--format", "png", kCoffee, "-"}, root_,
                   root_, spawn);
  png_reader.join();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(seen.substr(0, 4), "\x89PNG");
}

// A strip of one row with its halo that does not fit the budget: refused before decoding, the
// file, the sizes and the option named, exit 1, nothing written.
TEST_F(Cli, ImageThatFitsNoStripIsRefusedWithWhatItNeeds) {
  write_bytes(in_ / "wide.png", encode_image(random_image(3000, 40, 3, 4), ImageFormat::png, 95));
  const fs::path input = in_ / "wide.png";
  expect_failure(run({"--box", "60", "--max-memory", "1M", input, out_ / "o.png"}), 1,
                 {input.string(), "3000x40", "MiB", "--max-memory", "60-row halo"}, Files{});
}

// Files that cannot be read by rows (an interlaced PNG, a JPEG turned by its EXIF orientation)
// are decoded whole, then run in strips, where that fits: the one-piece output; where their
// decoded pixels leave no room for a strip they are refused by name, as is --bright's list of
// points of an image over the budget.
TEST_F(Cli, FilesThatCannotStreamAreDecodedWholeOrRefused) {
  const Traced traced;
  const Image turned_pixels = random_image(300, 200, 3, 6);
  write_bytes(in_ / "turned.jpg", with_app1(encode_image(turned_pixels, ImageFormat::jpeg, 90),
                                            exif_with_orientation(6, EXIF_BYTE_ORDER_INTEL)));
  const fs::path turned = in_ / "turned.jpg";
  ASSERT_EQ(run({"--box", "3", turned, out_ / "whole.png"}).status, 0);
  const Result r = run({"--box", "3", "--max-memory", "1M", turned, out_ / "strips.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(ran_in_strips(r)) << r.err;
  EXPECT_EQ(load_image(out_ / "strips.png").pixels, load_image(out_ / "whole.png").pixels);
  EXPECT_EQ(load_image(out_ / "strips.png").width, 200);  // turned upright
  fs::remove(out_ / "whole.png");
  fs::remove(out_ / "strips.png");

  // An Adam7 PNG: the IHDR's interlace method of a one-piece PNG set (the data is then wrong
  // for it, but the refusal comes before any decoding).
  write_bytes(
      in_ / "adam7.png",
      with_ihdr(encode_image(random_image(600, 400, 3, 5), ImageFormat::png, 95), 600, 400, 1));
  const fs::path adam7 = in_ / "adam7.png";
  expect_failure(run({"--box", "3", "--max-memory", "1M", adam7, out_ / "o.png"}), 1,
                 {adam7.string(), "interlaced PNG", "decoded whole", "--max-memory"}, Files{});
  expect_failure(run({"--bright", "0.9", "--max-memory", "1M", kDune, out_ / "p.csv"}), 1,
                 {kDune, "--bright", "--max-memory"}, Files{});
}

// A PNG header that promises 16384x16384 RGBA16 and holds no data: larger than any default
// budget, so it goes to the strip reader, which fails on the first row, before allocating
// anything of the header's size.
TEST_F(Cli, HeaderWithoutDataFailsOnTheFirstRow) {
  std::vector<std::uint8_t> png = encode_image(random_image(1, 1, 4, 7), ImageFormat::png, 95);
  const fs::path input = in_ / "promise.png";
  write_bytes(input, with_ihdr(png, 16384, 16384, 0));
  expect_failure(run({"--box", "3", input, out_ / "o.png"}), 1, {input.string(), "PNG"}, Files{});
}

// --bright in strips of whole blocks, each with the glow's reach of blocks above and below:
// the glows drawn are the one-piece run's, at 8 bits, 16 bits and in linear light.
TEST_F(Cli, BrightPointsRunInStripsWithTheSameImage) {
  write_bytes(in_ / "rgb.png", encode_image(random_image(230, 900, 3, 13), ImageFormat::png, 95));
  Image16 deep{190, 700, 4, PixelVector<std::uint16_t>(std::size_t{190} * 700 * 4)};
  for (std::size_t i = 0; i < deep.pixels.size(); ++i)
    deep.pixels[i] = static_cast<std::uint16_t>(i * 2654435761u >> 7);
  write_bytes(in_ / "deep.png", encode_image(deep, ImageFormat::png, 95));
  const Traced traced;
  struct Case {
    std::string input;
    std::vector<std::string> op;
    std::string budget;  // below the one-piece run's, above a strip's
  };
  for (const Case& c :
       std::vector<Case>{{"rgb.png", {"--bright", "0.8"}, "4M"},
                         {"rgb.png", {"--bright", "0.6", "--block", "5"}, "4M"},
                         {"rgb.png", {"--bright", "0.7", "--linear-light"}, "4M"},
                         {"deep.png", {"--bright", "0.7", "--block", "16"}, "8M"}}) {
    SCOPED_TRACE(c.input + " " + c.op.back());
    std::vector<std::string> strips = c.op, whole = c.op;
    strips.insert(strips.end(),
                  {"--max-memory", c.budget, (in_ / c.input).string(), (out_ / "s.png").string()});
    whole.insert(whole.end(), {(in_ / c.input).string(), (out_ / "w.png").string()});
    const Result r = run(strips);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(ran_in_strips(r)) << r.err;
    const Result one = run(whole);
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_FALSE(ran_in_strips(one));
    const DecodedImage a = load_image_wide(out_ / "w.png"), b = load_image_wide(out_ / "s.png");
    EXPECT_TRUE(a.narrow.pixels == b.narrow.pixels);
    EXPECT_TRUE(a.wide.pixels == b.wide.pixels);
  }
}

// A band wider than the device's widest piece (kPieceWidth) goes to it in column pieces, each
// with the halo's columns beside it (and, for the pyramid Gaussian, told its place): the same
// output as one piece, at 8 and at 16 bits.
TEST_F(Cli, WideStripsRunInColumnPiecesWithTheSameOutput) {
  const fs::path rgb = in_ / "wide.png", deep = in_ / "wide16.png", tall = in_ / "tall.png";
  const Image image = random_image(16500, 40, 3, 12);
  write_bytes(rgb, encode_image(image, ImageFormat::png, 95));
  // The pyramid Gaussian (sigma 8: a halo of 32 rows) needs more rows to cut into strips.
  // 16502 wide: its pieces' left edges are not all multiples of the pyramid's f.
  write_bytes(tall, encode_image(random_image(16502, 200, 3, 13), ImageFormat::png, 95));
  Image16 sixteen{16450, 64, 4, PixelVector<std::uint16_t>(std::size_t{16450} * 64 * 4)};
  for (std::size_t i = 0; i < sixteen.pixels.size(); ++i)
    sixteen.pixels[i] = static_cast<std::uint16_t>(i * 2654435761u >> 7);
  write_bytes(deep, encode_image(sixteen, ImageFormat::png, 95));
  const Traced traced;
  struct Case {
    fs::path input;
    std::vector<std::string> op;
    std::string budget;  // below the one-piece run's, above a strip's
  };
  for (const Case& c : std::vector<Case>{{rgb, {"--box", "5", "--png-level", "6"}, "20M"},
                                         {rgb, {"--gauss", "2", "--edge", "mirror"}, "20M"},
                                         {tall, {"--gauss", "8", "--edge", "mirror"}, "100M"},
                                         {deep, {"--box", "4"}, "40M"}}) {
    SCOPED_TRACE(c.input.filename().string() + " " + c.op[0]);
    std::vector<std::string> pieces = c.op, whole = c.op;
    pieces.insert(pieces.end(),
                  {"--max-memory", c.budget, c.input.string(), (out_ / "p.png").string()});
    whole.insert(whole.end(), {"--device", "0", c.input.string(), (out_ / "w.png").string()});
    const Result r = run(pieces);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("strips planned, in column pieces"), std::string::npos) << r.err;
    ASSERT_EQ(run(whole).status, 0);
    const DecodedImage a = load_image_wide(out_ / "w.png"), b = load_image_wide(out_ / "p.png");
    EXPECT_TRUE(a.narrow.pixels == b.narrow.pixels);
    EXPECT_TRUE(a.wide.pixels == b.wide.pixels);
    if (c.op[0] == "--box" && c.input == rgb) {
      EXPECT_LE(max_diff(load_image(out_ / "p.png"), expected_box(image, 5, EdgeMode::clamp)), 1);
    }
  }
}

// Strips are encoded into the output's temporary file as they are done (a PNG's or a TIFF's):
// a file whose data ends halfway (its header promises twice the rows it holds) fails after strips
// were written, and leaves neither a partial output nor a temporary file, and an output that was
// there stays as it was.
TEST_F(Cli, AStripRunThatFailsHalfwayLeavesNoPartialOutput) {
  const std::vector<std::uint8_t> png =
      encode_image(random_image(300, 400, 3, 11), ImageFormat::png, 95);
  const fs::path input = in_ / "cut.png";
  write_bytes(input, with_ihdr(png, 300, 800, 0));
  for (const std::string output : {"new.png", "new.tif"}) {  // a TIFF seeks in its temporary file
    Traced traced;
    const Result r = run({"--box", "3", "--max-memory", "1M", input, out_ / output});
    EXPECT_TRUE(ran_in_strips(r)) << r.err;
    expect_failure(r, 1, {input.string(), "PNG"}, Files{});
  }
  write_file(out_ / "old.png", "the old output");
  expect_failure(run({"--box", "3", "--max-memory", "1M", input, out_ / "old.png"}), 1,
                 {input.string()}, Files{"old.png"});
  EXPECT_EQ(read_file(out_ / "old.png"), "the old output");
}

// A batch with a budget that two of its images exceed: those run in strips, the others as
// usual, every output the one-piece run's.
TEST_F(Cli, BatchRunsItsLargeImagesInStrips) {
  write_bytes(in_ / "small.png", encode_image(random_image(40, 30, 3, 8), ImageFormat::png, 95));
  write_bytes(in_ / "large.png", encode_image(random_image(300, 220, 4, 9), ImageFormat::png, 95));
  write_bytes(in_ / "large.jpg",
              encode_image(random_image(320, 200, 3, 10), ImageFormat::jpeg, 90));
  // The device named: with none, the small image would run on the host (within 2 levels).
  const Result r =
      run({"--gauss", "2", "--device", "0", "--max-memory", "1M", in_, out_ / "strips"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("3 done"), std::string::npos) << r.err;
  ASSERT_EQ(run({"--gauss", "2", "--device", "0", in_, out_ / "whole"}).status, 0);
  for (const std::string name : {"small.png", "large.png", "large.jpg"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(load_image(out_ / "strips" / name).pixels, load_image(out_ / "whole" / name).pixels);
  }
}

// The CLI fixture with one check more.
class CliStrips : public Cli {
 protected:
  void expect_strips_equal_one_piece(const std::vector<std::string>& op, const std::string& budget,
                                     unsigned seed);
};

// `op` run over in_ (a 600x440 RGBA PNG and a 1000x700 JPEG) in strips under `budget`, and
// in one piece: the same bytes.
void CliStrips::expect_strips_equal_one_piece(const std::vector<std::string>& op,
                                              const std::string& budget, unsigned seed) {
  write_bytes(in_ / "large.png",
              encode_image(random_image(600, 440, 4, seed), ImageFormat::png, 95));
  write_bytes(in_ / "large.jpg",
              encode_image(random_image(1000, 700, 3, seed + 1), ImageFormat::jpeg, 90));
  std::vector<std::string> strips = op, whole = op;
  strips.insert(strips.end(), {"--max-memory", budget, in_, out_ / "strips"});
  whole.insert(whole.end(), {"--device", "0", in_, out_ / "whole"});
  Result r;
  {
    Traced traced;
    r = run(strips);
  }
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(ran_in_strips(r)) << r.err;
  ASSERT_EQ(run(whole).status, 0);
  for (const std::string name : {"large.png", "large.jpg"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(load_image(out_ / "strips" / name).pixels, load_image(out_ / "whole" / name).pixels);
  }
}

// The Gaussian's fast method in strips, each with a halo of its reach:
// the same bytes as one piece, at 8 bits and through the 16-bit premultiplied path of an image
// with alpha.
TEST_F(CliStrips, GaussFastInStripsEqualsOnePiece) {
  expect_strips_equal_one_piece({"--gauss", "7", "--gauss-method", "fast"}, "8M", 12);
}

// The Gaussian's pyramid method (auto from sigma 8) in strips, each with a halo of its reach
// and told its place in the image: the same bytes as one piece, at 8 bits and through the
// 16-bit premultiplied path of an image with alpha; a strip's rows start at every phase of a
// cell (four pixels at sigma 13).
TEST_F(CliStrips, GaussPyramidInStripsEqualsOnePiece) {
  expect_strips_equal_one_piece({"--gauss", "13"}, "12M", 14);
}

// The same with strips cut into tiles (--max-tile): each tile is told its place in the image,
// the strip's origin added to the tile's.
TEST_F(CliStrips, GaussPyramidInTiledStripsEqualsOnePiece) {
  expect_strips_equal_one_piece({"--gauss", "13", "--max-tile", "301x203"}, "12M", 16);
}

}  // namespace
}  // namespace blurtool
