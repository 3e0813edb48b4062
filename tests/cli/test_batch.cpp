// End-to-end tests of blurtool's batch mode and of the single-image rules it shares (see
// build/batch-spec.md): each test runs the real binary (fork + execve, no shell) in its own
// temporary directory, whose name holds spaces on purpose, with stdin, stdout and stderr
// redirected to files. Outputs are decoded and compared with the exact CPU reference, or byte
// for byte with what single mode writes for the same input; failures must give the documented
// exit status (1 some file failed, 2 usage error), a stderr line naming the file or option and
// the reason, a summary line with the right counts, and an output folder holding exactly the
// expected files (no partial or temporary file). Images are small (at most 64x48) so that the
// whole suite runs in seconds on the CPU device.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "filters/box/box_reference.h"
#include "filters/bright/bright_points.h"
#include "image/image_io.h"
#include "tests/support/cli_support.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

using Files = std::set<std::string>;

// Every entry under `dir` (hidden ones too), as paths relative to it; folders end in '/'.
Files tree(const fs::path& dir) {
  Files names;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string name = fs::relative(e.path(), dir).string();
    if (e.is_directory()) name += '/';
    names.insert(name);
  }
  return names;
}

// Every file under `dir` with its bytes.
std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = read_file(e.path());
  return files;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Whether one line of `err` holds every one of `parts` (case-insensitive).
bool has_line(const std::string& err, const std::vector<std::string>& parts) {
  for (const std::string& line : lines_of(lower(err))) {
    bool all = true;
    for (const std::string& part : parts) all = all && line.find(lower(part)) != std::string::npos;
    if (all) return true;
  }
  return false;
}

// Whether one line of `err` names `file` and one of the `reasons` (case-insensitive).
bool reports(const std::string& err, const std::string& file,
             const std::vector<std::string>& reasons) {
  for (const std::string& reason : reasons)
    if (has_line(err, {file, reason})) return true;
  return false;
}

bool starts_with(const std::string& bytes, const std::string& prefix) {
  return bytes.compare(0, prefix.size(), prefix) == 0;
}

const std::string kPngSignature = "\x89PNG\r\n\x1a\n";

const std::string kJpegSignature = "\xFF\xD8\xFF";

class Batch : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    root_ =
        fs::temp_directory_path() / ("blurtool batch " + name + " " + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(in_ = root_ / "in dir");
    fs::create_directories(single_ = root_ / "single");
    out_ = root_ / "out dir";  // batch mode creates it
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // Runs blurtool with `args` in the test's root (BLURTOOL_DEVICE removed from the
  // environment: the default device). Standard input comes from `stdin_path` (else
  // /dev/null); standard output goes to `stdout_path` (else to a file read into Result::out).
  Result run(const std::vector<std::string>& args, const fs::path& stdin_path = {},
             const fs::path& stdout_path = {}) {
    Spawn spawn;
    spawn.stdin_path = stdin_path;
    spawn.stdout_path = stdout_path;
    return run_blurtool(args, root_, root_, spawn);
  }

  // What single mode writes for `input` with `op` (e.g. {"--box", "2"}) into single_/`name`.
  std::string single(const std::vector<std::string>& op, const fs::path& input,
                     const std::string& name) {
    std::vector<std::string> args = op;
    args.push_back(input.string());
    args.push_back((single_ / name).string());
    const Result r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return read_file(single_ / name);
  }

  // Saves a random w x h image of `channels` at `path` (format by its extension).
  // The images column of stage `name`'s row in a batch's --bench table (-1 if none).
  static int stage_images(const std::string& out, const std::string& name) {
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(name + " ", 0) != 0) continue;
      std::istringstream row(line.substr(name.size()));
      int images = -1;
      row >> images;
      return images;
    }
    return -1;
  }

  Image make_image(const fs::path& path, unsigned seed, int w = 64, int h = 48, int channels = 3) {
    fs::create_directories(path.parent_path());
    const Image img = random_image(w, h, channels, seed);
    save_image(img, path.string());
    return load_image(path.string());  // what blurtool will read (JPEG is lossy)
  }

  // Checks the summary: the last line of stderr, the only one of its kind, with these counts
  // (`ignored`: files of the input folders that are no image name).
  void expect_summary(const Result& r, int done, int skipped, int failed, int ignored = 0) {
    static const std::regex summary(
        R"(blurtool: (\d+) done, (\d+) skipped( \([^)]*--force replaces (it|them)[^)]*\)|)"
        R"( \(\d+ outputs? appeared while the batch ran\))?, )"
        R"((\d+) failed in \d+\.\d s(: \d+\.\d images/s, \d+\.\d MB/s)?)"
        R"((; (\d+) ignored: not an image format blurtool reads)?$)");
    const std::vector<std::string> lines = lines_of(r.err);
    int found = 0;
    for (const std::string& line : lines) found += std::regex_search(line, summary) ? 1 : 0;
    ASSERT_EQ(found, 1) << "want one summary line in:\n" << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines.back(), m, summary)) << "last line: " << lines.back();
    EXPECT_EQ(std::stoi(m[1]), done) << r.err;
    EXPECT_EQ(std::stoi(m[2]), skipped) << r.err;
    EXPECT_EQ(m[3].matched, skipped > 0) << r.err;
    EXPECT_EQ(std::stoi(m[5]), failed) << r.err;
    EXPECT_EQ(m[6].matched, done > 0) << r.err;  // rates only of work done
    EXPECT_EQ(m[7].matched ? std::stoi(m[8]) : 0, ignored) << r.err;
  }

  fs::path root_, in_, out_, single_;
};

// The blurred reference of an image file, as single mode and batch mode must write it as PNG.
Image box_of(const fs::path& input, int radius) {
  return expected_box(load_image(input.string()), radius, EdgeMode::clamp);
}

// Several device threads (lanes) on one device, each with its own queue and filters, images of
// several sizes and channel counts interleaved among them: every output is the one single mode
// writes, byte for byte (a filter or buffer shared between lanes would mix images up).
TEST_F(Batch, SeveralLanesOnOneDeviceWriteWhatSingleModeWrites) {
  const std::vector<std::tuple<std::string, int, int, int>> images = {
      {"a.png", 64, 48, 3}, {"b.png", 37, 23, 4}, {"c.png", 64, 48, 3}, {"d.png", 19, 41, 1},
      {"e.jpg", 64, 48, 3}, {"f.png", 37, 23, 4}, {"g.png", 64, 48, 2}, {"h.jpg", 40, 30, 3}};
  unsigned seed = 40;
  for (const auto& [name, w, h, c] : images) make_image(in_ / name, seed++, w, h, c);
  ::setenv("BLURTOOL_DEVICE_LANES", "3", 1);
  // --device 0: on the device's lanes, not the host lane; single mode's outputs are the host's.
  const Result r =
      run({"--device", "0", "--box", "3", "--jobs", "3", "--quiet", in_.string(), out_.string()});
  ::unsetenv("BLURTOOL_DEVICE_LANES");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& [name, w, h, c] : images) {
    SCOPED_TRACE(name);
    EXPECT_EQ(read_file(out_ / name), single({"--box", "3"}, in_ / name, name));
  }
}

