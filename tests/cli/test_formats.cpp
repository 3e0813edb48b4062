// End-to-end tests of the output formats: JPEG quality, the JPEG codec on the device and on the
// host, chroma subsampling and PNG level, and inputs whose names claim another format. Each test
// runs the real binary (fork + execve, no shell, so paths with spaces need no quoting) in its own
// temporary directory, whose name holds spaces on purpose, with stdout and stderr captured to files
// (support/cli_fixture.h). Successful runs are decoded and compared with the exact CPU reference;
// failures must give the documented exit status (1 file or device, 2 usage), a stderr line naming
// the file or option at fault, and leave the output directory exactly as it was (no output, no
// hidden .NAME.blurtool-XXXXXX temporary file).
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "runtime/cl_runtime.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/libjpeg_support.h"
#include "tests/support/test_support.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

TEST_F(Cli, JpegOutputHonoursQuality) {
  const std::string q80 = (out_ / "q80.jpg").string(), q10 = (out_ / "q10.JPEG").string();
  ASSERT_EQ(run({"--box", "3", "--quality", "80", kCoffee, q80}).status, 0);
  ASSERT_EQ(run({"--box", "3", "--quality", "10", kCoffee, q10}).status, 0);
  EXPECT_EQ(read_file(q80).substr(0, 3), "\xFF\xD8\xFF");  // a JPEG, not a PNG named .jpg
  const Image got = load_image(q80);
  EXPECT_EQ(got.width, 600);
  EXPECT_EQ(got.height, 400);
  EXPECT_EQ(got.channels, 3);
  // Lossy, but close to the exact blur: mean error under 3 levels.
  const Image expected = expected_box(load_image(kCoffee), 3, EdgeMode::clamp);
  ASSERT_EQ(got.pixels.size(), expected.pixels.size());
  double sum = 0;
  for (size_t i = 0; i < got.pixels.size(); ++i)
    sum += std::abs(int(got.pixels[i]) - int(expected.pixels[i]));
  EXPECT_LT(sum / got.pixels.size(), 3.0);
  EXPECT_LT(fs::file_size(q10), fs::file_size(q80));  // --quality reaches the encoder
}

namespace {

// A 101x77 crop of the dune photo (RGB), and its green channel as grey: odd sides, both.
std::pair<Image, Image> odd_crops() {
  const Image dune = load_image(kDune);
  Image crop{101, 77, 3, {}};
  for (int y = 0; y < 77; ++y)
    for (int x = 0; x < 101; ++x)
      for (int c = 0; c < 3; ++c)
        crop.pixels.push_back(dune.pixels[dune.index(x + 300, y + 200, c)]);
  Image grey{101, 77, 1, {}};
  for (int i = 0; i < 101 * 77; ++i) grey.pixels.push_back(crop.pixels[3 * i + 1]);
  return {crop, grey};
}

// Every file of folder `a` has the same bytes in folder `b`; returns how many.
int expect_same_files(const fs::path& a, const fs::path& b) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(a)) {
    ++files;
    EXPECT_EQ(read_file(entry.path()), read_file(b / entry.path().filename()))
        << entry.path().filename();
  }
  return files;
}

}  // namespace

