// End-to-end tests of blurring with the blurtool executable: the sample blurred bit-exactly,
// channel counts kept, --max-tile, and every box and Gaussian variant and edge mode against the CPU
// reference. Each test runs the real binary (fork + execve, no shell, so paths with spaces need no
// quoting) in its own temporary directory, whose name holds spaces on purpose, with stdout and
// stderr captured to files (support/cli_fixture.h). Successful runs are decoded and compared with
// the exact CPU reference; failures must give the documented exit status (1 file or device, 2
// usage), a stderr line naming the file or option at fault, and leave the output directory exactly
// as it was (no output, no hidden .NAME.blurtool-XXXXXX temporary file).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "filters/box/box_blur.h"
#include "filters/gauss/gauss_blur.h"
#include "image/image_io.h"
#include "runtime/cl_runtime.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/test_support.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

TEST_F(Cli, SampleBlurIsBitExactAndKeepsThreeChannels) {
  // Relative output name, run inside the output directory: the "no directory part" case.
  const Result r = run({"--box", "3", kCoffee, "OUT.png"}, nullptr, out_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(listing(out_), Files{"OUT.png"});  // no temporary file left beside it
  const Image got = load_image((out_ / "OUT.png").string());
  const Image input = load_image(kCoffee);
  EXPECT_EQ(got.channels, 3);
  EXPECT_EQ(max_diff(got, expected_box(input, 3, EdgeMode::clamp)), 0);
}

TEST_F(Cli, GreyAndRgbaPngsKeepTheirChannelCount) {
  for (int channels : {1, 4}) {
    const Image input = random_image(31, 19, channels, 100 + channels);
    const std::string in = (in_ / ("c" + std::to_string(channels) + ".png")).string();
    const std::string out = (out_ / ("c" + std::to_string(channels) + ".png")).string();
    save_image(input, in);
    const Result r = run({"--box", "2", in, out});
    ASSERT_EQ(r.status, 0) << r.err;
    const Image got = load_image(out);
    EXPECT_EQ(got.channels, channels);
    EXPECT_EQ(max_diff(got, expected_box(input, 2, EdgeMode::clamp)), 0) << channels;
  }
  EXPECT_EQ(listing(out_), (Files{"c1.png", "c4.png"}));
}

// --max-tile splits the image as a device too small for it would: the same bytes as one run on
// that device (--device 0: unnamed, a one-piece Gaussian runs on the host, within 1 level)
// (single and batch mode, blurs, the Gaussian's fast and pyramid methods, in linear light too,
// and bright points); benchmarks, which
// time one piece, say so.
TEST_F(Cli, MaxTileGivesTheSameOutputAsOneRun) {
  int batches = 0;
  for (const std::vector<std::string>& op :
       {std::vector<std::string>{"--box", "9"},
        {"--gauss", "3", "--edge", "mirror"},
        {"--gauss", "9", "--gauss-method", "fast", "--edge", "zero"},
        {"--gauss", "20", "--edge", "mirror"},  // auto: the pyramid method, f 8
        {"--box", "9", "--linear-light"}}) {
    std::string what;
    for (const std::string& word : op) what += word + " ";
    SCOPED_TRACE(what);
    std::vector<std::string> one = op, split = op;
    one.insert(one.end(), {"--device", "0", kCoffee, out_ / "one.png"});  // the device's bytes
    split.insert(split.end(), {"--max-tile", "97x61", kCoffee, out_ / "split.png"});
    ASSERT_EQ(run(one).status, 0);
    const Result r = run(split);
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<std::string> batch = op;
    const fs::path folder = out_ / ("batch" + std::to_string(++batches));
    batch.insert(batch.end(), {"--max-tile", "200x150", "-q", kCoffee, "-o", folder});
    ASSERT_EQ(run(batch).status, 0);
    // Where auto takes a tensor-core Gaussian (GPUs that have them), a pixel's rounding depends
    // on where it falls in the 16-row blocks: within 1 level (man page, --max-tile).
    GaussParams gauss;
    gauss.sigma = 3;
    gauss.edge = EdgeMode::mirror;
    if (op[0] == "--gauss" && op[1] == "3" &&
        gauss_is_mma(
            resolve_gauss_schedule(gauss, select_device(""), 600, 400, PixelDepth::u8).variant)) {
      const Image one = load_image(out_ / "one.png");
      EXPECT_LE(max_diff(load_image(out_ / "split.png"), one), 1) << "split differs";
      EXPECT_LE(max_diff(load_image(folder / "coffee_600x400.png"), one), 1)
          << "batch output differs";
      continue;
    }
    EXPECT_TRUE(read_file(out_ / "split.png") == read_file(out_ / "one.png")) << "split differs";
    EXPECT_TRUE(read_file(folder / "coffee_600x400.png") == read_file(out_ / "one.png"))
        << "batch output differs";
  }
  // The fast method's walks cut into segments (--segment; a GPU's default) give the bytes of
  // whole-line walks (a CPU's default): its running sums are exact integers.
  ASSERT_EQ(run({"--gauss", "9", "--gauss-method", "fast", kCoffee, out_ / "lines.png"}).status, 0);
  const Result segments =
      run({"--gauss", "9", "--gauss-method", "fast", "--segment", "40", kCoffee, out_ / "seg.png"});
  ASSERT_EQ(segments.status, 0) << segments.err;
  EXPECT_TRUE(read_file(out_ / "seg.png") == read_file(out_ / "lines.png")) << "segments differ";
  // The streams walk (a GPU's default) gives the rings walk's bytes.
  const Result streams = run({"--gauss", "40", "--gauss-method", "fast", "--cascade", "streams",
                              "--segment", "70", kCoffee, out_ / "streams.png"});
  ASSERT_EQ(streams.status, 0) << streams.err;
  ASSERT_EQ(run({"--gauss", "40", "--gauss-method", "fast", "--cascade", "rings", kCoffee,
                 out_ / "rings.png"})
                .status,
            0);
  EXPECT_TRUE(read_file(out_ / "streams.png") == read_file(out_ / "rings.png")) << "walks differ";
  const std::string out = out_ / "x.png";
  for (const std::string bad : {"0x10", "10", "10x", "x5", "5x-1", "1048577x2", "axb"}) {
    SCOPED_TRACE(bad);
    const Result r = run({"--box", "3", "--max-tile", bad, kCoffee, out});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--max-tile '" + bad + "'"), std::string::npos) << r.err;
  }
  const Result bench = run({"--box", "3", "--bench", "--max-tile", "100x100", kCoffee, out});
  EXPECT_EQ(bench.status, 2);
  EXPECT_NE(bench.err.find("6x4 tiles of 100x100"), std::string::npos) << bench.err;
  EXPECT_FALSE(fs::exists(out));
  // Bright points: tiles rounded down to whole 8x8 blocks (100 -> 96); the same points and glow.
  for (const std::string ext : {".csv", ".png"}) {
    SCOPED_TRACE(ext);
    ASSERT_EQ(run({"--bright", "0.4", kCoffee, out_ / ("one" + ext)}).status, 0);
    const Result r =
        run({"--bright", "0.4", "--max-tile", "100x70", kCoffee, out_ / ("split" + ext)});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(read_file(out_ / ("split" + ext)) == read_file(out_ / ("one" + ext)))
        << "split differs";
  }
}

TEST_F(Cli, EveryVariantAndEdgeModeMatchesReference) {
  const Image input = random_image(23, 17, 4, 42);
  const std::string in = in_ / "small.png", out = out_ / "o.png";
  save_image(input, in);
  // The image has transparency, so it is blurred premultiplied at 16 bits, where the linear
  // variants' bilinear fetches are exact on PoCL but carry the sampler's precision on GPUs
  // (docs/formats.md, "Image fidelity: the working space"): within 1 level there, once narrowed
  // to 8 bits.
  const bool cpu = select_device("").type & CL_DEVICE_TYPE_CPU;
  for (const auto& edge : edge_mode_table()) {
    const Image expected = expected_box(input, 4, edge.value);
    for (const auto& v : box_variant_table()) {
      SCOPED_TRACE(std::string(v.name) + " edge=" + edge.name);
      const Result r = run({"--box", "4", "--variant", v.name, "--edge", edge.name, in, out});
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_LE(max_diff(load_image(out), expected), box_samples_linearly(v.value) && !cpu ? 1 : 0);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Gaussian blur (--gauss). Images stay small (31x23) so that the whole group runs in seconds on
// PoCL; the in-process accuracy suite is tests/device/test_gauss.cpp.

TEST_F(Cli, EveryGaussVariantMatchesReference) {
  const Image input = random_image(31, 23, 4, 2024);
  const std::string in = in_ / "small.png", out = out_ / "o.png";
  save_image(input, in);
  const Image expected = expected_gauss(input, 2.0, 5, EdgeMode::clamp);
  ASSERT_GT(max_diff(expected, input), 1) << "the blur must change the image for the test to bite";
  for (const auto& v : gauss_variant_table()) {
    SCOPED_TRACE(v.name);
    // The image has transparency, so it is blurred premultiplied, at 16 bits.
    if (!gauss_variant_runs(v.value, select_device(""), PixelDepth::u16, 5)) {
      // the tensor-core variants: refused by name, nothing written; without tensor cores for
      // that, with them for the 16 bits
      const bool tensor_cores = gauss_variant_runs(v.value, select_device(""), PixelDepth::u8, 5);
      const Result r = run({"--gauss", "2", "--variant", v.name, in, out_ / "refused.png"});
      EXPECT_EQ(r.status, 2);
      EXPECT_NE(r.err.find(std::string("--variant ") + v.name + ": "), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(tensor_cores ? "transparency" : "compute capability 8.0"),
                std::string::npos)
          << r.err;
      EXPECT_FALSE(fs::exists(out_ / "refused.png"));
      continue;
    }
    fs::remove(out);  // each variant must write its own image
    const Result r = run({"--gauss", "2", "--radius", "5", "--variant", v.name, in, out});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_LE(max_diff(load_image(out), expected), 1);  // 256 if the size or channels differ
  }
  EXPECT_EQ(listing(out_), Files{"o.png"});
}

// Any finite SIGMA above 0 is taken, subnormal doubles too (4e-320, the smallest 5e-324; they
// were refused as "not above 0"): the Gaussian of radius ceil(3 SIGMA) = 1 then weighs its centre
// 1 and its neighbours 0, so an opaque image comes out as it went in, and one with transparency
// as its premultiplied round trip (the CPU reference) gives it.
TEST_F(Cli, TinyGaussSigmaLeavesTheImageAsItIs) {
  for (const int channels : {3, 4}) {
    const Image input = random_image(29, 17, channels, 300 + channels);
    const std::string in = in_ / ("in" + std::to_string(channels) + ".png");
    save_image(input, in);
    for (const char* sigma : {"4e-320", "5e-324", "1e-300"}) {
      SCOPED_TRACE(std::string(sigma) + ", " + std::to_string(channels) + " channels");
      const std::string out = out_ / "o.png";
      const Result r = run({"--gauss", sigma, in, out});
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(r.err, "");
      const Image got = load_image(out);
      if (channels == 3) {
        EXPECT_EQ(max_diff(got, input), 0);
      }
      EXPECT_EQ(max_diff(got, expected_gauss(input, 1e-300, 1, EdgeMode::clamp)), 0);
    }
  }
}

}  // namespace
}  // namespace blurtool