// The host lane: with no device named the workers filter a box filter's images themselves
// (here, on a CPU device alone, every image they can); an image they cannot (transparency,
// blurred premultiplied at 16 bits; a 16-bit file) still goes to the device, opened for it,
// and the outputs are the device's bytes. --device host runs every image on the host and fails
// those alone, by name; it refuses the options it cannot run, and devices beside it.
TEST_F(Batch, TheHostLaneWritesWhatTheDeviceWrites) {
  const std::vector<std::tuple<std::string, int, int, int>> images = {
      {"a.png", 64, 48, 3}, {"b.png", 37, 23, 4}, {"c.jpg", 64, 48, 3}, {"d.png", 19, 41, 1}};
  unsigned seed = 70;
  for (const auto& [name, w, h, c] : images) make_image(in_ / name, seed++, w, h, c);
  Image16 deep;
  deep.width = 9;
  deep.height = 7;
  deep.channels = 3;
  for (int i = 0; i < 9 * 7 * 3; ++i) deep.pixels.push_back(static_cast<std::uint16_t>(i * 997));
  save_image(deep, (in_ / "e.png").string());
  const Result device = run({"--device", "0", "--box", "2", in_.string(), out_.string() + "d"});
  ASSERT_EQ(device.status, 0) << device.err;
  const Result lane = run({"--box", "2", "--bench", in_.string(), out_.string() + "l"});
  ASSERT_EQ(lane.status, 0) << lane.err;
  EXPECT_EQ(stage_images(lane.out, "host filter"), 3) << lane.out;  // a, c, d
  EXPECT_EQ(stage_images(lane.out, "device"), 2) << lane.out;       // b, e
  for (const auto& [name, w, h, c] : images)
    EXPECT_EQ(read_file(out_.string() + "l/" + name), read_file(out_.string() + "d/" + name))
        << name;
  EXPECT_EQ(read_file(out_.string() + "l/e.png"), read_file(out_.string() + "d/e.png"));

  const Result host = run({"--device", "host", "--box", "2", in_.string(), out_.string() + "h"});
  EXPECT_EQ(host.status, 1) << host.err;
  expect_summary(host, 3, 0, 2);
  EXPECT_TRUE(has_line(host.err, {"b.png: it has transparency, which blurs premultiplied",
                                  "on an opencl device, not the host"}))
      << host.err;
  EXPECT_TRUE(has_line(host.err, {"e.png: it stores 16-bit samples, which blur on an opencl "
                                  "device, not the host"}))
      << host.err;
  for (const char* name : {"a.png", "c.jpg", "d.png"})
    EXPECT_EQ(read_file(out_.string() + "h/" + name), read_file(out_.string() + "d/" + name))
        << name;
  EXPECT_FALSE(fs::exists(out_.string() + "h/b.png"));

  // A Gaussian on the host lane (the pyramid from sigma 8): within 1 level of its reference,
  // counted in the host filter row and reported on device "host".
  const Result gauss = run({"--device", "host", "--gauss", "9", "--bench", "--report",
                            (root_ / "g.jsonl").string(), in_.string(), out_.string() + "g"});
  EXPECT_EQ(gauss.status, 1) << gauss.err;  // b and e need a device
  EXPECT_EQ(stage_images(gauss.out, "host filter"), 3) << gauss.out;
  for (const char* name : {"a.png", "d.png"}) {
    const Image input = load_image((in_ / name).string());
    EXPECT_LE(max_diff(load_image(out_.string() + "g/" + name),
                       gauss_pyramid_reference(input, 9, EdgeMode::clamp)),
              1)
        << name;
  }
  EXPECT_NE(read_file(root_ / "g.jsonl").find("\"device\":\"host\""), std::string::npos);

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--device", "host", "--bright", "0.8"},
        std::vector<std::string>{"--devices", "host,0", "--box", "2"},
        std::vector<std::string>{"--device", "host", "--box", "2", "--variant", "scan"}}) {
    std::vector<std::string> all = args;
    all.push_back(in_.string());
    all.push_back(out_.string() + "x");
    const Result r = run(all);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(has_line(r.err, {"host"})) << r.err;
    EXPECT_FALSE(fs::exists(out_.string() + "x"));
  }
}

// On CPU devices alone the host lane takes every image it can and writes it at once; the device
// is opened late, for an image it cannot take (transparency). A device that then fails to open
// (here its program does not build) fails that image alone, with the reason: the outputs
// already written stay, the rest are written, and the summary says so.
TEST_F(Batch, ADeviceOpenedLateThatFailsFailsItsImagesAlone) {
  if (runtime().device().type & CL_DEVICE_TYPE_GPU) GTEST_SKIP() << "needs CPU devices alone";
  for (int i = 0; i < 6; ++i)
    make_image(in_ / ("a" + std::to_string(i) + ".png"), 90 + i, 40, 30, 3);
  make_image(in_ / "z.png", 99, 20, 10, 4);  // random alpha: transparency
  ::setenv("BLURTOOL_CL_OPTIONS", "-include /nonexistent/header.h", 1);
  ::setenv("BLURTOOL_PROGRAM_CACHE", "0", 1);
  const Result r = run({"--box", "2", "--jobs", "1", "--report", (root_ / "r.jsonl").string(),
                        in_.string(), out_.string()});
  ::unsetenv("BLURTOOL_CL_OPTIONS");
  ::unsetenv("BLURTOOL_PROGRAM_CACHE");
  EXPECT_EQ(r.status, 1) << r.err;
  expect_summary(r, 6, 0, 1);
  EXPECT_TRUE(has_line(r.err, {"z.png: the device, opened for this image, failed"})) << r.err;
  for (int i = 0; i < 6; ++i) {
    const std::string name = "a" + std::to_string(i) + ".png";
    EXPECT_EQ(max_diff(load_image((out_ / name).string()), box_of(in_ / name, 2)), 0) << name;
  }
  EXPECT_FALSE(fs::exists(out_ / "z.png"));
  const std::string report = read_file(root_ / "r.jsonl");
  EXPECT_NE(report.find("\"record\":\"summary\""), std::string::npos) << report;
  EXPECT_NE(report.find("z.png\",\"output\""), std::string::npos) << report;
}

// With no device named and no OpenCL driver at all, a batch's host lane still makes every
// image it can take, and the one that needs a device fails alone, naming why: whether the batch
// is short (the platforms never listed until that image asks) or long (listed after the first
// image, and none found); BLURTOOL_HOST_BATCH_MS makes it either.
TEST_F(Batch, WithNoOpenCLDriverTheHostLaneMakesWhatItCan) {
  for (int i = 0; i < 4; ++i)
    make_image(in_ / ("a" + std::to_string(i) + ".png"), 70 + i, 40, 30, 3);
  make_image(in_ / "z.png", 99, 20, 10, 4);  // random alpha: transparency, for a device
  const fs::path empty = root_ / "no-icd";
  fs::create_directories(empty);
  ::setenv("OCL_ICD_VENDORS", empty.c_str(), 1);
  for (const char* short_ms : {"600000", "0"}) {
    SCOPED_TRACE(short_ms);
    const fs::path out = out_ / short_ms;
    ::setenv("BLURTOOL_HOST_BATCH_MS", short_ms, 1);
    const Result r = run({"--box", "2", "--jobs", "2", in_.string(), out.string()});
    ::unsetenv("BLURTOOL_HOST_BATCH_MS");
    EXPECT_EQ(r.status, 1) << r.err;
    expect_summary(r, 4, 0, 1);
    EXPECT_TRUE(has_line(r.err, {"z.png: it needs an OpenCL device, and none could be listed",
                                 "no OpenCL platform"}))
        << r.err;
    for (int i = 0; i < 4; ++i) {
      const std::string name = "a" + std::to_string(i) + ".png";
      EXPECT_EQ(max_diff(load_image((out / name).string()), box_of(in_ / name, 2)), 0) << name;
    }
    EXPECT_FALSE(fs::exists(out / "z.png"));
  }
  // A batch with nothing to do needs no device either.
  fs::create_directories(root_ / "nothing");
  const Result nothing = run({"--box", "2", (root_ / "nothing").string(), (out_ / "e").string()});
  EXPECT_EQ(nothing.status, 0) << nothing.err;
  // A device named that does not open still ends the batch before any output.
  const Result named = run({"--box", "2", "--device", "0", in_.string(), (out_ / "n").string()});
  ::unsetenv("OCL_ICD_VENDORS");
  EXPECT_EQ(named.status, 1) << named.err;
  EXPECT_NE(named.err.find("no OpenCL platform"), std::string::npos) << named.err;
  EXPECT_FALSE(fs::exists(out_ / "n" / "a0.png"));
}