// --subsampling reaches the JPEG (TurboJPEG's header reader says which), --png-level the PNG:
// the same pixels at every level, 0 stored (larger than the samples), 9 smaller than 1.
// --jpeg-codec device: a JPEG decoded only to its DCT blocks, transformed and converted to
// RGBA by the device, and the result converted to planes and DCT blocks there for the
// encoder's entropy coding; the same bytes as
// libjpeg-turbo's own stages (host), single and batch, JPEG and PNG outputs, greyscale and
// colour, baseline, progressive and arithmetic coding, every --subsampling; --bench says where the
// conversions ran. An unknown value is a usage error naming the option.
TEST_F(Cli, JpegCodecOnTheDeviceWritesTheHostsBytes) {
  const fs::path in = out_ / "in";
  fs::create_directories(in);
  fs::copy_file(kDune, in / "dune.jpg");      // 4:2:2
  fs::copy_file(kHubble, in / "hubble.jpg");  // 4:4:4
  fs::copy_file(kCoffee, in / "coffee.png");
  const auto [crop, grey] = odd_crops();
  const auto b420 = encode_image(crop, ImageFormat::jpeg, 90);  // 4:2:0, odd sides
  write_file(in / "odd420.jpg", std::string(b420.begin(), b420.end()));
  write_file(in / "grey.jpg", [&] {
    const auto b = encode_image(grey, ImageFormat::jpeg, 90);
    return std::string(b.begin(), b.end());
  }());
  // Progressive coding (DCT blocks too), and arithmetic coding and a progressive file whose
  // scans stop at the DC coefficients, which libjpeg smooths (colour planes only).
  LibjpegCoding progressive, arithmetic, dc_only;
  progressive.progressive = true;
  arithmetic.arithmetic = arithmetic.progressive = true;
  arithmetic.h = 1;  // 4:4:0
  dc_only.script = {dc_scan(3)};
  for (const auto& [name, coding] :
       {std::pair{"progressive.jpg", progressive}, std::pair{"arithmetic.jpg", arithmetic},
        std::pair{"dc_only.jpg", dc_only}}) {
    const auto b = libjpeg_jpeg(crop, coding);
    write_file(in / name, std::string(b.begin(), b.end()));
  }
  for (const char* sub : {"420", "444"}) {
    for (const char* format : {"jpg", "png"}) {
      SCOPED_TRACE(std::string(sub) + " " + format);
      const fs::path host = out_ / ("host_" + std::string(sub) + format);
      const fs::path device = out_ / ("device_" + std::string(sub) + format);
      const fs::path sparse = out_ / ("sparse_" + std::string(sub) + format);
      // The device's default (blocks whole), and blocks sparse (BLURTOOL_JPEG_DCT=sparse).
      for (const auto& [codec, folder] :
           {std::pair{"host", host}, std::pair{"device", device}, std::pair{"sparse", sparse}}) {
        ScopedEnv env;
        const bool forced = std::string(codec) == "sparse";
        if (forced) env.set("BLURTOOL_JPEG_DCT", "sparse");
        const Result r =
            run({"--box", "5", "--jpeg-codec", forced ? "device" : codec, "--subsampling", sub,
                 "--format", format, "--bench", "-q", in.string(), "-o", folder.string()});
        ASSERT_EQ(r.status, 0) << r.err;
        // The seven JPEGs decoded to planes, every JPEG output (the PNG's too) made from them;
        // all but arithmetic.jpg and dc_only.jpg as DCT blocks.
        const bool on = std::string(codec) != "host";
        const std::string in_count = on ? "7" : "0", block_count = on ? "5" : "0";
        const std::string out_count = on && std::string(format) == "jpg" ? "8" : "0";
        const std::string said = "device (--jpeg-codec): " + in_count +
                                 " images decoded to colour planes (" + block_count +
                                 " as DCT blocks, " + (forced ? block_count : "0") +
                                 " sparse, 0 entropy-coded of which 0 left to libjpeg by the "
                                 "device), " +
                                 out_count + " results returned as colour planes (" + out_count +
                                 " as DCT blocks, " + (forced ? out_count : "0") + " sparse)";
        EXPECT_NE(r.out.find(said), std::string::npos) << said << "\n" << r.out;
      }
      int files = 0;
      for (const auto& entry : fs::directory_iterator(host)) {
        ++files;
        EXPECT_EQ(read_file(entry.path()), read_file(device / entry.path().filename()))
            << entry.path().filename();
        EXPECT_EQ(read_file(entry.path()), read_file(sparse / entry.path().filename()))
            << entry.path().filename();
      }
      EXPECT_EQ(files, 8);
      // Single mode, with the device's conversions said by --bench.
      const std::string one_host = (out_ / ("one_host." + std::string(format))).string();
      const std::string one_device = (out_ / ("one_device." + std::string(format))).string();
      const std::string odd420 = (in / "odd420.jpg").string();
      // Both timed: an untimed single image on a GPU takes a schedule that builds faster
      // (for_one_image), within one level of the timed run's.
      ASSERT_EQ(run({"--gauss", "2", "--subsampling", sub, "--jpeg-codec", "host", "--bench", "1",
                     odd420, one_host})
                    .status,
                0);
      const Result r = run({"--gauss", "2", "--subsampling", sub, "--jpeg-codec", "device",
                            "--bench", "1", odd420, one_device});
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(read_file(one_host), read_file(one_device));
      EXPECT_NE(r.out.find("upload+colour"), std::string::npos) << r.out;
      EXPECT_EQ(r.out.find("download+colour") != std::string::npos, std::string(format) == "jpg")
          << r.out;
    }
  }
  const Result bad = run({"--box", "5", "--jpeg-codec", "gpu", kDune, (out_ / "x.jpg").string()});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--jpeg-codec"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(out_ / "x.jpg"));
}

