// End-to-end tests of the command line: usage errors naming the option at fault, and --help against
// the variants, edge modes and the man page. Each test runs the real binary (fork + execve, no
// shell, so paths with spaces need no quoting) in its own temporary directory, whose name holds
// spaces on purpose, with stdout and stderr captured to files (support/cli_fixture.h). Successful
// runs are decoded and compared with the exact CPU reference; failures must give the documented
// exit status (1 file or device, 2 usage), a stderr line naming the file or option at fault, and
// leave the output directory exactly as it was (no output, no hidden .NAME.blurtool-XXXXXX
// temporary file).
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "filters/box/box_blur.h"
#include "filters/gauss/gauss_blur.h"
#include "image/image_io.h"
#include "tests/support/cli_fixture.h"

namespace blurtool {
namespace {

// Whether `word` occurs in `text` with no name character ([a-z0-9-]) touching either side.
bool has_word(const std::string& text, const std::string& word) {
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; };
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !name_char(text[at - 1])) && (end == text.size() || !name_char(text[end])))
      return true;
  }
  return false;
}

TEST_F(Cli, UsageErrorsNameTheOptionAtFault) {
  const std::string out = out_ / "o.png";
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"--box", "-3", kCoffee, out}, {"--box", "-3"}},
      {{"--box", "abc", kCoffee, out}, {"--box", "abc"}},
      {{"--box", "3", "--variant", "foo", kCoffee, out}, {"--variant", "foo", "unrolled"}},
      // Another filter's schedule is named as such.
      {{"--box", "3", "--variant", "naive", kCoffee, out},
       {"--variant 'naive'", "a schedule of --gauss, not of --box", "segmented-local"}},
      {{"--gauss", "3", "--variant", "segmented", kCoffee, out},
       {"--variant 'segmented'", "a schedule of --box, not of --gauss", "fused-mma"}},
      {{"--box", "3", "--intermediate", "rgba64", kCoffee, out}, {"--intermediate", "rgba32f"}},
      {{"--box", "3", kCoffee, out_ / "out.bmp"}, {"out.bmp", ".png"}},
      {{kCoffee, out}, {"no operation given", "--box"}},
      // A mistyped subcommand: a first word that is no file.
      {{"benchh"}, {"'benchh' is no subcommand (bench, blas, probe, tune)", "--box"}},
      {{"--box", "3", kCoffee}, {"got 1 file argument"}},
      {{"--box", "3", "--device", "nosuchdevice", kCoffee, out}, {"--device", "nosuchdevice"}},
      // found by fuzz_options: an empty OUTPUT was read past its start
      {{"--box", "3", kCoffee, ""}, {"empty file argument"}},
      {{"--box", "3", "", out}, {"empty file argument"}},
      {{"--box", "3", kCoffee, "-o", ""}, {"-o ''"}},
      // A switch with a value cxxopts does not take ("Argument 'no' failed to parse").
      {{"--box", "3", "--linear-light=no", kCoffee, out}, {"'--linear-light=no'", "switch"}},
      {{"--box", "3", "--force=yes", kCoffee, out}, {"'--force=yes'", "switch"}},
      {{"--box", "3", "--bench-format", "csv", kCoffee, out}, {"--bench-format", "--bench"}},
      {{"--box", "3", "--subsampling", "411", kCoffee, out},
       {"--subsampling", "'411'", "444, 422, 420"}},
      {{"--box", "3", "--subsampling", "4:4:4", kCoffee, out}, {"--subsampling", "'4:4:4'"}},
      {{"--box", "3", "--subsampling", "", kCoffee, out}, {"--subsampling", "''"}},
      {{"--box", "3", "--png-level", "10", kCoffee, out}, {"--png-level", "'10'", "0 to 9"}},
      {{"--box", "3", "--png-level", "-1", kCoffee, out}, {"--png-level", "'-1'", "0 to 9"}},
      {{"--box", "3", "--png-level", "fast", kCoffee, out}, {"--png-level", "'fast'", "0 to 9"}},
      {{"--box", "3", "--png-level", "1.5", kCoffee, out}, {"--png-level", "'1.5'", "0 to 9"}}};
  for (const auto& [args, parts] : cases) {
    SCOPED_TRACE(::testing::PrintToString(args));
    expect_failure(run(args), 2, parts, Files{});
  }
  // The values cxxopts takes still work.
  EXPECT_EQ(run({"--box", "1", "--linear-light=false", kCoffee, out}).status, 0);
}

