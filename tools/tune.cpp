// `blurtool tune` (see tune.h); the table it writes is read by filters/schedule_table.cpp.
#include "tools/tune.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include "tools/bench.h"
#include "tools/bench_suite.h"
#include "filters/box/box_blur.h"
#include "filters/bright/bright_points.h"
#include "util/error.h"
#include "filters/gauss/gauss_blur.h"
#include "image/image_io.h"
#include "filters/intermediate.h"

namespace blurtool {

namespace {

constexpr int kTuneWidth = 1920, kTuneHeight = 1080;
// The second size class on GPUs: the box-blur write-up's photo size.
constexpr int kTuneLargeWidth = 3024, kTuneLargeHeight = 4032;
// The radii each case is tuned at; a request is served by the smallest tuned radius at or above
// it. The box radii span the write-up's sweep (1..63), the Gaussian ones sigma 1.3 to 21: 40
// and 63 on both sides of where separable-buffer overtakes fused on an H100 (R 32-40).
const std::vector<int> kBoxRadii = {1, 8, 30, 63};
const std::vector<int> kGaussRadii = {4, 16, 30, 40, 63};
const std::vector<int> kBrightBlocks = {8, 16};

// One case: the candidates `make` builds, timed; the fastest becomes the case's entry.
struct Candidate {
  TunedSchedule schedule;
  std::function<std::unique_ptr<Filter>()> make;
  bool uses_intermediate = true;  ///< false: the same schedule for every intermediate format
};

std::string describe_candidate(const TunedSchedule& t) {
  std::string text = t.variant;
  if (t.segment) text += " segment=" + std::to_string(t.segment);
  if (t.unroll) text += " x" + std::to_string(t.unroll);
  if (!t.wg.is_default()) text += " wg=" + t.wg.text();
  return text;
}

}  // namespace

namespace {

// The cases of `blurtool tune` on one w x h image: appends each case's winner to `table`.
void tune_size(Runtime& runtime, const TuneOptions& o, int w, int h,
               std::vector<TunedSchedule>& table, std::ostream* log) {
  const bool gpu = runtime.device().type & CL_DEVICE_TYPE_GPU;
  const Image image = suite_image(w, h);
  // Times of the schedules that ignore the intermediate format (tiled, fused, ...), by op,
  // radius and schedule: each is timed once and that time stands for it in every format's
  // case, so that noise cannot crown a different one of them in each (it did: the tiled
  // Gaussian's 64-column tile for rgba32f, 256 for rgba8 and rgba16f on one CPU).
  std::map<std::string, double> one_pass_ms;
  // Times the candidates of one case (all with the case's op, radius and intermediate) and
  // appends the fastest to the table.
  auto run_case = [&](const std::string& label, std::vector<Candidate> candidates) {
    const Candidate* best = nullptr;
    double best_ms = 0;
    int skipped = 0;
    auto consider = [&](const Candidate& c) {
      if (!best || c.schedule.ms < best_ms) {
        best = &c;
        best_ms = c.schedule.ms;
      }
    };
    for (Candidate& c : candidates) {
      // The one-pass time's key; empty where the schedule uses the intermediate.
      const std::string key = c.uses_intermediate
                                  ? std::string()
                                  : c.schedule.op + " r=" + std::to_string(c.schedule.radius) +
                                        " " + describe_candidate(c.schedule);
      if (!key.empty()) {
        if (auto it = one_pass_ms.find(key); it != one_pass_ms.end()) {
          c.schedule.ms = it->second;
          consider(c);
          continue;
        }
      }
      std::unique_ptr<Filter> filter;
      try {
        filter = c.make();
      } catch (const UsageError&) {  // a work-group, local memory or feature it lacks
        ++skipped;
        continue;
      } catch (const Error&) {  // an image size it cannot hold
        ++skipped;
        continue;
      }
      c.schedule.ms = time_filter(runtime, *filter, image, o.runs).median;
      if (!key.empty()) one_pass_ms[key] = c.schedule.ms;
      consider(c);
    }
    if (!best) throw Error("tune: no schedule of " + label + " runs on this device");
    TunedSchedule t = best->schedule;
    t.width = w;
    t.height = h;
    table.push_back(t);
    if (log) {
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.4f ms", t.ms);
      *log << "  " << label << ": " << describe_candidate(t) << " " << ms << " (best of "
           << candidates.size() - skipped
           << (skipped ? ", " + std::to_string(skipped) + " skipped" : "") << ")" << std::endl;
    }
  };

  for (int radius : kBoxRadii) {
    for (const auto& f : intermediate_table()) {
      std::vector<Candidate> cs;
      auto add = [&](BoxVariant v, int segment, int unroll, WorkGroup wg) {
        TunedSchedule t;
        t.op = "box";
        t.intermediate = f.name;
        t.radius = radius;
        t.variant = name_of(box_variant_table(), v);
        t.segment = segment;
        t.unroll = unroll;
        t.wg = wg;
        BoxParams p;
        p.radius = radius;
        p.variant = v;
        p.intermediate = f.value;
        p.segment = segment;
        p.unroll = unroll;
        p.wg = wg;
        cs.push_back({t,
                      [&runtime, p, w, h] { return std::make_unique<BoxFilter>(runtime, p, w, h); },
                      box_is_two_pass(v)});
      };
      // fused: its default (16x8, tile rows fitted to one wave: box_fused_default_segment),
      // and three work-groups with 32-, 64- and 128-row tiles (16x8 at the default's height
      // only once).
      add(BoxVariant::fused, 0, 0, kBoxFusedWorkGroup);
      const int fused_rows =
          box_fused_default_segment(w, h, kBoxFusedWorkGroup, runtime.device().compute_units);
      for (WorkGroup wg : {WorkGroup{16, 8}, WorkGroup{32, 4}, WorkGroup{16, 4}})
        for (int segment : {32, 64, 128})
          if (wg.x != kBoxFusedWorkGroup.x || wg.y != kBoxFusedWorkGroup.y || segment != fused_rows)
            add(BoxVariant::fused, segment, 0, wg);
      // tiled: its default rows for the radius (box_tiled_default_segment), 256 and 1024.
      for (int segment : {0, 256, 1024}) add(BoxVariant::tiled, segment, 0, {});
      for (int unroll : {2, 4}) add(BoxVariant::segmented, 0, unroll, {});
      add(BoxVariant::segmented_local, 0, 0, {});
      if (!gpu) add(BoxVariant::unrolled, 0, 8, {});  // images: slow on CPUs, but try one
      run_case("box r=" + std::to_string(radius) + " " + f.name, std::move(cs));
    }
  }
  for (int radius : kGaussRadii) {
    for (const auto& f : intermediate_table()) {
      std::vector<Candidate> cs;
      auto add = [&](GaussVariant v, WorkGroup wg, int segment = 0) {
        TunedSchedule t;
        t.op = "gauss";
        t.intermediate = f.name;
        t.radius = radius;
        t.variant = name_of(gauss_variant_table(), v);
        t.wg = wg;
        t.segment = segment;
        GaussParams p;
        p.sigma = radius / 3.0;
        p.radius = radius;
        p.variant = v;
        p.intermediate = f.value;
        p.wg = wg;
        p.segment = segment;
        cs.push_back(
            {t, [&runtime, p, w, h] { return std::make_unique<GaussFilter>(runtime, p, w, h); },
             gauss_is_two_pass(v)});
      };
      add(GaussVariant::tiled, {});  // its default width for the radius
      // Tile widths: the best follows the CPU's caches (64 on one 2-core EPYC at R 16, 256 on a
      // Zen 4 one; kernels/NOTES.md). On GPUs tiled is far behind: its default only.
      if (!gpu)
        for (int columns : {64, 128, 256})
          if (columns != gauss_tile_width(radius)) add(GaussVariant::tiled, {}, columns);
      for (WorkGroup wg : {WorkGroup{32, 1}, WorkGroup{64, 1}, WorkGroup{128, 1}})
        add(GaussVariant::separable_local, wg);
      add(GaussVariant::separable_linear, {});
      add(GaussVariant::fused_local, {});
      if (gpu) add(GaussVariant::separable, {});  // 0.5 s a run on a 2-core CPU
      // fused is built for each radius: on CPUs, seconds a build for a schedule that loses
      // to tiled (PoCL, 2 cores, R 16: 14.8 ms against 8.9).
      if (gpu) {
        add(GaussVariant::fused, {});  // its defaults for the radius (256x1 or 128x1, 8 rows)
        for (auto [group, rows] : {std::pair{128, 8}, {256, 4}, {64, 16}})
          add(GaussVariant::fused, {group, 1}, rows);
        // Its defaults (128x1, 8 outputs a column work-item), then the next best measured on
        // an H100 (64x1; 16 outputs).
        add(GaussVariant::separable_buffer, {});
        add(GaussVariant::separable_buffer, {64, 1});
        add(GaussVariant::separable_buffer, {128, 1}, 16);
        add(GaussVariant::separable_mma, {});  // refused (skipped) without tensor cores
        // Its rows a work-group walks down (default 64, 128 or 256 by radius; refused
        // without tensor cores, and above R 32).
        for (int rows : {64, 128, 256}) add(GaussVariant::fused_mma, {}, rows);
      }
      run_case("gauss r=" + std::to_string(radius) + " " + f.name, std::move(cs));
    }
  }
  for (int block : kBrightBlocks) {
    std::vector<Candidate> cs;
    for (const auto& v : bright_variant_table()) {
      if (v.value == BrightVariant::automatic) continue;
      TunedSchedule t;
      t.op = "bright";
      t.radius = block;
      t.variant = v.name;
      BrightParams p;
      p.threshold = 0.5;
      p.block = block;
      p.variant = v.value;
      cs.push_back(
          {t, [&runtime, p, w, h] { return std::make_unique<BrightFinder>(runtime, p, w, h); }});
    }
    run_case("bright B=" + std::to_string(block), std::move(cs));
  }
}

}  // namespace

std::vector<TunedSchedule> tune(Runtime& runtime, const TuneOptions& o, std::ostream* log) {
  const bool gpu = runtime.device().type & CL_DEVICE_TYPE_GPU;
  std::vector<std::pair<int, int>> sizes = {{kTuneWidth, kTuneHeight}};
  if (gpu) sizes.push_back({kTuneLargeWidth, kTuneLargeHeight});
  std::vector<TunedSchedule> table;
  for (auto [full_w, full_h] : sizes) {
    const int w = std::max(1, static_cast<int>(full_w * o.scale));
    const int h = std::max(1, static_cast<int>(full_h * o.scale));
    if (log) *log << "on " << w << "x" << h << ":" << std::endl;
    tune_size(runtime, o, w, h, table, log);
  }

  const DeviceInfo& d = runtime.device();
  const std::string path = tune_table_path(d);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string text = schedule_table_text(d, o.runs, table);
  write_file_atomic(path, std::vector<std::uint8_t>(text.begin(), text.end()));
  return table;
}

}  // namespace blurtool