// BLURTOOL_JPEG_DCT=entropy: a batch's JPEGs entropy-decoded on the device in batches
// (kernels/jpeg_entropy.cl) write the bytes of the blocks decoded by libjpeg, for every
// subsampling, greyscale, odd sides, restart markers and progressive files; a file whose data
// libjpeg warns about (bytes left over before EOI) is left to libjpeg by the device and decoded on
// the host, with libjpeg's warning, and the same bytes again. --bench counts both, and its stage
// split the images the kernel decoded.
TEST_F(Cli, EntropyDecodingOnTheDeviceWritesTheBlocksBytes) {
  const fs::path in = out_ / "in";
  fs::create_directories(in);
  fs::copy_file(kDune, in / "dune.jpg");      // 4:2:2
  fs::copy_file(kHubble, in / "hubble.jpg");  // 4:4:4
  const auto [crop, grey] = odd_crops();
  const auto b420 = encode_image(crop, ImageFormat::jpeg, 90);  // 4:2:0, odd sides
  write_file(in / "odd420.jpg", std::string(b420.begin(), b420.end()));
  const auto bgrey = encode_image(grey, ImageFormat::jpeg, 90);
  write_file(in / "grey.jpg", std::string(bgrey.begin(), bgrey.end()));
  LibjpegCoding restarts;
  restarts.restart_interval = 2;
  const auto brst = libjpeg_jpeg(crop, restarts);
  write_file(in / "restarts.jpg", std::string(brst.begin(), brst.end()));
  LibjpegCoding progressive;
  progressive.progressive = true;
  const auto bprog = libjpeg_jpeg(crop, progressive);
  write_file(in / "progressive.jpg", std::string(bprog.begin(), bprog.end()));
  progressive.restart_interval = 3;
  progressive.h = 1;  // 4:4:0
  const auto bprst = libjpeg_jpeg(crop, progressive);
  write_file(in / "progressive_restarts.jpg", std::string(bprst.begin(), bprst.end()));
  // Extraneous bytes before EOI: libjpeg warns and decodes every block.
  std::string left_over(b420.begin(), b420.end() - 2);
  left_over += std::string(16, '\x11') + "\xFF\xD9";
  write_file(in / "left_over.jpg", left_over);
  const fs::path whole = out_ / "whole", entropy = out_ / "entropy";
  for (const auto& [mode, folder] : {std::pair{"whole", whole}, std::pair{"entropy", entropy}}) {
    ScopedEnv env;
    env.set("BLURTOOL_JPEG_DCT", mode);
    const Result r = run({"--box", "5", "--jpeg-codec", "device", "--device", "0", "--bench",
                          in.string(), "-o", folder.string()});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("left_over.jpg"), std::string::npos) << r.err;  // libjpeg's warning
    const std::string said = std::string(mode) == "entropy"
                                 ? "8 entropy-coded of which 1 left to libjpeg by the device"
                                 : "0 entropy-coded of which 0 left to libjpeg by the device";
    EXPECT_NE(r.out.find(said), std::string::npos) << said << "\n" << r.out;
    // The stage split counts the images the kernel decoded, all eight (one then refused).
    const std::string split =
        std::string(mode) == "entropy"
            ? "device stages an image: entropy decoding "
            : "device stages an image: entropy decoding 0.000 ms (0 images, 0 launches;";
    const std::size_t at = r.out.find(split);
    ASSERT_NE(at, std::string::npos) << r.out;
    if (std::string(mode) == "entropy") {
      EXPECT_NE(r.out.find(" ms (8 images, ", at), std::string::npos) << r.out;
      // left_over.jpg: whole bytes before its end (reason 5)
      EXPECT_NE(r.out.find("left to libjpeg: 0 not in step, 0 a run out of step, 0 a bad code, 1 "
                           "a segment short, 0 other",
                           at),
                std::string::npos)
          << r.out;
    }
  }
  EXPECT_EQ(expect_same_files(whole, entropy), 8);
}