// The short-batch estimate (the host lane's first images deciding whether the rest is worth a
// GPU's opening) counts the rest by its files' bytes, at the rate of the first images' bytes: two
// tiny images first and a large one after them make the rest long, where counting images would
// make it half a tiny image's time. BLURTOOL_TRACE prints the estimate.
TEST_F(Batch, TheShortBatchEstimateCountsTheRestByItsBytes) {
  make_image(in_ / "a0.png", 80, 2, 2, 3);
  make_image(in_ / "a1.png", 81, 2, 2, 3);
  make_image(in_ / "z.png", 82, 600, 600, 3);  // noise: over 10,000 times a0's bytes
  ::setenv("BLURTOOL_TRACE", "1", 1);
  const Result r = run({"--box", "2", "--jobs", "2", in_.string(), out_.string()});
  ::unsetenv("BLURTOOL_TRACE");
  ASSERT_EQ(r.status, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(estimate of the rest, ms (\d+))")))
      << r.err;
  EXPECT_GE(std::stoul(m[1]), 20u) << r.err;
  for (const char* name : {"a0.png", "a1.png", "z.png"})
    EXPECT_EQ(max_diff(load_image((out_ / name).string()), box_of(in_ / name, 2)), 0) << name;
}

TEST_F(Batch, PinnedStagingWritesWhatPageableTransfersWrite) {
  // GPUs stage uploads and downloads through pinned memory (run_filter); forced here on the CPU
  // device (which otherwise filters in place: BLURTOOL_ZERO_COPY, the comparison's side), over
  // sizes that change from image to image (the staging is made again), on buffer
  // schedules (the default on a CPU) and image ones (double), in a batch and in single mode.
  // e and f hold 1 MiB or more as RGBA: a batch decodes them into, and downloads their
  // results into, its pool of pinned memory (f fits the block e leaves). A second batch
  // leaves the CPU device filtering in place where the pixels are not the pool's.
  const std::vector<std::tuple<std::string, int, int, int>> images = {
      {"a.png", 64, 48, 3}, {"b.png", 37, 23, 4},   {"c.jpg", 64, 48, 3},
      {"d.png", 19, 41, 1}, {"e.png", 640, 512, 3}, {"f.jpg", 520, 512, 4}};
  unsigned seed = 60;
  for (const auto& [name, w, h, c] : images) make_image(in_ / name, seed++, w, h, c);
  for (const std::vector<std::string>& op :
       {std::vector<std::string>{"--device", "0", "--box", "3"},  // not the host's cores
        std::vector<std::string>{"--box", "3", "--variant", "double"},
        // An explicit Gaussian schedule: on a GPU single mode's auto takes one that builds
        // faster than a batch's (for_one_image), within one level but not the same bytes.
        std::vector<std::string>{"--gauss", "1.5", "--variant", "separable"}}) {
    SCOPED_TRACE(::testing::PrintToString(op));
    fs::remove_all(out_);
    ::setenv("BLURTOOL_PINNED_STAGING", "1", 1);
    ::setenv("BLURTOOL_ZERO_COPY", "0", 1);
    ::setenv("BLURTOOL_DEVICE_LANES", "2", 1);
    std::vector<std::string> args = op;
    for (const std::string& a : {std::string("--quiet"), in_.string(), out_.string()})
      args.push_back(a);
    const Result r = run(args);
    const std::string staged_single = single(op, in_ / "b.png", "b.png");
    ::unsetenv("BLURTOOL_ZERO_COPY");
    const fs::path mixed = root_ / "mixed";
    fs::remove_all(mixed);
    std::vector<std::string> mixed_args = op;
    for (const std::string& a : {std::string("--quiet"), in_.string(), mixed.string()})
      mixed_args.push_back(a);
    const Result m = run(mixed_args);
    ::unsetenv("BLURTOOL_DEVICE_LANES");
    ::setenv("BLURTOOL_PINNED_STAGING", "0", 1);
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(m.status, 0) << m.err;
    for (const auto& [name, w, h, c] : images) {
      SCOPED_TRACE(name);
      const std::string pageable = single(op, in_ / name, name);
      EXPECT_FALSE(pageable.empty());
      EXPECT_EQ(read_file(out_ / name), pageable);
      EXPECT_EQ(read_file(mixed / name), pageable);
      if (name == "b.png") {
        EXPECT_EQ(staged_single, pageable);
      }
    }
    ::unsetenv("BLURTOOL_PINNED_STAGING");
  }
}

TEST_F(Batch, FolderWithBrokenFilesWritesGoodOnesAndReportsEachFailure) {
  const Image rgb = make_image(in_ / "good rgb.png", 1);
  make_image(in_ / "good rgba.png", 2, 40, 30, 4);
  make_image(in_ / "good grey.png", 3, 33, 17, 1);
  make_image(in_ / "photo.jpg", 4);
  // A PNG under a JPEG name: decoded by its content, written as JPEG (its name), with a warning.
  save_image(random_image(20, 10, 3, 5), (root_ / "real.png").string());
  fs::copy_file(root_ / "real.png", in_ / "misnamed.jpg");
  fs::copy_file(in_ / "photo.jpg", in_ / "misnamed.png");  // and a JPEG under a PNG name
  // Broken ones.
  const std::string jpeg = read_file(in_ / "photo.jpg");
  write_file(in_ / "truncated.jpg", jpeg.substr(0, jpeg.size() / 2));
  write_file(in_ / "empty.png", "");
  write_file(in_ / "text.png", "not an image\n");
  const auto inputs_before = contents(in_);

  const Result r = run({"--box", "2", in_.string(), out_.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "");
  // Each broken file named with its reason; no other failure.
  const std::string dir = in_.string() + "/";
  EXPECT_TRUE(reports(r.err, dir + "truncated.jpg", {"truncated"})) << r.err;
  EXPECT_TRUE(reports(r.err, dir + "empty.png", {"empty"})) << r.err;
  EXPECT_TRUE(reports(r.err, dir + "text.png", {"not a png, jpeg, tiff or webp", "not an image"}))
      << r.err;
  EXPECT_TRUE(has_line(r.err, {"warning", dir + "misnamed.jpg", "png"})) << r.err;
  EXPECT_TRUE(has_line(r.err, {"warning", dir + "misnamed.png", "jpeg"})) << r.err;
  for (const char* good : {"good rgb.png", "good rgba.png", "good grey.png", "photo.jpg"})
    EXPECT_FALSE(has_line(r.err, {dir + good})) << r.err;
  expect_summary(r, 6, 0, 3);

  // Exactly the good outputs: nothing for the broken inputs, no temporary file.
  EXPECT_EQ(tree(out_), (Files{"good rgb.png", "good rgba.png", "good grey.png", "photo.jpg",
                               "misnamed.jpg", "misnamed.png"}));
  EXPECT_EQ(contents(in_), inputs_before) << "an input changed";
  // PNG outputs are the exact box blur, with the input's channel count.
  EXPECT_EQ(max_diff(load_image((out_ / "good rgb.png").string()),
                     box_blur_reference(rgb, 2, EdgeMode::clamp)),
            0);
  for (const char* name : {"good rgba.png", "good grey.png"})
    EXPECT_EQ(max_diff(load_image((out_ / name).string()), box_of(in_ / name, 2)), 0) << name;
  // JPEG outputs: the very bytes single mode writes; the misnamed one is a real JPEG.
  EXPECT_EQ(read_file(out_ / "photo.jpg"), single({"--box", "2"}, in_ / "photo.jpg", "photo.jpg"));
  const std::string misnamed = read_file(out_ / "misnamed.jpg");
  EXPECT_TRUE(starts_with(misnamed, kJpegSignature));
  EXPECT_EQ(misnamed, single({"--box", "2"}, in_ / "misnamed.jpg", "misnamed.jpg"));
  EXPECT_TRUE(starts_with(read_file(out_ / "misnamed.png"), kPngSignature));
  EXPECT_EQ(max_diff(load_image((out_ / "misnamed.png").string()), box_of(in_ / "photo.jpg", 2)),
            0);
}

TEST_F(Batch, SecondRunSkipsExistingOutputsAndForceRewritesThem) {
  for (unsigned i = 0; i < 3; ++i) make_image(in_ / ("p" + std::to_string(i) + ".png"), 10 + i);
  Result r = run({"--box", "1", in_.string(), out_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_summary(r, 3, 0, 0);
  const auto first = contents(out_);
  ASSERT_EQ(first.size(), 3u);

  // Replace one output with a stale marker and age every output: skipping must keep them.
  write_file(out_ / "p1.png", "stale");
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(24);
  for (const auto& [name, bytes] : first) fs::last_write_time(out_ / name, old);
  const auto before = contents(out_);

  r = run({"--box", "1", in_.string(), out_.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  expect_summary(r, 0, 3, 0);
  // The summary says why nothing was made, and how to remake them, even with other settings.
  EXPECT_NE(r.err.find("0 done, 3 skipped (3 outputs kept from an earlier run; --force "
                       "replaces them), 0 failed"),
            std::string::npos)
      << r.err;
  r = run({"--box", "2", in_.string(), out_.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("(3 outputs kept from an earlier run; --force replaces them)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(contents(out_), before);
  for (const auto& [name, bytes] : first) EXPECT_EQ(fs::last_write_time(out_ / name), old) << name;

  r = run({"--box", "1", "--force", in_.string(), out_.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  expect_summary(r, 3, 0, 0);
  EXPECT_EQ(contents(out_), first);  // the stale one rewritten; none other changed
  for (const auto& [name, bytes] : first) EXPECT_NE(fs::last_write_time(out_ / name), old) << name;
  EXPECT_EQ(max_diff(load_image((out_ / "p1.png").string()), box_of(in_ / "p1.png", 1)), 0);

  // Skips alongside a failure: exit 1, both counted.
  write_file(in_ / "zz broken.png", "xx");
  r = run({"--box", "1", in_.string(), out_.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  expect_summary(r, 0, 3, 1);
}

TEST_F(Batch, OutputFolderEqualToInputFolderFailsEveryFileAndKeepsInputs) {
  make_image(in_ / "a.png", 20);
  make_image(in_ / "b.jpg", 21);
  const auto before = contents(in_);
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, std::vector<std::string>{"--force"}}) {
    std::vector<std::string> args = {"--box", "2", in_.string(), in_.string()};
    args.insert(args.begin(), extra.begin(), extra.end());
    const Result r = run(args);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_TRUE(reports(r.err, in_.string() + "/a.png", {"is the input file"})) << r.err;
    EXPECT_TRUE(reports(r.err, in_.string() + "/b.jpg", {"is the input file"})) << r.err;
    expect_summary(r, 0, 0, 2);
    EXPECT_EQ(contents(in_), before) << "an input changed";
    EXPECT_EQ(tree(in_), (Files{"a.png", "b.jpg"}));
  }
  // Explicit files with -o their own folder (named differently: trailing slash, "/./").
  const Result r = run({"--box", "2", (in_ / "a.png").string(), "-o", in_.string() + "/./"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has_line(r.err, {"a.png", "is the input file"})) << r.err;
  EXPECT_EQ(contents(in_), before) << "an input changed";
}

TEST_F(Batch, SingleModeOutputEqualToInputIsAUsageError) {
  make_image(in_ / "in.png", 30);
  fs::create_hard_link(in_ / "in.png", in_ / "link.png");
  const std::string before = read_file(in_ / "in.png");
  for (const std::string& output : {(in_ / "in.png").string(), in_.string() + "/../in dir/in.png",
                                    (in_ / "link.png").string()}) {
    const Result r = run({"--box", "2", (in_ / "in.png").string(), output});
    EXPECT_EQ(r.status, 2) << output << ": " << r.err;
    EXPECT_TRUE(has_line(r.err, {"is the input file; refusing to overwrite it"})) << r.err;
    EXPECT_EQ(read_file(in_ / "in.png"), before);
    EXPECT_EQ(tree(in_), (Files{"in.png", "link.png"}));
  }
  // The relative name of the same file, run from the test's root.
  const Result r = run({"--box", "2", "in dir/in.png", "./in dir/in.png"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(read_file(in_ / "in.png"), before);
}

TEST_F(Batch, StdinToStdoutEqualsSingleModeFileByteForByte) {
  make_image(in_ / "in.png", 40, 50, 40, 4);
  const std::string expected = single({"--box", "2"}, in_ / "in.png", "in.png");
  ASSERT_EQ(max_diff(load_image((single_ / "in.png").string()), box_of(in_ / "in.png", 2)), 0);

  const Result r = run({"--box", "2", "-", "-", "--format", "png"}, in_ / "in.png", root_ / "o");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(read_file(root_ / "o"), expected);

  // Without --format, stdin to stdout is PNG.
  const Result r2 = run({"--box", "2", "-", "-"}, in_ / "in.png", root_ / "o2");
  ASSERT_EQ(r2.status, 0) << r2.err;
  EXPECT_EQ(read_file(root_ / "o2"), expected);

  // stdin to a file: the format follows the output's name.
  const Result r3 = run({"--box", "2", "-", (root_ / "o3.jpg").string()}, in_ / "in.png");
  ASSERT_EQ(r3.status, 0) << r3.err;
  EXPECT_EQ(read_file(root_ / "o3.jpg"), single({"--box", "2"}, in_ / "in.png", "in.jpg"));
  EXPECT_TRUE(starts_with(read_file(root_ / "o3.jpg"), kJpegSignature));
}

TEST_F(Batch, StdoutFormatFollowsTheInputsExtensionElseFormat) {
  make_image(in_ / "photo.jpg", 41);
  make_image(in_ / "pic.png", 42);
  const Result r = run({"--box", "3", (in_ / "photo.jpg").string(), "-"}, {}, root_ / "o.jpg");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string jpeg = read_file(root_ / "o.jpg");
  EXPECT_TRUE(starts_with(jpeg, kJpegSignature));
  EXPECT_EQ(jpeg, single({"--box", "3"}, in_ / "photo.jpg", "photo.jpg"));

  const Result r2 = run({"--box", "3", (in_ / "pic.png").string(), "-"}, {}, root_ / "o.png");
  ASSERT_EQ(r2.status, 0) << r2.err;
  const std::string png = read_file(root_ / "o.png");
  EXPECT_TRUE(starts_with(png, kPngSignature));
  EXPECT_EQ(png, single({"--box", "3"}, in_ / "pic.png", "pic.png"));

  // --format wins over the input's name.
  const Result r3 =
      run({"--box", "3", "--format", "jpg", (in_ / "pic.png").string(), "-"}, {}, root_ / "o3");
  ASSERT_EQ(r3.status, 0) << r3.err;
  EXPECT_EQ(read_file(root_ / "o3"), single({"--box", "3"}, in_ / "pic.png", "pic.jpg"));
}

TEST_F(Batch, DashInABatchIsAUsageError) {
  make_image(in_ / "a.png", 43);
  const std::string a = (in_ / "a.png").string();
  for (const std::vector<std::string>& files :
       {std::vector<std::string>{a, "-", out_.string() + "/"},
        std::vector<std::string>{"-", a, "-o", out_.string()},
        std::vector<std::string>{"-", in_.string() + "/"}, std::vector<std::string>{a, a, "-"},
        std::vector<std::string>{in_.string(), "-"}}) {
    std::vector<std::string> args = {"--box", "1"};
    args.insert(args.end(), files.begin(), files.end());
    const Result r = run(args, in_ / "a.png", root_ / "o");
    std::string joined;
    for (const std::string& f : files) joined += " '" + f + "'";
    EXPECT_EQ(r.status, 2) << joined << ": " << r.err;
    EXPECT_TRUE(has_line(r.err, {"'-'"})) << joined << ": " << r.err;
    EXPECT_EQ(read_file(root_ / "o"), "") << joined;
    EXPECT_FALSE(fs::exists(out_)) << joined;
    EXPECT_EQ(tree(in_), Files{"a.png"}) << joined;
  }
}

TEST_F(Batch, RecursiveMirrorsFoldersAndIgnoresHiddenAndOtherFiles) {
  make_image(in_ / "top.png", 50);
  make_image(in_ / "a" / "one.png", 51, 20, 20);
  make_image(in_ / "a" / "b" / "two.jpg", 52, 30, 10);
  make_image(in_ / "a" / "b" / "c" / "three.PNG", 53, 17, 9, 4);
  make_image(in_ / "a" / "b" / "c" / "four.JPEG", 54, 16, 16);
  // Ignored: hidden files and folders, other extensions (even with image content), folders
  // named like images.
  make_image(in_ / ".hidden.png", 55);
  make_image(in_ / "a" / ".secret" / "x.png", 56);
  make_image(in_ / ".cache" / "y.jpg", 57);
  write_file(in_ / "a" / "notes.txt", "notes");
  fs::copy_file(in_ / "top.png", in_ / "a" / "b" / "copy.bmp");
  fs::copy_file(in_ / "top.png", in_ / "a" / "b" / "c" / "png");
  fs::create_directories(in_ / "a" / "folder.png");

  Result r = run({"-r", "--box", "1", in_.string(), out_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  expect_summary(r, 5, 0, 0, 3);  // notes.txt, copy.bmp, png: no image names
  EXPECT_EQ(tree(out_), (Files{"top.png", "a/", "a/one.png", "a/b/", "a/b/two.jpg", "a/b/c/",
                               "a/b/c/three.PNG", "a/b/c/four.JPEG"}));
  for (const char* name : {"top.png", "a/one.png", "a/b/c/three.PNG"})
    EXPECT_EQ(max_diff(load_image((out_ / name).string()), box_of(in_ / name, 1)), 0) << name;
  EXPECT_EQ(read_file(out_ / "a/b/two.jpg"),
            single({"--box", "1"}, in_ / "a/b/two.jpg", "two.jpg"));
  EXPECT_TRUE(starts_with(read_file(out_ / "a/b/c/four.JPEG"), kJpegSignature));

  // Without -r: the top level only.
  const fs::path flat = root_ / "flat";
  r = run({"--box", "1", in_.string(), flat.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_summary(r, 1, 0, 0);
  EXPECT_EQ(tree(flat), Files{"top.png"});
}

// The files a folder walk passes over for their names are counted in the summary and in the
// --report summary record; hidden files, sub-folders (without -r) and the report are not.
TEST_F(Batch, AFolderWalkCountsTheFilesItIgnores) {
  make_image(in_ / "a.png", 60);
  write_file(in_ / "notes.txt", "notes");
  fs::copy_file(in_ / "a.png", in_ / "b.bmp");
  write_file(in_ / ".hidden.txt", "hidden");
  write_file(in_ / "sub" / "c.txt", "below");
  const fs::path report = in_ / "run.jsonl";  // in the input folder: not counted
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE(pass);
    const Result r =
        run({"--box", "1", "--force", "--report", report.string(), in_.string(), out_.string()});
    ASSERT_EQ(r.status, 0) << r.err;
    expect_summary(r, 1, 0, 0, 2);
    EXPECT_NE(r.err.find("; 2 ignored: not an image format blurtool reads"), std::string::npos)
        << r.err;
    const std::vector<std::string> lines = lines_of(read_file(report));
    ASSERT_FALSE(lines.empty());
    const nlohmann::json sum = nlohmann::json::parse(lines.back());
    EXPECT_EQ(sum["record"], "summary") << lines.back();
    EXPECT_EQ(sum["ignored"], 2) << lines.back();
  }
  // With -r the sub-folder's file counts too; explicit inputs are no folder walk.
  Result r = run({"-r", "--box", "1", "--force", in_.string(), out_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_summary(r, 1, 0, 0, 4);  // and run.jsonl, no report of this run
  r = run({"--box", "1", "--force", (in_ / "a.png").string(), "-o", out_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_summary(r, 1, 0, 0, 0);
}

TEST_F(Batch, OutputFolderInsideTheInputIsNotRescanned) {
  make_image(in_ / "top.png", 60, 16, 12);
  make_image(in_ / "sub" / "deep.png", 61, 16, 12);
  // Relative names, run from the test's root, the output named with a trailing slash.
  const std::vector<std::string> args = {"-r", "--box", "1", "in dir", "in dir/blurred/"};
  Result r = run(args);
  ASSERT_EQ(r.status, 0) << r.err;
  expect_summary(r, 2, 0, 0);
  const Files expected = {"top.png",         "sub/",         "sub/deep.png",        "blurred/",
                          "blurred/top.png", "blurred/sub/", "blurred/sub/deep.png"};
  EXPECT_EQ(tree(in_), expected);
  const auto first = contents(in_);

  r = run(args);
  EXPECT_EQ(r.status, 0) << r.err;
  expect_summary(r, 0, 2, 0);
  EXPECT_EQ(tree(in_), expected) << "the output folder was scanned as input";

  // Also with --force (nothing is skipped there to hide a rescan), and named absolutely.
  r = run({"-r", "--force", "--box", "1", in_.string(), (in_ / "blurred").string()});
  EXPECT_EQ(r.status, 0) << r.err;
  expect_summary(r, 2, 0, 0);
  EXPECT_EQ(tree(in_), expected) << "the output folder was scanned as input";
  EXPECT_EQ(contents(in_), first);
}

TEST_F(Batch, FormatJpgReplacesTheExtension) {
  make_image(in_ / "a.png", 70);
  make_image(in_ / "b.jpeg", 71);
  const Result r = run({"--box", "2", "--format", "jpg", in_.string(), out_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_summary(r, 2, 0, 0);
  EXPECT_EQ(tree(out_), (Files{"a.jpg", "b.jpg"}));
  EXPECT_EQ(read_file(out_ / "a.jpg"), single({"--box", "2"}, in_ / "a.png", "a.jpg"));
  EXPECT_EQ(read_file(out_ / "b.jpg"), single({"--box", "2"}, in_ / "b.jpeg", "b.jpg"));

  // --format png: the JPEG input becomes an exact PNG.
  const fs::path pngs = root_ / "pngs";
  const Result r2 = run({"--box", "2", "--format", "png", in_.string(), pngs.string()});
  ASSERT_EQ(r2.status, 0) << r2.err;
  EXPECT_EQ(tree(pngs), (Files{"a.png", "b.png"}));
  EXPECT_EQ(max_diff(load_image((pngs / "b.png").string()), box_of(in_ / "b.jpeg", 2)), 0);
  EXPECT_TRUE(starts_with(read_file(pngs / "b.png"), kPngSignature));
}

TEST_F(Batch, TextFormatsGoWithBrightOnly) {
  make_image(in_ / "a.png", 72);
  for (const char* format : {"csv", "json", "gif"}) {
    const Result r = run({"--box", "2", "--format", format, in_.string(), out_.string()});
    EXPECT_EQ(r.status, 2) << format << ": " << r.err;
    EXPECT_TRUE(has_line(r.err, {"--format"})) << r.err;
    EXPECT_FALSE(fs::exists(out_)) << format;
  }
}

TEST_F(Batch, BrightWithFormatJsonWritesThePointLists) {
  make_image(in_ / "a.png", 73);
  make_image(in_ / "b.jpg", 74, 40, 24);
  const Result r = run({"--bright", "0.6", "--format", "json", in_.string(), out_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_summary(r, 2, 0, 0);
  EXPECT_EQ(tree(out_), (Files{"a.json", "b.json"}));
  BrightParams params;
  params.threshold = 0.6;
  for (const auto& [in, out] : {std::pair<std::string, std::string>{"a.png", "a.json"},
                                std::pair<std::string, std::string>{"b.jpg", "b.json"}}) {
    const std::vector<BrightPoint> points =
        bright_points_reference(load_image((in_ / in).string()), params);
    ASSERT_GT(points.size(), 5u) << "the test needs points to bite";
    const std::string text = read_file(out_ / out);
    EXPECT_EQ(text, bright_points_json(points)) << out;
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    ASSERT_TRUE(j.is_array()) << out;
    EXPECT_EQ(j.size(), points.size()) << out;
  }
}

TEST_F(Batch, ExplicitInputsWithDashOAndWithATrailingSlashFolder) {
  make_image(in_ / "a.png", 80);
  make_image(in_ / "sub" / "b.jpg", 81);
  const std::vector<std::string> files = {(in_ / "a.png").string(), (in_ / "sub/b.jpg").string()};
  Result r = run({"--box", "2", files[0], files[1], "-o", out_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  expect_summary(r, 2, 0, 0);
  EXPECT_EQ(tree(out_), (Files{"a.png", "b.jpg"}));
  EXPECT_EQ(max_diff(load_image((out_ / "a.png").string()), box_of(in_ / "a.png", 2)), 0);
  EXPECT_EQ(read_file(out_ / "b.jpg"), single({"--box", "2"}, in_ / "sub/b.jpg", "b.jpg"));

  // A trailing-slash OUTPUT that does not exist yet (with missing parents), one INPUT or two.
  const fs::path slash = root_ / "new" / "folder";
  r = run({"--box", "2", files[0], files[1], slash.string() + "/"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(contents(slash), contents(out_));
  const fs::path one = root_ / "one";
  r = run({"--box", "2", files[0], one.string() + "/"});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_summary(r, 1, 0, 0);
  EXPECT_EQ(contents(one),
            (std::map<std::string, std::string>{{"a.png", read_file(out_ / "a.png")}}));
  // An existing folder as the last argument, without a slash.
  const fs::path existing = root_ / "existing";
  fs::create_directories(existing);
  r = run({"--box", "2", files[0], existing.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(tree(existing), Files{"a.png"});
}

TEST_F(Batch, AMissingInputFailsAloneAndTheOthersAreWritten) {
  make_image(in_ / "a.png", 82);
  make_image(in_ / "c.png", 83);
  const std::string missing = (in_ / "missing.png").string();
  const Result r = run({"--box", "2", (in_ / "a.png").string(), missing, (in_ / "c.png").string(),
                        "-o", out_.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(reports(r.err, missing, {"cannot open", "no such file"})) << r.err;
  expect_summary(r, 2, 0, 1);
  EXPECT_EQ(tree(out_), (Files{"a.png", "c.png"}));
  EXPECT_EQ(max_diff(load_image((out_ / "c.png").string()), box_of(in_ / "c.png", 2)), 0);
}

TEST_F(Batch, TwoInputsWithOneOutputNameTheLaterFails) {
  make_image(in_ / "x" / "same.png", 84);
  make_image(in_ / "y" / "same.png", 85);
  const std::string first = (in_ / "x/same.png").string(), second = (in_ / "y/same.png").string();
  const Result r = run({"--box", "1", first, second, "-o", out_.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(reports(r.err, second, {"is also the output of '" + first + "'"})) << r.err;
  expect_summary(r, 1, 0, 1);
  EXPECT_EQ(tree(out_), Files{"same.png"});
  EXPECT_EQ(max_diff(load_image((out_ / "same.png").string()), box_of(first, 1)), 0);
}

TEST_F(Batch, BenchWithABatchTimesItsStagesAndWritesWhatABatchWrites) {
  make_image(in_ / "a.png", 90, 16, 16);
  make_image(in_ / "b.png", 91, 16, 16);
  // --device 0: with no device named, a box filter's images go to the host lane (below).
  const Result r =
      run({"--device", "0", "--box", "1", "--bench", in_.string(), "-o", out_.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  expect_summary(r, 2, 0, 0);
  EXPECT_EQ(tree(out_), (Files{"a.png", "b.png"}));
  for (const char* name : {"a.png", "b.png"})
    EXPECT_EQ(max_diff(load_image((out_ / name).string()), box_of(in_ / name, 1)), 0) << name;
  // One row a stage, each counting both images, and the process line.
  for (const char* stage : {"decode ", "device ", "encode "}) {
    const size_t at = r.out.find(std::string("\n") + stage);
    ASSERT_NE(at, std::string::npos) << stage << "\n" << r.out;
    std::istringstream row(r.out.substr(at + 1));
    std::string name;
    size_t images = 0;
    double cpu_ms = -1, wall_ms = -1;
    row >> name >> images >> cpu_ms >> wall_ms;
    EXPECT_EQ(images, 2u) << r.out;
    EXPECT_GT(wall_ms, 0) << r.out;
    // Reading, decoding, encoding and writing a file take tens of microseconds of CPU at least.
    if (std::string(stage) != "device ") {
      EXPECT_GT(cpu_ms, 0) << r.out;
    }
  }
  EXPECT_TRUE(has_line(r.out, {"device ", "upload", "kernels", "download"})) << r.out;
  EXPECT_TRUE(has_line(r.out, {"process:", "s CPU", "outside the stages"})) << r.out;
  EXPECT_TRUE(
      has_line(r.out, {"waits (seconds", "while the devices opened", "at the cap", "device lanes"}))
      << r.out;

  // With no device named, on a CPU device alone, the workers filter both images themselves.
  const Result host = run({"--box", "1", "--bench", in_.string(), "-o", out_.string() + "h"});
  EXPECT_EQ(host.status, 0) << host.err;
  EXPECT_EQ(stage_images(host.out, "host filter"), 2) << host.out;
  EXPECT_EQ(stage_images(host.out, "device"), 0) << host.out;
  for (const char* name : {"a.png", "b.png"})
    EXPECT_EQ(read_file(out_.string() + "h/" + name), read_file(out_ / name)) << name;

  // Without --bench a batch prints nothing on stdout; --sweep-wg still times one image only.
  fs::remove_all(out_);
  const Result plain = run({"--box", "1", in_.string(), "-o", out_.string()});
  EXPECT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out, "");
  const Result sweep = run({"--gauss", "1", "--sweep-wg", in_.string(), "-o", out_.string() + "2"});
  EXPECT_EQ(sweep.status, 2) << sweep.err;
  EXPECT_TRUE(has_line(sweep.err, {"--sweep-wg", "one INPUT and one OUTPUT"})) << sweep.err;
  // --bench N with a batch runs every image once; --bench-format has no table to format.
  const Result counted =
      run({"--box", "1", "--bench", "3", in_.string(), "-o", out_.string() + "3"});
  EXPECT_EQ(counted.status, 0) << counted.err;
  EXPECT_TRUE(has_line(counted.out, {"decode ", "2 "})) << counted.out;
  const Result json = run(
      {"--box", "1", "--bench", "--bench-format", "json", in_.string(), "-o", out_.string() + "2"});
  EXPECT_EQ(json.status, 2) << json.err;
  EXPECT_TRUE(has_line(json.err, {"--bench-format", "batch"})) << json.err;
  EXPECT_FALSE(fs::exists(out_.string() + "2"));
}

TEST_F(Batch, QuietPrintsNothingForASuccessfulBatchAndOnlyErrorsOtherwise) {
  make_image(in_ / "a.png", 92, 16, 16);
  save_image(random_image(8, 8, 3, 93), (root_ / "m.png").string());
  fs::copy_file(root_ / "m.png", in_ / "misnamed.jpg");  // a warning without --quiet
  Result r = run({"--quiet", "--box", "1", in_.string(), out_.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(tree(out_), (Files{"a.png", "misnamed.jpg"}));

  // -q with a broken file and a skip: just the error line.
  write_file(in_ / "bad.png", "bad");
  r = run({"-q", "--box", "1", in_.string(), out_.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "");
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_TRUE(
      reports(r.err, in_.string() + "/bad.png", {"not a png, jpeg, tiff or webp", "not an image"}))
      << r.err;

  // Without --quiet the same batch warns and sums up, still nothing on stdout.
  r = run({"--box", "1", "--force", in_.string(), out_.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(has_line(r.err, {"warning", "misnamed.jpg"})) << r.err;
  expect_summary(r, 2, 0, 1);
}

TEST_F(Batch, DevicesZeroAndAllWorkAndBadListsAreUsageErrors) {
  make_image(in_ / "a.png", 100, 24, 16);
  make_image(in_ / "b.png", 101, 16, 24);
  const Image expect_a = box_of(in_ / "a.png", 2);
  int run_number = 0;
  for (const char* devices : {"0", "all", "0,0"}) {
    // (No comma in the folder's name: see FileNamesWithCommasAreOneArgument.)
    const fs::path out = root_ / ("devices " + std::to_string(++run_number));
    const Result r = run({"--box", "2", "--devices", devices, in_.string(), out.string()});
    ASSERT_EQ(r.status, 0) << devices << ": " << r.err;
    expect_summary(r, 2, 0, 0);
    EXPECT_EQ(tree(out), (Files{"a.png", "b.png"})) << devices;
    EXPECT_EQ(max_diff(load_image((out / "a.png").string()), expect_a), 0) << devices;
  }
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--devices", "99"}, std::vector<std::string>{"--devices", "0,99"},
        std::vector<std::string>{"--devices", "no such device name"},
        std::vector<std::string>{"--devices", "0,"},
        std::vector<std::string>{"--device", "0", "--devices", "0"},
        std::vector<std::string>{"--devices", "all", "--device", "0"}}) {
    std::vector<std::string> args = {"--box", "2"};
    args.insert(args.end(), bad.begin(), bad.end());
    args.push_back(in_.string());
    args.push_back(out_.string());
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << bad[1] << ": " << r.err;
    EXPECT_TRUE(has_line(r.err, {"--devices"})) << r.err;  // the option given, not --device
    EXPECT_TRUE(tree(out_).empty()) << bad[1] << ": an image was written";
  }
  // One image runs on one device: --devices with several (or all) is a usage error there.
  for (const std::string list : {"all", "0,0"}) {
    const Result r =
        run({"--box", "2", "--devices", list, (in_ / "a.png").string(), (out_ / "a.png").string()});
    EXPECT_EQ(r.status, 2) << list << ": " << r.err;
    EXPECT_TRUE(has_line(r.err, {"--devices '" + list + "'", "batch", "--device"})) << r.err;
    EXPECT_TRUE(tree(out_).empty()) << list << ": an image was written";
  }
}

TEST_F(Batch, BadDeviceListIsAUsageErrorEvenWhenNothingIsLeftToDo) {
  // Spec: exit 2 for a bad option, before any image is processed; a batch whose outputs all
  // exist (or an input folder without images) must not make a bad --devices pass unnoticed.
  make_image(in_ / "a.png", 102, 16, 16);
  ASSERT_EQ(run({"--box", "2", in_.string(), out_.string()}).status, 0);
  const Result r = run({"--box", "2", "--devices", "99", in_.string(), out_.string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has_line(r.err, {"99"})) << r.err;
}

TEST_F(Batch, AScheduleTheDeviceCannotRunEndsTheBatchBeforeAnyOutput) {
  // The devices open while the first images decode; a schedule the device cannot run is still
  // a usage error of the whole batch: exit 2, that error alone (not the broken file's, decoded
  // meanwhile, nor a warning), no output folder.
  for (int i = 0; i < 6; ++i) make_image(in_ / ("a" + std::to_string(i) + ".png"), 140 + i, 32, 24);
  write_file(in_ / "broken.png", "xx");
  // (8+2000)^2 * 4 bytes of tile: more local memory than any device has.
  const Result r = run({"--gauss", "100", "--radius", "1000", "--variant", "naive-local", "--wg",
                        "8x8", in_.string(), out_.string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has_line(r.err, {"--wg 8x8", "CL_DEVICE_LOCAL_MEM_SIZE"})) << r.err;
  EXPECT_EQ(r.err.find("broken.png"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(out_));
  // The same batch with a schedule that fits writes the good images and names the broken one.
  const Result ok = run({"--gauss", "1", in_.string(), out_.string()});
  EXPECT_EQ(ok.status, 1) << ok.err;
  EXPECT_TRUE(has_line(ok.err, {"broken.png"})) << ok.err;
  EXPECT_EQ(tree(out_).size(), 6u);
}

TEST_F(Batch, JobsOneAndFourGiveIdenticalOutputs) {
  // Sizes and channel counts change from image to image, so the device's filter is rebuilt.
  const std::vector<std::tuple<int, int, int>> shapes = {{64, 48, 3}, {64, 48, 3}, {31, 17, 4},
                                                         {16, 40, 1}, {64, 48, 3}, {9, 9, 2},
                                                         {48, 64, 3}, {31, 17, 4}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto [w, h, c] = shapes[i];
    make_image(in_ / ("img" + std::to_string(i) + (i % 3 == 2 ? ".jpg" : ".png")), 110 + i, w, h,
               c);
  }
  const fs::path one = root_ / "jobs 1", four = root_ / "jobs 4";
  Result r = run({"--box", "3", "--jobs", "1", in_.string(), one.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_summary(r, 8, 0, 0);
  r = run({"--box", "3", "--jobs", "4", in_.string(), four.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_summary(r, 8, 0, 0);
  const auto a = contents(one), b = contents(four);
  EXPECT_EQ(a.size(), 8u);
  EXPECT_TRUE(a == b) << "--jobs 1 and --jobs 4 differ";
  for (size_t i : {0u, 1u, 3u, 4u, 6u, 7u}) {  // the PNGs: exact
    const std::string name = "img" + std::to_string(i) + ".png";
    const Image got = load_image((four / name).string());
    EXPECT_EQ(got.channels, std::get<2>(shapes[i])) << name;
    EXPECT_EQ(max_diff(got, box_of(in_ / name, 3)), 0) << name;
  }
  for (const char* bad : {"0", "257", "x"}) {
    r = run({"--box", "3", "--jobs", bad, in_.string(), (root_ / "bad").string()});
    EXPECT_EQ(r.status, 2) << bad << ": " << r.err;
    EXPECT_TRUE(has_line(r.err, {"--jobs"})) << r.err;
  }
}

// Two processes at once on one output folder (--force: both write every file) and one fresh
// program cache (BLURTOOL_PROGRAM_CACHE=on: both build and store the same programs): both
// succeed, every output is whole and equal to single mode's, no temporary file is left, and the
// cache they wrote serves a third run, which then stores nothing new.
TEST_F(Batch, TwoProcessesShareAnOutputFolderAndAProgramCache) {
  std::vector<std::string> names;
  for (int i = 0; i < 12; ++i) {
    names.push_back("img" + std::to_string(i) + ".png");
    make_image(in_ / names.back(), 100 + i, 48 + i, 40, 3);
  }
  const fs::path cache = root_ / "shared cache";
  const char* old = std::getenv("BLURTOOL_CACHE_DIR");
  const std::string saved = old ? old : "";
  ::setenv("BLURTOOL_CACHE_DIR", cache.c_str(), 1);
  ::setenv("BLURTOOL_PROGRAM_CACHE", "on", 1);  // written even where the driver has a cache
  // An explicit schedule, as in PinnedStagingWritesWhatPageableTransfersWrite.
  const std::vector<std::string> args = {
      "--gauss", "1.5", "--variant",         "separable",         "--force",
      "--jobs",  "2",   (in_ / "").string(), (out_ / "").string()};
  Result a, b;
  fs::create_directories(root_ / "scratch a");
  fs::create_directories(root_ / "scratch b");
  std::thread ta([&] { a = run_blurtool(args, root_, root_ / "scratch a"); });
  std::thread tb([&] { b = run_blurtool(args, root_, root_ / "scratch b"); });
  ta.join();
  tb.join();
  // Each cache file's inode: a rewrite (temporary file renamed over it) gives a new one.
  auto inodes = [&] {
    std::map<std::string, ino_t> files;
    for (const auto& e : fs::recursive_directory_iterator(cache)) {
      struct stat st;
      if (e.is_regular_file() && ::stat(e.path().c_str(), &st) == 0)
        files[fs::relative(e.path(), cache).string()] = st.st_ino;
    }
    return files;
  };
  const auto cached = inodes();
  const Result c = run_blurtool({"--gauss", "1.5", "--variant", "separable", "--force", "-q",
                                 (in_ / "").string(), (root_ / "third").string() + "/"},
                                root_, root_);
  ::unsetenv("BLURTOOL_PROGRAM_CACHE");
  if (old)
    ::setenv("BLURTOOL_CACHE_DIR", saved.c_str(), 1);
  else
    ::unsetenv("BLURTOOL_CACHE_DIR");
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(c.status, 0) << c.err;
  Files expected;
  for (const std::string& n : names) expected.insert(n);
  EXPECT_EQ(tree(out_), expected);  // no temporary files
  for (const std::string& n : names) {
    SCOPED_TRACE(n);
    const std::string one = single({"--gauss", "1.5", "--variant", "separable"}, in_ / n, n);
    EXPECT_TRUE(read_file(out_ / n) == one) << "differs from single mode";
    EXPECT_TRUE(read_file(root_ / "third" / n) == one) << "third run differs";
  }
  EXPECT_FALSE(cached.empty());
  EXPECT_EQ(inodes(), cached) << "the third run stored programs again: the cache was unusable";
}

TEST_F(Batch, FileNamesWithCommasAreOneArgument) {
  // A comma is an ordinary character of a file name: "a,b.png" is one INPUT, not two.
  make_image(in_ / "a,b.png", 130, 16, 16);
  const Image expected = box_of(in_ / "a,b.png", 1);
  // Single mode: one INPUT, one OUTPUT file, both with commas.
  Result r = run({"--box", "1", (in_ / "a,b.png").string(), (root_ / "x,y.png").string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_TRUE(fs::is_regular_file(root_ / "x,y.png"));
  EXPECT_EQ(max_diff(load_image((root_ / "x,y.png").string()), expected), 0);
  EXPECT_EQ(tree(root_), (Files{"in dir/", "in dir/a,b.png", "single/", "x,y.png"}));
  // Batch: an output folder with a comma.
  const fs::path out = root_ / "out,1";
  r = run({"--box", "1", in_.string(), out.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(tree(out), Files{"a,b.png"});
}

TEST_F(Batch, OutputFolderThatIsAFileIsAUsageError) {
  make_image(in_ / "a.png", 120, 8, 8);
  write_file(root_ / "file", "x");
  for (const std::vector<std::string>& output :
       {std::vector<std::string>{"-o", (root_ / "file").string()},
        std::vector<std::string>{(root_ / "file").string() + "/"}}) {
    std::vector<std::string> args = {"--box", "1", (in_ / "a.png").string()};
    args.insert(args.end(), output.begin(), output.end());
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(has_line(r.err, {"is a file"})) << r.err;
    EXPECT_EQ(read_file(root_ / "file"), "x");
  }
}

// Several inputs and a last argument that does not exist and has no trailing '/': a usage error
// (it used to become a new folder, even when named like an image).
TEST_F(Batch, SeveralInputsAndAMissingLastArgumentIsAUsageError) {
  make_image(in_ / "a.png", 121, 8, 8);
  make_image(in_ / "b.png", 122, 8, 8);
  const Result r = run({"--box", "1", (in_ / "a.png").string(), (in_ / "b.png").string(),
                        (root_ / "new.png").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has_line(r.err, {"new.png", "does not exist", "-o"})) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "new.png"));
}

// A link to a file in an input folder gives an output of the link's own name in the output
// folder: never one named after (or next to) its target, which used to replace the target.
TEST_F(Batch, ALinkedFileIsWrittenUnderItsOwnNameInTheOutputFolder) {
  make_image(in_ / "a.png", 130, 16, 12);
  make_image(root_ / "elsewhere" / "e.png", 131, 16, 12);
  const std::string target_before = read_file(root_ / "elsewhere" / "e.png");
  fs::create_symlink("../elsewhere/e.png", in_ / "link.png");
  fs::create_symlink(root_ / "elsewhere" / "e.png", in_ / "absolute.png");
  fs::create_symlink("a.png", in_ / "alias.png");
  const Result r = run({"--box", "1", in_.string(), out_.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  expect_summary(r, 4, 0, 0);
  EXPECT_EQ(tree(out_), (Files{"a.png", "absolute.png", "alias.png", "link.png"}));
  for (const char* name : {"link.png", "absolute.png"})
    EXPECT_EQ(
        max_diff(load_image((out_ / name).string()), box_of(root_ / "elsewhere" / "e.png", 1)), 0)
        << name;
  EXPECT_EQ(read_file(out_ / "alias.png"), read_file(out_ / "a.png"));
  EXPECT_EQ(read_file(root_ / "elsewhere" / "e.png"), target_before);
  EXPECT_EQ(tree(root_ / "elsewhere"), (Files{"e.png"}));
}

// With --force an output that is another input (a.png -> a.jpg beside an a.jpg; x.png of one
// folder onto x.png of another) is refused like one that is its own input.
TEST_F(Batch, ForceNeverWritesOverAnotherInput) {
  make_image(in_ / "a.png", 132, 16, 12);
  make_image(in_ / "a.jpg", 133, 16, 12);
  const std::string jpg_before = read_file(in_ / "a.jpg");
  Result r = run({"--box", "1", "--format", "jpg", "--force", in_.string(), in_.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(reports(r.err, in_.string() + "/a.png", {"is another input", "a.jpg"})) << r.err;
  EXPECT_EQ(read_file(in_ / "a.jpg"), jpg_before);

  make_image(root_ / "new" / "x.png", 134, 16, 12);
  make_image(root_ / "old" / "x.png", 135, 16, 12);
  const std::string old_before = read_file(root_ / "old" / "x.png");
  r = run({"--box", "1", "--force", (root_ / "new").string(), (root_ / "old").string(), "-o",
           (root_ / "old").string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has_line(r.err, {"new/x.png", "is another input"})) << r.err;
  EXPECT_EQ(read_file(root_ / "old" / "x.png"), old_before);
}

// A folder that cannot be read (an input folder, or one found under it with -r) is a failure
// with the reason, exit 1: it used to be skipped in silence, exit 0.
TEST_F(Batch, AFolderThatCannotBeReadIsAFailure) {
  make_image(in_ / "open" / "y.png", 136, 16, 12);
  make_image(in_ / "locked" / "x.png", 137, 16, 12);
  fs::create_directories(root_ / "shut");
  fs::permissions(root_, fs::perms::all);  // the unprivileged child writes its outputs here
  fs::permissions(in_ / "locked", fs::perms::none);
  fs::permissions(root_ / "shut", fs::perms::none);
  Spawn as_user;
  as_user.unprivileged_id = 65534;  // nobody, where the tests run as root
  Result r =
      run_blurtool({"--box", "1", "-r", in_.string(), "-o", out_.string()}, root_, root_, as_user);
  if (unprivileged_run_unavailable(r)) {
    fs::permissions(in_ / "locked", fs::perms::owner_all);
    fs::permissions(root_ / "shut", fs::perms::owner_all);
    GTEST_SKIP() << "cannot run blurtool as uid 65534 here: " << r.err;
  }
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has_line(r.err, {"locked", "cannot read the folder", "Permission denied"})) << r.err;
  expect_summary(r, 1, 0, 1);
  EXPECT_EQ(tree(out_), (Files{"open/", "open/y.png"}));
  r = run_blurtool({"--box", "1", (root_ / "shut").string(), "-o", out_.string()}, root_, root_,
                   as_user);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has_line(r.err, {"shut", "cannot read the folder", "Permission denied"})) << r.err;
  fs::permissions(in_ / "locked", fs::perms::owner_all);
  fs::permissions(root_ / "shut", fs::perms::owner_all);
}

// An input named with a trailing '/' that is no folder fails as opening it would, exit 1 (it
// used to become the output name ".png", a usage error about the output).
TEST_F(Batch, ATrailingSlashOnAnInputThatIsNoFolderSaysWhy) {
  make_image(in_ / "a.png", 138, 8, 8);
  Result r = run({"--box", "1", "nosuch/", "-o", out_.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has_line(r.err, {"nosuch/: cannot open: No such file or directory"})) << r.err;
  r = run({"--box", "1", (in_ / "a.png").string() + "/", "-o", out_.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has_line(r.err, {"a.png/: cannot open: Not a directory"})) << r.err;
}

// A folder and a new output named like an image is a usage error (an image was meant); -o
// makes a folder of that name if one is wanted.
TEST_F(Batch, AFolderAndANewOutputNamedLikeAnImageIsAUsageError) {
  make_image(in_ / "a.png", 139, 8, 8);
  Result r = run({"--box", "1", in_.string(), (root_ / "new.PNG").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has_line(r.err, {"is a folder", "new.PNG", "-o"})) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "new.PNG"));
  r = run({"--bright", "0.5", in_.string(), (root_ / "points.csv").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "points.csv"));
  r = run({"--box", "1", in_.string(), (root_ / "blurred").string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(tree(root_ / "blurred"), (Files{"a.png"}));
  r = run({"--box", "1", in_.string(), "-o", (root_ / "new.png").string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(tree(root_ / "new.png"), (Files{"a.png"}));
}

// Single mode writes into a named pipe (as cp does) instead of replacing it with a file; a batch
// refuses to replace one; --format takes any case.
TEST_F(Batch, ANamedPipeOutputIsWrittenIntoNotReplaced) {
  make_image(in_ / "a.png", 140, 16, 12);
  const std::string want = single({"--box", "1"}, in_ / "a.png", "a.png");
  const fs::path pipe = root_ / "pipe";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0644), 0);
  // Our own reader (so blurtool's open does not wait) and writer (so reads wait for data, not
  // EOF, until we close it after the run): no hang even if blurtool never opened the pipe.
  const int read_end = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(read_end, 0);
  const int hold = ::open(pipe.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(hold, 0);
  ASSERT_EQ(::fcntl(read_end, F_SETFL, 0), 0);  // blocking reads
  std::string got;
  std::thread reader([&] {
    char buffer[1 << 16];
    for (ssize_t n; (n = ::read(read_end, buffer, sizeof buffer)) > 0;)
      got.append(buffer, static_cast<size_t>(n));
  });
  const Result r = run({"--box", "1", "--format", "PNG", (in_ / "a.png").string(), pipe.string()});
  ::close(hold);
  reader.join();
  ::close(read_end);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(got, want);
  EXPECT_TRUE(fs::is_fifo(pipe));

  // A link to /proc/self/fd/1 (as /dev/stdout is) onto a file: written into, the link kept (it
  // was replaced by the output, and standard output got nothing).
  fs::create_symlink("/proc/self/fd/1", root_ / "stdout link");
  const Result l = run(
      {"--box", "1", "--format", "png", (in_ / "a.png").string(), (root_ / "stdout link").string()},
      {}, root_ / "captured.png");
  EXPECT_EQ(l.status, 0) << l.err;
  EXPECT_EQ(read_file(root_ / "captured.png"), want);
  EXPECT_TRUE(fs::is_symlink(root_ / "stdout link"));

  fs::create_directories(out_);
  ASSERT_EQ(::mkfifo((out_ / "a.png").c_str(), 0644), 0);
  const Result b = run({"--box", "1", "--force", (in_ / "a.png").string(), "-o", out_.string()});
  EXPECT_EQ(b.status, 1) << b.err;
  EXPECT_TRUE(has_line(b.err, {"a.png", "named pipe", "refusing to replace it"})) << b.err;
  EXPECT_TRUE(fs::is_fifo(out_ / "a.png"));
}

// A named pipe among a batch's inputs, listed or found in an input folder under an image name,
// fails with its reason and the batch goes on: opening one waits for a writer, and a batch hung
// there (a listed one), or skipped it without a word (one in a folder). Single mode still reads
// one (Cli.NamedPipeInputIsReadOnce). The runs are killed after a minute, should they hang.
TEST_F(Batch, ANamedPipeInputFailsInsteadOfBlocking) {
  make_image(in_ / "a.png", 150);
  ASSERT_EQ(::mkfifo((in_ / "b.png").c_str(), 0644), 0);
  const fs::path listed = root_ / "listed.png";
  ASSERT_EQ(::mkfifo(listed.c_str(), 0644), 0);
  Spawn spawn;
  spawn.timeout_s = 60;
  const std::string want = single({"--box", "1"}, in_ / "a.png", "a.png");

  Result r = run_blurtool({"--box", "1", in_.string(), "-o", out_.string()}, root_, root_, spawn);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has_line(r.err, {(in_ / "b.png").string(), "not a regular file (a named pipe)"}))
      << r.err;
  expect_summary(r, 1, 0, 1);
  EXPECT_EQ(tree(out_), Files{"a.png"});
  EXPECT_EQ(read_file(out_ / "a.png"), want);

  const fs::path out2 = root_ / "listed out";
  r = run_blurtool({"--box", "1", (in_ / "a.png").string(), listed.string(), "-o", out2.string()},
                   root_, root_, spawn);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has_line(r.err, {listed.string(), "not a regular file (a named pipe)"})) << r.err;
  expect_summary(r, 1, 0, 1);
  EXPECT_EQ(tree(out2), Files{"a.png"});
  EXPECT_TRUE(fs::is_fifo(listed));
}

// A failed write to standard output says why.
TEST_F(Batch, AFailedWriteToStandardOutputSaysWhy) {
  make_image(in_ / "a.png", 141, 8, 8);
  const Result r = run({"--box", "1", (in_ / "a.png").string(), "-"}, {}, "/dev/full");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has_line(r.err, {"<stdout>: cannot write: No space left on device"})) << r.err;
}

// An image too wide for JPEG (65535 pixels a side) names the output at fault; single mode says
// so before the blur.
TEST_F(Batch, AnImageTooLargeForJpegNamesTheOutput) {
  save_image(random_image(70000, 1, 3, 142), (in_ / "wide.png").string());
  Result r = run({"--box", "1", (in_ / "wide.png").string(), (root_ / "wide.jpg").string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has_line(r.err, {"wide.jpg: the image is 70000x1, too large for JPEG"})) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "wide.jpg"));
  r = run({"--box", "1", "--format", "jpg", (in_ / "wide.png").string(), "-o", out_.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(
      has_line(r.err, {"wide.png", "output '" + (out_ / "wide.jpg").string() + "'", "too large"}))
      << r.err;
  EXPECT_EQ(tree(out_), Files{});
}

// New outputs take the umask, as any program's new files do (they were 0644 under every umask);
// --force keeps the mode of each output it replaces, as cp(1) does (a 0600 one became 0644).
TEST_F(Batch, NewOutputsTakeTheUmaskAndForceKeepsTheModeOfThoseItReplaces) {
  for (unsigned i = 0; i < 2; ++i) make_image(in_ / ("p" + std::to_string(i) + ".png"), 30 + i);
  {
    const ScopedUmask mask(027);
    const Result r = run({"--box", "1", in_.string(), out_.string()});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(mode_of(out_ / "p0.png"), 0640u);
  EXPECT_EQ(mode_of(out_ / "p1.png"), 0640u);
  const auto first = contents(out_);
  const ScopedUmask mask(022);
  write_file(out_ / "p0.png", "stale");
  fs::permissions(out_ / "p0.png", fs::perms(0600));
  const Result r = run({"--box", "1", "--force", in_.string(), out_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_summary(r, 2, 0, 0);
  EXPECT_EQ(contents(out_), first);
  EXPECT_EQ(mode_of(out_ / "p0.png"), 0600u);
  EXPECT_EQ(mode_of(out_ / "p1.png"), 0640u);
}

// The temporary files a batch killed outright (SIGKILL, a power loss) left beside the outputs it
// was writing are removed by the next batch over them once an hour old, and its summary says how
// many; a younger one (a run may be writing it) stays.
TEST_F(Batch, LeftOverTemporaryFilesAnHourOldAreRemovedAndCounted) {
  make_image(in_ / "a.png", 151, 16, 12);
  make_image(in_ / "b.png", 152, 16, 12);
  fs::create_directories(out_);
  write_aged_files(out_, {{".a.png.blurtool-AbC123", std::chrono::hours(2)},
                          {".b.png.blurtool-DeF456", std::chrono::hours(3)},
                          {".a.png.blurtool-XyZ789", std::chrono::minutes(1)},
                          {".a.png.backup", std::chrono::hours(2)}});
  const Result r = run({"--box", "1", in_.string(), out_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(tree(out_), (Files{"a.png", "b.png", ".a.png.blurtool-XyZ789", ".a.png.backup"}));
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_TRUE(std::regex_match(
      lines.back(), std::regex(R"(blurtool: 2 done, 0 skipped, 0 failed in \d+\.\d s: .*; )"
                               R"(removed 2 left-over temporary files \(older than an hour\))")))
      << r.err;
}

}  // namespace
}  // namespace blurtool