// ImageMagick-style single-dash long options (`-box 8`) are named with the option meant, in the
// main command and in the subcommands; short options, clusters of them and negative values are
// read as before.
TEST_F(Cli, SingleDashLongOptionsSuggestTheLongOne) {
  const std::string out = out_ / "o.png";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"-box", "8", kCoffee, out}, "unknown option '-box': did you mean --box?"},
      {{"-gauss", "2", kCoffee, out}, "unknown option '-gauss': did you mean --gauss?"},
      {{"--box", "3", "-quality=90", kCoffee, out},
       "unknown option '-quality': did you mean --quality?"},
      {{"--box", "3", "-force", kCoffee, out}, "unknown option '-force': did you mean --force?"},
      {{"bench", "-quick"}, "unknown option '-quick': did you mean --quick?"},
      {{"blas", "saxpy", "-runs", "1"}, "unknown option '-runs': did you mean --runs?"},
      {{"tune", "-device", "0"}, "unknown option '-device': did you mean --device?"},
      {{"probe", "cache", "-device", "0"}, "unknown option '-device': did you mean --device?"}};
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(::testing::PrintToString(args));
    expect_failure(run(args), 2, {message}, Files{});
  }
  // A negative value is a value, with the message it had: not an option.
  expect_failure(run({"--box", "-1", kCoffee, out}), 2, {"--box '-1'"}, Files{});
  // A name no option has is still cxxopts' message.
  const Result unknown = run({"--box", "1", "-sharpen", kCoffee, out});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_EQ(unknown.err.find("did you mean"), std::string::npos) << unknown.err;
  // Short options and clusters of short switches still work.
  EXPECT_EQ(run({"--box", "1", "-q", kCoffee, out}).status, 0);
  const std::string folder = out_ / "f";
  const Result cluster = run({"--box", "1", "-rq", kCoffee, "-o", folder});
  EXPECT_EQ(cluster.status, 0) << cluster.err;
  EXPECT_TRUE(
      std::filesystem::exists(folder + "/" + std::filesystem::path(kCoffee).filename().string()));
}

