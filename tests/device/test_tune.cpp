// The tuning table `--variant auto` reads: auto follows a table entry by entry (radius buckets,
// intermediates, parameters), ignores it when told to or where it has no entry, ignores an
// invalid one with a warning naming it, and a real tuning run writes a winner for every case that
// auto then picks and that still computes the reference's result. `blurtool tune` itself:
// tests/cli/test_tune.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "filters/box/box_blur.h"
#include "filters/box/box_reference.h"
#include "filters/bright/bright_points.h"
#include "filters/gauss/gauss_blur.h"
#include "filters/gauss/gauss_reference.h"
#include "tests/support/test_support.h"
#include "tests/support/tune_fixture.h"
#include "tools/tune.h"
#include "util/error.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

const char* kTable = R"({"device": "any", "entries": [
  {"op": "box", "intermediate": "rgba32f", "radius": 8, "variant": "unrolled", "segment": 0,
   "unroll": 4, "wg": "0x0", "ms": 1, "width": 1920, "height": 1080},
  {"op": "box", "intermediate": "rgba32f", "radius": 30, "variant": "segmented", "segment": 16,
   "unroll": 2, "wg": "8x8", "ms": 1, "width": 1920, "height": 1080},
  {"op": "gauss", "intermediate": "rgba32f", "radius": 4, "variant": "fused", "segment": 3,
   "unroll": 0, "wg": "64x1", "ms": 1, "width": 1920, "height": 1080},
  {"op": "gauss", "intermediate": "rgba32f", "radius": 16, "variant": "separable-local",
   "segment": 0, "unroll": 0, "wg": "32x1", "ms": 1, "width": 1920, "height": 1080},
  {"op": "gauss", "intermediate": "rgba32f", "radius": 30, "variant": "tiled", "segment": 64,
   "unroll": 0, "wg": "0x0", "ms": 1, "width": 1920, "height": 1080},
  {"op": "bright", "intermediate": "", "radius": 8, "variant": "tree", "segment": 0,
   "unroll": 0, "wg": "0x0", "ms": 1, "width": 1920, "height": 1080}]})";

BoxFilter auto_box(int radius, Intermediate f = Intermediate::rgba32f) {
  BoxParams p;
  p.radius = radius;
  p.intermediate = f;
  return BoxFilter(runtime(), p, 40, 30);
}