// --jpeg-codec auto in a batch: decoding to colour planes starts before the devices are known
// where the last batch with the same device options ran the colour stages on all of its
// devices (the cache's batch-devices file). On a CPU device auto never does: the file says
// "other". Told "gpu" (a GPU that went away), the first images decode to planes, the CPU
// device converts them, the bytes are the host's, and the file is put right.
TEST_F(Cli, AutoJpegCodecRemembersWhetherTheDevicesTookTheColourStages) {
  ScopedEnv env;
  const fs::path cache = out_ / "cache";
  env.set("BLURTOOL_CACHE_DIR", cache.c_str());
  const fs::path in = out_ / "in";
  fs::create_directories(in);
  const Image dune = load_image(kDune);
  Image crop{64, 48, 3, {}};
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x)
      for (int c = 0; c < 3; ++c) crop.pixels.push_back(dune.pixels[dune.index(x + 9, y + 5, c)]);
  const std::vector<std::uint8_t> jpeg = encode_image(crop, ImageFormat::jpeg, 90);
  for (int i = 0; i < 8; ++i)
    write_file(in / ("i" + std::to_string(i) + ".jpg"), std::string(jpeg.begin(), jpeg.end()));
  auto batch = [&](const char* codec, const fs::path& to) {
    const Result r = run({"--device", "0", "--box", "2", "--jpeg-codec", codec, "--bench", "-q",
                          in.string(), "-o", to.string()});  // a device named: no host lane
    EXPECT_EQ(r.status, 0) << r.err;
    const std::string said = "device (--jpeg-codec): ";
    const size_t at = r.out.find(said);
    EXPECT_NE(at, std::string::npos) << r.out;
    return at == std::string::npos ? -1 : std::atoi(r.out.c_str() + at + said.size());
  };
  const fs::path memo = cache / "batch-devices";
  const bool gpu = runtime().device().type & CL_DEVICE_TYPE_GPU;
  batch("host", out_ / "host");
  EXPECT_FALSE(fs::exists(memo));  // only auto keeps it
  batch("auto", out_ / "first");
  const std::string first = read_file(memo);
  EXPECT_NE(first.find(gpu ? "\tgpu\n" : "\tother\n"), std::string::npos) << first;
  if (gpu) return;                               // the rest needs a CPU device
  EXPECT_EQ(batch("auto", out_ / "second"), 0);  // "other": whole decoding
  std::string told = first;
  told.replace(told.find("\tother"), 6, "\tgpu");
  write_file(memo, told);
  EXPECT_GT(batch("auto", out_ / "told"), 0);  // planes before the device was known
  EXPECT_EQ(read_file(memo), first);
  for (int i = 0; i < 8; ++i) {
    const std::string name = "i" + std::to_string(i) + ".jpg";
    EXPECT_EQ(read_file(out_ / "told" / name), read_file(out_ / "host" / name)) << name;
  }
}

TEST_F(Cli, SubsamplingAndPngLevelReachTheEncoders) {
  tjhandle handle = tjInitDecompress();
  ASSERT_NE(handle, nullptr);
  const std::pair<const char*, int> subsamplings[] = {
      {nullptr, TJSAMP_420}, {"444", TJSAMP_444}, {"422", TJSAMP_422}, {"420", TJSAMP_420}};
  for (auto [name, expected] : subsamplings) {
    SCOPED_TRACE(name ? name : "default");
    const std::string out = (out_ / "s.jpg").string();
    std::vector<std::string> args = {"--box", "3", kCoffee, out};
    if (name) args.insert(args.begin(), {"--subsampling", name});
    const Result r = run(args);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string jpeg = read_file(out);
    int w = 0, h = 0, subsampling = -1, colorspace = -1;
    ASSERT_EQ(tjDecompressHeader3(handle, reinterpret_cast<const unsigned char*>(jpeg.data()),
                                  jpeg.size(), &w, &h, &subsampling, &colorspace),
              0);
    EXPECT_EQ(subsampling, expected);
  }
  tjDestroy(handle);
  const Image expected = expected_box(load_image(kCoffee), 3, EdgeMode::clamp);
  std::vector<std::uintmax_t> sizes;
  for (const char* level : {"0", "1", "6", "9"}) {
    SCOPED_TRACE(std::string("--png-level ") + level);
    const std::string out = (out_ / (std::string("l") + level + ".png")).string();
    const Result r = run({"--box", "3", "--png-level", level, kCoffee, out});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(max_diff(load_image(out), expected), 0);
    sizes.push_back(fs::file_size(out));
  }
  EXPECT_GT(sizes[0], expected.pixels.size());
  EXPECT_LT(sizes[3], sizes[1]);
  // The default is level 1: the same bytes.
  ASSERT_EQ(run({"--box", "3", kCoffee, out_ / "default.png"}).status, 0);
  EXPECT_EQ(read_file(out_ / "default.png"), read_file(out_ / "l1.png"));
}

