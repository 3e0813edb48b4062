// Every box-filter variant x intermediate format x edge mode against the exact CPU reference, on
// every pixel (borders included), over odd and prime sizes, a 1x1 image and radii larger than the
// image; plus the running-sum drift check along 4032-pixel rows and columns, the tile shapes,
// local-memory refusals and the device-class defaults of auto.
#include <gtest/gtest.h>

#include <set>

#include "filters/box/box_blur.h"
#include "filters/box/box_reference.h"
#include "tests/support/test_support.h"

namespace blurtool {
namespace {

// Blurs `input` with `p` and checks the result against `expected` within `tolerance` where the
// device's local memory holds the schedule (`local_bytes` of it); where it does not (a GPU's
// 48 KiB against PoCL's 512 KiB or more), checks that it is refused with the limit named.
void expect_blur_or_refusal(const Image& input, const BoxParams& p, size_t local_bytes,
                            const Image& expected, int tolerance, const std::string& what) {
  if (local_bytes <= runtime().device().local_mem) {
    EXPECT_LE(max_error(box_blur(runtime(), input, p), expected), tolerance) << what;
    return;
  }
  try {
    box_blur(runtime(), input, p);
    ADD_FAILURE() << what << ": " << local_bytes << " bytes of local memory were accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("CL_DEVICE_LOCAL_MEM_SIZE"), std::string::npos)
        << what << ": " << e.what();
  }
}

// Accuracy bounds, in one place. The issue asks for within 1 of the reference with an rgba32f
// intermediate and within 2 with rgba16f or rgba8. The kernels keep exact integer sums, so
// one-pass variants and rgba32f are bit-exact and asserted so (a rounding slip fails here);
// rgba16f and rgba8 round the row mean once when storing it, so they stay within 1.
int tolerance(BoxVariant v, Intermediate f) {
  return !box_is_two_pass(v) || f == Intermediate::rgba32f ? 0 : 1;
}

struct Size {
  int w, h;
};

const Size kSizes[] = {{1, 1}, {7, 3}, {33, 17}, {257, 129}};

// Radii 0, 1, 5, 30 and one larger than the image. One-pass variants read (2R+1)^2 pixels per
// output; on the 257x129 image a radius over 257 costs ~10^10 reads on a CPU device, so there
// they stop at 30 (their larger-than-image radius is covered by the three smaller images).
std::vector<int> radii_for(BoxVariant v, Size s) {
  std::vector<int> radii = {0, 1, 5, 30};
  if (box_is_two_pass(v) || s.w * s.h < 1000) radii.push_back(std::max(s.w, s.h) + 3);
  return radii;
}

std::vector<Intermediate> intermediates_for(BoxVariant v) {
  if (!box_is_two_pass(v)) return {Intermediate::rgba32f};
  std::vector<Intermediate> all;
  for (const auto& f : intermediate_table()) all.push_back(f.value);
  return all;
}

// Every radius, edge mode and intermediate format of variant `v` on `input` (8 or 16 bits)
// against the reference of its depth, within tolerance_of(v, format).
template <typename T>
void expect_variant_matches(BoxVariant v, const BasicImage<T>& input,
                            int (*tolerance_of)(BoxVariant, Intermediate)) {
  const Size s{input.width, input.height};
  for (int radius : radii_for(v, s)) {
    for (const auto& edge : edge_mode_table()) {
      const BasicImage<T> expected = box_blur_reference(input, radius, edge.value);
      for (Intermediate f : intermediates_for(v)) {
        BoxParams p;
        p.radius = radius;
        p.variant = v;
        p.intermediate = f;
        p.edge = edge.value;
        EXPECT_LE(max_error(box_blur(runtime(), input, p), expected), tolerance_of(v, f))
            << s.w << "x" << s.h << " r=" << radius << " edge=" << edge.name
            << " intermediate=" << name_of(intermediate_table(), f) << " " << 8 * sizeof(T)
            << "-bit";
      }
    }
  }
}

class BoxVariantTest : public ::testing::TestWithParam<BoxVariant> {};

TEST_P(BoxVariantTest, MatchesReferenceEverywhere) {
  unsigned seed = 1;
  for (Size s : kSizes)
    expect_variant_matches(GetParam(), random_rgba(s.w, s.h, seed++), tolerance);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, BoxVariantTest, ::testing::ValuesIn([] {
                           std::vector<BoxVariant> all;
                           for (const auto& v : box_variant_table()) all.push_back(v.value);
                           return all;
                         }()),
                         [](const ::testing::TestParamInfo<BoxVariant>& info) {
                           std::string name = name_of(box_variant_table(), info.param);
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// At 16 bits (RGBA16 in and out, -DPIXEL16): every variant, intermediate and edge mode against
// the 16-bit reference on random 16-bit samples. One-pass variants and rgba32f keep exact sums
// (up to R = 127) and are asserted exact, so a path that lost the low 8 bits anywhere (up to 128
// levels off) fails; rgba16f stores the row mean with 11 significant bits (on a 0..255 scale:
// half an ulp is 1/16 of an 8-bit level, 16 16-bit levels), rgba8 with 8 (half an 8-bit level,
// 128.5 16-bit levels), each plus the final rounding, where the device rounds to nearest;
// stored_error16() gives what OpenCL allows other devices (an NVIDIA H100 measured 32 and 143).
// The linear variants' fetches add 1 level off CPU devices (box_samples_linearly()).
int tolerance16(BoxVariant v, Intermediate f) {
  const bool cpu = runtime().device().type & CL_DEVICE_TYPE_CPU;
  const int sampler = !cpu && box_samples_linearly(v) ? 1 : 0;
  if (!box_is_two_pass(v) || f == Intermediate::rgba32f) return sampler;
  return sampler + stored_error16(f);
}

TEST_P(BoxVariantTest, MatchesReferenceAt16Bits) {
  unsigned seed = 21;
  for (Size s : {Size{7, 3}, Size{33, 17}})
    expect_variant_matches(GetParam(), random_rgba16(s.w, s.h, seed++), tolerance16);
}

// `unrolled` for every unroll factor, on widths and heights that are not multiples of it, so the
// loop's tail (the last w % N pixels) is checked to the last pixel.
TEST(BoxUnrolled, EveryUnrollFactorHandlesTails) {
  const Image input = random_rgba(61, 37, 7);
  for (int n : box_unroll_choices()) {
    for (int radius : {0, 2, 13}) {
      BoxParams p;
      p.radius = radius;
      p.variant = BoxVariant::unrolled;
      p.unroll = n;
      p.edge = EdgeMode::mirror;
      EXPECT_EQ(max_error(box_blur(runtime(), input, p),
                          box_blur_reference(input, radius, EdgeMode::mirror)),
                0)
          << "unroll " << n << " r=" << radius;
    }
  }
}

// Running sums must not drift: along a 4032-pixel row and column the rgba32f intermediate keeps
// exact integer sums (result bit-exact); rgba16f and rgba8 stay within their bound at the far end.
TEST(BoxRunningSums, NoDriftAlong4032Pixels) {
  for (Size s : {Size{4032, 3}, Size{3, 4032}}) {
    const Image input = random_rgba(s.w, s.h, 11);
    const Image expected = box_blur_reference(input, 30, EdgeMode::clamp);
    for (BoxVariant v : {BoxVariant::accumulated, BoxVariant::unrolled, BoxVariant::scan}) {
      for (Intermediate f : intermediates_for(v)) {
        BoxParams p;
        p.radius = 30;
        p.variant = v;
        p.intermediate = f;
        const int err = max_error(box_blur(runtime(), input, p), expected);
        if (f == Intermediate::rgba32f)
          EXPECT_EQ(err, 0) << s.w << "x" << s.h << " " << name_of(box_variant_table(), v);
        else
          EXPECT_LE(err, 2) << s.w << "x" << s.h << " " << name_of(box_variant_table(), v);
      }
    }
  }
}

// Radii over 2047 switch the kernels to 64-bit sums (WIDE_SUM); check that path too.
TEST(BoxRunningSums, WideSumsForHugeRadii) {
  const Image input = random_rgba(9, 5, 3);
  // tiled: its ring of 2R+1 rows would exceed its scratch bound, so the recomputing path runs.
  for (BoxVariant v :
       {BoxVariant::unrolled, BoxVariant::scan, BoxVariant::double_pass, BoxVariant::tiled}) {
    BoxParams p;
    p.radius = 2100;
    p.variant = v;
    p.edge = EdgeMode::mirror;
    EXPECT_EQ(
        max_error(box_blur(runtime(), input, p), box_blur_reference(input, 2100, EdgeMode::mirror)),
        0)
        << name_of(box_variant_table(), v);
  }
  // fused with one work-item (one row of 2R + 16 column sums in local memory: 72 KB, which
  // PoCL's 512 KiB holds; a GPU's 48 KiB does not, and refuses it by name).
  BoxParams p;
  p.radius = 2100;
  p.variant = BoxVariant::fused;
  p.edge = EdgeMode::mirror;
  p.wg = {1, 1};
  expect_blur_or_refusal(input, p, box_fused_local_bytes(2100, p.wg),
                         box_blur_reference(input, 2100, EdgeMode::mirror), 0, "fused r=2100");
}

// segmented at every kind of split: one pixel per work-item, segments that do not divide the
// image (the last one short), one segment longer than the image, and several work-group shapes
// (whose padding work-items must write nothing). Exact with rgba32f, within 1 otherwise.
TEST(BoxSegmented, EverySegmentLengthAndWorkGroupMatchesTheReference) {
  const Image input = random_rgba(61, 45, 77);
  for (BoxVariant v : {BoxVariant::segmented, BoxVariant::segmented_local}) {
    // segmented-local takes Lx1 work-groups (one row each).
    const std::vector<WorkGroup> wgs = v == BoxVariant::segmented
                                           ? std::vector<WorkGroup>{{}, {1, 1}, {3, 5}, {16, 4}}
                                           : std::vector<WorkGroup>{{}, {1, 1}, {3, 1}, {16, 1}};
    for (int radius : {0, 2, 13, 70}) {
      const Image expected = box_blur_reference(input, radius, EdgeMode::mirror);
      for (int segment : {1, 3, 7, 32, 1000}) {
        for (WorkGroup wg : wgs) {
          for (Intermediate f : {Intermediate::rgba32f, Intermediate::rgba8}) {
            BoxParams p;
            p.radius = radius;
            p.variant = v;
            p.intermediate = f;
            p.edge = EdgeMode::mirror;
            p.segment = segment;
            p.wg = wg;
            // segmented-local's staged row, where a work-group size is given (the default
            // halves until it fits).
            const size_t local = v == BoxVariant::segmented_local && !wg.is_default()
                                     ? box_segmented_local_bytes(radius, segment, wg.x)
                                     : 0;
            expect_blur_or_refusal(input, p, local, expected, f == Intermediate::rgba32f ? 0 : 1,
                                   std::string(name_of(box_variant_table(), v)) +
                                       " r=" + std::to_string(radius) +
                                       " segment=" + std::to_string(segment) + " wg=" + wg.text() +
                                       " intermediate=" + name_of(intermediate_table(), f));
          }
        }
      }
    }
  }
}

// segmented-local's column pass keeps each column's window in a ring in local memory: over
// several column segments of several 64-row batches (the last one short), strips of 16 columns
// with the last one partly outside the image, every edge mode and intermediate, radii whose
// windows span several batches and segments, 16-bit ring entries and 32-bit ones (R 129 at 8
// bits, and 16-bit pixels). Exact with rgba32f, within 1 otherwise (16-bit: as tolerance16).
TEST(BoxSegmentedLocal, ColumnRingAcrossSegmentsAndBatches) {
  // The segment length follows the work-groups the device can keep busy (box_ring_segment), so
  // a device of many compute units needs a wider image: the narrowest that works (37 on PoCL).
  const unsigned cu = runtime().device().compute_units;
  int width = 0, height = 0;
  for (int w : {37, 517, 2821, 5893}) {
    for (int h : {700, 1500, 3000, 6000}) {
      const int seg = box_ring_segment(w, h, cu);
      if (seg > kBoxRingLanes * kBoxRingRows && h > 2 * seg && h % seg != 0) {
        width = w;
        height = h;
        break;
      }
    }
    if (height > 0) break;
  }
  ASSERT_GT(height, 0) << "no image size gives several multi-batch segments on " << cu
                       << " compute units";
  const Image input = random_rgba(width, height, 41);
  const Image16 input16 = random_rgba16(width, height, 42);
  for (int radius : {1, 30, 63, 129}) {
    for (const auto& edge : edge_mode_table()) {
      const Image expected = box_blur_reference(input, radius, edge.value);
      for (Intermediate f : {Intermediate::rgba32f, Intermediate::rgba16f, Intermediate::rgba8}) {
        BoxParams p;
        p.radius = radius;
        p.variant = BoxVariant::segmented_local;
        p.intermediate = f;
        p.edge = edge.value;
        EXPECT_LE(max_error(box_blur(runtime(), input, p), expected), tolerance(p.variant, f))
            << width << "x" << height << " r=" << radius << " edge=" << edge.name
            << " intermediate=" << name_of(intermediate_table(), f);
      }
      if (radius == 129) continue;  // 16 bits: exact sums up to R = 127
      BoxParams p;
      p.radius = radius;
      p.variant = BoxVariant::segmented_local;
      p.edge = edge.value;
      EXPECT_EQ(max_error(box_blur(runtime(), input16, p),
                          box_blur_reference(input16, radius, edge.value)),
                0)
          << "16-bit " << width << "x" << height << " r=" << radius << " edge=" << edge.name;
    }
  }
}

// Where the ring does not fit the device's local memory (R 1000: 2065 rows of 16-byte entries,
// 516 KiB, exceed a GPU's 48 KiB and PoCL's 512 KiB; PoCL gives 1 MiB on a CPU with 1 MiB of L2,
// which R 4000 exceeds), the column pass is one work-item a column segment, as describe() says;
// still exact.
TEST(BoxSegmentedLocal, ColumnPassWithoutTheRingWhereItDoesNotFit) {
  const Image input = random_rgba(61, 45, 43);
  int radius = 0;
  for (int r : {1000, 4000, 16000})
    if (radius == 0 && box_ring_local_bytes(r, Intermediate::rgba32f, PixelDepth::u8) >
                           runtime().device().local_mem)
      radius = r;
  if (radius == 0) GTEST_SKIP() << "the ring fits this device's local memory at R 16000";
  const Image expected = box_blur_reference(input, radius, EdgeMode::mirror);
  for (BoxVariant v : {BoxVariant::segmented, BoxVariant::segmented_local}) {
    BoxParams p;
    p.radius = radius;
    p.variant = v;
    p.edge = EdgeMode::mirror;
    BoxFilter filter(runtime(), p, input.width, input.height);
    EXPECT_NE(filter.describe().find("columns=per-work-item"), std::string::npos)
        << filter.describe();
    EXPECT_EQ(max_error(run_filter(runtime(), filter, input).output, expected), 0)
        << filter.describe();
    p.radius = 30;  // fits: the ring
    EXPECT_EQ(BoxFilter(runtime(), p, input.width, input.height).describe().find("columns="),
              std::string::npos);
  }
}

// The one-pass tile schedules' cases: images 600 and 601 pixels wide (rows of a multiple of 4
// pixels: whole-vector stores; and not) by 77 rows, every edge mode, each of `radii`; f gets the
// input, radius, edge mode, reference output and a description.
template <typename F>
void for_each_tile_case(std::initializer_list<int> radii, unsigned seed, F f) {
  for (int width : {600, 601}) {
    const Image input = random_rgba(width, 77, seed);
    for (int radius : radii) {
      for (const auto& edge : edge_mode_table()) {
        f(input, radius, edge.value, box_blur_reference(input, radius, edge.value),
          std::to_string(width) + "x77 r=" + std::to_string(radius) + " edge=" + edge.name);
      }
    }
  }
}

// Parameters of `variant` at `radius` and `edge` with tiles of `rows` rows.
BoxParams tile_params(BoxVariant variant, int radius, EdgeMode edge, int rows) {
  BoxParams p;
  p.radius = radius;
  p.variant = variant;
  p.edge = edge;
  p.segment = rows;
  return p;
}

// tiled over several tiles across and down (256-column tiles, the last one short), tile heights
// that do not divide the image (1 to 3 rows in the last group of four), radii whose windows span
// several tiles, both ways of rounding the mean (ROUND_BY_FLOAT below 2R+1 = 128, integers from
// there), with the ring of row sums and with rings past their bound
// (BoxParams::tiled_ring_bytes 0: the leaving rows' sums computed again): exact everywhere.
TEST(BoxTiled, EveryTileShapeMatchesTheReference) {
  for_each_tile_case({0, 2, 63, 64, 300}, 5,
                     [](const Image& input, int radius, EdgeMode edge, const Image& expected,
                        const std::string& what) {
                       for (int rows : {1, 7, 256}) {
                         for (size_t ring_bytes : {BoxParams{}.tiled_ring_bytes, size_t{0}}) {
                           BoxParams p = tile_params(BoxVariant::tiled, radius, edge, rows);
                           p.tiled_ring_bytes = ring_bytes;
                           EXPECT_EQ(max_error(box_blur(runtime(), input, p), expected), 0)
                               << what << " tile rows=" << rows
                               << (ring_bytes ? " ring" : " recomputed");
                         }
                       }
                     });
}

// fused at 16 bits: its GPU default groups there (16x4, 8x4) and an odd one, rows of an even
// width (16-byte stores of 2 pixels) or an odd one, several tiles across and down: exact.
TEST(BoxFused, SixteenBitTileShapesMatchTheReference) {
  for (int width : {400, 401}) {
    const Image16 input = random_rgba16(width, 45, 9);
    for (int radius : {2, 64}) {
      const Image16 expected = box_blur_reference(input, radius, EdgeMode::mirror);
      for (WorkGroup wg : {WorkGroup{16, 4}, WorkGroup{8, 4}, WorkGroup{3, 5}}) {
        BoxParams p = tile_params(BoxVariant::fused, radius, EdgeMode::mirror, 7);
        p.wg = wg;
        EXPECT_EQ(max_error(box_blur(runtime(), input, p), expected), 0)
            << width << " r=" << radius << " wg=" << wg.text();
      }
    }
  }
}

// fused over several tiles across and down, work-group shapes that give tiles of 304, 76 and
// 57 columns (the last one short), tile heights that do not divide the image or the batch of
// rows, radii whose windows span several tiles, odd tile rows walking up (from R 40),
// both ways of rounding the mean (ROUND_BY_FLOAT up to 2R+1 = 127), 32-bit column sums in local
// memory (FUSED_WIDE, R > 128), and rows of a multiple of 4 pixels (16-byte stores) or not: exact
// everywhere.
TEST(BoxFused, EveryTileShapeMatchesTheReference) {
  for_each_tile_case({0, 2, 63, 64, 129}, 8,
                     [](const Image& input, int radius, EdgeMode edge, const Image& expected,
                        const std::string& what) {
                       for (WorkGroup wg : {WorkGroup{}, WorkGroup{4, 2}, WorkGroup{3, 5}}) {
                         for (int rows : {1, 7, 64}) {
                           BoxParams p = tile_params(BoxVariant::fused, radius, edge, rows);
                           p.wg = wg;
                           const WorkGroup used =
                               wg.is_default()
                                   ? box_fused_default_group(radius, runtime().device().local_mem)
                                   : wg;
                           expect_blur_or_refusal(
                               input, p, box_fused_local_bytes(radius, used), expected, 0,
                               what + " wg=" + wg.text() + " tile rows=" + std::to_string(rows));
                         }
                       }
                     });
}

// fused's first row window adds FUSED_PACK column sums at a time in their 16-bit lanes
// (8 up to R 15, 4 up to 31, 3 up to 42, 2 up to 63): radii at each step, where a lane comes
// closest to 65535 (every pixel 255), and at a random image.
TEST(BoxFused, PackedFirstWindowIsExact) {
  const Image noise = random_rgba(450, 40, 21);
  Image white = noise;
  std::fill(white.pixels.begin(), white.pixels.end(), 255);
  for (int radius : {12, 15, 16, 30, 31, 32, 42, 43, 63}) {
    for (const Image* input : {&noise, static_cast<const Image*>(&white)}) {
      BoxParams p;
      p.radius = radius;
      p.variant = BoxVariant::fused;
      p.edge = EdgeMode::mirror;
      EXPECT_EQ(max_error(box_blur(runtime(), *input, p),
                          box_blur_reference(*input, radius, EdgeMode::mirror)),
                0)
          << "r=" << radius << (input == &white ? " white" : " noise");
    }
  }
}

// fused starts each work-item's row window from chunk sums: its own chunk's (19 columns) and up
// to (2R+1) / 19 more exchanged through local memory, plus single columns (the ones after the
// chunks, or the ones past the window taken off). Radii reach each case (Q = (2R+1) / 19 whole
// chunks, F columns past them): Q 0 (R 0, 5), F 0 (R 9, 28), F <= 9 (R 12, 20, 30), F > 9
// (R 14, 33, 63, 100); and none, one or all of the sums a window can use, fewer through
// fused_local_limit as on a GPU with 48 KiB (3x5 work-groups at R 100: a work-item sums several
// halo chunks). (PackedFirstWindowIsExact has the white images, where the 16-bit lanes come closest
// to overflowing.)
TEST(BoxFused, FirstWindowsFromEveryNumberOfChunkSums) {
  const Image noise = random_rgba(450, 23, 5);
  const std::vector<std::pair<int, int>> cases = {{0, 0},  {5, 0},  {9, 0},   {12, 0},
                                                  {14, 1}, {20, 1}, {28, 2},  {30, 2},
                                                  {33, 3}, {63, 6}, {100, 10}};
  for (const auto& [radius, most] : cases) {
    for (WorkGroup wg : {box_fused_preferred_group(), WorkGroup{3, 5}}) {
      if (wg.x == 3 && radius != 100) continue;
      for (int exchanged : std::set<int>{0, std::min(1, most), most}) {
        BoxParams p = tile_params(BoxVariant::fused, radius, EdgeMode::mirror, 9);
        p.wg = wg;
        // The least bytes, and the chunk sums' rows (16 bytes each) for `exchanged` of them.
        p.fused_local_limit = box_fused_local_bytes(radius, wg) +
                              (exchanged ? size_t{16} * wg.y * (wg.x + exchanged) : 0);
        BoxFilter filter(runtime(), p, noise.width, noise.height);
        const std::string what = filter.describe();
        EXPECT_NE(what.find(" chunk-sums=" + std::to_string(exchanged) + " "), std::string::npos)
            << what;
        EXPECT_EQ(max_error(box_blur(runtime(), noise, p),
                            box_blur_reference(noise, radius, EdgeMode::mirror)),
                  0)
            << what;
      }
    }
  }
}

// From R 40 fused's tiles of odd tile rows walk up, as tiles of the image turned upside down:
// below it they do not; either way exact in every edge mode, with an odd number of tile rows,
// the last one short (75 rows in tiles of 16), and two tiles across.
TEST(BoxFused, OddTileRowsWalkingUpMatchTheReference) {
  const Image input = random_rgba(330, 75, 17);
  for (EdgeMode edge : {EdgeMode::clamp, EdgeMode::mirror, EdgeMode::zero}) {
    for (int radius : {39, 40, 41, 70}) {
      const BoxParams p = tile_params(BoxVariant::fused, radius, edge, 16);
      const std::string what = BoxFilter(runtime(), p, input.width, input.height).describe();
      EXPECT_EQ(what.find(" walk=alternating") != std::string::npos, radius >= 40) << what;
      EXPECT_EQ(max_error(box_blur(runtime(), input, p), box_blur_reference(input, radius, edge)),
                0)
          << what;
    }
  }
}

// fused keeps a row of column sums per batch row in local memory, 2R + tile width entries: a
// radius whose rows cannot fit is refused with the sizes and what to use instead. R 4000 takes
// 560640 bytes with 32x4 work-groups (4 rows of 608 + 8000 sixteen-byte sums, and 4 rows of 608
// pixels) (more than a GPU's 48 KiB and PoCL's 512 KiB), R 16383
// about 2.2 MB (more than the 1 MiB PoCL gives on a CPU with 1 MiB of L2).
TEST(BoxFused, RefusesWhatLocalMemoryCannotHold) {
  EXPECT_EQ(box_fused_local_bytes(4000, kBoxFusedWideGroup), 560640u);
  BoxParams p;
  p.variant = BoxVariant::fused;
  for (int r : {4000, kMaxBoxRadius})
    if (p.radius == 0 &&
        box_fused_local_bytes(r, kBoxFusedWideGroup) > runtime().device().local_mem)
      p.radius = r;
  if (p.radius == 0) GTEST_SKIP() << "fused fits this device's local memory at any radius";
  const std::string needs =
      "fused with wg 32x4 and radius " + std::to_string(p.radius) + " needs " +
      std::to_string(box_fused_local_bytes(p.radius, kBoxFusedWideGroup)) +
      " bytes of local memory; device '" + runtime().device().name + "' has " +
      std::to_string(runtime().device().local_mem) + " (CL_DEVICE_LOCAL_MEM_SIZE)";
  try {
    BoxFilter filter(runtime(), p, 64, 64);
    FAIL() << "R = " << p.radius << " fitted " << runtime().device().local_mem
           << " bytes of local memory";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(needs), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("use a smaller wg or segmented"), std::string::npos);
  }
}

// auto without a table: tiled on CPUs; on GPUs fused with 16x8 work-groups while their tile
// fits 48 KiB (up to R = 128: 8 rows of 304 + 2R eight-byte sums and a 304-pixel output row
// each; above, the sums widen to 16 bytes and neither 16x8 nor 32x4 fits), then segmented.
TEST(BoxAuto, DefaultsByDeviceClassAndRadius) {
  const DeviceInfo gpu = device_as(CL_DEVICE_TYPE_GPU, 48 * 1024);
  const DeviceInfo cpu = device_as(CL_DEVICE_TYPE_CPU);
  EXPECT_EQ(resolve_box_variant(BoxVariant::automatic, 30, cpu), BoxVariant::tiled);
  EXPECT_EQ(resolve_box_variant(BoxVariant::automatic, 30, gpu), BoxVariant::fused);
  EXPECT_EQ(box_fused_local_bytes(128, box_fused_preferred_group()),
            8 * (304 + 256) * 8 + 8 * 304 * 4);
  EXPECT_EQ(box_fused_default_group(128, gpu.local_mem).text(), "16x8");
  EXPECT_GT(box_fused_local_bytes(129, kBoxFusedWideGroup), gpu.local_mem);
  EXPECT_EQ(box_fused_default_group(129, gpu.local_mem).text(), "32x4");  // the last candidate
  // At 16 bits (32-bit column sums, 8-byte output pixels) 16x8 and 32x4 need more than 48 KiB
  // even at small radii: 16x4 up to R = 156 (4 rows of 304 + 2R sixteen-byte sums and 304
  // eight-byte pixels: 49152 bytes), then 8x4 up to R = 266; fused stays the default.
  EXPECT_EQ(box_fused_default_group(7, gpu.local_mem, PixelDepth::u16).text(), "16x4");
  EXPECT_EQ(box_fused_default_group(30, gpu.local_mem, PixelDepth::u16).text(), "16x4");
  EXPECT_EQ(box_fused_default_group(156, gpu.local_mem, PixelDepth::u16).text(), "16x4");
  EXPECT_EQ(box_fused_default_group(157, gpu.local_mem, PixelDepth::u16).text(), "8x4");
  EXPECT_LE(box_fused_local_bytes(266, {8, 4}, PixelDepth::u16), gpu.local_mem);
  EXPECT_GT(box_fused_local_bytes(267, {8, 4}, PixelDepth::u16), gpu.local_mem);
  EXPECT_EQ(resolve_box_variant(BoxVariant::automatic, 30, gpu, PixelDepth::u16),
            BoxVariant::fused);
  EXPECT_LE(box_fused_local_bytes(30, {16, 4}, PixelDepth::u16), gpu.local_mem);
  EXPECT_GT(box_fused_local_bytes(7, kBoxFusedWideGroup, PixelDepth::u16), gpu.local_mem);
  EXPECT_EQ(resolve_box_variant(BoxVariant::automatic, 128, gpu), BoxVariant::fused);
  EXPECT_EQ(resolve_box_variant(BoxVariant::automatic, 129, gpu), BoxVariant::segmented);
  EXPECT_EQ(resolve_box_variant(BoxVariant::unrolled, 30, gpu), BoxVariant::unrolled);
  // tiled: 16 (2R+1) rows from 256 up, fewer where the tiles would not cover the work-items.
  EXPECT_EQ(box_tiled_default_segment(1, 3024, 4032, 2), 256);
  EXPECT_EQ(box_tiled_default_segment(30, 3024, 4032, 2), 976);
  EXPECT_EQ(box_tiled_default_segment(63, 3024, 4032, 2), 2032);    // 12 x 2 tiles, 8 work-items
  EXPECT_EQ(box_tiled_default_segment(63, 1920, 1080, 2), 2032);    // 8 x 1 tiles
  EXPECT_EQ(box_tiled_default_segment(63, 1920, 1080, 4), 1016);    // 8 x 2 tiles for 16
  EXPECT_EQ(box_tiled_default_segment(63, 3024, 4032, 64), 256);    // 12 x 16 tiles for 256
  EXPECT_EQ(box_tiled_default_segment(5000, 3024, 4032, 2), 4096);  // kMaxBoxSegment
  // Tile rows: the fewest (a multiple of 8, 32 to 128) whose tiles all fit one wave of 3
  // work-groups on each of 132 compute units (396): 10 x 39 tiles of 304 x 104 (96 rows: 420),
  // 10 x 36 of 304 x 56, 7 x 34 of 304 x 32 (the floor); 128 where no height fits.
  EXPECT_EQ(box_fused_default_segment(3024, 4032, box_fused_preferred_group(), 132), 104);
  EXPECT_EQ(box_fused_default_segment(3024, 2016, box_fused_preferred_group(), 132), 56);
  EXPECT_EQ(box_fused_default_segment(1920, 1080, box_fused_preferred_group(), 132), 32);
  EXPECT_EQ(box_fused_default_segment(1920, 1080, box_fused_preferred_group(), 2), 128);
  EXPECT_EQ(box_fused_default_segment(8000, 8000, box_fused_preferred_group(), 132), 128);
}

// A job's image (runs == 0) on PoCL's CPU device is filtered where it lies: no copies, and none
// of the filter's own input and output buffers made; the result is the reference's either way
// (BLURTOOL_ZERO_COPY=0, and a timed run, copy through those buffers). On a GPU nothing is run
// in place.
TEST(BoxTiled, AJobOnACpuDeviceIsFilteredWhereItLies) {
  ScopedEnv unset;
  unset.set("BLURTOOL_ZERO_COPY", nullptr);
  const DeviceInfo& device = runtime().device();
  const bool cpu = (device.type & CL_DEVICE_TYPE_CPU) && device_driver_name(device) == "PoCL";
  EXPECT_EQ(runs_in_place(runtime().device()), cpu);
  BoxParams p;
  p.radius = 7;
  p.variant = BoxVariant::tiled;
  const Image input = random_rgba(601, 77, 12);
  const Image16 input16 = random_rgba16(601, 77, 13);
  const Image expected = box_blur_reference(input, p.radius, EdgeMode::clamp);
  const Image16 expected16 = box_blur_reference(input16, p.radius, EdgeMode::clamp);
  {
    BoxFilter filter(runtime(), p, input.width, input.height);
    const FilterRun run = run_filter(runtime(), filter, input);
    EXPECT_EQ(max_error(run.output, expected), 0);
    EXPECT_EQ(run.in_place_upload, cpu);
    EXPECT_EQ(run.in_place_download, cpu);
    EXPECT_EQ(filter.io_src_buffer() == nullptr, cpu);
    EXPECT_EQ(filter.io_dst_buffer() == nullptr, cpu);
    EXPECT_EQ(run.upload_copy_ms == 0 && run.download_copy_ms == 0, cpu);
    const FilterRun timed = run_filter(runtime(), filter, input, 1);  // through io buffers
    EXPECT_FALSE(timed.in_place_upload || timed.in_place_download);
    EXPECT_NE(filter.io_src_buffer(), nullptr);
    EXPECT_EQ(max_error(timed.output, expected), 0);
    EXPECT_EQ(max_error(run_filter(runtime(), filter, input).output, expected), 0);
    filter.io_in_place = false;  // as the bench suite asks: through the io buffers
    const FilterRun kept = run_filter(runtime(), filter, input);
    EXPECT_FALSE(kept.in_place_upload || kept.in_place_download);
    EXPECT_EQ(max_error(kept.output, expected), 0);
  }
  {
    BoxFilter filter(runtime(), p, input16.width, input16.height, PixelDepth::u16);
    const FilterRun16 run = run_filter(runtime(), filter, input16);
    EXPECT_EQ(max_error(run.output, expected16), 0);
    EXPECT_EQ(run.in_place_upload && run.in_place_download, cpu);
  }
  {
    ScopedEnv env;
    env.set("BLURTOOL_ZERO_COPY", "0");
    EXPECT_FALSE(runs_in_place(runtime().device()));
    BoxFilter filter(runtime(), p, input.width, input.height);
    const FilterRun run = run_filter(runtime(), filter, input);
    EXPECT_FALSE(run.in_place_upload || run.in_place_download);
    EXPECT_EQ(max_error(run.output, expected), 0);
  }
}

}  // namespace
}  // namespace blurtool