TEST_F(Tune, AutoFollowsTheTableByRadiusAndIntermediate) {
  const BoxVariant plain = auto_box(5).params().variant;  // the device-class default
  write_table(kTable);
  // r 1..8 takes the r = 8 entry, 9..30 the r = 30 one, with their parameters.
  for (int r : {0, 5, 8}) {
    const BoxFilter f = auto_box(r);
    EXPECT_EQ(f.params().variant, BoxVariant::unrolled) << r;
    EXPECT_EQ(f.params().unroll, 4) << r;
  }
  const BoxFilter mid = auto_box(9);
  EXPECT_EQ(mid.params().variant, BoxVariant::segmented);
  EXPECT_EQ(mid.params().segment, 16);
  EXPECT_EQ(mid.params().wg.text(), "8x8");
  EXPECT_NE(mid.describe().find("segmented x2 segment=16 wg=8x8"), std::string::npos)
      << mid.describe();
  // Above the largest tuned radius and for an intermediate the table lacks: the default.
  EXPECT_EQ(auto_box(31).params().variant, plain);
  EXPECT_EQ(auto_box(5, Intermediate::rgba8).params().variant, plain);

  GaussParams g;
  g.sigma = 3;  // radius 9: the r = 16 entry
  const GaussFilter gauss(runtime(), g, 40, 30);
  EXPECT_EQ(gauss.params().variant, GaussVariant::separable_local);
  EXPECT_EQ(gauss.params().wg.text(), "32x1");
  g.sigma = 1;  // radius 3: the r = 4 entry, fused with its tile rows
  const GaussFilter fused(runtime(), g, 40, 30);
  EXPECT_EQ(fused.params().variant, GaussVariant::fused);
  EXPECT_EQ(fused.params().segment, 3);
  EXPECT_NE(fused.describe().find("tile=120x3 wg=64x1"), std::string::npos) << fused.describe();
  g.sigma = 6;  // radius 18: the r = 30 entry, tiled with its tile width
  const GaussFilter tiled(runtime(), g, 40, 30);
  EXPECT_EQ(tiled.params().variant, GaussVariant::tiled);
  EXPECT_EQ(tiled.params().segment, 64);
  EXPECT_NE(tiled.describe().find("tile=64x"), std::string::npos) << tiled.describe();
  g.sigma = 1;
  const Image small = random_rgba(45, 29, 5);
  EXPECT_LE(max_error(gauss_blur(runtime(), small, g),
                      gauss_blur_reference(small, 1.0, 3, EdgeMode::clamp)),
            1);
  BrightParams b;
  EXPECT_EQ(BrightFinder(runtime(), b, 40, 30).params().variant, BrightVariant::tree);
  b.block = 16;  // not tuned: the default
  EXPECT_EQ(BrightFinder(runtime(), b, 40, 30).params().variant, BrightVariant::buffer);

  // The tuned schedule still computes the reference's result.
  const Image input = random_rgba(61, 37, 4);
  BoxParams p;
  p.radius = 6;
  EXPECT_EQ(max_error(box_blur(runtime(), input, p), box_blur_reference(input, 6, EdgeMode::clamp)),
            0);

  // The table is measured on RGBA8: 16-bit runs (other local memory, other costs) take the
  // device-class defaults.
  BoxParams deep;
  deep.radius = 9;
  EXPECT_EQ(BoxFilter(runtime(), deep, 40, 30, PixelDepth::u16).params().variant, plain);
  g.sigma = 3;
  EXPECT_EQ(GaussFilter(runtime(), g, 40, 30, PixelDepth::u16).params().variant,
            resolve_gauss_variant(GaussVariant::automatic, 9, runtime().device(), PixelDepth::u16));

  save("BLURTOOL_TUNE", "off");
  EXPECT_EQ(auto_box(5).params().variant, plain);
}

// A table tuned on two image sizes: a request takes the size nearest to its own by ratio
// (the larger when the size is unknown), then the radius rule within that size.
TEST_F(Tune, AutoFollowsTheNearestImageSize) {
  write_table(R"({"device": "any", "entries": [
    {"op": "box", "intermediate": "rgba32f", "radius": 30, "variant": "segmented", "segment": 0,
     "unroll": 0, "wg": "0x0", "ms": 1, "width": 1920, "height": 1080},
    {"op": "box", "intermediate": "rgba32f", "radius": 30, "variant": "unrolled", "segment": 0,
     "unroll": 4, "wg": "0x0", "ms": 1, "width": 3024, "height": 4032},
    {"op": "box", "intermediate": "rgba32f", "radius": 63, "variant": "scan", "segment": 0,
     "unroll": 0, "wg": "0x0", "ms": 1, "width": 1920, "height": 1080}]})");
  const DeviceInfo& d = runtime().device();
  auto variant_for = [&](int radius, std::uint64_t pixels) {
    const auto t = tuned_schedule(d, "box", "rgba32f", radius, pixels);
    return t ? t->variant : std::string("none");
  };
  EXPECT_EQ(variant_for(30, 40 * 30), "segmented");
  EXPECT_EQ(variant_for(30, 1920 * 1080), "segmented");
  EXPECT_EQ(variant_for(30, 2000 * 2000), "segmented");  // 4.0 MP: nearer 2.1 than 12.2
  EXPECT_EQ(variant_for(30, 3000 * 3000), "unrolled");   // 9.0 MP
  EXPECT_EQ(variant_for(30, 8000 * 6000), "unrolled");
  EXPECT_EQ(variant_for(30, 0), "unrolled");
  EXPECT_EQ(variant_for(40, 1920 * 1080), "scan");  // r 31..63: the small size's r = 63 entry
  EXPECT_EQ(variant_for(40, 3024 * 4032), "none");  // the large size has no radius above 30
  // A filter passes its own size: a 40x30 box blur takes the small size's pick.
  EXPECT_EQ(auto_box(30).params().variant, BoxVariant::segmented);
}