TEST_F(Cli, HelpNamesEveryVariantAndEdgeMode) {
  const Result r = run({"--help"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& v : box_variant_table())
    EXPECT_TRUE(has_word(r.out, v.name)) << "--help lacks variant " << v.name << ":\n" << r.out;
  for (const auto& e : edge_mode_table())
    EXPECT_TRUE(has_word(r.out, e.name)) << "--help lacks edge mode " << e.name;
  EXPECT_NE(r.out.find("blurtool blas saxpy|sdot|sgemm"), std::string::npos)
      << "--help does not point to the blas subcommand";
}

TEST_F(Cli, HelpListsEveryOptionOfTheManPage) {
  // Every option the man page's OPTIONS section describes (a .TP paragraph's tag) is in --help:
  // the help once left out whole groups (image fidelity, input limits, large images).
  std::ifstream man(std::string(BLURTOOL_SOURCE_DIR) + "/man/blurtool.1");
  ASSERT_TRUE(man) << "cannot read man/blurtool.1";
  std::string line;
  bool in_options = false, tag = false;
  std::set<std::string> options;
  while (std::getline(man, line)) {
    if (line.rfind(".SH ", 0) == 0) in_options = line == ".SH OPTIONS";
    if (!in_options) continue;
    if (tag) {
      // Each "\-\-name" (roff's escaped hyphens; "\-" inside the name too).
      for (size_t at = line.find("\\-\\-"); at != std::string::npos;
           at = line.find("\\-\\-", at + 1)) {
        std::string name;
        for (size_t i = at + 4; i < line.size();) {
          const unsigned char c = line[i];
          if (std::islower(c) || std::isdigit(c)) {
            name += line[i++];
          } else if (line.compare(i, 2, "\\-") == 0 && !name.empty()) {
            name += '-';
            i += 2;
          } else {
            break;
          }
        }
        if (!name.empty()) options.insert("--" + name);
      }
    }
    tag = line == ".TP";
  }
  ASSERT_GT(options.size(), 30u) << "the man page's options were not found";
  const Result r = run({"--help"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const std::string& option : options)
    EXPECT_TRUE(has_word(r.out, option)) << "--help lacks " << option;
}

TEST_F(Cli, GaussUsageErrorsNameTheOptionAtFault) {
  const std::string in = in_ / "small.png", out = out_ / "o.png";
  save_image(random_image(31, 23, 3, 7), in);
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"--gauss", "0", in, out}, {"--gauss '0'", "above 0"}},
      {{"--gauss", "-1", in, out}, {"--gauss '-1'", "above 0"}},
      {{"--gauss", "nan", in, out}, {"--gauss 'nan'", "above 0"}},
      {{"--gauss", "inf", in, out}, {"--gauss 'inf'", "above 0"}},
      {{"--gauss", "1e999", in, out}, {"--gauss '1e999'", "above 0"}},
      {{"--gauss", "-4e-320", in, out}, {"--gauss '-4e-320'", "above 0"}},
      {{"--gauss", "1e-400", in, out}, {"--gauss '1e-400'", "above 0"}},  // rounds to 0
      {{"--gauss", "abc", in, out}, {"--gauss 'abc'"}},
      {{"--gauss", "2", "--radius", "-2", in, out}, {"--radius '-2'", "4096"}},
      {{"--gauss", "2", "--radius", "5000", in, out}, {"--radius '5000'", "4096"}},
      {{"--gauss", "2", "--wg", "16", in, out}, {"--wg '16'", "WxH"}},
      {{"--gauss", "2", "--wg", "0x4", in, out}, {"--wg '0x4'", "from 1 to 4096"}},
      {{"--gauss", "2", "--unroll", "4", in, out}, {"--unroll", "--box"}},
      {{"--gauss", "2", "--segment", "4", in, out}, {"--segment", "--variant fused"}},
      {{"--gauss", "2", "--variant", "fused", "--segment", "65", in, out},
       {"--segment '65'", "from 1 to 64"}},
      {{"--gauss", "2", "--variant", "fused", "--wg", "8x4", in, out}, {"--wg 8x4", "Gx1"}},
      {{"--gauss", "2", "--variant", "separable-local", "--segment", "8", in, out},
       {"--segment", "fused", "separable-buffer", "fused-mma"}},
      // fused-mma's rows a work-group: a multiple of 16 up to 1024 (checked before the device)
      {{"--gauss", "2", "--variant", "fused-mma", "--segment", "40", in, out},
       {"--segment 40", "fused-mma", "multiple of 16"}},
      {{"--gauss", "2", "--variant", "fused-mma", "--segment", "2048", in, out},
       {"--segment '2048'", "from 1 to 1024"}},
      {{"--gauss", "2", "--variant", "separable-buffer", "--segment", "33", in, out},
       {"--segment 33", "from 1 to 32"}},
      {{"--gauss", "2", "--variant", "separable-buffer", "--wg", "100x1", in, out},
       {"--wg 100x1", "multiple of 8"}},
      // fused and separable-buffer are unrolled for the radius: refused before the build above
      // R 128 (PoCL, whose 1 MiB of local memory held fused's tile at R 4000, took over 15
      // minutes to build it).
      {{"--gauss", "1000", "--radius", "4000", "--variant", "fused", in, out},
       {"--radius 4000", "fused", "up to 128", "tiled"}},
      {{"--gauss", "50", "--radius", "129", "--variant", "separable-buffer", in, out},
       {"--radius 129", "separable-buffer", "up to 128"}},
      // ceil(3 SIGMA) overflowed an int once and was reported as a negative --radius.
      {{"--gauss", "1e9", in, out}, {"--gauss 1e+09", "give --radius"}},
      {{"--gauss", "9", "--gauss-method", "fast", "--radius", "5", in, out},
       {"--radius 5", "--gauss-method exact"}},
      {{"--gauss", "9", "--gauss-method", "fast", "--variant", "separable", in, out},
       {"--variant separable", "exact method"}},
      {{"--gauss", "9", "--gauss-method", "fast", "--wg", "8x1", in, out},
       {"--wg", "--gauss-method exact"}},
      {{"--gauss", "9", "--gauss-method", "fast", "--intermediate", "rgba8", in, out},
       {"--intermediate rgba8", "rgba32f"}},
      {{"--gauss", "9", "--gauss-method", "fast", "--segment", "70000", in, out},
       {"--segment '70000'", "65536"}},
      {{"--gauss", "9", "--gauss-method", "fast", "--sweep-wg", in, out},
       {"--sweep-wg", "--gauss-method exact"}},
      {{"--gauss", "40", "--sweep-wg", in, out}, {"--sweep-wg", "SIGMA below 8", "pyramid"}},
      {{"--gauss", "9", "--gauss-method", "pyramid", "--segment", "64", in, out},
       {"--segment", "--gauss-method fast"}},
      {{"--gauss", "9", "--gauss-method", "pyramid", "--radius", "5", in, out},
       {"--radius 5", "--gauss-method exact", "pyramid"}},
      {{"--gauss", "2", "--gauss-method", "slow", in, out}, {"--gauss-method", "slow"}},
      {{"--gauss", "9", "--cascade", "streams", in, out},
       {"--cascade streams", "fast method", "--gauss-method fast"}},
      {{"--gauss", "40", "--cascade", "queues", in, out}, {"--cascade", "queues"}},
      {{"--box", "3", "--cascade", "rings", in, out}, {"--cascade", "--gauss"}},
      {{"--box", "3", "--gauss-method", "fast", in, out}, {"--gauss-method", "--gauss"}},
      {{"--box", "3", "--radius", "4", in, out}, {"--radius", "--gauss", "--box R"}},
      {{"--box", "3", "--wg", "8x8", in, out}, {"--wg", "--gauss"}},
      {{"--box", "3", "--sweep-wg", in, out}, {"--sweep-wg", "--gauss"}},
      {{"--box", "3", "--gauss", "2", in, out}, {"--box", "--gauss", "one"}},
      {{"--gauss", "2", "--variant", "scan", in, out}, {"--variant 'scan'", "separable-linear"}},
      {{"--gauss", "2", "--variant", "tiled", "--segment", "20", in, out},
       {"--segment 20", "tiled", "multiple of 16"}},
      {{"--gauss", "2", "--variant", "tiled", "--segment", "2048", in, out},
       {"--segment", "2048", "1024"}},
      {{"--gauss", "2", "--variant", "separable-local", "--wg", "16x16", in, out},
       {"--wg 16x16", "Gx1"}},
      {{"--gauss", "2", "--variant", "naive", "--wg", "4096x4096", in, out},
       {"--wg 4096x4096", "CL_KERNEL_WORK_GROUP_SIZE"}},
      // (8+2000)^2 * 4 bytes of tile: more local memory than any device has (PoCL gives as
      // much as the CPU's L2 cache, 2 MiB or more).
      {{"--gauss", "100", "--radius", "1000", "--variant", "naive-local", "--wg", "8x8", in, out},
       {"--wg 8x8", "CL_DEVICE_LOCAL_MEM_SIZE"}}};
  for (const auto& [args, parts] : cases) {
    SCOPED_TRACE(::testing::PrintToString(args));
    expect_failure(run(args), 2, parts, Files{});
  }
}

TEST_F(Cli, HelpNamesEveryGaussVariantAndOption) {
  const Result r = run({"--help"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& v : gauss_variant_table())
    EXPECT_TRUE(has_word(r.out, v.name)) << "--help lacks variant " << v.name << ":\n" << r.out;
  for (const char* option : {"--gauss", "--gauss-method", "--radius", "--wg", "--sweep-wg"})
    EXPECT_TRUE(has_word(r.out, option)) << "--help lacks " << option;
}

}  // namespace
}  // namespace blurtool