// JPEG has no alpha: an output from an image with transparency says that it is dropped (as
// Pillow refuses such a save and libvips flattens it); an RGBA image that is opaque everywhere
// and a grey one say nothing, and the same transparent image to PNG keeps its alpha silently.
TEST_F(Cli, JpegOutputOfATransparentImageSaysTheAlphaIsDropped) {
  Image transparent = random_image(24, 16, 4, 5);
  for (std::size_t i = 3; i < transparent.pixels.size(); i += 4)
    transparent.pixels[i] = (i / 4) % 24 < 8 ? 0 : 255;  // the left third fully transparent
  Image opaque = random_image(24, 16, 4, 6);
  for (std::size_t i = 3; i < opaque.pixels.size(); i += 4) opaque.pixels[i] = 255;
  save_image(transparent, (in_ / "t.png").string());
  save_image(opaque, (in_ / "o.png").string());
  save_image(random_image(24, 16, 1, 7), (in_ / "g.png").string());
  const std::string out = (out_ / "t.jpg").string();
  Result r = run({"--box", "2", (in_ / "t.png").string(), out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "blurtool: warning: " + out +
                       ": JPEG has no alpha: the transparency is dropped (black where fully "
                       "transparent); PNG, TIFF or WebP keep it\n");
  EXPECT_EQ(load_image(out).channels, 3);
  for (const char* name : {"o.png", "g.png"}) {
    r = run({"--box", "2", (in_ / name).string(), (out_ / (std::string(name) + ".jpg")).string()});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "") << name;
  }
  r = run({"--box", "2", (in_ / "t.png").string(), (out_ / "t.png").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(load_image(out_ / "t.png").channels, 4);
  // In strips (an image past --max-memory) too, naming the output as strips' warnings do.
  Image big = random_image(300, 200, 4, 8);
  for (std::size_t i = 3; i < big.pixels.size(); i += 4)
    big.pixels[i] = (i / 4) % 300 < 100 ? 0 : 255;
  save_image(big, (in_ / "big.png").string());
  ::setenv("BLURTOOL_TRACE", "1", 1);
  r = run({"--box", "2", "--max-memory", "1M", (in_ / "big.png").string(),
           (out_ / "big.jpg").string()});
  ::unsetenv("BLURTOOL_TRACE");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("strips planned"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("blurtool: warning: the output of " + (in_ / "big.png").string() +
                       ": JPEG has no alpha: the transparency is dropped"),
            std::string::npos)
      << r.err;
}

// As in a batch: a file whose name claims the other format is read as what it is, with a warning.
TEST_F(Cli, MisnamedInputIsReadWithAWarning) {
  const fs::path in = in_ / "coffee.jpg";  // a PNG
  fs::copy_file(kCoffee, in);
  const Result r = run({"--box", "2", in.string(), (out_ / "o.png").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(in.string() + ": a PNG image under a JPEG name"), std::string::npos)
      << r.err;
  EXPECT_EQ(
      max_diff(load_image(out_ / "o.png"), expected_box(load_image(kCoffee), 2, EdgeMode::clamp)),
      0);
  // --quiet: errors only.
  const Result quiet = run({"--box", "2", "--quiet", in.string(), (out_ / "q.png").string()});
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

// --format over an output named for another format writes what --format says, with a warning.
TEST_F(Cli, FormatOverAnotherExtensionWarns) {
  const fs::path out = out_ / "named.png";
  const Result r = run({"--box", "1", "--format", "jpg", kCoffee, out.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: output '" + out.string() +
                       "' is named .png but --format jpg "
                       "writes JPEG"),
            std::string::npos)
      << r.err;
  const std::string bytes = read_file(out);
  EXPECT_EQ(bytes.substr(0, 3), std::string("\xFF\xD8\xFF"));
  const Result same = run({"--box", "1", "--format", "png", kCoffee, out.string()});
  EXPECT_EQ(same.err.find("warning"), std::string::npos) << same.err;
}

// An encoder option that the output's format does not take is ignored with one warning naming
// the option and the format (as ImageMagick and libvips users expect), not silently; one that
// some outputs of a batch take is no mistake and goes unsaid. The output is written all the same.
TEST_F(Cli, EncoderOptionsTheOutputDoesNotTakeAreWarnedAbout) {
  const std::string in = (in_ / "plain.png").string();  // no metadata: no other warning
  save_image(random_image(24, 16, 3, 5), in);
  const std::string quality = "--quality does not apply to ",
                    lossy = " (it is for JPEG and lossy WebP)";
  struct Case {
    std::vector<std::string> options;
    std::string output;
    std::vector<std::string> warnings;  // each line without "blurtool: warning: " and "; ignored"
  };
  const std::vector<Case> cases = {
      {{"--quality", "80", "--webp-lossless"},
       "q.png",
       {quality + "PNG output" + lossy,
        "--webp-lossless does not apply to PNG output (it is for WebP)"}},
      {{"--quality", "80"}, "q.tif", {quality + "TIFF output" + lossy}},
      {{"--quality", "80", "--webp-lossless"},
       "q.webp",
       {quality + "lossless WebP output" + lossy}},
      {{"--subsampling", "444"},
       "s.webp",
       {"--subsampling does not apply to WebP output (it is for JPEG)"}},
      {{"--subsampling", "444"},
       "s.png",
       {"--subsampling does not apply to PNG output (it is for JPEG)"}},
      {{"--subsampling", "444"},
       "s.tif",
       {"--subsampling does not apply to TIFF output (it is for JPEG)"}},
      {{"--png-level", "9"},
       "l.jpg",
       {"--png-level does not apply to JPEG output (it is for PNG and TIFF)"}},
      {{"--png-level", "9"},
       "l.webp",
       {"--png-level does not apply to WebP output (it is for PNG and TIFF)"}},
      {{"--webp-lossless"},
       "w.jpg",
       {"--webp-lossless does not apply to JPEG output (it is for WebP)"}},
      // Options the format takes, given or at their defaults: nothing said.
      {{"--quality", "80", "--subsampling", "444"}, "ok.jpg", {}},
      {{"--quality", "80"}, "ok.webp", {}},
      {{"--png-level", "9"}, "ok.png", {}},
      {{"--png-level", "9"}, "ok.tif", {}},
      {{"--webp-lossless"}, "ok2.webp", {}},
      {{}, "default.png", {}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.output);
    std::vector<std::string> args = {"--box", "1"};
    args.insert(args.end(), c.options.begin(), c.options.end());
    args.insert(args.end(), {in, (out_ / c.output).string()});
    const Result r = run(args);
    ASSERT_EQ(r.status, 0) << r.err;
    std::string expected;
    for (const std::string& w : c.warnings) expected += "blurtool: warning: " + w + "; ignored\n";
    EXPECT_EQ(r.err, expected);
    EXPECT_TRUE(fs::exists(out_ / c.output));
  }
  // A batch of PNG and TIFF outputs: --quality once for both formats; --png-level, which they
  // take, and --subsampling with a JPEG among them, not at all.
  const fs::path folder = root_ / "mixed";
  fs::create_directories(folder);
  save_image(random_image(24, 16, 3, 6), (folder / "a.png").string());
  save_image(random_image(24, 16, 3, 7), (folder / "b.png").string());
  fs::copy_file(out_ / "ok.tif", folder / "c.tif");
  Result r = run({"--box", "1", "--quality", "80", "--png-level", "9", folder.string(),
                  (root_ / "batch").string() + "/"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.rfind("blurtool: warning: --quality does not apply to PNG or TIFF output" +
                            lossy + "; ignored\nblurtool: 3 done",
                        0),
            0u)
      << r.err;
  fs::copy_file(out_ / "ok.jpg", folder / "d.jpg");
  r = run({"--box", "1", "--quality", "80", "--subsampling", "444", folder.string(),
           (root_ / "batch2").string() + "/"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace blurtool