// A table tuned on other kernels (or written before tables named theirs) is not used: auto
// falls back to the device-class default until tune runs again.
TEST_F(Tune, IgnoresATableTunedOnOtherKernels) {
  const BoxVariant plain = auto_box(8).params().variant;
  write_table(kTable);
  ASSERT_EQ(auto_box(8).params().variant, BoxVariant::unrolled);  // the table is used
  const std::string table(kTable);
  const std::string other = "{\"kernels\": \"0123456789abcdef\", " + table.substr(1);
  for (const std::string& text : {other, table}) {
    write_table(text, false);
    EXPECT_EQ(auto_box(8).params().variant, plain) << text.substr(0, 40);
    EXPECT_FALSE(tuned_schedule(runtime().device(), "box", "rgba32f", 8, 0)) << text.substr(0, 40);
  }
  EXPECT_EQ(tune_kernels_fingerprint().size(), 16u);
}

// A table that is not one tune writes is input gone bad: auto runs as without it (it threw, and
// every auto run failed; a value the option refuses made a wrong image), after one warning that
// names the file and the reason, given once until the file changes.
TEST_F(Tune, IgnoresAnInvalidTableWithOneWarningNamingIt) {
  const BoxVariant plain = auto_box(5).params().variant;
  const std::string path = tune_table_path(runtime().device());
  auto entry = [](const std::string& op, const std::string& variant, const std::string& fields) {
    return R"({"entries": [{"op": ")" + op +
           R"(", "intermediate": "rgba32f", "radius": 8, "variant": ")" + variant + "\", " +
           fields + R"(, "ms": 1, "width": 1920, "height": 1080}]})";
  };
  const std::string fine = R"("segment": 0, "unroll": 0, "wg": "0x0")";
  const std::string current = "{\"kernels\": \"" + tune_kernels_fingerprint() + "\", ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"entries": [{"op": "box"}]})", "'intermediate' not found"},
      {entry("box", "no-such", fine), "'no-such': unknown value"},
      {entry("box", "auto", fine), "auto is no schedule"},
      {entry("box", "segmented", R"("segment": -5, "unroll": 0, "wg": "0x0")"), "segment -5"},
      {entry("box", "segmented", R"("segment": 0, "unroll": 0, "wg": "0x8")"), "wg '0x8'"},
      {entry("box", "segmented", R"("segment": 0, "unroll": 0, "wg": "8x8x")"), "wg '8x8x'"},
      {entry("box", "unrolled", R"("segment": 0, "unroll": 3, "wg": "0x0")"), "unroll 3"},
      {entry("box", "unrolled", R"("segment": 64, "unroll": 0, "wg": "0x0")"), "segment goes with"},
      {entry("box", "tiled", R"("segment": 0, "unroll": 0, "wg": "16x16")"), "wg goes with"},
      {entry("box", "unrolled", R"("segment": 1.5, "unroll": 0, "wg": "0x0")"),
       "is not a whole number"},
      {entry("gauss", "fused", R"("segment": 0, "unroll": 4, "wg": "0x0")"), "unroll goes with"},
      {entry("gauss", "tiled", R"("segment": 20, "unroll": 0, "wg": "0x0")"), "multiple of 16"},
      {entry("bright", "tree", fine), "bright-point entry"},
      {entry("nothing", "tree", fine), "none of box, gauss, bright"},
      {R"({"entries": "none"})", "no \"entries\" list"},
      {"[1, 2]", "not a JSON object"},
      {"", "parse error"},
      {std::string(kTable).substr(0, 200), "parse error"}};
  for (const auto& [text, reason] : cases) {
    SCOPED_TRACE(text);
    // As it is where it is no object or cut short, else tuned on these kernels.
    write_table(text.rfind("{\"entries\"", 0) == 0 ? current + text.substr(1) : text, false);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(auto_box(5).params().variant, plain);
    EXPECT_EQ(auto_box(8).params().variant, plain);
    EXPECT_FALSE(tuned_schedule(runtime().device(), "box", "rgba32f", 8, 0));
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.find("blurtool: warning: " + path + ": ignored, not a valid tuning table ("), 0u)
        << err;
    EXPECT_NE(err.find(reason), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    // The file's time and size tell a new table from the one read: the next case's may not
    // differ in size.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TEST_F(Tune, WritesAWinnerForEveryCaseThatAutoThenPicks) {
  TuneOptions o;
  o.runs = 1;
  o.scale = 0.03;  // 58x32: the candidates' speed does not matter here
  const std::vector<TunedSchedule> table = tune(runtime(), o, nullptr);
  // Box radii x formats, Gaussian radii x formats, bright blocks; on GPUs for two image sizes.
  const size_t sizes = runtime().device().type & CL_DEVICE_TYPE_GPU ? 2 : 1;
  ASSERT_EQ(table.size(), sizes * (4u * 3 + 5u * 3 + 2));
  for (const TunedSchedule& t : table) EXPECT_GT(t.ms, 0) << t.op << " " << t.radius;
  // A schedule that ignores the intermediate format (tiled, fused, ...) is timed once for all
  // three formats' cases of an op, radius and size: where such schedules win, it is the same one
  // with the same time, and no case's winner is slower than it.
  auto one_pass = [](const TunedSchedule& t) {
    return t.op == "box"
               ? !box_is_two_pass(parse_named(box_variant_table(), t.variant, "variant"))
               : !gauss_is_two_pass(parse_named(gauss_variant_table(), t.variant, "variant"));
  };
  for (const TunedSchedule& a : table) {
    if (a.op == "bright" || !one_pass(a)) continue;
    for (const TunedSchedule& b : table) {
      if (b.op != a.op || b.radius != a.radius || b.width != a.width) continue;
      EXPECT_LE(b.ms, a.ms) << a.op << " r=" << a.radius << " " << b.intermediate;
      if (one_pass(b)) {
        EXPECT_TRUE(b.variant == a.variant && b.segment == a.segment && b.unroll == a.unroll &&
                    b.wg.text() == a.wg.text() && b.ms == a.ms)
            << a.op << " r=" << a.radius << ": " << a.variant << " " << a.ms << " ms for "
            << a.intermediate << ", " << b.variant << " " << b.ms << " ms for " << b.intermediate;
      }
    }
  }
  ASSERT_TRUE(fs::exists(tune_table_path(runtime().device())));
  {  // The file's entries have the built-in tables' shape: vendor, type, schedule, reason.
    std::ifstream in(tune_table_path(runtime().device()));
    const nlohmann::json j = nlohmann::json::parse(in);
    ASSERT_EQ(j.at("entries").size(), table.size());
    for (const auto& e : j.at("entries")) {
      EXPECT_EQ(e.at("vendor").get<std::string>(), device_vendor(runtime().device()));
      const cl_device_type type = runtime().device().type;
      EXPECT_EQ(e.at("type").get<std::string>(), type & CL_DEVICE_TYPE_GPU   ? "GPU"
                                                 : type & CL_DEVICE_TYPE_CPU ? "CPU"
                                                                             : "other");
      EXPECT_NE(e.at("reason").get<std::string>().find("blurtool tune on "), std::string::npos);
    }
  }
  for (const TunedSchedule& t : table) {
    // auto_box asks for 40x30: the size class of the first (smaller) image.
    if (t.op != "box" || t.width != table.front().width) continue;
    const Intermediate f = parse_named(intermediate_table(), t.intermediate, "intermediate");
    const BoxFilter auto_filter = auto_box(t.radius, f);
    EXPECT_EQ(name_of(box_variant_table(), auto_filter.params().variant), t.variant)
        << "r=" << t.radius << " " << t.intermediate;
    // And the winner is correct: within 1 level (exact for one-pass and rgba32f).
    const Image input = random_rgba(45, 29, static_cast<unsigned>(t.radius));
    BoxParams p;
    p.radius = t.radius;
    p.intermediate = f;
    EXPECT_LE(max_error(box_blur(runtime(), input, p),
                        box_blur_reference(input, t.radius, EdgeMode::clamp)),
              f == Intermediate::rgba32f ? 0 : 1)
        << t.variant << " r=" << t.radius << " " << t.intermediate;
  }
}

}  // namespace
}  // namespace blurtool
